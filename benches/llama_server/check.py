#!/usr/bin/env python3
"""Run codecal's OpenAI-compatible client against llama.cpp's real server.

An opt-in check for the "Local generation" issue (see README.md beside this
file). It installs llama-cpp-python[server] into target/llama-server-venv from
the hash-pinned requirements beside it (building llama.cpp for this CPU),
serves the SmolLM2 GGUF that codecal itself uses, and runs
`target/release/codecal generate` three times on 20 prompts: with the openai
backend against the server's /completions (each prompt as a string) and
/chat/completions (as messages), and with the local backend on both shapes
(40 prompts in one run), so that each server reply has a local one to
match. It checks that every server reply came back with per-token
log-probabilities, and compares the replies with the local backend's: texts
identical, first tokens equal, the largest difference of the first token's
log-probability, prompt tokens equal.

What it is not: a benchmark (nothing is timed but the install), a test that
`cargo test` runs, or a check of other servers (vLLM, TGI). It needs the
network to PyPI on first run, a C/C++ compiler, and minutes to build llama.cpp.
Standard library only.
"""

import argparse
import hashlib
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
VENV = ROOT / "target" / "llama-server-venv"
WORK = ROOT / "target" / "llama-server-check"
REQUIREMENTS = [HERE / "requirements-build.txt", HERE / "requirements.txt"]
MODEL_ALIAS = "smollm2"
PROMPTS = 20
MAX_TOKENS = 100
CONTEXT = 2048
# llama.cpp's server applies repeat_penalty 1.1 unless told otherwise; greedy
# decoding that matches the local backend needs 1.0.
EXTRA_BODY = '{"repeat_penalty": 1.0}'
# ggml's CMake option for each x86 feature flag in /proc/cpuinfo. AMX stays
# off: its kernels die with SIGILL where the kernel or sandbox does not grant
# AMX state (see benches/llama_cpp/build.sh).
GGML_X86_OPTIONS = {
    "sse4_2": "GGML_SSE42",
    "avx": "GGML_AVX",
    "avx2": "GGML_AVX2",
    "fma": "GGML_FMA",
    "f16c": "GGML_F16C",
    "bmi2": "GGML_BMI2",
    "avx_vnni": "GGML_AVX_VNNI",
    "avx512f": "GGML_AVX512",
    "avx512vbmi": "GGML_AVX512_VBMI",
    "avx512_vnni": "GGML_AVX512_VNNI",
    "avx512_bf16": "GGML_AVX512_BF16",
}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=Path, default=ROOT / "runs/default/prompts.jsonl",
                        help="prompts JSONL (`codecal run` writes it); the first 20 are used")
    parser.add_argument("--model", type=Path,
                        help="the GGUF the server loads; default codecal's SmolLM2")
    parser.add_argument("--codecal", type=Path, default=ROOT / "target/release/codecal")
    parser.add_argument("--python", default=None,
                        help="CPython 3.11 for the venv (the pins are for 3.11); "
                        "default this one or python3.11")
    parser.add_argument("--server-timeout", type=float, default=180.0,
                        help="seconds to wait for the server to answer")
    return parser.parse_args()


def run(command, env=None):
    """Runs a command, echoing it; a failure raises."""
    print("+", " ".join(str(c) for c in command), flush=True)
    subprocess.run([str(c) for c in command], check=True, env=env)


# --- the venv -----------------------------------------------------------------


def venv_python():
    return VENV / "bin" / "python"


def python_311(requested):
    """An interpreter for the venv: the pins name CPython 3.11 wheels."""
    if requested:
        return requested
    if sys.version_info[:2] == (3, 11):
        return sys.executable
    found = shutil.which("python3.11")
    if found:
        return found
    sys.exit("check.py: the requirements are pinned for CPython 3.11; pass --python PATH to one")


def requirements_digest():
    digest = hashlib.sha256()
    for path in REQUIREMENTS:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def cmake_args():
    """A CPU-only build with every vector extension this CPU has, AMX aside."""
    args = ["-DGGML_CUDA=OFF", "-DGGML_METAL=OFF", "-DGGML_VULKAN=OFF", "-DGGML_BLAS=OFF",
            "-DLLAVA_BUILD=OFF"]
    cpuinfo = Path("/proc/cpuinfo")
    if platform.machine() in ("x86_64", "AMD64") and cpuinfo.is_file():
        flags = set()
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
        args.append("-DGGML_NATIVE=OFF")
        for flag, option in GGML_X86_OPTIONS.items():
            args.append(f"-D{option}={'ON' if flag in flags else 'OFF'}")
    return " ".join(args)


