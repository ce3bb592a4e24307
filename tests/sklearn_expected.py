"""Prints the scikit-learn / scipy values that the unit tests of `calibrate` expect.

Reads tests/fixtures/calibration_small.csv. Logistic fits use a tight tolerance
(tol=1e-12) so the printed optimum is exact; sklearn's default tol=1e-4 stops
short of it in the fourth decimal. Run it in the pinned venv:
python3 -m venv target/ref-venv
target/ref-venv/bin/pip install --require-hashes -r benches/requirements.txt
target/ref-venv/bin/python tests/sklearn_expected.py
"""
import pathlib

import numpy as np
from scipy.stats import spearmanr
from sklearn.calibration import calibration_curve
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import brier_score_loss, d2_brier_score, log_loss, roc_auc_score
from sklearn.model_selection import GroupKFold

path = pathlib.Path(__file__).parent / "fixtures" / "calibration_small.csv"
data = np.genfromtxt(path, delimiter=",", names=True, dtype=None, encoding="utf-8")
p = data["confidence"].astype(float)
y = data["correct"].astype(int)
groups = data["repo"]
target = data["similarity"].astype(float)


def ece_from_curve(prob, strategy, n_bins=10):
    frac_pos, mean_pred = calibration_curve(y, prob, n_bins=n_bins, strategy=strategy)
    if strategy == "uniform":
        edges = np.linspace(0, 1, n_bins + 1)
    else:
        edges = np.percentile(prob, np.linspace(0, 100, n_bins + 1))
    ids = np.searchsorted(edges[1:-1], prob)  # as calibration_curve: bins are (lo, hi]
    counts = np.bincount(ids, minlength=n_bins)
    counts = counts[counts > 0]
    gaps = np.abs(frac_pos - mean_pred)
    return float(np.sum(counts / len(prob) * gaps)), float(np.max(gaps))


def logistic(feature, **kw):
    model = LogisticRegression(tol=1e-12, max_iter=100000, **kw)
    model.fit(feature.reshape(-1, 1), y)
    return float(model.coef_[0, 0]), float(model.intercept_[0]) if model.fit_intercept else 0.0


def show(name, value):
    print(f"{name} = {value!r}")


logit = np.log(p / (1 - p))
show("base_rate", y.mean())
show("brier", brier_score_loss(y, p))
show("d2_brier", d2_brier_score(y, p))
show("auroc", roc_auc_score(y, p))
show("log_loss", log_loss(y, p))
show("spearman", spearmanr(p, target).statistic)
show("ece_uniform, mce_uniform", ece_from_curve(p, "uniform"))
show("ece_quantile, mce_quantile", ece_from_curve(p, "quantile"))
show("platt (slope, intercept)", logistic(logit))
show("platt no penalty", logistic(logit, C=np.inf))
show("platt_ln", logistic(np.log(p)))
show("platt_p (Open the Oyster, Eq. 4)", logistic(p))
show("platt_p unpenalised (Eq. 4 as the paper fits it)", logistic(p, C=np.inf))
show("temperature", logistic(logit, fit_intercept=False))
iso = IsotonicRegression(out_of_bounds="clip").fit(p, y)
queries = np.array([0.0, 0.3, 0.55, 0.7, 0.77, 0.85, 0.93, 1.0])
show("isotonic at", queries.tolist())
show("isotonic", iso.predict(queries).tolist())

oof = np.empty_like(p)
for train, test in GroupKFold(n_splits=5).split(p, y, groups):
    model = LogisticRegression(tol=1e-12, max_iter=100000)
    model.fit(logit[train].reshape(-1, 1), y[train])
    oof[test] = model.predict_proba(logit[test].reshape(-1, 1))[:, 1]
show("group-cv platt brier", brier_score_loss(y, oof))
show("group-cv platt auroc", roc_auc_score(y, oof))
show("group-cv platt ece", ece_from_curve(oof, "uniform"))
show("group-cv test folds", [sorted(set(groups[t])) for _, t in GroupKFold(n_splits=5).split(p, y, groups)])

# The learned combination of measures (src/calibrate/combine.rs):
# StandardScaler, then LogisticRegression with C = 1, on two columns.
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

combo_a = [0.9, 0.8, 0.3, 0.6, 0.2, 0.95, 0.4, 0.7, 0.1, 0.5]
combo_b = [1.0, 0.6, 0.2, 1.0, 0.4, 0.8, 0.0, 0.2, 0.2, 0.6]
combo_y = [1, 1, 0, 1, 0, 1, 0, 0, 0, 1]
combo_x = np.column_stack([combo_a, combo_b])
combo = make_pipeline(
    StandardScaler(), LogisticRegression(C=1.0, tol=1e-12, max_iter=100000)
).fit(combo_x, combo_y)
show("combination weights", combo[-1].coef_[0].tolist())
show("combination intercept", float(combo[-1].intercept_[0]))
show("combination P(first item)", float(combo.predict_proba(combo_x[:1])[0, 1]))
