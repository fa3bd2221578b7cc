"""SCTP-CMT end to end (paper 002 §6.2): `ccscope run` of the two-path example writes per-path
results (sent, delivered, fast retransmits, timeouts, mean window) and the association's counters;
a bad CMT key is one error line with exit 2."""

from __future__ import annotations

import json

from ccscope import api
from ccscope.cli import app


def test_cmt_two_paths_run_reports_each_path_and_the_associations_losses(tmp_path, cli_runner):
    out = tmp_path / "cmt"
    res = cli_runner.invoke(app, ["run", "examples/cmt_two_paths.toml", "-o", str(out), "--set", "duration_s=20"])
    assert res.exit_code == 0, res.output
    r = api.load_result(out)
    paths = r.paths.set_index("path")
    assert list(paths.index) == [0, 1]
    assert (paths.sent > 1000).all()
    assert (paths.delivered + paths.dropped <= paths.sent).all()
    # Path 0 loses 1e-3 of its packets, path 1 1e-4: path 0 fast-retransmits more, to itself.
    assert paths.fast_retransmits[0] > paths.fast_retransmits[1]
    assert (paths.retransmissions >= paths.fast_retransmits).all()
    # The windows share RBUF = 128000 B (dynamic management keeps their sum within it).
    assert 0 < paths.mean_cwnd_bytes.sum() <= 128_000
    flow = r.flows.iloc[0]
    assert flow.goodput_mbps > 15
    assert flow.loss_events >= flow.fast_retransmits / 10 and flow.max_cwnd_sum_bytes <= 128_000
    meta = json.loads((out / "summary.json").read_text())
    assert {"fast_retransmits", "timeouts", "mean_cwnd_bytes"} <= set(meta["paths"][0])


def test_static_management_without_limits_is_one_error_line_and_exit_2(tmp_path, cli_runner):
    sc = tmp_path / "bad.toml"
    text = open("examples/cmt_two_paths.toml").read().replace('window_management = "dynamic"', 'window_management = "static"')
    sc.write_text(text)
    res = cli_runner.invoke(app, ["run", str(sc), "-o", str(tmp_path / "res")])
    assert res.exit_code == 2
    msg = res.stderr if hasattr(res, "stderr") else res.output
    line = text.splitlines().index('window_management = "static"') + 1
    assert f"{sc}:{line}: field `flows[0].window_management`: static window management needs `cwnd_limits_packets`" in msg
    assert "Traceback" not in msg
