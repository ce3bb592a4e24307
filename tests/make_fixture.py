"""Writes tests/fixtures/calibration_small.csv, the fixture the sklearn checks use.

A seeded, synthetic stand-in for a summarization run: eight repositories of
distinct sizes, a model over-confident when sure and under-confident when unsure, a similarity target that tracks
correctness. Run once; the CSV is committed so the tests need no Python.
"""
import csv
import pathlib

import numpy as np

rng = np.random.default_rng(20261122)
sizes = [3, 5, 7, 9, 11, 13, 15, 17]  # distinct, so GroupKFold has no ties
rows = []
for g, size in enumerate(sizes):
    skill = rng.uniform(-0.5, 0.5)
    for _ in range(size):
        # Mostly high confidence, some low: over-confident at the top, under at the bottom.
        raw = rng.beta(5, 2) if rng.uniform() < 0.7 else rng.uniform(0.02, 0.5)
        conf = float(np.clip(raw, 0.001, 0.999))
        p_true = float(np.clip(0.25 + 0.5 * conf + 0.2 * skill, 0, 1))
        correct = int(rng.uniform() < p_true)
        target = float(np.clip(0.4 * correct + 0.3 * conf + rng.normal(0, 0.15), 0, 1))
        rows.append((f"repo{g}", round(conf, 6), correct, round(target, 6)))
# Exact ties exercise the tie handling of AUROC and Spearman.
rows[10] = (rows[10][0], rows[11][1], rows[10][2], rows[10][3])
rows[20] = (rows[20][0], rows[21][1], 1 - rows[21][2], rows[20][3])
out = pathlib.Path(__file__).parent / "fixtures" / "calibration_small.csv"
with out.open("w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["id", "repo", "confidence", "correct", "similarity"])
    for i, (repo, conf, correct, target) in enumerate(rows):
        w.writerow([f"item{i:03d}", repo, conf, correct, target])
print(f"wrote {len(rows)} rows to {out}")
