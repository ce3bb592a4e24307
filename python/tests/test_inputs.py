"""Every bad input is a ValueError naming the argument, from the Python API
and from the extension underneath it; nothing panics across the boundary."""

import math

import numpy as np
import pytest

import codecal
from codecal import _codecal, metrics

P = [0.1, 0.9, 0.4, 0.8, 0.3, 0.7]
Y = [0, 1, 0, 1, 1, 0]
ENTRY_POINTS = [
    lambda p, y: codecal.calibrate(p, y, bootstrap=0, folds=2),
    metrics.ece,
    metrics.smooth_ece,
    metrics.brier,
    metrics.spiegelhalter,
    metrics.aurc,
]


@pytest.mark.parametrize("call", ENTRY_POINTS)
@pytest.mark.parametrize(
    ("confidence", "correct", "message"),
    [
        ([0.1, math.nan, 0.4, 0.8, 0.3, 0.7], Y, r"confidence\[1\] is NaN"),
        ([0.1, 1.5, 0.4, 0.8, 0.3, 0.7], Y, r"confidence\[1\] is 1.5, outside \[0, 1\]"),
        ([0.1, 0.9, -0.01, 0.8, 0.3, 0.7], Y, r"confidence\[2\] is -0.01"),
        (P, Y[:5], r"correct has 5 items, confidence has 6"),
        (P, [1] * 6, r"correct: every item is correct"),
        (P, [False] * 6, r"correct: every item is wrong"),
        (P, [0, 1, 2, 1, 0, 1], r"correct\[2\] is 2"),
        (P, [0, 1, math.nan, 1, 0, 1], r"correct\[2\] is nan"),
        ([[0.1, 0.2]], [1], r"confidence: expected one value per item"),
        ([], [], r"confidence is empty"),
        (["high", "low"], [1, 0], r"confidence: not numbers"),
    ],
)
def test_bad_items_are_value_errors_naming_the_argument(call, confidence, correct, message):
    with pytest.raises(ValueError, match=message):
        call(confidence, correct)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"groups": ["a", "b", "c"]}, r"groups has 3 items, confidence has 6"),
        ({"groups": ["a", None, "b", "b", "a", "c"]}, r"groups\[1\] is missing"),
        ({"groups": ["a", " ", "b", "b", "a", "c"]}, r"groups\[1\] is empty"),
        ({"by": {"language": ["x"] * 5}}, r"by\['language'\] has 5 items"),
        ({"method": "platypus"}, r"method=\"platypus\"; use one of .*platt"),
        ({"cv": "random"}, r"cv=\"random\""),
        ({"folds": 1}, r"folds=1; expected a whole number from 2 to 100"),
        ({"bootstrap": -5}, r"bootstrap=-5"),
        ({"bootstrap": 2.5}, r"bootstrap=2.5"),
        ({"binning": "log"}, r"binning=\"log\""),
        ({"procedure": "guess"}, r"procedure=\"guess\""),
        ({"target_precision": [1.5]}, r"^target_precision must be in \(0, 1\), got 1.5"),
        ({"delta": 0.0}, r"^delta must be in \(0, 1\), got 0"),
    ],
)
def test_bad_settings_are_value_errors_naming_them(arguments, message):
    with pytest.raises(ValueError, match=message):
        codecal.calibrate(P, Y, **{"bootstrap": 0, "folds": 2, **arguments})


def test_the_extension_checks_again_what_it_is_given():
    good = np.array(P).tobytes()
    labels = np.array(Y, dtype=np.uint8).tobytes()
    with pytest.raises(ValueError, match="not float64 data"):
        _codecal.metrics(good[:-1], labels, 10, "equal-width")
    with pytest.raises(ValueError, match=r"confidence\[0\] is NaN|not a probability"):
        _codecal.metrics(np.array([math.nan] * 6).tobytes(), labels, 10, "equal-width")
    with pytest.raises(ValueError, match=r"correct\[1\] is 7"):
        _codecal.metrics(good, bytes([0, 7, 0, 1, 1, 0]), 10, "equal-width")
    with pytest.raises(ValueError, match="correct has 5 items"):
        _codecal.metrics(good, labels[:5], 10, "equal-width")
    with pytest.raises(ValueError, match="at least one item and one bin"):
        _codecal.metrics(good, labels, 0, "equal-width")
    with pytest.raises(ValueError, match="unknown field|missing field"):
        _codecal.calibrate(good, labels, None, [], "{}")


def test_a_figure_format_it_does_not_draw_is_refused():
    result = codecal.calibrate(P, Y, bootstrap=0, folds=2)
    with pytest.raises(ValueError, match="format='gif'"):
        codecal.reliability_figure(result, format="gif")


def test_a_calibrator_with_cutoffs_per_group_needs_the_groups(items):
    confidence, correct, repos, languages = items
    result = codecal.calibrate(
        confidence, correct, groups=repos, bootstrap=0, target_precision=0.8, by={"language": languages}
    )
    with pytest.raises(ValueError, match=r"groups: the calibrator's cutoffs are per group of \"language\""):
        result.calibrator.decide(confidence)
    with pytest.raises(ValueError, match=r"groups has 2 items"):
        result.calibrator.decide(confidence, groups=["java", "go"])
    with pytest.raises(ValueError, match=r"target precision|0.99"):
        result.calibrator.decide(confidence, target_precision=0.99, groups=languages)
