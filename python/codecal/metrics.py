"""The engine's metrics one at a time, on numpy arrays, Series or lists.

Each function takes `confidence` (probabilities) and `correct` (0/1 or
True/False) and returns what `codecal calibrate` reports under the same
name; an undefined value is NaN. `all` gives every metric in one call, which
costs no more than any single one: the engine computes them together.

Not here: rescaling or intervals (that is `codecal.calibrate`).
"""

import json

from . import _codecal
from ._inputs import confidence_array, correct_array


def all(confidence, correct, bins=10, binning="equal-width"):  # noqa: A001  (the package's name for it)
    """Every metric, as a dict keyed as in `codecal calibrate --json`."""
    p = confidence_array(confidence)
    y = correct_array(correct, len(p))
    found = json.loads(_codecal.metrics(p.tobytes(), y.tobytes(), int(bins), str(binning)))
    return {name: float("nan") if value is None else value for name, value in found.items()}


def ece(confidence, correct, bins=10, binning="equal-width"):
    """Expected calibration error over `bins` bins (equal-width or equal-mass)."""
    return all(confidence, correct, bins, binning)["ece"]


def smooth_ece(confidence, correct):
    """Smooth ECE (Błasiok and Nakkiran 2024), relplot's smECE."""
    return all(confidence, correct)["smooth_ece"]


def brier(confidence, correct):
    return all(confidence, correct)["brier"]


def skill(confidence, correct):
    """Brier skill score against the base rate (scikit-learn's d2_brier_score)."""
    return all(confidence, correct)["skill_score"]


def corp(confidence, correct):
    """The CORP decomposition of the Brier score: {"mcb", "dsc", "unc"}."""
    found = all(confidence, correct)
    return {"mcb": found["corp_mcb"], "dsc": found["corp_dsc"], "unc": found["corp_unc"]}


def spiegelhalter(confidence, correct):
    """Spiegelhalter's Z and its p-value, as (z, p)."""
    found = all(confidence, correct)
    return found["spiegelhalter_z"], found["spiegelhalter_p"]


def aurc(confidence, correct):
    """Area under the risk-coverage curve."""
    return all(confidence, correct)["aurc"]


def eaurc(confidence, correct):
    """AURC minus that of a ranking with every correct item first."""
    return all(confidence, correct)["e_aurc"]


def augrc(confidence, correct):
    """Area under the generalized risk-coverage curve (Traub et al. 2024)."""
    return all(confidence, correct)["augrc"]
