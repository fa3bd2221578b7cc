"""Paper 004's claims (Verus R = 2, 4, 6 against TCP Cubic, Vegas and Sprout) on the shared cellular traces,
in the setup of `ccscope repro verus` (RED of paper 000, 20 ms each way, one loop of the trace): the two
140 s LTE recordings, both directions each, seed 1. Each run takes a fraction of a second."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from ccscope.cli import app

from _experiments import load_experiment  # noqa: E402

rv = load_experiment("verus")

TESTED = ("Verizon-LTE-short.down", "Verizon-LTE-short.up", "TMobile-LTE-short.down", "TMobile-LTE-short.up")
CLAIM_C_TRACE = "Verizon-LTE-short.down"


def _trace_dir():
    try:
        d = rv.find_traces()
    except rv.TraceDirNotFound as e:
        pytest.skip(f"shared cellular traces not found ({e})")
    missing = [t for t in TESTED if not (d / t).is_file()]
    if missing:
        pytest.skip(f"{d}: missing {', '.join(missing)}")
    return d


@pytest.fixture(scope="module")
def res() -> dict[str, dict[str, rv.Agg]]:
    """trace -> scheme -> seed-1 result, primary (RED) queue."""
    d = _trace_dir()
    recs = rv.run_matrix(d, rv.directions(d, TESTED), seeds=1)
    aggs = rv.aggregate(recs)
    return {t: {s.key: aggs[(rv.PRIMARY_QUEUE, t, s.key)] for s in rv.SCHEMES} for t in TESTED}


def _numbers(r: dict[str, rv.Agg]) -> str:
    return ", ".join(f"{k} {a.thr:.2f} Mbit/s mean {a.mean_delay:.0f} ms p95 {a.p95:.0f} ms" for k, a in r.items())


def test_each_run_covers_one_loop_of_the_trace(res):
    d = _trace_dir()
    for t in TESTED:
        mean = rv.trace_mean_mbps(d / t)
        for a in res[t].values():
            assert a.n == 1
            assert a.capacity == pytest.approx(mean, rel=0.01)


@pytest.mark.parametrize("trace", TESTED)
def test_verus_mean_delay_rises_with_r(res, trace):
    v2, v4, v6 = (res[trace][k] for k in rv.VERUS_KEYS)
    assert v2.mean_delay < v4.mean_delay < v6.mean_delay, _numbers(res[trace])


@pytest.mark.parametrize("trace", TESTED)
def test_verus_throughput_does_not_fall_as_r_grows(res, trace):
    v2, v6 = res[trace]["verus2"], res[trace]["verus6"]
    assert v6.thr >= 0.95 * v2.thr, _numbers(res[trace])


def test_verus_r2_has_lower_p95_delay_than_cubic_with_60pct_of_its_throughput_on_most_traces(res):
    held = [t for t in TESTED if res[t]["verus2"].p95 < res[t]["cubic"].p95
            and res[t]["verus2"].thr >= 0.6 * res[t]["cubic"].thr]
    detail = "; ".join(f"{t}: R=2 {res[t]['verus2'].thr:.2f} Mbit/s p95 {res[t]['verus2'].p95:.0f} ms, "
                       f"Cubic {res[t]['cubic'].thr:.2f} Mbit/s p95 {res[t]['cubic'].p95:.0f} ms" for t in TESTED)
    assert len(held) >= 3, detail


def test_sprout_p95_delay_below_cubic_and_vegas_on_verizon_downlink(res):
    r = res[CLAIM_C_TRACE]
    assert r["sprout"].p95 < r["cubic"].p95, _numbers(r)
    assert r["sprout"].p95 < r["vegas"].p95, _numbers(r)


def test_repro_command_writes_report_and_figures(tmp_path):
    d = _trace_dir()
    md = tmp_path / "repro" / "verus.md"
    out = CliRunner().invoke(app, ["repro", "verus", "-o", str(md), "--traces", str(d), "--seeds", "1",
                                   "--duration", "5"])
    assert out.exit_code == 0, out.output
    text = md.read_text()
    assert "`ccscope repro verus`" in text and "capped at 5 s" in text
    for t in TESTED:
        assert f"### {t}" in text
        assert (tmp_path / "repro" / "verus" / f"{t.replace('.', '_')}.png").stat().st_size > 1000
    assert not list((tmp_path / "repro").glob(".*")), "temporary files left behind"


def test_repro_command_without_traces_exits_2_with_one_line(tmp_path):
    out = CliRunner().invoke(app, ["repro", "verus", "-o", str(tmp_path / "v.md"), "--traces", str(tmp_path)])
    assert out.exit_code == 2
    assert out.output.strip().count("\n") == 0 and out.output.startswith("error: ")
    assert not (tmp_path / "v.md").exists()
