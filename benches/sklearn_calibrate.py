"""The scikit-learn baseline for benches/calibrate.rs.

Does the work `codecal calibrate FILE --cv kfold --folds 5 --bootstrap B --json`
does, with scikit-learn and numpy: read the CSV, 5-fold Platt scaling
(LogisticRegression() on logit(p)), metrics of raw and out-of-fold confidences
(Brier, skill, AUROC, log loss, ECE/MCE over 10 bins, unbinned ECE, Performance
Score), and B percentile-bootstrap resamples of all of them. Prints one JSON
object of the point estimates, for the bench to compare with codecal's.
"""
import argparse
import json

import numpy as np
from sklearn.calibration import calibration_curve
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import brier_score_loss, d2_brier_score, log_loss, roc_auc_score
from sklearn.model_selection import KFold


def ece_mce(y, p, n_bins=10):
    frac_pos, mean_pred = calibration_curve(y, p, n_bins=n_bins)
    ids = np.searchsorted(np.linspace(0, 1, n_bins + 1)[1:-1], p)
    counts = np.bincount(ids, minlength=n_bins)
    counts = counts[counts > 0]
    gaps = np.abs(frac_pos - mean_pred)
    return float(np.sum(counts / len(p) * gaps)), float(gaps.max())


def metrics(y, p):
    c = p.mean()
    brier = brier_score_loss(y, p)
    ece, mce = ece_mce(y, p)
    return {
        "base_rate": float(y.mean()),
        "brier": float(brier),
        "skill_score": float(d2_brier_score(y, p)),
        "auroc": float(roc_auc_score(y, p)),
        "log_loss": float(log_loss(y, p)),
        "ece": ece,
        "mce": mce,
        # "Open the Oyster", Eq. 5: the mean per-item |correct - confidence|.
        "oyster_ece": float(np.mean(np.abs(y - p))),
        "performance_score": float(1 - brier / (c * (1 - c))),
    }


def run(metrics_of):
    """Parses the command line, fits 5-fold Platt scaling and prints the JSON
    object of `metrics_of` on the raw and out-of-fold confidences, with the
    percentile intervals of B bootstrap resamples (rows drawn and copied)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("csv")
    parser.add_argument("--bootstrap", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    data = np.loadtxt(args.csv, delimiter=",", skiprows=1, usecols=(1, 2))
    p, y = data[:, 0], data[:, 1].astype(int)
    logit = np.log(np.clip(p, 1e-12, 1 - 1e-12) / np.clip(1 - p, 1e-12, 1))
    oof = np.empty_like(p)
    slopes = []
    for train, test in KFold(5, shuffle=True, random_state=args.seed).split(p):
        model = LogisticRegression().fit(logit[train, None], y[train])
        oof[test] = model.predict_proba(logit[test, None])[:, 1]
        slopes.append(float(model.coef_[0, 0]))
    out = {"raw": metrics_of(y, p), "rescaled": metrics_of(y, oof), "slopes": slopes}
    rng = np.random.default_rng(args.seed)
    draws = []
    for _ in range(args.bootstrap):
        idx = rng.integers(0, len(p), len(p))
        draws.append((metrics_of(y[idx], p[idx]), metrics_of(y[idx], oof[idx])))
    if draws:
        out["ci"] = {
            side: {
                key: np.percentile([d[s][key] for d in draws], [2.5, 97.5]).tolist()
                for key in draws[0][s]
            }
            for s, side in enumerate(["raw", "rescaled"])
        }
    print(json.dumps(out))


if __name__ == "__main__":
    run(metrics)
