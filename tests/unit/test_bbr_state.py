"""experiments/mahimahi/bbr_state.py: tcp_bbr.c's quantization budget, the queue-by-time-since-PROBE_RTT
table, the ACK-gap counts, and one error line (exit 2) for inputs it cannot read."""

from __future__ import annotations

import numpy as np

from _experiments import load_experiment

bs = load_experiment("mahimahi", "bbr_state")


def test_the_budget_adds_three_quanta_of_two_packets_rounds_up_to_even_and_two_more_in_the_probe_phase():
    # tcp_bbr.c bbr_quantization_budget with bbr_tso_segs_goal = 2: cwnd + 6, even, +2 in phase 0.
    assert bs.budget(84, False) == 90
    assert bs.budget(85, False) == 92
    assert bs.budget(84, True) == 92


def test_the_queue_is_averaged_by_time_since_the_last_probe_rtt_ended():
    exits = np.array([10.0, 20.0])
    dep = np.array([5.0, 10.5, 11.0, 14.5, 19.0, 20.1])
    delay = np.array([99.0, 10.0, 20.0, 40.0, 60.0, 30.0])
    r = bs.ramp(dep, delay, exits)
    assert r["qdelay_0-2s_after_probe_rtt_ms"] == 20.0  # 10.5, 11.0 and 20.1; 5.0 precedes every exit
    assert r["qdelay_4-6s_after_probe_rtt_ms"] == 40.0
    assert r["qdelay_8-10.5s_after_probe_rtt_ms"] == 60.0
    assert np.isnan(r["qdelay_2-4s_after_probe_rtt_ms"])


def test_ack_gaps_off_the_two_ms_grid_are_counted_beyond_a_quarter_ms():
    g = bs._gaps(np.array([2.0, 2.2, 2.3, 1.0, 3.0]))
    assert g["ack_gaps_off_2ms"] == 0.6
    assert g["ack_gap_p50_ms"] == 2.2


def test_a_run_recorded_without_the_bbr_columns_is_one_error_line(tmp_path, capsys):
    (tmp_path / "bbr-const12-q100-r1.csv").write_text("t_s,snd_cwnd\n0.0,10\n")
    assert bs.main([str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {tmp_path / 'bbr-const12-q100-r1.csv'}: no bbr_bw column "
                   "(recorded before tcp_bulk.py sampled TCP_CC_INFO)"]


def test_a_missing_ccscope_file_is_named_with_its_option(tmp_path, capsys):
    assert bs.main([str(tmp_path), "--ccscope", str(tmp_path / "none.csv")]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"error: --ccscope {tmp_path / 'none.csv'}: no such file"]
