"""Paper 002's claims, checked on short versions of the reproduction's runs (experiments/cmt).

Each claim is recomputed here from simulation results and model outputs; nothing reads a verdict back
from the report. The full-size reproduction (5 seeds, 2,000 loss events a point) is `ccscope repro cmt`.
"""

import statistics

import pytest
from scipy.stats import t as t_dist

from _experiments import load_experiment  # noqa: E402

repro = load_experiment("cmt")

from cmt_scenarios import Path, association, duration_for  # noqa: E402

from ccscope.models.cmt import allocate, markov_throughput, mathis_throughput, renewal_throughput  # noqa: E402

SEEDS = (1, 2)
LOSS_EVENTS = 1500


def simulate(paths, rbuf, *, loss, management="none", limits=None, events=LOSS_EVENTS, seeds=SEEDS):
    secs = duration_for(paths, rbuf, events, cap_s=20_000)
    text = association(paths, rbuf, secs, loss=loss, management=management, limits=limits)
    return [repro._simulate(repro.Run(text, s)) for s in seeds]


@pytest.fixture(scope="module")
def model_points():
    """Points of Figs. 5-7 (correlated loss, RBUF 128 KB) across the regimes: Fig. 5 at b 21 Mbit/s, d 40 ms
    and three loss rates; Fig. 6 at b = 1 Mbit/s and Fig. 7 at d = 10 ms (p 1e-3), where the window is far
    above the bandwidth-delay product. Each run is lengthened by the reproduction's runner until it saw
    LOSS_EVENTS loss events."""
    pts = [repro.ModelPoint("5", p, Path(21.0, 40.0, p), 128_000) for p in (3e-4, 3e-3, 3e-2)]
    pts += [repro.ModelPoint("6", 1.0, Path(1.0, 40.0, 1e-3), 128_000),
            repro.ModelPoint("7", 10.0, Path(21.0, 10.0, 1e-3), 128_000)]
    repro.run_single_path(pts, repro.Settings(seeds=len(SEEDS), loss_events=LOSS_EVENTS, jobs=2), log=lambda m: None)
    return pts


@pytest.fixture(scope="module")
def fig5_points(model_points):
    return {pt.path.p: (pt.sim_mbps[0], pt.sim) for pt in model_points if pt.fig == "5"}


def markov_errors(points) -> list[float]:
    errs = []
    for pt in points:
        assert pt.markov_residual <= 1e-10
        errs.append(abs(pt.markov_mbps - pt.sim_mbps[0]) / pt.sim_mbps[0])
    return errs


def test_every_model_run_saw_the_loss_events_it_was_sized_for(model_points):
    for pt in model_points:
        assert min(r["loss_events"] for r in pt.sim) >= LOSS_EVENTS, (pt.fig, pt.x)


def test_markov_model_is_within_five_percent_of_the_simulation_in_every_regime(model_points):
    # Issue 10: within 5% (worst) over Figs. 5-8; paper 002 §6.1.2: at most 1.1%. The median within 3% (the bound
    # this test held before the 2%, below, became a strict xfail): measured 2.09% over these points.
    errs = markov_errors(model_points)
    assert max(errs) <= 0.05, errs
    assert statistics.median(errs) <= 0.03, errs


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "median 2.09% over these five points (2.09, 2.49, 1.82, 2.52, 1.86%); the full report's median over Figs. 5-8 "
    "is 2.1% (docs/reproductions/cmt.md). Measured (docs/deviations.md, issue 10): the chain's post-halving round "
    "holds SCTP's fast retransmissions (+2.4% over first transmissions where loss limits the window), and eq. 14 "
    "times out twice as often as SCTP (11.1% against 4-5% of loss events at p = 1e-3), with eq. 8 at cwnd "
    "over-charging lossy rounds where the link limits (the chain 2.5% below at b = 1 Mbit/s)"))
def test_markov_model_median_error_is_within_two_percent(model_points):
    # Issue 10: median within 2% over Figs. 5-8 (here over the five points above).
    errs = markov_errors(model_points)
    assert statistics.median(errs) <= 0.02, errs


def test_renewal_model_is_within_fifteen_percent_of_the_simulation(model_points):
    # Paper 002 §6.1.2 and issue 10: the renewal model within 14.7% / 15%, also where b d is far below the window.
    for pt in model_points:
        sim = pt.sim_mbps[0]
        assert abs(pt.renewal_mbps - sim) / sim <= 0.15, (pt.fig, pt.x, pt.renewal_mbps, sim)


