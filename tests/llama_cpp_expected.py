"""Keeps llama.cpp's own numbers for Qwen2.5-Coder-0.5B-Instruct, which
tests/generate_qwen.rs holds codecal's local backend against.

    python3 tests/llama_cpp_expected.py GGUF HUMANEVAL.jsonl.gz > tests/fixtures/qwen2.5-coder-0.5b-llama-cpp.jsonl

Builds llama.cpp with benches/llama_cpp/build.sh (the generate bench's
reference, from the llama-cpp-sys-2 crate) and runs its llama-greedy on:
- hand-written texts that exercise Qwen2's pre-tokenizer (contractions,
  digits, non-ASCII letters, emoji, whitespace runs, CRLF, control and
  user-defined tokens), ids only;
- every HumanEval prompt (ids only; the test rebuilds the text from the
  installed data, so the data is not copied here);
- ChatML chats and HumanEval prompts decoded greedily for 32 tokens, with
  each token's log-probability.
Each line names its case; hand-written texts are kept whole.
"""
import gzip
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
DECODE = 32

TEXTS = [
    "don't I'LL we'Re they'VE",
    "x = 12345 + 3.14159e-10",
    "café naïve Ελληνικά 日本語 🙂 ok",
    "  \n\n\t  x   y\n    \n",
    "def f(a,\tb):\r\n    return a\r\n",
    "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
    "<|fim_prefix|>def add(a, b):<|fim_suffix|>\n<|fim_middle|>",
    "    \"\"\"Return the sum.\n\n    >>> add(2, 3)\n    5\n    \"\"\"\n",
]

SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."


def chat(user):
    return (f"<|im_start|>system\n{SYSTEM}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n"
            "<|im_start|>assistant\n")


CHATS = [
    chat("Write a Python function `is_palindrome(s)` that returns True if s reads the same "
         "backwards. Only the code."),
    chat("Summarize in one sentence what this function does:\n"
         "def mean(values):\n    return sum(values) / len(values)"),
    chat("What does this Java method return?\npublic boolean isEmpty() {\n    return size == 0;\n}"),
    chat("def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n"
         "Write down the original comment written by the developer.\nComment:"),
]


def run_greedy(program, gguf, texts, decode):
    with tempfile.NamedTemporaryFile(suffix=".bin", delete=False) as f:
        f.write(b"\0".join(t.encode() for t in texts))
    try:
        out = subprocess.run([str(program), gguf, f.name, str(decode), str(os.cpu_count())],
                             check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(f.name)
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == len(texts), (len(rows), len(texts))
    return rows


def main():
    gguf, humaneval = sys.argv[1], sys.argv[2]
    built = subprocess.run(["bash", str(ROOT / "benches/llama_cpp/build.sh")], check=True,
                           capture_output=True, text=True).stdout.strip().splitlines()[-1]
    program = pathlib.Path(built) / "llama-greedy"
    with gzip.open(humaneval, "rt") as f:
        problems = [json.loads(line) for line in f if line.strip()]
    cases = [({"case": "text", "text": t}, t, 0) for t in TEXTS]
    cases += [({"case": "humaneval", "task_id": p["task_id"]}, p["prompt"], 0) for p in problems]
    cases += [({"case": "chat-greedy", "text": t}, t, DECODE) for t in CHATS]
    cases += [({"case": "humaneval-greedy", "task_id": p["task_id"]}, p["prompt"], DECODE)
              for p in problems[:6]]
    for decode in (0, DECODE):
        chosen = [c for c in cases if c[2] == decode]
        for (head, _, _), row in zip(chosen, run_greedy(program, gguf, [c[1] for c in chosen], decode)):
            head.update(row)
    for head, _, _ in cases:
        if not head["generated"]:
            del head["generated"], head["logprobs"]
        print(json.dumps(head, ensure_ascii=False))


if __name__ == "__main__":
    main()
