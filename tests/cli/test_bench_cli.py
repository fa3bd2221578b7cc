"""`ccscope bench` runs its cases and reports them as rows (figures themselves live in docs/performance.md)."""

import pytest
from typer.testing import CliRunner

from ccscope import bench
from ccscope.cli import app


def test_the_contest_case_reports_delivered_packets_and_rates():
    df = bench.run_bench(repeats=1, names=["contest"])
    (row,) = df.to_dict(orient="records")
    assert row["case"] == "contest" and row["delivered"] > 0
    assert row["pkts_per_wall_s"] == pytest.approx(row["delivered"] / row["wall_s"])


@pytest.mark.skipif(bench._find_trace("TMobile-LTE-driving.down") is None, reason="shared traces not found")
def test_the_markov_case_trains_a_million_verus_samples_and_sizes_the_1ms_model():
    mk = bench.markov_training(repeats=1)
    assert mk["samples"] == 1_000_000 and mk["train_s"] > 0 and mk["python_count_s"] > 0
    # The plain-Python count finds exactly the transitions the trainer stored.
    assert mk["nnz_check"] == mk["nnz_2ms"]
    assert 250_000 < mk["one_user_samples"] < 350_000
    # Only non-empty rows are stored: far below 8 bytes per state of the 1 ms grid.
    assert mk["file_bytes_1ms"] < 8 * mk["m_1ms"] / 10


def test_bench_cli_prints_the_markov_rows_when_their_traces_are_found_and_says_why_not_otherwise():
    # Which of the two is this checkout's to say: it has the traces or not (one outcome, never either).
    found = all(bench._find_trace(n) is not None for n in bench.MARKOV_TRACES)
    r = CliRunner().invoke(app, ["bench", "--cases", "markov", "--repeats", "1"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert ("markov train, 1,000,000 samples" in r.output) == found, r.output
    assert ("skipped markov" in r.output) == (not found), r.output


@pytest.mark.parametrize("repeats", [0, -1, 10**12, 2.5, True])
def test_run_bench_refuses_a_repeat_count_outside_1_to_1000_before_running(repeats):
    from ccscope.arguments import ArgumentError

    with pytest.raises(ArgumentError, match=r"^repeats="):
        bench.run_bench(repeats=repeats, names=["contest"])
