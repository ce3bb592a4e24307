"""`python -m codecal.bench`: the package against the Python stack a user
would otherwise assemble, on the same seeded arrays, in one run.

Two tasks, each timed as the median of `--repeats` runs after one warm-up:
- metrics: every metric codecal reports in one call (`codecal.metrics.all`)
  against scikit-learn (Brier, skill, AUROC, log loss, the binned ECE from
  calibration_curve), relplot (smooth ECE), model-diagnostics (CORP) and
  MAPIE (Spiegelhalter's test);
- calibrate: `codecal.calibrate(cv="kfold", bootstrap=B)` against scikit-learn's
  5-fold Platt (LogisticRegression on logit(p), C = 1) and those same
  metrics on the raw and the out-of-fold confidences and on each of B
  bootstrap resamples of both.
Before any time is reported the shared metrics are compared, and the bench
stops if they disagree. The reference packages are those of
benches/requirements.txt; this module needs them installed.

Not here: the CLI's bench (`cargo bench --bench calibrate`) or any test.
"""

import argparse
import json
import statistics
import sys
import time

import numpy as np

from . import calibrate, metrics


def items(n, seed):
    rng = np.random.default_rng(seed)
    confidence = rng.beta(2.0, 2.0, n)
    correct = (rng.random(n) < confidence**1.7).astype(np.uint8)
    return confidence, correct


def reference_packages():
    try:
        import relplot
        from mapie.metrics.calibration import spiegelhalter_p_value, spiegelhalter_statistic
        from model_diagnostics.scoring import SquaredError, decompose
        from sklearn import calibration, linear_model, metrics as sk, model_selection
    except ImportError as error:
        sys.exit(f"codecal.bench: {error}; install benches/requirements.txt (pinned by sha256) first")
    return {
        "relplot": relplot,
        "spiegelhalter": (spiegelhalter_statistic, spiegelhalter_p_value),
        "corp": (SquaredError, decompose),
        "sklearn": (calibration, linear_model, sk, model_selection),
    }


def stack_metrics(packages, p, y):
    """The metrics both sides compute, from the reference packages."""
    calibration, _, sk, _ = packages["sklearn"]
    squared, decompose = packages["corp"]
    z, p_value = packages["spiegelhalter"]
    accuracy, mean = calibration.calibration_curve(y, p, n_bins=10, strategy="uniform")
    counts = np.bincount(np.searchsorted(np.linspace(0, 1, 11)[1:-1], p), minlength=10)
    counts = counts[counts > 0]
    corp = decompose(y_obs=y.astype(float), y_pred=p, scoring_function=squared())
    return {
        "brier": sk.brier_score_loss(y, p),
        "skill_score": sk.d2_brier_score(y, p),
        "auroc": sk.roc_auc_score(y, p),
        "log_loss": sk.log_loss(y, p),
        "ece": float(np.sum(counts / len(p) * np.abs(accuracy - mean))),
        "smooth_ece": float(packages["relplot"].smECE(p, y.astype(float))),
        "corp_mcb": float(corp["miscalibration"][0]),
        "corp_dsc": float(corp["discrimination"][0]),
        "corp_unc": float(corp["uncertainty"][0]),
        "spiegelhalter_z": float(z(y, p)),
        "spiegelhalter_p": float(p_value(y, p)),
    }


def stack_calibrate(packages, p, y, resamples, seed):
    """5-fold Platt out of fold, then the metrics on B resamples of raw and rescaled."""
    _, linear_model, _, model_selection = packages["sklearn"]
    logit = np.log(p / (1 - p)).reshape(-1, 1)
    rescaled = np.empty_like(p)
    for train, test in model_selection.KFold(5, shuffle=True, random_state=seed).split(logit):
        model = linear_model.LogisticRegression(C=1.0).fit(logit[train], y[train])
        rescaled[test] = model.predict_proba(logit[test])[:, 1]
    rng = np.random.default_rng(seed)
    for side in (p, rescaled):
        stack_metrics(packages, side, y)
        for _ in range(resamples):
            drawn = rng.integers(0, len(p), len(p))
            if y[drawn].min() != y[drawn].max():
                stack_metrics(packages, side[drawn], y[drawn])


def median_seconds(task, repeats):
    task()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        task()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def check_agreement(packages, p, y):
    ours = metrics.all(p, y)
    theirs = stack_metrics(packages, p, y)
    tolerance = {"smooth_ece": 1e-6}
    for name, value in theirs.items():
        if abs(ours[name] - value) > tolerance.get(name, 1e-9):
            sys.exit(f"codecal.bench: {name} disagrees: codecal {ours[name]!r}, reference {value!r}")
    return sorted(theirs)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m codecal.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--bootstrap", type=int, default=100, help="resamples in the calibrate task")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    packages = reference_packages()
    p, y = items(args.items, args.seed)
    compared = check_agreement(packages, p, y)
    rows = []
    tasks = {
        "metrics": (lambda: metrics.all(p, y), lambda: stack_metrics(packages, p, y)),
        f"calibrate (5-fold Platt, {args.bootstrap} resamples)": (
            lambda: calibrate(p, y, cv="kfold", bootstrap=args.bootstrap, seed=args.seed),
            lambda: stack_calibrate(packages, p, y, args.bootstrap, args.seed),
        ),
    }
    for name, (ours, theirs) in tasks.items():
        codecal_s = median_seconds(ours, args.repeats)
        stack_s = median_seconds(theirs, args.repeats)
        rows.append({"task": name, "codecal_s": codecal_s, "stack_s": stack_s, "ratio": stack_s / codecal_s})
    if args.json:
        print(json.dumps({"items": args.items, "compared": compared, "rows": rows}))
        return
    print(f"{args.items} items, median of {args.repeats} runs; metrics compared first: {', '.join(compared)}")
    print("| task | codecal (s) | scikit-learn + relplot + model-diagnostics + MAPIE (s) | ratio |")
    print("|---|---|---|---|")
    for row in rows:
        print(f"| {row['task']} | {row['codecal_s']:.4f} | {row['stack_s']:.4f} | {row['ratio']:.1f}x |")


if __name__ == "__main__":
    main()