def ensure_venv(python):
    """Creates the venv and installs the pinned server, unless already done."""
    marker = VENV / ".codecal-installed"
    # The build names this CPU's extensions, so another CPU rebuilds it.
    digest = hashlib.sha256((requirements_digest() + cmake_args()).encode()).hexdigest()
    if marker.is_file() and marker.read_text().strip() == digest:
        print(f"llama-cpp-python: installed in {VENV}")
        return
    if not venv_python().is_file():
        run([python, "-m", "venv", VENV])
    env = dict(os.environ, CMAKE_ARGS=cmake_args())
    print(f"CMAKE_ARGS={env['CMAKE_ARGS']}")
    print("installing llama-cpp-python; building llama.cpp takes minutes", flush=True)
    start = time.monotonic()
    pip = [venv_python(), "-m", "pip", "install", "--require-hashes", "--progress-bar", "off"]
    run(pip + ["-r", REQUIREMENTS[0]], env=env)
    run(pip + ["--no-build-isolation", "-r", REQUIREMENTS[1]], env=env)
    print(f"install took {time.monotonic() - start:.0f} s")
    marker.write_text(digest + "\n")


# --- prompts and the model -----------------------------------------------------


def chatml(messages):
    """One string for a chat prompt, so /completions can be asked too."""
    turns = [f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages]
    return "".join(turns) + "<|im_start|>assistant\n"


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def write_prompts(source):
    """The first 20 prompts in both shapes: a string for /completions, messages
    for /chat/completions, and both for the local backend (ids suffixed)."""
    lines = [line for line in source.read_text().splitlines() if line.strip()][:PROMPTS]
    if len(lines) < PROMPTS:
        sys.exit(f"check.py: {source} has {len(lines)} prompts; {PROMPTS} are needed")
    completion, chat = [], []
    for line in lines:
        row = json.loads(line)
        prompt = row["prompt"]
        if isinstance(prompt, str):
            messages = [{"role": "user", "content": prompt}]
        else:
            messages, prompt = prompt, chatml(prompt)
        completion.append({"id": str(row["id"]), "prompt": prompt})
        chat.append({"id": str(row["id"]), "prompt": messages})
    local = [dict(r, id=r["id"] + "#completion") for r in completion]
    local += [dict(r, id=r["id"] + "#chat") for r in chat]
    WORK.mkdir(parents=True, exist_ok=True)
    files = {name: WORK / f"prompts-{name}.jsonl" for name in ("completion", "chat", "local")}
    write_jsonl(files["completion"], completion)
    write_jsonl(files["chat"], chat)
    write_jsonl(files["local"], local)
    return files


def codecal_gguf():
    """Where `codecal setup` (or the local backend's first use) puts SmolLM2:
    CODECAL_HOME, else $XDG_CACHE_HOME/codecal, else ~/.cache/codecal (as
    src/models.rs; `codecal setup` has no flag that prints it alone)."""
    if os.environ.get("CODECAL_HOME"):
        home = Path(os.environ["CODECAL_HOME"])
    elif os.environ.get("XDG_CACHE_HOME"):
        home = Path(os.environ["XDG_CACHE_HOME"]) / "codecal"
    else:
        home = Path.home() / ".cache" / "codecal"
    return home / "models/smollm2-135m-instruct/SmolLM2-135M-Instruct.Q4_1.gguf"


def find_model(requested):
    ours = codecal_gguf()
    if requested is None:
        if not ours.is_file():
            sys.exit(f"check.py: no GGUF at {ours}; run `codecal setup` or pass --model PATH")
        return ours
    if requested.resolve() != ours.resolve():
        print(f"warning: the server loads {requested}, the local backend {ours}")
    return requested


# --- the server ----------------------------------------------------------------


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(model, port, log):
    threads = str(os.cpu_count() or 1)
    command = [venv_python(), "-m", "llama_cpp.server", "--model", model,
               "--model_alias", MODEL_ALIAS, "--host", "127.0.0.1", "--port", str(port),
               "--n_ctx", str(CONTEXT), "--n_threads", threads, "--n_threads_batch", threads]
    # The server lets HOST and PORT in the environment override its flags.
    env = dict(os.environ, HOST="127.0.0.1", PORT=str(port))
    print("+", " ".join(str(c) for c in command), f"> {log.name}", flush=True)
    return subprocess.Popen([str(c) for c in command], env=env, stdout=log,
                            stderr=subprocess.STDOUT)


