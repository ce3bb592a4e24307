"""Times llama-cpp-python (PyPI's llama.cpp, built by pip from its sdist into
target/llama-server-venv by benches/llama_server/check.py) on one GGUF, as
timing.cpp times the bench's own llama.cpp build: prefill of the prompt in
one batch, then greedy decoding one token at a time, best of 3 with and
best of 3 without flash attention.

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
    best_prefill = best_decode = float("inf")
    prefill_fa = decode_fa = False
    # Both flash-attention settings, the best of each rate kept, as timing.cpp.
    for flash_attn in (True, False):
        llm = llama_cpp.Llama(
            model_path=model,
            n_ctx=n + n_decode + 8,
            n_batch=n,
            n_ubatch=n,
            n_threads=threads,
            n_threads_batch=threads,
            flash_attn=flash_attn,
            verbose=False,
        )
        n_vocab = llm.n_vocab()
        for _ in range(3):
            llm.reset()
            start = time.perf_counter()
            llm.eval(ids)
            prefill = time.perf_counter() - start
            if prefill < best_prefill:
                best_prefill, prefill_fa = prefill, flash_attn
            start = time.perf_counter()
            for _ in range(n_decode):
                logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(n_vocab,))
                llm.eval([int(np.argmax(logits))])
            decode = time.perf_counter() - start
            if decode < best_decode:
                best_decode, decode_fa = decode, flash_attn
        del llm
    print(
        json.dumps(
            {
                "prompt_tokens": n,
                "prefill_tokens_per_s": n / best_prefill,
                "decode_tokens_per_s": n_decode / best_decode,
                "prefill_flash_attn": prefill_fa,
                "decode_flash_attn": decode_fa,
                "ids": ids,
                "version": llama_cpp.__version__,
            }
        )
    )


if __name__ == "__main__":
    main()
