"""experiments/mtsc/phase.py's offsets on a hand-made bottleneck log (no simulation): departure to the next
controlled arrival, same-nanosecond order, and each background arrival's offset and drop."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from _experiments import load_experiment

phase = load_experiment("mtsc", "phase")

OWN = 9


def log(rows: list[tuple[int, str, int, int]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["t_ns", "event", "flow", "seq"])


def test_offsets_are_taken_in_processing_order_and_background_drops_are_matched_by_flow_seq_and_time():
    lg = log([
        (0, "departure", OWN, 0),
        (5, "arrival", 1, 70),        # in the gap before the controlled arrival: kept
        (10, "arrival", OWN, 1),
        (50, "arrival", 2, 80),       # queue full again: dropped
        (50, "drop", 2, 80),
        (100, "arrival", OWN, 2),     # same ns as the departure, processed before it
        (100, "departure", OWN, 1),
        (100, "arrival", 3, 90),      # same ns, after the departure: kept
        (110, "arrival", OWN, 3),
        (150, "arrival", 2, 80),      # a retransmission of the dropped packet: kept (no drop row at 150)
        (200, "departure", 1, 70),
    ])
    s = phase.phase_stats(lg, OWN, 0, 1000)
    assert s["departures"] == 3 and s["own_arrivals"] == 3 and s["bg_arrivals"] == 4
    # 0 -> 10, 100 -> 110 (the arrival at 100 came before it), 200 -> none.
    np.testing.assert_array_equal(s["dep_to_next_own_ns"], [10, 10])
    assert s["own_same_ns_before_dep"] == 1
    np.testing.assert_array_equal(s["bg_offset_ns"], [5, 50, 0, 50])
    np.testing.assert_array_equal(s["bg_dropped"], [False, True, False, False])
    np.testing.assert_array_equal(s["dep_spacing_ns"], [100, 100])
    assert s["own_drops"] == 0


def test_the_window_is_half_open_and_an_arrival_before_any_departure_has_no_offset():
    lg = log([(0, "arrival", 1, 1), (10, "departure", OWN, 0), (20, "arrival", OWN, 1), (30, "departure", OWN, 1)])
    s = phase.phase_stats(lg, OWN, 0, 30)
    assert s["departures"] == 1
    np.testing.assert_array_equal(s["bg_offset_ns"], [-1])
    np.testing.assert_array_equal(s["dep_to_next_own_ns"], [10])


def test_per_client_counts_one_offset_for_a_client_whose_arrivals_keep_their_phase():
    s = {"bg_flow": np.array([4, 4, 4, 7]), "bg_offset_ns": np.array([300, 300, 300, 5]),
         "bg_dropped": np.array([True, True, True, False]),
         "bg_t_ns": np.array([0, 16 * 10**9, 48 * 10**9, 7])}
    per = phase.per_client(s).set_index("flow")
    assert per.loc[4, "arrivals"] == 3 and per.loc[4, "dropped"] == 3 and per.loc[4, "distinct"] == 1
    assert per.loc[4, "gaps"] == "16.000000 32.000000"
    assert per.loc[7, "dropped"] == 0


def synthetic_run(bin_s: float) -> SimpleNamespace:
    """A run's time series as the simulator orders it (flow by flow, each in time order): the link (-1), the
    controlled flow OWN and another flow; values whose sums depend on their order, a time past the end."""
    g = np.random.default_rng(5)
    rows = []
    for flow in (-1, 3, OWN):
        for i in range(12):
            rows.append((i * bin_s * (1 + 1e-12), flow, float(g.random() * 10)))
        rows.append((13.4 * bin_s, flow, 0.1))  # past the last bin: counted in it
    return SimpleNamespace(timeseries=pd.DataFrame(rows, columns=["time_s", "flow", "throughput_mbps"]))


@pytest.mark.parametrize("bin_s", [0.01, 0.5])
def test_background_is_sac_runs_series_at_the_runs_bin_minus_the_controlled_flow(bin_s):
    import sac_runs

    res = synthetic_run(bin_s)
    bg, own = phase.background(res, OWN, bin_s, 10 * bin_s)
    link, own_s = sac_runs._series(res, [OWN], 10, bin_s)
    np.testing.assert_array_equal(own, own_s)
    np.testing.assert_array_equal(bg, np.clip(link - own_s, 0.0, None))
    # The sums phase.py took before: each bin adds its rows in the series' order, the last bin takes the rest.
    ts = res.timeseries
    want = {f: np.zeros(10) for f in (-1, OWN)}
    for t, f, v in ts[ts["flow"].isin([-1, OWN])].itertuples(index=False):
        want[f][min(int(round(t / bin_s)), 9)] += v
    assert own.tobytes() == want[OWN].tobytes()
    assert bg.tobytes() == np.clip(want[-1] - want[OWN], 0.0, None).tobytes()


def test_the_tcp_overhead_reaches_the_32_clients_and_not_the_controlled_flow():
    d = phase.scenario("online", 16, 60.0, packets=False, tcp_overhead_ms=0.8)
    *clients, controlled = d["flows"]
    assert sum(int(f["count"]) for f in clients) == 32
    assert all(f["send_overhead_ms"] == 0.8 for f in clients) and "send_overhead_ms" not in controlled
    assert all("send_overhead_ms" not in f for f in phase.scenario("online", 16, 60.0, packets=False)["flows"])


@pytest.mark.parametrize("value", ["-1", "nan"])
def test_a_bad_tcp_overhead_exits_2_naming_the_option_before_any_run(value, tmp_path, capsys):
    assert phase.main(["run", str(tmp_path), "--tcp-overhead-ms", value]) == 2
    assert "--tcp-overhead-ms" in capsys.readouterr().err
