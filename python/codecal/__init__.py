"""codecal from Python: how far to trust what an LLM wrote about code.

The calibration engine of the `codecal` command line, one import away:

    import codecal
    result = codecal.calibrate(confidence, correct, groups=repos)
    result.metrics()                      # raw and rescaled, with 95% intervals

`calibrate` runs what `codecal calibrate` runs (the same Rust code, the same
numbers, the same calibrator file), on numpy arrays, pandas Series or lists.
`codecal.metrics` has the metrics one by one; `load_run` reads a run
directory of `codecal run` into DataFrames.
"""

import json
import os

import numpy as np

from . import _codecal, metrics
from ._inputs import by_columns, confidence_array, correct_array, group_list
from .figure import PngBytes, SvgBytes
from .run import Run, load_run

__version__ = _codecal.__version__
__all__ = [
    "CalibrationResult",
    "Calibrator",
    "Run",
    "calibrate",
    "load_run",
    "metrics",
    "reliability_figure",
]


def calibrate(
    confidence,
    correct,
    groups=None,
    method="platt",
    cv=None,
    folds=5,
    bootstrap=1000,
    seed=0,
    target_precision=None,
    delta=0.1,
    by=None,
    *,
    bins=10,
    binning="equal-width",
    penalty=True,
    bootstrap_by_group=False,
    reject_precision=None,
    procedure="fixed-sequence",
    min_coverage=None,
    rescale_by=None,
    measure="confidence",
):
    """Measures how well `confidence` predicts `correct`, raw and rescaled.

    As `codecal calibrate` with the same flags: `method` is the rescaler
    (platt, platt-ln, platt-p, temperature, isotonic, histogram, none),
    fitted out of fold in `folds` folds (`cv`: group, kfold, seed-balanced;
    by default group when `groups` is given, else kfold); `bootstrap`
    resamples give 95% intervals (of whole groups with
    `bootstrap_by_group`); accept cutoffs guarantee each `target_precision`
    (default 0.8, 0.9, 0.95) with chance 1 - `delta`; `by` (a dict of
    columns, a DataFrame, or one Series) adds calibration per group, and with
    `target_precision` cutoffs per group of its first column.
    """
    confidence = confidence_array(confidence)
    correct = correct_array(correct, len(confidence))
    groups = None if groups is None else group_list(groups, len(confidence), "groups")
    columns = by_columns(by, len(confidence))
    if isinstance(target_precision, (int, float)):
        target_precision = [target_precision]
    settings = {
        "measure": str(measure),
        "method": str(method),
        "penalty": bool(penalty),
        "cv": None if cv is None else str(cv),
        "folds": _count(folds, "folds", 2, 100),
        "bins": _count(bins, "bins", 1, 1000),
        "binning": str(binning),
        "bootstrap": _count(bootstrap, "bootstrap", 0, 100_000),
        "bootstrap_by_group": bool(bootstrap_by_group),
        "seed": _count(seed, "seed", 0, 2**64 - 1),
        "target_precision": [float(t) for t in (target_precision or [])],
        "delta": float(delta),
        "reject_precision": None if reject_precision is None else float(reject_precision),
        "procedure": str(procedure),
        "min_coverage": None if min_coverage is None else float(min_coverage),
        "rescale_by": None if rescale_by is None else str(rescale_by),
    }
    native = _codecal.calibrate(confidence.tobytes(), correct.tobytes(), groups, columns, json.dumps(settings))
    return CalibrationResult(native)


class CalibrationResult:
    """What `calibrate` found: `.report` (the dict `codecal calibrate --json`
    prints), `.metrics()`, `.cutoffs` and `.calibrator`."""

    def __init__(self, native):
        self._native = native
        self.report = json.loads(native.json())
        self.calibrator = Calibrator(native.calibrator())

    @property
    def cutoffs(self):
        """The accept (and reject) cutoffs with their guarantees."""
        return self.report["cutoffs"]

    @property
    def warnings(self):
        return self.report["warnings"]

    def out_of_fold(self):
        """Each item's rescaled confidence from the fold that held it out (NaN if none did)."""
        return np.frombuffer(self._native.out_of_fold(), dtype=np.float64).copy()

    def metrics(self):
        """A DataFrame, one row per metric: raw and rescaled values with their
        95% interval bounds (`raw_low`, `raw_high`, ...); NaN where undefined."""
        import pandas as pd

        table = {}
        for side in ("raw", "rescaled"):
            evaluation = self.report.get(side) or {}
            intervals = evaluation.get("ci") or {}
            for name, value in evaluation.items():
                if name == "ci":
                    continue
                low, high = intervals.get(name) or (None, None)
                row = table.setdefault(name, {})
                row[side], row[f"{side}_low"], row[f"{side}_high"] = _nan(value), _nan(low), _nan(high)
        frame = pd.DataFrame.from_dict(table, orient="index")
        frame.index.name = "metric"
        return frame

    def markdown(self):
        return self._native.markdown()

    def _repr_markdown_(self):
        return self.markdown()


class Calibrator:
    """A saved rescaler with its cutoffs: the file `codecal calibrate --save`
    writes and `codecal apply` reads."""

    def __init__(self, native):
        self._native = native
        self.measure, self.method, self.group_column = native.describe()

    @classmethod
    def load(cls, path):
        return cls(_codecal.Calibrator.load(os.fspath(path)))

    def save(self, path):
        self._native.save(os.fspath(path))

    def to_json(self):
        return self._native.to_json()

    def transform(self, confidence):
        """The calibrated confidence of each raw confidence, as a numpy array."""
        raw = confidence_array(confidence)
        return np.frombuffer(self._native.transform(raw.tobytes()), dtype=np.float64).copy()

    def decide(self, confidence, target_precision=None, groups=None):
        """"accept", "review" or "reject" for each item, as `codecal apply`
        decides it; `groups` gives each item's group where the cutoffs are
        per group."""
        raw = confidence_array(confidence)
        if groups is not None:
            groups = group_list(groups, len(raw), "groups")
        target = None if target_precision is None else float(target_precision)
        _, decisions = self._native.decide(raw.tobytes(), target, groups)
        return np.array(decisions, dtype=object)

    def __repr__(self):
        return f"Calibrator(measure={self.measure!r}, method={self.method!r})"


def reliability_figure(result, format="svg"):
    """The reliability diagram of a `calibrate` result, raw and rescaled, as
    SVG or PNG bytes that Jupyter shows inline."""
    svg = result._native.reliability_svg()
    if format == "svg":
        return SvgBytes(svg.encode("utf-8"))
    if format == "png":
        return PngBytes(_codecal.svg_to_png(svg))
    raise ValueError(f"format={format!r}; use 'svg' or 'png'")


def _count(value, name, low, high):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        raise ValueError(f"{name}={value!r}; expected a whole number from {low} to {high}")
    return int(value)


def _nan(value):
    return float("nan") if value is None else float(value)
