"""MAPIE 1.6's Learn-then-Test procedures on the calibration sets that
benches/decisions.rs draws, for its power table.

Reads a JSON file {"target": t, "delta": d, "learn_fraction": f, "sets": [{"c": [...],
"y": [...]}, ...]} and prints one JSON object: for each fwer_method
(bonferroni, bonferroni_holm, fixed_sequence, split_fixed_sequence) the list of
best_predict_param per set (null where MAPIE finds no valid cutoff). An item is
accepted when its confidence >= the cutoff; MAPIE's default grid
np.linspace(0, 0.99, 100). The split procedure learns its order on the first
`learn_fraction` of each set (the sets are drawn i.i.d., so the first items are
a random part) with learn_fixed_sequence_order and calibrates on the rest.

Run by the bench in target/ref-venv (benches/requirements.txt, pinned by sha256).
"""
import json
import sys
import warnings

import numpy as np
from mapie.risk_control import BinaryClassificationController

METHODS = ["bonferroni", "bonferroni_holm", "fixed_sequence", "split_fixed_sequence"]


def controller(target, delta, method):
    return BinaryClassificationController(
        predict_function=lambda X: np.column_stack([1 - X[:, 0], X[:, 0]]),
        risk="precision",
        target_level=target,
        confidence_level=1 - delta,
        fwer_method=method,
    )


def cutoff(c, y, target, delta, method, learn_fraction):
    ctl = controller(target, delta, method)
    X = c.reshape(-1, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "split_fixed_sequence":
            k = int(round(len(c) * learn_fraction))
            ctl.learn_fixed_sequence_order(X[:k], y[:k])
            ctl.calibrate(X[k:], y[k:])
        else:
            ctl.calibrate(X, y)
    best = ctl.best_predict_param
    return None if best is None else float(best)


def main():
    doc = json.load(open(sys.argv[1]))
    out = {}
    for method in METHODS:
        out[method] = [
            cutoff(np.asarray(s["c"]), np.asarray(s["y"]), doc["target"], doc["delta"], method,
                   doc["learn_fraction"])
            for s in doc["sets"]
        ]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
