"""The relplot baseline for the smooth-ECE case of benches/calibrate.rs.

Reads the bench CSV (columns repo, confidence, correct), computes relplot 1.0.3's
smECE on all rows and on B bootstrap resamples of the rows (numpy's default_rng
seeded by --seed, indices drawn with replacement), and prints one JSON object:
the point estimate and the 2.5 and 97.5 percentiles of the resamples. This is the
work `codecal calibrate FILE --method none --bootstrap B` does for smooth ECE
(codecal computes every other metric on each resample too).
"""
import argparse
import json

import numpy as np
import relplot


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("csv")
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    data = np.genfromtxt(args.csv, delimiter=",", names=True, dtype=None, encoding="utf-8")
    f = np.asarray(data["confidence"], dtype=float)
    y = np.asarray(data["correct"], dtype=float)
    point = float(relplot.smECE(f, y))
    rng = np.random.default_rng(args.seed)
    draws = []
    for _ in range(args.bootstrap):
        idx = rng.integers(0, len(f), len(f))
        draws.append(float(relplot.smECE(f[idx], y[idx])))
    low, high = np.percentile(draws, [2.5, 97.5]) if draws else (point, point)
    print(json.dumps({"smooth_ece": point, "ci": [float(low), float(high)]}))


if __name__ == "__main__":
    main()
