"""The Python BM25 baselines of benches/retrieve.rs: rank_bm25 or bm25s over
the same pool, tokenised as codecal's tantivy index tokenises code, timed
for index building and for top-k retrieval of the given queries.

    python bm25_baseline.py POOL.jsonl QUERIES.txt LIBRARY K LIMIT OUT.json

QUERIES.txt holds pool positions, one per line; the first LIMIT of them are
searched. Each query asks for K + 1 and drops itself, as codecal excludes a
query from its own exemplars. Query terms count once each, as in codecal's
tantivy query (one SHOULD clause per distinct term).
"""
import json
import re
import sys
import time

WORD = re.compile(r"\w+")


def identifier_parts(word):
    parts = []
    for piece in word.split("_"):
        if not piece:
            continue
        # codecal's rule: a boundary before an upper-case letter that follows
        # a lower-case one, or that ends a run of capitals before a lower-case one.
        start = 0
        for i in range(1, len(piece)):
            prev, here = piece[i - 1], piece[i]
            next_lower = i + 1 < len(piece) and piece[i + 1].islower()
            if (prev.islower() and here.isupper()) or (prev.isupper() and here.isupper() and next_lower):
                parts.append(piece[start:i])
                start = i
        parts.append(piece[start:])
    return parts


def code_tokens(code):
    tokens = []
    for word in WORD.findall(code):
        tokens.append(word.lower())
        parts = identifier_parts(word)
        if len(parts) > 1:
            tokens.extend(p.lower() for p in parts)
    return tokens


def main():
    pool_path, queries_path, library, k, limit, out = sys.argv[1:7]
    k, limit = int(k), int(limit)
    codes = [json.loads(line)["code"] for line in open(pool_path, encoding="utf-8")]
    queries = [int(line) for line in open(queries_path)][:limit]

    start = time.perf_counter()
    corpus = [code_tokens(code) for code in codes]
    if library == "rank_bm25":
        from rank_bm25 import BM25Okapi
        index = BM25Okapi(corpus)
    else:
        import bm25s
        index = bm25s.BM25(k1=1.2, b=0.75)
        index.index(corpus, show_progress=False)
    index_s = time.perf_counter() - start

    query_tokens = [sorted(set(code_tokens(codes[q]))) for q in queries]
    start = time.perf_counter()
    if library == "rank_bm25":
        import numpy as np
        hits = []
        for q, tokens in zip(queries, query_tokens):
            scores = index.get_scores(tokens)
            best = np.argsort(-scores, kind="stable")[: k + 1]
            hits.append([int(d) for d in best if d != q][:k])
    else:
        # bm25s takes token lists it has not seen in the vocabulary badly; keep known ones.
        vocab = index.vocab_dict
        known = [[t for t in tokens if t in vocab] or ["the"] for tokens in query_tokens]
        docs, _ = index.retrieve(known, k=k + 1, n_threads=2, show_progress=False)
        hits = [[int(d) for d in row if d != q][:k] for q, row in zip(queries, docs)]
    query_s = time.perf_counter() - start
    json.dump({"index_s": index_s, "query_s": query_s, "queries": len(queries), "hits": hits}, open(out, "w"))


if __name__ == "__main__":
    main()
