"""The Python API gives what the command line gives, to 1e-12, on the same
items: the report of `codecal calibrate --json`, the calibrator file of
`--save`, and the decisions of `codecal apply`."""

import csv
import json
import math
import subprocess

import numpy as np
import pytest

import codecal
from conftest import write_csv

TOLERANCE = 1e-12


def assert_same(cli, ours, path="report"):
    """Equal structure and text; numbers within TOLERANCE (relative above 1)."""
    if isinstance(cli, dict):
        assert isinstance(ours, dict), path
        assert sorted(cli) == sorted(ours), f"{path}: keys {sorted(cli)} vs {sorted(ours)}"
        for key in cli:
            assert_same(cli[key], ours[key], f"{path}.{key}")
    elif isinstance(cli, list):
        assert isinstance(ours, list) and len(cli) == len(ours), path
        for index, (a, b) in enumerate(zip(cli, ours)):
            assert_same(a, b, f"{path}[{index}]")
    elif isinstance(cli, float) or isinstance(ours, float):
        assert math.isclose(cli, ours, rel_tol=TOLERANCE, abs_tol=TOLERANCE), f"{path}: {cli} vs {ours}"
    else:
        assert cli == ours, f"{path}: {cli!r} vs {ours!r}"


def run(cli, *arguments):
    done = subprocess.run([str(cli), *map(str, arguments)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


CASES = [
    # (CLI flags, the same as keyword arguments)
    ([], {}),
    (
        ["--method", "isotonic", "--cv", "kfold", "--folds", "4", "--binning", "equal-mass"],
        {"method": "isotonic", "cv": "kfold", "folds": 4, "binning": "equal-mass"},
    ),
    (
        ["--method", "platt-p", "--no-penalty", "--bootstrap-by-group", "--reject-precision", "0.8"],
        {"method": "platt-p", "penalty": False, "bootstrap_by_group": True, "reject_precision": 0.8},
    ),
    (
        ["--target-precision", "0.7", "--target-precision", "0.85", "--by", "language", "--procedure", "split-fixed-sequence"],
        {"target_precision": [0.7, 0.85], "by": {"language": None}, "procedure": "split-fixed-sequence"},
    ),
]


@pytest.mark.parametrize(("flags", "arguments"), CASES)
def test_the_report_and_calibrator_are_the_command_lines(cli, items, tmp_path, flags, arguments):
    confidence, correct, repos, languages = items
    table = write_csv(
        tmp_path / "items.csv",
        {"confidence": confidence, "correct": correct, "repo": repos, "language": languages},
    )
    saved = tmp_path / "cli-calibrator.json"
    common = ["--group", "repo", "--bootstrap", "200", "--seed", "11"]
    report = json.loads(run(cli, "calibrate", table, *common, *flags, "--json", "--save", saved))
    if "by" in arguments:
        arguments = {**arguments, "by": {"language": languages}}
    result = codecal.calibrate(confidence, correct, groups=repos, bootstrap=200, seed=11, **arguments)
    assert_same(report, result.report)
    assert_same(json.loads(saved.read_text()), json.loads(result.calibrator.to_json()), "calibrator")


def test_decisions_are_those_of_codecal_apply(cli, items, tmp_path):
    confidence, correct, repos, languages = items
    result = codecal.calibrate(
        confidence, correct, groups=repos, bootstrap=0, target_precision=[0.6, 0.8], by={"language": languages}
    )
    path = tmp_path / "calibrator.json"
    result.calibrator.save(path)
    fresh = np.random.default_rng(3).random(300)
    new_languages = np.random.default_rng(4).choice(["java", "python", "go", "rust"], 300)
    table = write_csv(tmp_path / "new.csv", {"confidence": fresh, "language": new_languages})
    seen = set()
    for target in (0.6, 0.8):
        applied = list(csv.DictReader(run(cli, "apply", "--calibrator", path, table, "--target-precision", target).splitlines()))
        loaded = codecal.Calibrator.load(path)
        decisions = loaded.decide(fresh, target_precision=target, groups=new_languages)
        assert [row["decision"] for row in applied] == list(decisions)
        calibrated = np.array([float(row["calibrated"]) for row in applied])
        assert np.allclose(calibrated, loaded.transform(fresh), rtol=0, atol=TOLERANCE)
        seen |= set(decisions)
    # Parity is not vacuous: both decisions occur.
    assert {"accept", "review"} <= seen, seen
