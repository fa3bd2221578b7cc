"""experiments/mtsc/overhead.py's runs, table and option checks (no simulation)."""

from __future__ import annotations

from dataclasses import asdict

import pytest

from _experiments import load_experiment

overhead = load_experiment("mtsc", "overhead")
import sac_runs  # noqa: E402  (experiments/mtsc, on sys.path through overhead.py)


def test_the_runs_cross_every_overhead_load_variant_and_seed_at_alpha_1_05():
    rs = overhead.runs([0.0, 0.8], [11, 12], [2.5], ["generic", "online"], 60.0)
    assert len(rs) == 8 and {r.alpha for r in rs} == {1.05}
    assert {(r.tcp_overhead_ms, r.variant, r.seed) for r in rs} == {
        (o, v, s) for o in (0.0, 0.8) for v in ("generic", "online") for s in (11, 12)}


def test_the_table_counts_shut_outs_by_the_reports_rule_and_gives_the_gain_per_overhead():
    out = {}
    # Load 5: shut out below 2.5 Mbit/s of background (sac_report.SHUT_OUT_SHARE).
    for o, bgs in ((0.0, (0.3, 4.0)), (0.8, (3.0, 4.0))):
        for s, bg in zip((11, 12), bgs):
            for v, pps in (("generic", 500.0), ("online", 550.0 if o else 600.0)):
                r = sac_runs.Run(v, s, 60.0, load_mbps=5.0, tcp_overhead_ms=o)
                out[r.key] = {"run": asdict(r), "background_mbps": bg if v == "online" else 4.5, "total_pps": pps}
    lines = overhead.table(out, [0.0, 0.8], [11, 12], [5.0], ["generic", "online"], 60.0)
    assert "0 | 5 | online | 1 of 2 | 2.15 (0.30-4.00) | 600.0 (600.0-600.0) | 11" in lines
    assert "0.8 | 5 | online | 0 of 2 | 3.50 (3.00-4.00) | 550.0 (550.0-550.0) | -" in lines
    assert "0 | 5 | generic | 0 of 2 | 4.50 (4.50-4.50) | 500.0 (500.0-500.0) | -" in lines
    assert lines[-2].startswith("overhead 0 ms, load 5: on-line SAC over generic LIED +20.0% ± 0.0")
    assert lines[-1].startswith("overhead 0.8 ms, load 5: on-line SAC over generic LIED +10.0% ± 0.0")


@pytest.mark.parametrize("argv,message", [
    (["--overheads-ms", "-1"], "--overheads-ms -1: in [0, 1000] ms"),
    (["--overheads-ms", "nan"], "--overheads-ms nan: in [0, 1000] ms"),
    (["--duration-s", "0"], "--duration-s 0: a positive number of seconds"),
    (["--loads", "3"], "--loads 3: "),
])
def test_a_bad_option_exits_2_naming_it_before_any_run(argv, message, capsys, monkeypatch):
    monkeypatch.setattr(sac_runs, "run_all", lambda *a, **k: pytest.fail("a run started"))
    with pytest.raises(SystemExit) as e:
        overhead.main(argv)
    assert e.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("value", ["-0.5", "nan", "2000"])
def test_the_reports_tcp_overhead_option_refuses_a_bad_value_with_exit_2(value, capsys):
    repro = load_experiment("mtsc")
    with pytest.raises(SystemExit) as e:
        repro.main(["--part", "sac", "--tcp-overhead-ms", value, "-o", "/nonexistent/never.md"])
    assert e.value.code == 2 and "--tcp-overhead-ms" in capsys.readouterr().err
