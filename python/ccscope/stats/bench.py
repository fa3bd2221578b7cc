"""Speed of the paper 003 statistics (spec §5 P3, P4): ``python -m ccscope.stats.bench``.

Prints the median wall time of Davies-Harte fGn for 2^20 points, of each Hurst estimator (Whittle at its
default aggregation and over the full band) and of the four together on 10^6 points, of the off-line
CondProb table, of one on-line update, and of one fluid ON/OFF aggregate of the A5 check."""

from __future__ import annotations

import statistics
import time
from typing import Callable

from ccscope import stats


def median_s(f: Callable[[], object], repeats: int) -> float:
    """Median wall time of `repeats` calls."""
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def main(repeats: int = 5) -> None:
    stats.hurst(stats.fgn(1 << 14, 0.7, seed=0), "wavelet", j1=2)  # imports (pywt, scipy) outside the timing
    print(f"fgn, 2^20 points: {median_s(lambda: stats.fgn(1 << 20, 0.8, seed=1), repeats):.3f} s")
    x = stats.fgn(10**6, 0.8, seed=2)
    for m in stats.METHODS:
        print(f"hurst {m}, 10^6 points: {median_s(lambda: stats.hurst(x, m), repeats):.3f} s "
              f"(H = {stats.hurst(x, m).hurst:.4f}, true 0.8)")
    full = median_s(lambda: stats.hurst(x, "whittle", aggregation=1), repeats)
    print(f"hurst whittle aggregation=1 (full band), 10^6 points: {full:.3f} s "
          f"(H = {stats.hurst(x, 'whittle', aggregation=1).hurst:.4f}, true 0.8)")
    both = median_s(lambda: [stats.hurst(x, m) for m in stats.METHODS], repeats)
    print(f"the four together, 10^6 points: {both:.3f} s")
    t = median_s(lambda: stats.condprob_table(x, 200, 200), repeats)
    print(f"condprob_table, 10^6 points, T1 = T2 = 200 bins: {t:.4f} s")
    on = stats.CondProbOnline(1, 1)
    vals = x[:200_000].tolist()
    t = time.perf_counter()
    for i in range(0, len(vals), 2):
        on.update(vals[i], vals[i + 1])
    print(f"CondProbOnline.update: {(time.perf_counter() - t) / (len(vals) // 2) * 1e6:.2f} us per block")
    for a in (1.2, 1.8):
        t = median_s(lambda: stats.onoff_aggregate(100, 1 << 18, a, seed=1, aggregate=16), repeats)
        print(f"onoff_aggregate, 100 sources, 2^18 slots, alpha {a}: {t:.3f} s")


if __name__ == "__main__":  # pragma: no cover
    main()
