"""Paper 001's qualitative results on the full 140 s contest link (each run takes a few hundredths of a
second): the fixed-window sweep (§1.1), the best window (§1.2) and the controller ladder (§2 to §4)."""

from __future__ import annotations

import pytest

import ccscope

SWEEP_WINDOWS = [1, 2, 5, 10, 20, 50, 100, 200, 500]  # §1.1
SEARCH_WINDOWS = list(range(5, 21))  # §1.2


@pytest.fixture(scope="module")
def fixed() -> dict[int, dict]:
    """Summary per fixed window, sweep and search windows together."""
    return {
        w: ccscope.run("examples/fixed.toml", overrides={"flows.0.window": w}).summary
        for w in sorted(set(SWEEP_WINDOWS) | set(SEARCH_WINDOWS))
    }


@pytest.fixture(scope="module")
def ladder(fixed) -> dict[str, float]:
    """Score per controller; the fixed window's is the best of the search."""
    scores = {name: ccscope.run(f"examples/{name}.toml").summary["score"]
              for name in ("aimd", "delay_triggered", "aiad", "mimd", "timely", "queue_gradient")}
    scores["best_fixed"] = max(s["score"] for s in fixed.values())
    return scores


def test_contest_run_covers_one_pass_of_the_trace(fixed):
    s = fixed[12]
    assert s["sim_end_s"] == pytest.approx(140.0)
    assert s["capacity_mbps"] == pytest.approx(5.03, rel=0.01)  # the trace README's mean
    assert s["dropped"] == 0  # infinite queue


def test_throughput_never_falls_as_the_window_grows(fixed):
    thr = [fixed[w]["throughput_mbps"] for w in SWEEP_WINDOWS]
    for small, big in zip(thr, thr[1:]):
        assert big >= small * 0.99
    assert thr[-1] == pytest.approx(fixed[500]["capacity_mbps"], rel=0.01)  # large windows fill the link


def test_delay_grows_with_the_window(fixed):
    qd = [fixed[w]["queue_delay_p95_ms"] for w in SWEEP_WINDOWS]
    assert qd == sorted(qd) and qd[-1] > 10 * qd[0]
    # The signal delay grows too from window 2 on (1 to 2 is the paper's exception, next test).
    sig = [fixed[w]["signal_delay_p95_ms"] for w in SWEEP_WINDOWS[1:]]
    assert sig == sorted(sig) and sig[-1] > 10 * sig[0]


def test_window_2_beats_window_1_on_throughput_without_worse_delay(fixed):
    one, two = fixed[1], fixed[2]
    assert two["throughput_mbps"] > 1.5 * one["throughput_mbps"]
    assert two["signal_delay_p95_ms"] <= one["signal_delay_p95_ms"]


def test_best_scoring_window_lies_between_5_and_20(fixed):
    best_of_sweep = max(SWEEP_WINDOWS, key=lambda w: fixed[w]["score"])
    assert 5 <= best_of_sweep <= 20
    best_overall = max(fixed, key=lambda w: fixed[w]["score"])
    assert 5 <= best_overall <= 20
    assert fixed[best_overall]["score"] > fixed[1]["score"]


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "known gap: paper 001 §1.2 says the best fixed window scores 'more than 10 times' window 1; ccscope "
    "measures 6.2x (window 1: 0.232 Mbit/s at 109 ms p95 signal delay, score 2.12; best: window 12, "
    "13.10). The write-up does not tabulate window 1, so the cause is not established "
    "(docs/reproductions/datagrump.md)"))
def test_best_fixed_window_scores_more_than_10_times_window_1(fixed):
    best = max(s["score"] for s in fixed.values())
    assert best > 10 * fixed[1]["score"]


def test_window_12_matches_the_paper_within_15_percent(fixed):
    s = fixed[12]
    assert s["throughput_mbps"] == pytest.approx(2.26, rel=0.15)
    assert s["signal_delay_p95_ms"] == pytest.approx(176, rel=0.15)
    assert s["score"] == pytest.approx(12.84, rel=0.15)


def test_score_ladder_best_fixed_aimd_delay_triggered_timely(ladder):
    assert ladder["best_fixed"] < ladder["aimd"] < ladder["delay_triggered"] < ladder["timely"]


def test_mimd_scores_lowest_and_aiad_between_fixed_and_aimd(ladder):
    # §3.2: AIAD "merely surpassing the fixed window"; §3.3: MIMD 0.1, far below everything else.
    assert ladder["mimd"] < 1 < ladder["best_fixed"] < ladder["aiad"] < ladder["aimd"]


def test_timely_score_matches_the_paper_within_15_percent(ladder):
    assert ladder["timely"] == pytest.approx(32.85, rel=0.15)
