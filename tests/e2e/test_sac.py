"""Paper 003's SAC flow through the Python API (specs/003-mtsc.md §2.4): the on-line table a run ends
with, written as a file and loaded by another run in ``table = "file"`` mode."""

from __future__ import annotations

import sys

import numpy as np

import ccscope
from ccscope.stats.condprob import CondProbTable, sac_table, sac_table_toml

if sys.version_info >= (3, 11):
    import tomllib
else:  # the package supports 3.9 with tomli
    import tomli as tomllib

SHORT = {"duration_s": 100}
SAC_FLOW = 32


def test_a_table_written_by_one_run_is_the_table_another_run_loads(tmp_path):
    first = ccscope.run("examples/sac_pareto.toml", overrides=SHORT)
    row = first.flows.iloc[SAC_FLOW]
    assert row["controller"] == "sac"
    table = sac_table(row)
    # 100 s of 2 s + 2 s blocks from the first arrival: 24 or 25 complete ones, each counted once in h.
    assert 24 <= table.blocks <= 25 and table.h.sum() == table.blocks
    assert table.sigma[0] > 0 and table.mu[0] > 0
    path = tmp_path / "table.toml"
    path.write_text(sac_table_toml(table))
    text = ccscope.api.EXAMPLES_DIR.joinpath("sac_pareto.toml").read_text()
    text = text.replace('controller = "sac"', f'controller = "sac"\ntable = "file"\ntable_file = "{path}"')
    second = ccscope.run(text, overrides=SHORT)
    loaded = sac_table(second.flows.iloc[SAC_FLOW])
    # The file mode freezes the table: it ends the run exactly as loaded, doubles included.
    assert (loaded.counts == table.counts).all()
    assert loaded.mu == table.mu and loaded.sigma == table.sigma
    # And a frozen foreign table steers the flow differently from a learning one.
    assert second.flows.iloc[SAC_FLOW]["delivered"] != row["delivered"]


def test_the_table_toml_round_trips_through_a_frozen_table():
    counts = np.zeros((8, 9), dtype=np.int64)
    counts[2, 4] = counts[2, 8] = 3
    t = CondProbTable(counts, 0, 0, 3, (0.1 + 0.2, 1e16), (1 / 3, 0.0))
    d = tomllib.loads(sac_table_toml(t))
    assert d["counts"] == counts.tolist()
    assert d["mu"] == [0.1 + 0.2, 1e16] and d["sigma"] == [1 / 3, 0.0]


def test_a_table_file_named_relative_to_the_scenario_is_found_from_any_folder(tmp_path, monkeypatch):
    counts = np.zeros((8, 9), dtype=np.int64)
    counts[3, 4] = counts[3, 8] = 5
    (tmp_path / "table.toml").write_text(sac_table_toml(CondProbTable(counts, 0, 0, 5, (4.0, 4.0), (1.0, 1.0))))
    text = ccscope.api.EXAMPLES_DIR.joinpath("sac_pareto.toml").read_text()
    scenario = tmp_path / "s.toml"
    scenario.write_text(text.replace('controller = "sac"', 'controller = "sac"\ntable = "file"\ntable_file = "table.toml"'))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    loaded = sac_table(ccscope.run(str(scenario), overrides={"duration_s": 20}).flows.iloc[SAC_FLOW])
    assert (loaded.counts == counts).all()


def test_the_receiver_aggregate_signal_is_chosen_from_toml_or_python_and_steers_the_flow():
    """Spec §6 item 1: `signal = "receiver_aggregate"` feeds SAC the receiving host's arrivals from the ACKs."""
    own = ccscope.run("examples/sac_pareto.toml", overrides=SHORT).flows.iloc[SAC_FLOW]
    by_kwarg = ccscope.run("examples/sac_pareto.toml",
                           overrides={**SHORT, "flows.2.signal": "receiver_aggregate"}).flows.iloc[SAC_FLOW]
    text = ccscope.api.EXAMPLES_DIR.joinpath("sac_pareto.toml").read_text()
    by_toml = ccscope.run(text.replace('controller = "sac"', 'controller = "sac"\nsignal = "receiver_aggregate"'),
                          overrides=SHORT).flows.iloc[SAC_FLOW]
    for row in (own, by_kwarg, by_toml):
        assert row["sent"] == row["delivered"] + row["dropped"] + row["in_flight"]
    # Every measured epoch had the host's totals on its ACKs, and the table learned from them.
    assert by_toml["sac_no_host_feedback"] == 0 and sac_table(by_toml).blocks >= 24
    # The same run either way; a different one from the own signal's.
    assert by_kwarg["delivered"] == by_toml["delivered"] and by_kwarg["sac_a_sum_micro"] == by_toml["sac_a_sum_micro"]
    assert by_toml["sac_a_sum_micro"] != own["sac_a_sum_micro"]


def test_a_partial_sac_report_links_only_the_figures_it_drew(tmp_path):
    """`repro mtsc --part sac --figs 14` runs Figs. 14-15 left only: Fig. 15 right's runs are missing, so
    its figure is not drawn and the report must not link it (nor any other figure it did not draw)."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    out = tmp_path / "mtsc.md"
    res = subprocess.run([sys.executable, str(repo / "experiments/mtsc/repro.py"), "-o", str(out), "--part", "sac",
                          "--figs", "14", "--sac-seeds", "2", "--first-seed", "11", "--sac-duration-s", "20",
                          "--jobs", "1", "-q"], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    text = out.read_text()
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    missing = [p for p in links if not (tmp_path / p).is_file()]
    assert not missing, missing
    assert "Figs. 14-15: not drawn" in text
    # The runs' CSV, log and figures are ccscope's: listed in the figures folder's manifest, so the next run may replace them.
    import json

    assert json.loads((tmp_path / "mtsc" / "ccscope-manifest.json").read_text())["files"] == \
        ["fig9_10_threshold.png", "sac_runs.csv", "sac_runs.jsonl"]
    assert len((tmp_path / "mtsc" / "sac_runs.csv").read_text().splitlines()) > 1
