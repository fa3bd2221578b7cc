"""ccscope's `stack = "linux"` TCP agrees with the Linux 6.18 kernel's TCP on the cases recorded through a
real mm-link (docs/performance.md "Against the Linux kernel through mm-link (session 18)"): the kernel's
numbers are the committed docs/kernel/summary.csv, ccscope's are run here on the same scenario (same
trace and start offset, 20 ms each way, drop-tail, Mahimahi's packet sizes) by the experiment's own
scenario builder. The gaps the section explains by a mechanism (BBR's window and queue on the constant
link, from the emulator's ACK bursts; Cubic's slow-start drops on LTE, from the HyStart flavour) are
not claimed here."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import pytest

from _experiments import load_experiment

ROOT = Path(__file__).resolve().parents[2]
SUMMARY = ROOT / "docs" / "kernel" / "summary.csv"
TRACES = ROOT / "python" / "ccscope" / "data" / "traces"


def kernel_rows() -> dict:
    """(cc, trace, packets) -> the kernel's runs, and the start offset of its first run."""
    runs: dict = defaultdict(list)
    with SUMMARY.open() as f:
        for row in csv.DictReader(f):
            if row["source"] == "kernel":
                cc, trace, q = row["case"].split("-", 1)[0], *row["case"].split("-", 1)[1].rsplit("-q", 1)
                runs[(cc, trace, int(q))].append(row)
    return runs


KERNEL = kernel_rows()
# Goodput within 2% of the kernel's mean (the largest gap in these cases, Reno on a 20-packet queue,
# is 1.5%; the kernel's own runs spread by up to 1%).
GOODPUT_CASES = [("cubic", "const12", 100), ("reno", "const12", 100), ("cubic", "const12", 20),
                 ("reno", "const12", 20), ("cubic", "verizon-down", 100), ("reno", "verizon-down", 100),
                 ("bbr", "verizon-down", 100)]
# The loss-based windows on the constant link: the median cwnd within 5% of the kernel's mean (measured
# 1-2 packets apart at 47-122 packets).
CWND_CASES = [("cubic", "const12", 100), ("reno", "const12", 100), ("cubic", "const12", 20),
              ("reno", "const12", 20)]


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    kc = load_experiment("mahimahi", "kernel_compare")
    const12 = tmp_path_factory.mktemp("traces") / "const12.trace"
    const12.write_text("1\n")  # one 1504-byte opportunity a millisecond, as record_tcp.sh writes it
    traces = {"const12": const12, "verizon-down": TRACES / "Verizon-LTE-short.down"}
    out = {}
    for key in sorted(set(GOODPUT_CASES) | set(CWND_CASES)):
        cc, trace, q = key
        first = KERNEL[key][0]
        out[key] = kc.ccscope_run(cc, traces[trace], q, int(first["start_ms"]), 60.0)
    return out


def mean(rows: list, field: str) -> float:
    return sum(float(r[field]) for r in rows) / len(rows)


def test_the_summary_holds_three_kernel_runs_of_every_case():
    assert {k: len(v) for k, v in KERNEL.items()} == {
        (cc, t, q): 3 for cc in ("cubic", "reno", "bbr") for t, q in (("const12", 100), ("const12", 20), ("verizon-down", 100))}


@pytest.mark.parametrize("case", GOODPUT_CASES, ids=["-".join(map(str, c)) for c in GOODPUT_CASES])
def test_linux_stack_goodput_is_within_2_percent_of_the_kernels(ours, case):
    k = mean(KERNEL[case], "goodput_mbps")
    assert abs(ours[case]["goodput_mbps"] - k) <= 0.02 * k, (ours[case]["goodput_mbps"], k)


@pytest.mark.parametrize("case", CWND_CASES, ids=["-".join(map(str, c)) for c in CWND_CASES])
def test_linux_stack_median_window_is_within_5_percent_of_the_kernels(ours, case):
    k = mean(KERNEL[case], "median_cwnd")
    assert abs(ours[case]["median_cwnd"] - k) <= 0.05 * k, (ours[case]["median_cwnd"], k)
