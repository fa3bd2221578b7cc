"""Copa at the paper's delta (0.5, our default) and at the delta Pantheon's wrapper has used since 2020
(`do_ss:auto:0.1`, StanfordSNR/pantheon commit 99ce503) against Cubic, on the schemes report's links and
seeds: `python experiments/schemes/copa_delta.py [trace dir]` (docs/deviations.md, Copa). Throughput
is each flow's own (over its active time), so it reads a little above the report's whole-run figure.
"""

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import repro as rs  # noqa: E402

from ccscope import api  # noqa: E402

SEEDS = range(1, 6)


def mean_run(link: "rs.Link", flow: dict) -> tuple[float, float]:
    """Mean throughput (Mbit/s) and p95 one-way delay (ms) of one flow over the seeds."""
    thr, p95 = [], []
    for seed in SEEDS:
        d = rs.scenario(link, rs.duration_of(link, rs.DURATION_S))
        d["flows"][0].update(flow)
        rec = api.run(d, seed=seed).flow_records()[0]
        thr.append(rec["throughput_mbps"])
        p95.append(rec["one_way_delay_p95_ms"])
    return statistics.mean(thr), statistics.mean(p95)


def main() -> None:
    traces = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/traces").resolve()
    links, _ = rs.links(traces)
    print("| link | Cubic | Copa delta 0.5 | share | Copa delta 0.1 | share |\n|---|---|---|---:|---|---:|")
    for lk in links:
        ct, cp = mean_run(lk, {"controller": "cubic"})
        cells = [f"{ct:.3f} / {cp:.0f}"]
        for delta in (0.5, 0.1):
            t, p = mean_run(lk, {"controller": "copa", "delta": delta})
            cells += [f"{t:.3f} / {p:.0f}", f"{t / ct:.2f}"]
        print(f"| {lk.label} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
