"""Figures come back as image bytes Jupyter shows inline; a run directory
loads into DataFrames."""

import json
import os
from pathlib import Path

import numpy as np
import pytest

import codecal
from conftest import REPO, unavailable


def test_reliability_figures_are_svg_and_png(items):
    confidence, correct, repos, _ = items
    result = codecal.calibrate(confidence, correct, groups=repos, bootstrap=0)
    svg = codecal.reliability_figure(result)
    assert svg.startswith(b"<svg") or b"<svg" in svg[:200], svg[:80]
    assert svg._repr_svg_().count("<circle") + svg._repr_svg_().count("<rect") > 5
    png = codecal.reliability_figure(result, format="png")
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000
    assert png._repr_png_() == bytes(png)


def test_metrics_table_has_raw_and_rescaled_with_intervals(items):
    confidence, correct, repos, _ = items
    table = codecal.calibrate(confidence, correct, groups=repos, bootstrap=100).metrics()
    assert table.loc["brier", "raw_low"] <= table.loc["brier", "raw"] <= table.loc["brier", "raw_high"]
    assert table.loc["skill_score", "rescaled"] > table.loc["skill_score", "raw"]
    assert np.isnan(table.loc["spearman", "raw"])


def test_out_of_fold_confidences_are_the_reports(items):
    confidence, correct, repos, _ = items
    result = codecal.calibrate(confidence, correct, groups=repos, bootstrap=0)
    rescaled = result.out_of_fold()
    assert rescaled.shape == confidence.shape and not np.isnan(rescaled).any()
    brier = float(np.mean((rescaled - correct) ** 2))
    assert abs(brier - result.report["rescaled"]["brier"]) < 1e-12


def test_load_run_reads_a_pipeline_run():
    run_dir = Path(os.environ.get("CODECAL_RUN_DIR") or REPO / "target/tmp/test-runs/tiny")
    if not (run_dir / "manifest.json").is_file():
        unavailable("CODECAL_REQUIRE_RUN", f"no run at {run_dir} (the pipeline test leaves one)")
    run = codecal.load_run(run_dir)
    assert run.manifest["config"]["name"] == json.loads((run_dir / "manifest.json").read_text())["config"]["name"]
    assert len(run.generations) > 0 and "text" in run.generations.columns
    assert any(column.startswith("confidence.") for column in run.generations.columns)
    assert len(run.labels) > 0
    assert run.tables, "no tables"


def test_load_run_refuses_a_folder_that_is_no_run(tmp_path):
    with pytest.raises(ValueError, match="no manifest.json"):
        codecal.load_run(tmp_path)


def test_by_takes_a_dict_a_dataframe_or_a_named_series(items):
    import pandas as pd

    confidence, correct, repos, languages = items
    frame = pd.DataFrame({"language": languages, "repo": repos})
    as_dict = codecal.calibrate(confidence, correct, bootstrap=0, by={"language": languages, "repo": repos})
    as_frame = codecal.calibrate(confidence, correct, bootstrap=0, by=frame)
    as_series = codecal.calibrate(confidence, correct, bootstrap=0, by=frame["language"])
    assert as_dict.report == as_frame.report
    tables = as_dict.report["subgroups"]
    assert [t["column"] for t in tables] == ["language", "repo"]
    assert as_series.report["subgroups"] == tables[:1]
