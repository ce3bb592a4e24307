"""Shared helpers for the Python package's tests.

A test that cannot have what it needs (the codecal command line, a
reference package) says why it skips, and fails instead where CI sets the
matching CODECAL_REQUIRE_* variable.
"""

import csv
import os
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


def unavailable(variable, reason):
    """Skips, or fails where `variable` is set."""
    if os.environ.get(variable):
        pytest.fail(f"{reason} ({variable} is set)")
    print(f"SKIPPED: {reason}")
    pytest.skip(reason)


def reference(module):
    """A reference package of benches/requirements.txt, imported."""
    try:
        return __import__(module, fromlist=["_"])
    except ImportError:
        unavailable(
            "CODECAL_REQUIRE_REFERENCE",
            f"no {module} here (pip install --require-hashes -r benches/requirements.txt)",
        )


@pytest.fixture(scope="session")
def cli():
    """The codecal command line: $CODECAL_BIN, else the release build."""
    path = Path(os.environ.get("CODECAL_BIN") or REPO / "target" / "release" / "codecal")
    if not path.is_file():
        unavailable("CODECAL_REQUIRE_CLI", f"no codecal binary at {path} (cargo build --release)")
    return path


@pytest.fixture(scope="session")
def items():
    """600 seeded items, miscalibrated on purpose (raw ECE 0.19), in 23 repositories and 3 languages."""
    rng = np.random.default_rng(7)
    n = 600
    confidence = rng.beta(2.0, 2.0, n)
    correct = (rng.random(n) < confidence**1.7).astype(np.uint8)
    repos = np.array([f"repo-{i % 23}" for i in range(n)], dtype=object)
    languages = rng.choice(np.array(["java", "python", "go"], dtype=object), n)
    return confidence, correct, repos, languages


def write_csv(path, columns):
    """A CSV the CLI reads back to the same float64 values (repr is exact)."""
    names = list(columns)
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(names)
        for row in zip(*(columns[name] for name in names)):
            writer.writerow([repr(float(v)) if isinstance(v, (float, np.floating)) else v for v in row])
    return path
