"""The Python-stack baseline for benches/calibrate.rs: the report a user would
otherwise assemble from the reference packages, on the same rows and with the
same number of resamples as `codecal calibrate FILE --cv kfold --folds 5
--bootstrap B --json`.

For the raw and the 5-fold out-of-fold Platt confidences (scikit-learn
LogisticRegression on logit(p), KFold shuffled), and on each of B percentile
bootstrap resamples of both (rows drawn with numpy, copied):
- scikit-learn: Brier, skill (d2_brier_score), AUROC, log loss;
- relplot 1.0.3: smooth ECE (smECE);
- model-diagnostics 1.5.0: the CORP decomposition (MCB, DSC, UNC);
- uncertainty-calibration 0.1.4: the debiased L2 calibration error
  (lower_bound_scaling_ce, 15 equal-mass bins);
- MAPIE 1.6.0: Spiegelhalter's Z and its p-value;
- scikit-learn and numpy as in benches/sklearn_calibrate.py: the binned ECE
  and MCE (10 equal-width bins), the unbinned "Oyster" ECE, the Performance
  Score; numpy: the ECE over 10 equal-mass bins and the
  risk–coverage numbers (AURC, E-AURC, AUGRC, ties scored as a run, as
  tests/selective_expected.py does).

Prints one JSON object of the point estimates (and the intervals), which the
bench compares with codecal's before it reports any time.
"""
import warnings

import numpy as np

warnings.filterwarnings("ignore")

import calibration  # noqa: E402  (uncertainty-calibration)
import relplot  # noqa: E402
from mapie.metrics.calibration import spiegelhalter_p_value, spiegelhalter_statistic  # noqa: E402
from model_diagnostics.scoring import SquaredError, decompose  # noqa: E402

import sklearn_calibrate  # noqa: E402  (beside this file)


def equal_mass_ece(y, p, bins=10):
    """ECE over `bins` bins of equal counts in confidence order (numpy's array_split)."""
    order = np.argsort(p, kind="stable")
    total = 0.0
    for chunk in np.array_split(order, bins):
        if len(chunk):
            total += len(chunk) / len(p) * abs(y[chunk].mean() - p[chunk].mean())
    return float(total)


def selective(y, p):
    """AURC, E-AURC and AUGRC with tied confidences as one run."""
    order = np.argsort(-p, kind="stable")
    ps, errs = p[order], 1 - y[order]
    n = len(p)
    ends = np.flatnonzero(np.append(ps[1:] != ps[:-1], True))
    starts = np.concatenate([[0], ends[:-1] + 1])
    cum_err = np.concatenate([[0.0], np.cumsum(errs)])
    k = np.arange(1, n + 1, dtype=float)
    run_of = np.repeat(np.arange(len(ends)), ends - starts + 1)
    before = cum_err[starts][run_of]
    per = (cum_err[ends + 1] - cum_err[starts]) / (ends - starts + 1)
    e = before + (k - starts[run_of]) * per[run_of]
    aurc = float(np.mean(e / k))
    c = int(y.sum())
    oracle = np.maximum(k - c, 0)
    return aurc, aurc - float(np.mean(oracle / k)), float(np.sum(e) / n / n)


def metrics(y, p):
    """The scikit-learn baseline's metrics, and the rest of the report."""
    corp = decompose(y_obs=y.astype(float), y_pred=p, scoring_function=SquaredError())
    aurc, e_aurc, augrc = selective(y, p)
    return {
        **sklearn_calibrate.metrics(y, p),
        "ece_equal_mass": equal_mass_ece(y, p),
        "smooth_ece": float(relplot.smECE(p, y.astype(float))),
        "corp_mcb": float(corp["miscalibration"][0]),
        "corp_dsc": float(corp["discrimination"][0]),
        "corp_unc": float(corp["uncertainty"][0]),
        "debiased_l2_ce": float(
            calibration.lower_bound_scaling_ce(p, y, p=2, debias=True, num_bins=15)
        ),
        "spiegelhalter_z": float(spiegelhalter_statistic(y, p)),
        "spiegelhalter_p": float(spiegelhalter_p_value(y, p)),
        "aurc": aurc,
        "e_aurc": e_aurc,
        "augrc": augrc,
    }


if __name__ == "__main__":
    # The command line, the folds and the resampling are the scikit-learn
    # baseline's; only the metrics differ.
    sklearn_calibrate.run(metrics)
