"""Writes examples/summaries.csv, the small file the README's quick start calibrates.

Synthetic and seeded: 600 generated code summaries from 24 repositories, each
with the model's average token probability (`confidence`), the SentenceBERT
cosine to the developer's comment rescaled to [0, 1] (`sbert_cosine01`), and
`correct` = sbert_cosine01 >= 0.7, a threshold of the kind `codecal thresholds`
derives. Like the models in the summarization seed, this one is over-confident:
it is sure of most summaries, and right about half the time.
"""
import csv
import pathlib

import numpy as np

rng = np.random.default_rng(7)
rows = []
for r in range(24):
    repo = f"repo{r:02d}"
    difficulty = rng.normal(0, 0.6)
    for i in range(25):
        quality = rng.normal(0.0, 1.0) - difficulty
        confidence = 1 / (1 + np.exp(-(1.8 + 0.6 * quality + rng.normal(0, 0.9))))
        cosine01 = float(np.clip(0.68 + 0.08 * quality + rng.normal(0, 0.06), 0, 1))
        rows.append((f"{repo}/m{i:02d}", repo, round(float(confidence), 6),
                     round(cosine01, 6), int(cosine01 >= 0.7)))
out = pathlib.Path(__file__).parent / "summaries.csv"
with out.open("w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["id", "repo", "confidence", "sbert_cosine01", "correct"])
    w.writerows(rows)
print(f"wrote {len(rows)} rows to {out}")
