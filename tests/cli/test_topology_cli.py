"""Topologies from the command line and the API: the per-link table, the links and paths tables in a
results folder, and one clear error line (file, line, field; exit 2; no folder) for a bad route."""

from __future__ import annotations

import inspect

from typer.testing import CliRunner

from ccscope import api
from ccscope.cli import app

if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters:
    runner = CliRunner(mix_stderr=False)
else:
    runner = CliRunner()


def test_parking_lot_prints_links_and_saves_per_link_counters_that_conserve_packets(tmp_path):
    out = tmp_path / "pl"
    res = runner.invoke(app, ["run", "examples/parking_lot.toml", "-o", str(out), "--set", "duration_s=20"])
    assert res.exit_code == 0, res.output
    assert "links" in res.stdout and "hop1" in res.stdout and "Jain" in res.stdout
    r = api.load_result(out)
    links = r.links.set_index("link")
    assert list(links.index) == ["hop1", "hop2", "hop3", "back1", "back2", "back3"]
    assert (links.arrivals == links.departures + links.dropped + links.queued).all()
    assert (links.departures == links.forwarded + links.in_pipe).all()
    # The long flow (0) gets less than each one-hop flow.
    tput = r.flows.set_index("flow").throughput_mbps
    assert all(tput[0] < tput[k] for k in (1, 2, 3))


def test_two_paths_reports_per_path_counters_through_the_api():
    r = api.run("examples/two_paths.toml", overrides={"duration_s": 5})
    paths = r.paths
    assert list(paths.path) == [0, 1]
    assert abs(int(paths.sent[0]) - int(paths.sent[1])) <= 1
    assert (paths.acks_sent == paths.delivered).all()
    assert int(paths.sent.sum()) == r.summary["sent"]
    assert set(r.scenario["links"]) == {"path0", "path0_back", "path1", "path1_back"}


def test_a_route_naming_an_unknown_link_is_one_error_line_and_exit_2(tmp_path):
    sc = tmp_path / "bad.toml"
    sc.write_text(
        "duration_s = 1\n[links.a]\nrate_mbps = 10\n[links.b]\nrate_mbps = 10\n"
        '[[flows]]\ncontroller = "fixed"\nroute = ["a", "nope"]\nack_route = ["b"]\n'
    )
    out = tmp_path / "res"
    res = runner.invoke(app, ["run", str(sc), "-o", str(out)])
    assert res.exit_code == 2
    text = res.stderr if hasattr(res, "stderr") else res.output
    assert f"{sc}:8: field `flows[0].route`: unknown link `nope`" in text
    assert "Traceback" not in text
    assert not out.exists()
