"""The metrics and the Platt fit agree with the reference implementations
the Rust tests compare with (scikit-learn, relplot, model-diagnostics,
MAPIE), computed here live on the same arrays."""

import numpy as np
import pytest

import codecal
from codecal import metrics
from conftest import reference


def close(ours, theirs, tolerance, name):
    assert abs(ours - theirs) <= tolerance, f"{name}: codecal {ours!r}, reference {theirs!r}"


def test_scikit_learn_scores(items):
    sk = reference("sklearn.metrics")
    confidence, correct, _, _ = items
    found = metrics.all(confidence, correct)
    close(found["brier"], sk.brier_score_loss(correct, confidence), 1e-12, "brier")
    close(found["skill_score"], sk.d2_brier_score(correct, confidence), 1e-12, "skill")
    close(found["auroc"], sk.roc_auc_score(correct, confidence), 1e-12, "auroc")
    close(found["log_loss"], sk.log_loss(correct, confidence), 1e-12, "log loss")
    close(metrics.skill(confidence, correct), found["skill_score"], 0, "skill()")


def test_binned_ece_against_scikit_learns_calibration_curve(items):
    calibration = reference("sklearn.calibration")
    confidence, correct, _, _ = items
    accuracy, mean = calibration.calibration_curve(correct, confidence, n_bins=10, strategy="uniform")
    ids = np.searchsorted(np.linspace(0, 1, 11)[1:-1], confidence)
    counts = np.bincount(ids, minlength=10)
    counts = counts[counts > 0]
    expected = float(np.sum(counts / len(confidence) * np.abs(accuracy - mean)))
    close(metrics.ece(confidence, correct), expected, 1e-12, "ece")


def test_smooth_ece_against_relplot(items):
    relplot = reference("relplot")
    confidence, correct, _, _ = items
    close(metrics.smooth_ece(confidence, correct), float(relplot.smECE(confidence, correct.astype(float))), 1e-9, "smECE")


def test_corp_against_model_diagnostics(items):
    scoring = reference("model_diagnostics.scoring")
    confidence, correct, _, _ = items
    expected = scoring.decompose(y_obs=correct.astype(float), y_pred=confidence, scoring_function=scoring.SquaredError())
    ours = metrics.corp(confidence, correct)
    close(ours["mcb"], float(expected["miscalibration"][0]), 1e-9, "MCB")
    close(ours["dsc"], float(expected["discrimination"][0]), 1e-9, "DSC")
    close(ours["unc"], float(expected["uncertainty"][0]), 1e-9, "UNC")


def test_spiegelhalter_against_mapie(items):
    mapie = reference("mapie.metrics.calibration")
    confidence, correct, _, _ = items
    z, p = metrics.spiegelhalter(confidence, correct)
    close(z, float(mapie.spiegelhalter_statistic(correct, confidence)), 1e-9, "Spiegelhalter Z")
    close(p, float(mapie.spiegelhalter_p_value(correct, confidence)), 1e-9, "Spiegelhalter p")


@pytest.mark.parametrize(("penalty", "sklearn_arguments"), [(True, {"C": 1.0}), (False, {"C": np.inf})])
def test_the_final_platt_fit_against_scikit_learn(items, penalty, sklearn_arguments):
    linear = reference("sklearn.linear_model")
    confidence, correct, repos, _ = items
    result = codecal.calibrate(confidence, correct, groups=repos, bootstrap=0, penalty=penalty)
    logit = np.log(confidence / (1 - confidence)).reshape(-1, 1)
    model = linear.LogisticRegression(tol=1e-12, max_iter=100_000, **sklearn_arguments).fit(logit, correct)
    fit = result.report["final_fit"]
    close(fit["slope"], float(model.coef_[0, 0]), 1e-6, "slope")
    close(fit["intercept"], float(model.intercept_[0]), 1e-6, "intercept")
    calibrated = result.calibrator.transform(confidence)
    close(float(np.max(np.abs(calibrated - model.predict_proba(logit)[:, 1]))), 0.0, 1e-6, "calibrated")
