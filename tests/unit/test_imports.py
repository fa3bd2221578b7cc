"""Start-up: `import ccscope` and `ccscope run` load only what they use; the pandas-free save path
writes the same tables as the pandas one."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pandas as pd

import ccscope
from ccscope import api

HEAVY = ("pandas", "matplotlib", "pyarrow", "scipy", "numpy")


def _loaded_after(code: str, cwd) -> set:
    """The HEAVY modules a fresh interpreter holds after running `code`."""
    probe = f"{code}\nimport sys, json\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True, cwd=cwd)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_import_ccscope_loads_no_numpy_pandas_pyarrow_or_matplotlib(tmp_path):
    assert _loaded_after("import ccscope", tmp_path) == set()


def test_cli_run_writes_its_folder_without_pandas_or_matplotlib(tmp_path):
    out = tmp_path / "res"
    code = (
        "import sys\nfrom ccscope import cli\n"
        f"sys.argv = ['ccscope', 'run', 'examples/datagrump.toml', '--set', 'duration_s=5', '-o', {str(out)!r}]\n"
        "try:\n    cli.main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
    )
    # Small tables are written by ccscope's own Parquet writer: nothing heavy at all.
    assert _loaded_after(code, tmp_path) == set()
    assert (out / "timeseries.parquet").exists() and (out / "flows.parquet").exists()


def test_flow_records_match_pandas_records_for_ragged_rows():
    rows = [
        {"flow": 0, "controller": "fixed", "score": 1.5, "fct_mean_s": None, "n": 3},
        {"flow": 1, "controller": "markov", "score": None, "fct_mean_s": None, "n": 4, "model_epochs": 10},
        {"flow": 2, "controller": None, "score": 2.0, "fct_mean_s": None, "n": 5, "flag": True},
    ]
    want = pd.DataFrame(rows).to_dict(orient="records")
    got = api.flow_records(rows)
    assert [list(r) for r in got] == [list(r) for r in want]
    for g, w in zip(got, want):
        for k in w:
            same_nan = isinstance(w[k], float) and math.isnan(w[k]) and isinstance(g[k], float) and math.isnan(g[k])
            assert same_nan or (g[k] == w[k] and type(g[k]) is type(w[k])), (k, g[k], w[k])


def test_results_saved_before_their_frames_are_built_read_back_equal_to_the_frames(tmp_path):
    r = ccscope.run("examples/datagrump.toml", overrides={"duration_s": 5}, packets=True, cwnd=True)
    out = r.save(tmp_path / "res")
    assert not r._frames, "save() built DataFrames"
    back = api.load_result(out)
    for name in ("flows", "timeseries", "packets", "cwnd"):
        pd.testing.assert_frame_equal(getattr(r, name), getattr(back, name))
    assert json.loads((out / "summary.json").read_text())["flows"] == json.loads(
        json.dumps(r.flows.to_dict(orient="records"), default=api._json_default)
    )


def test_a_large_run_writes_through_pyarrow_and_reads_back_as_the_small_writer_s_tables(tmp_path, monkeypatch):
    r = ccscope.run("examples/datagrump.toml", overrides={"duration_s": 5})
    small = r.save(tmp_path / "small")
    monkeypatch.setattr(api, "SMALL_TABLE_VALUES", 0)
    large = ccscope.run("examples/datagrump.toml", overrides={"duration_s": 5}).save(tmp_path / "large")
    assert (small / "timeseries.parquet").read_bytes() != (large / "timeseries.parquet").read_bytes()
    for name in ("flows", "timeseries"):
        pd.testing.assert_frame_equal(pd.read_parquet(small / f"{name}.parquet"),
                                      pd.read_parquet(large / f"{name}.parquet"))
        pd.testing.assert_frame_equal(pd.read_parquet(small / f"{name}.parquet"), getattr(r, name))
