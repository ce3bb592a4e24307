"""Generation through a pool of two llama.cpp servers against one server.

Issue "Past one machine", item 4: the main job's prompts, answered by
`codecal generate --backend openai` once through one llama-cpp-python server
and once through a pool of two (`--base-url A --base-url B`), in one run, on
the same GGUF, each into a fresh cache. Prints both rates and their ratio.

On one machine both servers share its cores, so each server is given half
of them (`--threads-per-server`, default cores / 2) and the single server
all of them: the same CPU either way. llama-cpp-python's server answers one
request at a time, so the pool's gain comes from two requests in flight.

    python3 benches/llama_server/pool.py --prompts runs/default/prompts.jsonl \
        --model ~/.cache/codecal/models/qwen2.5-coder-0.5b/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf

The venv is check.py's (target/llama-server-venv, built on first use).
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check  # noqa: E402  (the venv, the server and its start-up are shared)

ALIAS = "pooled-model"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=Path, required=True)
    parser.add_argument("--model", type=Path, required=True, help="the GGUF both servers load")
    parser.add_argument("--count", type=int, default=24, help="prompts to answer (from the top)")
    parser.add_argument("--codecal", type=Path, default=check.ROOT / "target/release/codecal")
    parser.add_argument("--threads-per-server", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    parser.add_argument("--server-timeout", type=float, default=180.0)
    return parser.parse_args()


def start(model, threads, name):
    port = check.free_port()
    log = open(check.WORK / f"pool-{name}.log", "w", encoding="utf-8")
    command = [check.venv_python(), "-m", "llama_cpp.server", "--model", model,
               "--model_alias", ALIAS, "--host", "127.0.0.1", "--port", str(port),
               "--n_ctx", "2048", "--n_threads", str(threads), "--n_threads_batch", str(threads)]
    env = dict(os.environ, HOST="127.0.0.1", PORT=str(port))
    server = subprocess.Popen([str(c) for c in command], env=env, stdout=log, stderr=subprocess.STDOUT)
    return server, f"http://127.0.0.1:{port}/v1", log


def generate(args, prompts, name, urls):
    out, cache = check.WORK / f"pool-{name}.jsonl", check.WORK / f"pool-{name}.sqlite"
    for stale in (out, cache):
        stale.unlink(missing_ok=True)
    command = [args.codecal, "generate", "--prompts", prompts, "--out", out, "--cache", cache,
               "--backend", "openai", "--model", ALIAS, "--temperature", "0",
               "--max-tokens", "100", "--stop", "\\n", "--extra-body", '{"repeat_penalty": 1.0}',
               "--concurrency", "1", "--max-retries", "1"]
    for url in urls:
        command += ["--base-url", url]
    start = time.monotonic()
    check.run(command)
    seconds = time.monotonic() - start
    rows = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    tokens = sum(row.get("completion_tokens") or 0 for row in rows)
    prompt_tokens = sum(row.get("prompt_tokens") or 0 for row in rows)
    return {"name": name, "prompts": len(rows), "seconds": seconds, "completion_tokens": tokens,
            "prompt_tokens": prompt_tokens, "texts": [row["text"] for row in rows]}


def main():
    args = parse_args()
    check.ensure_venv(check.python_311(None))
    check.WORK.mkdir(parents=True, exist_ok=True)
    rows = [line for line in args.prompts.read_text().splitlines() if line.strip()][: args.count]
    prompts = check.WORK / "pool-prompts.jsonl"
    prompts.write_text("\n".join(rows) + "\n")
    cores = args.threads_per_server * 2
    results = []
    servers = []
    try:
        one = start(args.model, cores, "one")
        servers.append(one)
        check.wait_until_up(one[0], one[1], one[2].name, args.server_timeout)
        results.append(generate(args, prompts, f"one server, {cores} threads", [one[1]]))
        check.stop_server(one[0])
        pair = [start(args.model, args.threads_per_server, f"pool{i}") for i in range(2)]
        servers.extend(pair)
        for server, url, log in pair:
            check.wait_until_up(server, url, log.name, args.server_timeout)
        results.append(generate(args, prompts, f"pool of two, {args.threads_per_server} threads each",
                                [url for _, url, _ in pair]))
    finally:
        for server, _, log in servers:
            check.stop_server(server)
            log.close()
    print()
    print("| endpoints | prompts | seconds | prompts/s | generated tokens/s | prompt tokens |")
    print("|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['name']} | {r['prompts']} | {r['seconds']:.1f} | {r['prompts'] / r['seconds']:.3f} "
              f"| {r['completion_tokens'] / r['seconds']:.1f} | {r['prompt_tokens']} |")
    if len(results) == 2:
        ratio = results[0]["seconds"] / results[1]["seconds"]
        same = sum(a == b for a, b in zip(results[0]["texts"], results[1]["texts"]))
        print(f"\npool / one server, prompts per second: {ratio:.2f}x; "
              f"identical texts: {same} of {len(results[0]['texts'])}")


if __name__ == "__main__":
    main()