def wait_until_up(server, base_url, log, limit):
    """Polls /models until the server answers, it exits, or `limit` s pass."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with {server.returncode}; see {log}")
        try:
            with urllib.request.urlopen(base_url + "/models", timeout=5) as reply:
                if reply.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(1)
    raise RuntimeError(f"the server did not answer within {limit:.0f} s; see {log}")


def stop_server(server):
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


# --- generation and comparison ---------------------------------------------------


def generate(codecal, name, prompts, extra=()):
    """One `codecal generate` run into its own output file and a fresh cache."""
    out, cache = WORK / f"{name}.jsonl", WORK / f"{name}.sqlite"
    for stale in (out, cache):
        stale.unlink(missing_ok=True)
    run([codecal, "generate", "--prompts", prompts, "--out", out, "--cache", cache,
         "--temperature", "0", "--max-tokens", str(MAX_TOKENS), *extra])
    return [json.loads(line) for line in out.read_text().splitlines() if line.strip()]


def has_logprobs(row):
    """Non-empty tokens, each a non-empty string with a numeric logprob."""
    tokens = row.get("tokens") or []
    return bool(tokens) and all(
        isinstance(t.get("token"), str) and t["token"] != ""
        and isinstance(t.get("logprob"), (int, float))
        for t in tokens)


def compare(server_rows, local_rows):
    """The table's numbers for one server run beside the local backend's."""
    missing, numbers = [], dict.fromkeys(
        ["with logprobs", "texts identical", "first tokens equal", "prompt tokens equal"], 0)
    worst = 0.0
    for row, local in zip(server_rows, local_rows):
        ok = has_logprobs(row)
        # An empty reply has no tokens to score; it passes only where the
        # local backend's reply is empty too.
        if not ok and not row["text"] == "" == local["text"]:
            missing.append(row["id"])
        numbers["with logprobs"] += ok
        numbers["texts identical"] += row["text"] == local["text"]
        numbers["prompt tokens equal"] += row.get("prompt_tokens") == local.get("prompt_tokens")
        if ok and local.get("tokens"):
            first, local_first = row["tokens"][0], local["tokens"][0]
            numbers["first tokens equal"] += first["token"] == local_first["token"]
            worst = max(worst, abs(first["logprob"] - local_first["logprob"]))
    numbers.update({"replies": len(server_rows), "max abs diff, first logprob": f"{worst:.2e}",
                    "missing": missing})
    return numbers


def print_table(results):
    columns = ["replies", "with logprobs", "texts identical", "first tokens equal",
               "max abs diff, first logprob", "prompt tokens equal"]
    print("\n| server run | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for name, numbers in results.items():
        print(f"| {name} | " + " | ".join(str(numbers[c]) for c in columns) + " |")


def check(args, files):
    """The local run (which installs SmolLM2 on first use), then the server
    and both server runs; returns the table's rows. The server is stopped
    however this ends."""
    local = generate(args.codecal, "local", files["local"])
    by_id = {row["id"]: row for row in local}
    model = find_model(args.model)
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    log = WORK / "server.log"
    with log.open("wb") as log_file:
        server = start_server(model, port, log_file)
        try:
            wait_until_up(server, base_url, log, args.server_timeout)
            return server_runs(args, files, base_url, by_id)
        finally:
            stop_server(server)


def server_runs(args, files, base_url, by_id):
    """Both openai runs, each compared with the local run on the same prompts."""
    # One request at a time: the server answers them one by one anyway, and a
    # queue of them would eat into each request's timeout.
    openai = ["--backend", "openai", "--base-url", base_url, "--model", MODEL_ALIAS,
              "--extra-body", EXTRA_BODY, "--concurrency", "1", "--timeout", "600"]
    results = {}
    for name, endpoint in (("completion", "/completions"), ("chat", "/chat/completions")):
        rows = generate(args.codecal, name, files[name], openai)
        local = [by_id[row["id"] + "#" + name] for row in rows]
        results[endpoint] = compare(rows, local)
    return results


def main():
    args = parse_args()
    if not args.codecal.is_file():
        sys.exit(f"check.py: no {args.codecal}; build it with `cargo build --release`")
    if not args.prompts.is_file():
        sys.exit(f"check.py: no {args.prompts}; `codecal run` writes it, or pass --prompts")
    ensure_venv(python_311(args.python))
    files = write_prompts(args.prompts)
    results = check(args, files)
    print_table(results)
    failed = {name: r["missing"] for name, r in results.items() if r["missing"]}
    for name, ids in failed.items():
        print(f"{name}: no log-probabilities for {', '.join(ids)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
