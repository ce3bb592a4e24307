"""Writes tests/fixtures/rank_bm25_java_top3.txt: the Python rank_bm25 package's
top-3 exemplars for each of the 2,206 distinct Java records of
../shared/data/fewshot-codexglue/, the pool being every other record.

As the summarization seed's replication code: BM25Okapi(k1=1.5, b=0.75,
epsilon=0.25) over `code.split(" ")`, ranked by a stable descending sort.
Records are read folder by folder (Java, wildfly, orientdb, jain-slee,
geopackage), keeping the first record of each url; the fixture holds record
positions in that order ("query top1 top2 top3"), not the data itself.

Needs: pip install rank_bm25==0.2.2 numpy. Runs about ten minutes.
"""
import json
import pathlib
import sys
from multiprocessing import Pool

from rank_bm25 import BM25Okapi

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "fewshot-codexglue"
FOLDERS = ["Java", "wildfly", "orientdb", "jain-slee", "geopackage"]


def java_records():
    seen, tokens = set(), []
    for folder in FOLDERS:
        for line in open(DATA / folder / "test.jsonl", encoding="utf-8"):
            record = json.loads(line)
            if record["url"] in seen:
                continue
            seen.add(record["url"])
            tokens.append(record["code"].split(" "))
    return tokens


TOKENS = java_records()


def top3(query):
    pool = [i for i in range(len(TOKENS)) if i != query]
    scores = BM25Okapi([TOKENS[i] for i in pool]).get_scores(TOKENS[query])
    order = sorted(range(len(pool)), key=lambda j: -scores[j])
    return [pool[j] for j in order[:3]]


def main():
    with Pool(int(sys.argv[1]) if len(sys.argv) > 1 else 2) as workers:
        tops = workers.map(top3, range(len(TOKENS)), chunksize=16)
    out = ROOT / "tests" / "fixtures" / "rank_bm25_java_top3.txt"
    out.write_text("".join(f"{q} {' '.join(map(str, t))}\n" for q, t in enumerate(tops)))
    print(f"{len(TOKENS)} queries written to {out}")


if __name__ == "__main__":
    main()
