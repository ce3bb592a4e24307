"""The Python onnxruntime baseline for benches/embed.rs.

Embeds the texts of a file (one per line) with the same ONNX graph and
tokenizer.json codecal uses: tokenize (HF tokenizers, truncation 256), sort by
length, batches of 32 padded to their longest text, InferenceSession.run.
Prints JSON: texts, seconds (embedding only, after loading), and the first
dimensions of the first embedding for the bench to compare.
Usage: python ort_embed.py MODEL.onnx TOKENIZER.json TEXTS.txt THREADS
"""
import json
import sys
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer


def main():
    onnx_path, tokenizer_path, texts_path, threads = sys.argv[1:5]
    texts = open(texts_path, encoding="utf-8").read().split("\n")[:-1]
    tokenizer = Tokenizer.from_file(tokenizer_path)
    tokenizer.no_padding()
    tokenizer.enable_truncation(256)
    options = ort.SessionOptions()
    options.intra_op_num_threads = int(threads)
    session = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
    start = time.perf_counter()
    encodings = tokenizer.encode_batch(texts)
    order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
    out = [None] * len(texts)
    for b in range(0, len(order), 32):
        batch = order[b:b + 32]
        width = max(len(encodings[i].ids) for i in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, i in enumerate(batch):
            n = len(encodings[i].ids)
            ids[row, :n] = encodings[i].ids
            mask[row, :n] = 1
        # Both outputs, as codecal fetches both (token vectors feed BERTScore).
        sentences, _tokens = session.run(["sentence_embedding", "token_embeddings"], {"input_ids": ids, "attention_mask": mask})
        for row, i in enumerate(batch):
            out[i] = sentences[row]
    seconds = time.perf_counter() - start
    print(json.dumps({"texts": len(texts), "seconds": seconds, "first": out[0][:8].tolist()}))


if __name__ == "__main__":
    main()