def test_simulated_throughput_falls_with_the_loss_rate(fig5_points):
    sims = [fig5_points[p][0] for p in sorted(fig5_points)]
    assert sims[0] > sims[1] > sims[2]


@pytest.mark.parametrize("p", [
    pytest.param(3e-4, marks=pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
        "renewal 18.694 Mbit/s is 5.1% above the Markov chain's 17.786 (Mathis 20.914): E[W] = 94 packets exceeds "
        "the BDP of 70; with eq. 8 per round (docs/deviations.md, paper 002 renewal) both models queue the rounds "
        "above the BDP, and it held before only because every renewal round was charged eq. 8 at the peak window"))),
    1e-3, 3e-3, 1e-2, 3e-2,
])
def test_markov_lies_between_renewal_and_mathis_with_an_unbounded_buffer(p):
    # Issue 10 property: one path, RBUF -> infinity (4 MB here: W = 2666, far above the BDP of 71 packets),
    # in the loss-limited range (Mathis below b). Measured (docs/reproductions/cmt.md): it holds at every p but
    # 1e-2, where the Markov chain is 0.4% below the renewal model (the test allows 1% there, no more), and 3e-4.
    m = markov_throughput(p, 21.0, 40.0, 4_000_000, loss="correlated").throughput_mbps
    r = renewal_throughput(p, 21.0, 40.0, 4_000_000, loss="correlated").throughput_mbps
    mathis = mathis_throughput(p, 0.040 + 1500 * 8 / 21e6)
    slack = 0.99 if p == 1e-2 else 1.0  # the 1% is 1e-2's alone: elsewhere the chain is at or above the renewal model
    assert slack * r <= m < mathis, (p, r, m, mathis)


def gains(b2: float, p1: float, seeds=(1, 2, 3)) -> list[float]:
    """Static over dynamic, per seed, in Fig. 9's setup (b1 21, d 40 ms both, p2 1e-4, r 128 KB)."""
    paths = (Path(21.0, 40.0, p1), Path(b2, 40.0, 1e-4))
    a = allocate(repro.dests(paths), 128_000, solver="dp")
    static = simulate(paths, 128_000, loss="bernoulli", management="static", limits=a.limits_packets, seeds=seeds)
    dynamic = simulate(paths, 128_000, loss="bernoulli", management="dynamic", seeds=seeds)
    return [s["goodput_mbps"] / d["goodput_mbps"] - 1 for s, d in zip(static, dynamic)]


def test_static_window_management_beats_dynamic_where_the_paper_says_it_does():
    # Paper 002 §6.2, Fig. 9 at b2 = 20 Mbit/s: the gain peaks for p1 in [1e-3, 1e-2]. The 95% Student-t
    # interval is computed here, not by the report code under test.
    g = gains(20.0, 3e-3)
    mean, half = statistics.fmean(g), t_dist.ppf(0.975, len(g) - 1) * statistics.stdev(g) / len(g) ** 0.5
    assert len(g) == 3 and mean - half > 0, (mean, half, g)


def test_the_gain_grows_with_the_second_paths_bandwidth():
    # Fig. 9: "when b2 is low ... the static method has little impact"; larger b2, larger gain.
    low, high = statistics.fmean(gains(5.0, 1e-3)), statistics.fmean(gains(20.0, 1e-3))
    assert abs(low) < 0.01 < high, (low, high)


def test_every_two_path_run_is_lengthened_to_the_loss_events_asked_for():
    # Fig. 10 r = 64 KB, p1 = 0.1: the first guess (60 s) gives ~175 loss events; the runner lengthens it.
    pts = [pt for pt in repro.gain_points() if (pt.fig, pt.curve, pt.p1) == ("10", "r = 64 KB", 0.1)]
    repro.run_gains(pts, repro.Settings(two_path_seeds=2, two_path_loss_events=400, jobs=2), log=lambda m: None)
    runs = pts[0].static + pts[0].dynamic
    assert len(runs) == 4 and min(r["loss_events"] for r in runs) >= 400
    assert max(r["duration_s"] for r in runs) > 60.0


