"""The standardization section of the experiment report (the computations themselves are
tested in test_standardize.py)."""

from __future__ import annotations

import json

from conftest import FIXTURES


def test_standardization_experiment(cli, tmp_path):
    cli("load", "qrels", FIXTURES / "qrels.txt", "--name", "fx")
    cli("load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv")
    out = tmp_path / "out"
    rows = json.loads(cli("experiment", "standardization", "--out", out, "--splits", "200",
                          "--sizes", "3,8", "--samples", "50", "--format", "json").stdout)
    assert [r["form"] for r in rows] == ["raw", "normalized", "standardized"]
    assert [r["measure"] for r in rows] == ["SP", "AP", "AP"]
    assert all(0 <= r["fp_rate_mean"] <= r["fp_rate_max"] <= 1 for r in rows)
    sizes = (out / "standardization_reference_size.csv").read_text().splitlines()
    all_runs = [line for line in sizes[1:] if line.split(",")[1] == "8"]
    # factors from all 8 runs are the full standardization itself: tau = 1 in every sample
    assert all_runs and all(float(v) == 1.0 for v in all_runs[0].split(",")[6:10])
    assert (out / "standardization_summary.png").stat().st_size > 0
    assert "## Score standardization" in (out / "report.md").read_text()
