"""`ccscope sweep`: writes one table, and input errors exit 2 with one line and no table."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from ccscope.cli import app

runner = CliRunner()


def test_sweep_writes_a_row_per_grid_point(tmp_path):
    args = ["sweep", "examples/fixed.toml", "--param", "flows.0.window=1,12", "--param", "duration_s=5", "--seeds", "1", "-o", str(tmp_path), "-j", "1"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    df = pd.read_parquet(tmp_path / "sweep.parquet")
    assert len(df) == 2
    assert list(df["flows.0.window"]) == [1, 12]
    assert df.loc[1, "throughput_mbps"] > df.loc[0, "throughput_mbps"]


@pytest.mark.parametrize("param", ["flows.0.window=1,-1", "flows.0.window"])
def test_bad_param_exits_2_with_one_error_line(tmp_path, param):
    res = runner.invoke(app, ["sweep", "examples/fixed.toml", "--param", param, "-o", str(tmp_path / "out"), "-j", "1"])
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:")
    assert not (tmp_path / "out" / "sweep.parquet").exists()