def test_two_path_runs_are_sized_from_a_pilot_on_the_first_seed_and_made_once():
    # The same point: the pilot (seed 1) measures the loss-event rate; each seed's runs are then made once, at
    # the size the pilot asks for, not first at a guess and again lengthened (issue 10's cost).
    pts = [pt for pt in repro.gain_points() if (pt.fig, pt.curve, pt.p1) == ("10", "r = 64 KB", 0.1)]
    lines: list = []
    repro.run_gains(pts, repro.Settings(two_path_seeds=2, two_path_loss_events=400, jobs=2), log=lines.append)
    assert [line.split(":")[0] for line in lines] == ["two paths, pilot", "two paths, runs", "two paths"], lines
    assert lines[1].startswith("two paths, runs: 4 runs") and lines[2].endswith("1 points done, 0 need longer runs")
    assert repro.sized_seconds(100, 60.0, 400, 1.25, 30_000.0) == 300.0
    assert repro.sized_seconds(1000, 60.0, 10, 1.25, 30_000.0) == 60.0
    assert repro.sized_seconds(0, 60.0, 400, 1.25, 30_000.0) == 30_000.0 == repro.sized_seconds(1, 60.0, 400, 1.25, 30_000.0)


def test_window_management_acts_only_where_the_windows_fill_the_buffer():
    # Fig. 9 b2 = 10 Mbit/s, p1 = 1e-2 (gain ~0): path 1's loss-limited window and path 2's BDP never fill
    # 128 KB together, so the buffer is never full and both schemes send the same; at the gain's peak
    # (b2 = 20, p1 = 1e-3) it is full most of the time, more under static limits than dynamic ranks.
    def shares(b2, p1):
        paths = (Path(21.0, 40.0, p1), Path(b2, 40.0, 1e-4))
        a = allocate(repro.dests(paths), 128_000, solver="dp")
        s = simulate(paths, 128_000, loss="bernoulli", management="static", limits=a.limits_packets, events=300, seeds=(1,))
        d = simulate(paths, 128_000, loss="bernoulli", management="dynamic", events=300, seeds=(1,))
        return s[0], d[0]
    s, d = shares(10.0, 1e-2)
    assert s["full_s"] == d["full_s"] == 0.0 and s["goodput_mbps"] == d["goodput_mbps"]
    s, d = shares(20.0, 1e-3)
    assert s["full_s"] / s["duration_s"] > 0.5 and s["full_s"] > d["full_s"] > 0.0


def test_a_pilot_run_to_the_cap_is_its_seeds_run_and_a_point_at_the_cap_is_not_asked_again():
    # Cap 30 s: the pilot (seed 1, both schemes) already runs to the cap, so the sized pass makes only seed 2's
    # two runs, and the point, short of 400 loss events at the cap, is done.
    pts = [pt for pt in repro.gain_points() if (pt.fig, pt.curve, pt.p1) == ("10", "r = 64 KB", 0.1)]
    lines: list = []
    repro.run_gains(pts, repro.Settings(two_path_seeds=2, two_path_loss_events=400, cap_s=30.0, jobs=2),
                    log=lines.append)
    assert lines[0].startswith("two paths, pilot: 2 runs, 60 simulated s"), lines
    assert lines[1:] == ["two paths, runs: 2 runs, 60 simulated s", "two paths: 1 points done, 0 need longer runs"], lines
    assert [r["duration_s"] for r in pts[0].static + pts[0].dynamic] == [30.0] * 4


def test_runs_shared_by_two_figures_are_made_once():
    # Fig. 9 b2 = 20 Mbit/s and Fig. 10 r = 128 KB are the same scenario at every p1: one curve's runs serve both.
    one = [pt for pt in repro.gain_points() if (pt.fig, pt.curve, pt.p1) == ("9", "b2 = 20 Mbit/s", 0.1)]
    both = one + [pt for pt in repro.gain_points() if (pt.fig, pt.curve, pt.p1) == ("10", "r = 128 KB", 0.1)]
    logs = []
    for pts in (one, both):
        lines: list = []
        repro.run_gains(pts, repro.Settings(two_path_seeds=2, two_path_loss_events=300, jobs=2), log=lines.append)
        logs.append([line for line in lines if line.startswith("two paths,")])
    assert logs[0] == logs[1], logs
    assert both[0].static == both[1].static and both[0].dynamic == both[1].dynamic
