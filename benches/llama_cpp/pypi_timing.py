"""Times llama-cpp-python (PyPI's llama.cpp, built by pip from its sdist into
target/llama-server-venv by benches/llama_server/check.py) on one GGUF, as
timing.cpp times the bench's own llama.cpp build: prefill of the prompt in
one batch, then greedy decoding one token at a time, best of 3.

Usage: python pypi_timing.py MODEL.gguf PROMPT.txt N_DECODE THREADS
Prints one JSON object with the same keys as timing.cpp, and the version.
"""

import json
import sys
import time

import numpy as np
import llama_cpp


def main():
    model, prompt_file, n_decode, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    with open(prompt_file, "rb") as f:
        prompt = f.read()
    # A first model only to count the prompt's tokens, as timing.cpp sizes
    # its context and batch to the prompt.
    vocab_only = llama_cpp.Llama(model_path=model, vocab_only=True, verbose=False)
    ids = vocab_only.tokenize(prompt, add_bos=False, special=True)
    del vocab_only
    n = len(ids)
    llm = llama_cpp.Llama(
        model_path=model,
        n_ctx=n + n_decode + 8,
        n_batch=n,
        n_ubatch=n,
        n_threads=threads,
        n_threads_batch=threads,
        verbose=False,
    )
    n_vocab = llm.n_vocab()
    best_prefill = best_decode = float("inf")
    for _ in range(3):
        llm.reset()
        start = time.perf_counter()
        llm.eval(ids)
        best_prefill = min(best_prefill, time.perf_counter() - start)
        start = time.perf_counter()
        for _ in range(n_decode):
            logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(n_vocab,))
            llm.eval([int(np.argmax(logits))])
        best_decode = min(best_decode, time.perf_counter() - start)
    print(
        json.dumps(
            {
                "prompt_tokens": n,
                "prefill_tokens_per_s": n / best_prefill,
                "decode_tokens_per_s": n_decode / best_decode,
                "ids": ids,
                "version": llama_cpp.__version__,
            }
        )
    )


if __name__ == "__main__":
    main()
