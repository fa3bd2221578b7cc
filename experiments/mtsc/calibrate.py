"""Calibrate the background idle mean per (alpha, load) (specs/003-mtsc.md §1.2 [D]): background-only pilots on
the development seeds (spec A2: 1-5), 10,000 s each, until the seed-mean bottleneck throughput is the target
within ±5%. Prints the `by_alpha` entries that experiments/mtsc/registered.toml holds.

    python experiments/mtsc/calibrate.py [--target-mbps 5] [--alphas 1.05 1.95] [--bottleneck-mbps 10]
                                         [--size pareto|lognormal] [--jobs 2]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ccscope import api  # noqa: E402
from ccscope.experiment import add_runner_options  # noqa: E402
from ccscope.runner import run_all  # noqa: E402
from ccscope.traffic_calibration import calibrate_idle_mean  # noqa: E402
from mtsc_scenarios import EXAMPLE_IDLE_MEAN_S, background  # noqa: E402

ALPHAS = tuple(round(1.05 + 0.1 * i, 2) for i in range(10))


def one(job: tuple) -> tuple:
    alpha, target, seeds, duration_s, tol, bottleneck, size = job
    sc = api.Scenario(background(alpha, duration_s, idle_mean_s=EXAMPLE_IDLE_MEAN_S, bottleneck_mbps=bottleneck,
                                 size=size), None)
    c = calibrate_idle_mean(sc, target, seeds=seeds, duration_s=duration_s, tol=tol)
    return alpha, c


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target-mbps", type=float, default=5.0)
    ap.add_argument("--alphas", type=float, nargs="+", default=list(ALPHAS))
    ap.add_argument("--bottleneck-mbps", type=float, default=10.0)
    ap.add_argument("--size", choices=("pareto", "lognormal"), default="pareto")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--duration-s", type=float, default=10_000.0)
    ap.add_argument("--tol", type=float, default=0.05)
    add_runner_options(ap, 2)
    a = ap.parse_args(argv)
    alphas = a.alphas if a.size == "pareto" else [1.5]  # the log-normal control has no alpha
    jobs = [(al, a.target_mbps, list(range(1, a.seeds + 1)), a.duration_s, a.tol, a.bottleneck_mbps, a.size)
            for al in alphas]
    print(f"# {a.size}, {a.target_mbps} Mbit/s on {a.bottleneck_mbps} Mbit/s, seeds 1-{a.seeds}, {a.duration_s:g} s",
          flush=True)
    for alpha, c in run_all(one, jobs, a.jobs, "calibration", a.quiet):
        per_seed = ", ".join(f"{v:.2f}" for v in c.realised_mbps)
        key = f"{alpha:.2f}" if a.size == "pareto" else "0.00"
        print(f'"{key}" = {c.idle_mean_s:.4f}  # {c.mean_mbps:.3f} Mbit/s ({c.rel_error:+.1%}); seeds {per_seed}; '
              f"{c.runs} runs", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
