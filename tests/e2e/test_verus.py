"""Paper 004's claims (Verus R = 2, 4, 6 against TCP Cubic, Vegas and Sprout) on the shared cellular traces,
in the setup of `ccscope repro verus` (RED of paper 000, 20 ms each way, one loop of the trace): the two
140 s LTE recordings, both directions each, seed 1. Each run takes a fraction of a second.

Every claim is checked on every trace at the paper's strength (no "on most traces"); a claim these runs
do not reproduce is a strict expected failure whose reason gives the measured numbers.
docs/reproductions/claim-tests.md lists the claims and their tests."""

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
def test_verus_throughput_rises_with_r(res, trace):
    # §2.3-2.4: every one of the paper's six tables has R=2 < R=4 < R=6 in throughput.
    v2, v4, v6 = (res[trace][k] for k in rv.VERUS_KEYS)
    assert v2.thr < v4.thr < v6.thr, _numbers(res[trace])


R6_SHORT = pytest.mark.xfail(strict=True, raises=AssertionError, reason="§2.3-2.4: R=6 gets 97-99% of Cubic's throughput "
                             "(105% on T-Mobile); on TMobile-LTE-short.down ours gets 94.9% at seed 1 (15.81 against "
                             "16.66 Mbit/s); within 5% until Cubic stopped growing on duplicate ACKs that only SACK")


@pytest.mark.parametrize("trace", [pytest.param(t, marks=R6_SHORT) if t == "TMobile-LTE-short.down" else t for t in TESTED])
def test_verus_r6_reaches_cubics_throughput_within_5pct(res, trace):
    # §2.3-2.4: R=6 gets 97-99% of Cubic's throughput in five tables (105% on T-Mobile).
    v6, cubic = res[trace]["verus6"], res[trace]["cubic"]
    assert abs(v6.thr / cubic.thr - 1) <= 0.05, _numbers(res[trace])


@pytest.mark.parametrize("trace", TESTED)
def test_verus_r2_has_lower_p95_delay_than_cubic_with_60pct_of_its_throughput(res, trace):
    # §2.1/§2.3: Verus at low R trades some throughput for much lower delay than Cubic (R=2 kept 56-98% of
    # Cubic's throughput in the paper's tables; 60% is the report's reading); on every trace.
    # The 60% is this test's, not read from the report code under test.
    v2, cubic = res[trace]["verus2"], res[trace]["cubic"]
    assert v2.p95 < cubic.p95 and v2.thr >= 0.60 * cubic.thr, _numbers(res[trace])


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="§2.1 quoting Verus's Fig. 10: 'an order of magnitude lower delay' than Cubic at "
                   "some R; on the two Verizon LTE directions (not T-Mobile, the paper's exception) Cubic's p95 is "
                   "8.4x and 11.0x Verus R=2's at seed 1")
def test_verus_r2_has_an_order_of_magnitude_lower_p95_delay_than_cubic_on_verizon(res):
    for t in ("Verizon-LTE-short.down", "Verizon-LTE-short.up"):
        assert res[t]["cubic"].p95 >= 10 * res[t]["verus2"].p95, _numbers(res[t])


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="§1.3 quoting Verus's Figs. 8-9: Verus has 'significantly lower delay' than Vegas; "
                   "our Vegas holds a smaller queue than Verus R=2 on 3 of the 4 directions (p95 103/60/106 ms against "
                   "255/112/216 ms on Verizon-LTE-short.down, TMobile-LTE-short.up and .down)")
def test_verus_r2_has_lower_p95_delay_than_vegas(res):
    for t in TESTED:
        assert res[t]["verus2"].p95 < res[t]["vegas"].p95, _numbers(res[t])


@pytest.mark.parametrize("trace", TESTED)
def test_verus_at_r4_and_r6_outsends_sprout(res, trace):
    # §1.3 quoting Verus's Figs. 8-9: Verus "tends to have higher throughput compared to Sprout".
    r = res[trace]
    assert r["verus4"].thr > r["sprout"].thr and r["verus6"].thr > r["sprout"].thr, _numbers(r)


@pytest.mark.parametrize("trace", TESTED)
def test_newreno_is_almost_identical_to_cubic(res, trace):
    # §2.1: "TCP New Reno is almost identical to TCP Cubic in terms of throughput and delay": throughput
    # within 10%, p95 delay within a factor of 2 (Cubic's is 8.8x Verus R=2's at most, so a factor of 2 still
    # tells the two TCPs apart from Verus).
    nr, cubic = res[trace]["newreno"], res[trace]["cubic"]
    assert abs(nr.thr / cubic.thr - 1) <= 0.10 and 0.5 <= nr.p95 / cubic.p95 <= 2.0, _numbers(res[trace])


def test_sprout_p95_delay_below_cubic_and_vegas_on_verizon_downlink(res):
    r = res[CLAIM_C_TRACE]
    assert r["sprout"].p95 < r["cubic"].p95, _numbers(r)
    assert r["sprout"].p95 < r["vegas"].p95, _numbers(r)


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="§2.4: on TMobile-LTE-driving.down 'Verus with R=6 has almost 3 times higher delay "
                   "than TCP Cubic'; ours has R=6 faster than Cubic there (p95 546 against 846 ms at seed 1, 0.65x): "
                   "the paper's T-Mobile exception does not appear")
def test_verus_r6_delay_is_about_three_times_cubics_on_tmobile_downlink():
    d = _trace_dir()
    t = "TMobile-LTE-driving.down"
    if not (d / t).is_file():
        pytest.fail(f"{d}: missing {t}")
    aggs = rv.aggregate(rv.run_matrix(d, rv.directions(d, [t]), seeds=1, schemes=("verus6", "cubic")))
    v6, cubic = aggs[(rv.PRIMARY_QUEUE, t, "verus6")], aggs[(rv.PRIMARY_QUEUE, t, "cubic")]
    assert v6.p95 >= 2 * cubic.p95, f"R=6 p95 {v6.p95:.0f} ms, Cubic {cubic.p95:.0f} ms"


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


def test_repro_report_and_figures_are_byte_identical_on_one_process_and_on_two(tmp_path):
    d = _trace_dir()
    outs = []
    for jobs in ("1", "2"):
        md = tmp_path / f"j{jobs}" / "verus.md"
        r = CliRunner().invoke(app, ["repro", "verus", "-o", str(md), "--traces", str(d), "--seeds", "1",
                                     "--duration", "5", "--jobs", jobs, "--quiet"])
        assert r.exit_code == 0, r.output
        outs.append({p.relative_to(md.parent).as_posix(): p.read_bytes() for p in md.parent.rglob("*") if p.is_file()})
    assert outs[0].keys() == outs[1].keys() and len(outs[0]) > 10
    assert [k for k in outs[0] if outs[0][k] != outs[1][k]] == []


def test_repro_command_without_traces_exits_2_with_one_line(tmp_path):
    out = CliRunner().invoke(app, ["repro", "verus", "-o", str(tmp_path / "v.md"), "--traces", str(tmp_path)])
    assert out.exit_code == 2
    assert out.output.strip().count("\n") == 0 and out.output.startswith("error: ")
    assert not (tmp_path / "v.md").exists()
