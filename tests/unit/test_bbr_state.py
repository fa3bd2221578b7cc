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


KERNEL_HEADER = "t_s,snd_cwnd,pacing_rate,bbr_bw,bbr_min_rtt,bbr_pacing_gain,bbr_cwnd_gain,unacked\n"


def _run(tmp_path, rows: str, up: str = "# mm-link\n0 + 1504\n5 - 1504 5\n"):
    (tmp_path / "bbr-const12-q100-r1.csv").write_text(KERNEL_HEADER + rows)
    (tmp_path / "bbr-const12-q100-r1.up.log").write_text(up)
    return tmp_path / "bbr-const12-q100-r1.csv"


def test_an_empty_sample_field_is_one_error_line_naming_file_line_and_column(tmp_path, capsys):
    p = _run(tmp_path, "0.0,10,1000,1448000,40000,739,739,10\n6.0,10,,1448000,40000,256,512,10\n")
    assert bs.main([str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"error: {p}:3: pacing_rate: not a number: ''"]


def test_a_run_with_no_probe_bw_sample_after_five_seconds_is_one_error_line_naming_it(tmp_path, capsys):
    p = _run(tmp_path, "0.0,10,1000,1448000,40000,739,739,10\n1.0,10,1000,1448000,40000,256,512,10\n")
    assert bs.main([str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: {p}: no PROBE_BW sample from 5 s on (pacing gain 1.25/0.75/1, cwnd gain 2)"]


def test_a_truncated_uplink_log_line_is_one_error_line_not_a_traceback(tmp_path, capsys):
    _run(tmp_path, "0.0,10,1000,1448000,40000,739,739,10\n6.0,10,1000,1448000,40000,256,512,10\n",
         up="# mm-link\n0 + 1504\n5 - 1504\n")
    assert bs.main([str(tmp_path)]) == 2
    up = tmp_path / "bbr-const12-q100-r1.up.log"
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: {up}:3: not a Mahimahi log line (time, +/-/d, bytes, and a delay on a departure)"]


def test_a_ccscope_csv_with_no_probe_bw_row_after_five_seconds_is_one_error_line_naming_it(tmp_path, capsys):
    c = tmp_path / "s.csv"
    c.write_text("t_ns,mode,cycle_idx,max_bw_pps,min_rtt_us,cwnd,in_flight,extra_acked\n"
                 "0,startup,0,1000.0,40000,10,10,0\n1000000000,drain,0,1000.0,40000,10,10,0\n")
    assert bs.main([str(tmp_path), "--ccscope", str(c)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: --ccscope {c}: no probe_bw row from 5 s on"]
