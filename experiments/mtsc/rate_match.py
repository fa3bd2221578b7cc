"""Fig. 14 with the controlled flow's access link a hair off the bottleneck's rate (docs/deviations.md, "Measured
at the spec's run length": the phase lock in paragraph (5), these runs in (6)): how much of the committed report's
gain is the phase lock.

    python experiments/mtsc/rate_match.py [--access-mbps 9.99] [--seeds 11 .. 20] [--alphas 1.05 1.95]
        [--variants generic online [inverted random]] [--constant-a A] [--duration-s 10000] [--jobs 2]

Runs generic LIED and on-line SAC (and, when named, A3's inverted and random tables and SAC with a constant a_t,
paragraph (8)) on each report
seed and alpha, as sac_runs.py builds Fig. 14's runs, except
that the controlled flow reaches the bottleneck through its own copy of the access link at `--access-mbps`
(experiments/mtsc/phase.py `scenario`); prints per seed the controlled flow's packets/s, the background
(bottleneck minus the controlled flow, Mbit/s) and SAC's gain, beside the committed report's runs of the same
seed (docs/reproductions/mtsc/sac_runs.jsonl, access link at 10 Mbit/s), then the mean gain with a paired 95%
CI, the median, and how many seeds end with under 2 Mbit/s of background; with the A3 variants, each one's gain
over generic and the two A3 criteria as the report computes them. Writes nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from multiprocessing import Pool
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
LOG = HERE.parents[1] / "docs" / "reproductions" / "mtsc" / "sac_runs.jsonl"
# Background below this is a collapse (deviations.md, "Measured at the spec's run length").
COLLAPSE_MBPS = 2.0
# Fig. 14's two and spec A3's two table controls (inverted and random), all without a parent run.
VARIANTS = ("generic", "online", "inverted", "random")


def one(job: tuple[str, int, float, float, float, float]) -> tuple[tuple[str, int, float], float, float, float]:
    """(variant, seed, alpha) -> (controlled packets/s, background Mbit/s, SAC's mean a_t per increase step, NaN
    for generic LIED) with the access link at `access`."""
    import tomli_w
    from ccscope import api
    import phase
    from mtsc_scenarios import controlled_indices
    from sac_runs import PACKET_BYTES

    variant, seed, alpha, access, dur, const = job
    if variant == "constant":  # the threshold schedule at theta = 8: a_t = theta* on every increase, whatever the table
        d = phase.scenario("threshold", seed, dur, access_mbps=access, packets=False, alpha=alpha)
        d["flows"][-1].update(theta=8.0, theta_star=const)
    else:
        d = phase.scenario(variant, seed, dur, access_mbps=access, packets=False, alpha=alpha)
    res = api.run(api.Scenario(tomli_w.dumps(d), None), seed=seed)
    (ctl,) = controlled_indices(d)
    row = res.flows.set_index("flow").loc[ctl]
    delivered = float(row["delivered"])
    link = res.links[res.links["link"] == res.scenario["monitor"]]
    bg = float(link["throughput_mbps"].iloc[0]) - delivered * PACKET_BYTES * 8 / dur / 1e6
    # Spec §2.4: a_t is added (packets per tau) on every LIED increase; its mean over them, boosted or not.
    a = float(row["sac_a_sum_micro"]) / 1e6 / max(1.0, float(row["sac_increases"])) if variant != "generic" else np.nan
    return (variant, seed, alpha), delivered / dur, bg, a


def committed(duration_s: float) -> dict:
    """(variant, seed, alpha) -> (packets/s, background Mbit/s) of the report's Fig. 14 runs."""
    import sac_runs

    out = {}
    if not LOG.is_file():
        return out
    for line in LOG.read_text().splitlines():
        r = json.loads(line)
        run = sac_runs.Run(**r["run"])
        base = sac_runs.Run(run.variant, run.seed, duration_s, alpha=run.alpha)
        if run == base and run.variant in VARIANTS:
            out[(run.variant, run.seed, run.alpha)] = (r["total_pps"], r["background_mbps"])
    return out


def gains(res: dict, seeds: Sequence[int], alpha: float, variant: str = "online") -> Optional[np.ndarray]:
    """`variant`'s per-seed gain over generic, % (None if a run is missing)."""
    try:
        return np.array([100 * (res[(variant, s, alpha)][0] / res[("generic", s, alpha)][0] - 1) for s in seeds])
    except KeyError:
        return None


def a3(res: dict, seeds: Sequence[int], alpha: float) -> list[str]:
    """Spec A3's two table controls, as sac_report's checks compute them, on these runs."""
    from sac_report import above, ci95, paired

    out = []
    on, inv = gains(res, seeds, alpha), gains(res, seeds, alpha, "inverted")
    if on is not None and inv is not None:
        m_on, m_inv = ci95(on)[0], ci95(inv)[0]
        out.append(f"A3 inverted table: gain {m_inv:+.1f}% against on-line {m_on:+.1f}%: <= 1/2 of it "
                   f"{'holds' if m_inv <= 0.5 * m_on else 'fails'}")
    try:
        o = [res[("online", s, alpha)][0] for s in seeds]
        r = [res[("random", s, alpha)][0] for s in seeds]
    except KeyError:
        return out
    m, h = paired(o, r)
    out.append(f"A3 random table: on-line - random {m:+.1f} ± {h:.1f} pkt/s: random below on-line (paired CI) "
               f"{'holds' if above(o, r) else 'fails'}")
    return out


def summary(g: np.ndarray) -> str:
    from sac_report import ci95  # the report's interval, so the two numbers compare

    mean, half = ci95(g)
    return f"mean {mean:+.1f}% ± {half:.1f}, median {np.median(g):+.1f}%"


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--access-mbps", type=float, default=9.99)
    ap.add_argument("--seeds", type=int, nargs="+", default=list(range(11, 21)))
    ap.add_argument("--alphas", type=float, nargs="+", default=[1.05, 1.95])
    ap.add_argument("--variants", nargs="+", default=["generic", "online"], choices=VARIANTS)
    ap.add_argument("--constant-a", type=float, default=None,
                    help="also run SAC with this constant a_t (threshold schedule, theta 8, theta* = this), paragraph (8)")
    ap.add_argument("--duration-s", type=float, default=10_000.0)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args(argv)
    if not {"generic", "online"} <= set(a.variants):
        ap.error("--variants: generic and online are always needed (every gain is over generic, A3 compares to online)")
    if a.constant_a is not None and not (a.constant_a >= 0 and np.isfinite(a.constant_a)):
        ap.error(f"--constant-a {a.constant_a}: a finite number >= 0 (packets per tau)")
    variants = [*a.variants, *(["constant"] if a.constant_a is not None else [])]
    jobs = [(v, s, al, a.access_mbps, a.duration_s, a.constant_a) for al in a.alphas for s in a.seeds for v in variants]
    with Pool(max(1, a.jobs)) as pool:
        out = list(pool.imap_unordered(one, jobs))
    res = {k: (pps, bg) for k, pps, bg, _ in out}
    boost = {k: x for k, _, _, x in out}
    ref = committed(a.duration_s)
    for al in a.alphas:
        print(f"\nalpha {al}: access link {a.access_mbps} Mbit/s (committed report: 10)")
        print("seed | generic pps, bg | online pps, bg | gain | committed gain, online bg")
        for s in a.seeds:
            g, o = res[("generic", s, al)], res[("online", s, al)]
            line = f"{s} | {g[0]:.1f}, {g[1]:.2f} | {o[0]:.1f}, {o[1]:.2f} | {100 * (o[0] / g[0] - 1):+.1f}%"
            if ("generic", s, al) in ref and ("online", s, al) in ref:
                rg, ro = ref[("generic", s, al)], ref[("online", s, al)]
                line += f" | {100 * (ro[0] / rg[0] - 1):+.1f}%, {ro[1]:.2f}"
            print(line)
        print(f"gain {summary(gains(res, a.seeds, al))}; on-line runs with background < {COLLAPSE_MBPS} Mbit/s: "
              f"{sum(res[('online', s, al)][1] < COLLAPSE_MBPS for s in a.seeds)} of {len(a.seeds)}, generic "
              f"{sum(res[('generic', s, al)][1] < COLLAPSE_MBPS for s in a.seeds)}")
        g_ref = gains(ref, a.seeds, al)
        if g_ref is not None:
            print(f"committed report: gain {summary(g_ref)}")
        for v in variants:
            if v != "generic":
                m = [boost[(v, s, al)] for s in a.seeds]
                print(f"{v}: mean a_t per LIED increase {np.mean(m):.3f} (per seed {min(m):.3f}-{max(m):.3f})")
            if v in ("generic", "online"):
                continue
            print(f"{v}: gain {summary(gains(res, a.seeds, al, v))}; runs with background < {COLLAPSE_MBPS} Mbit/s: "
                  f"{sum(res[(v, s, al)][1] < COLLAPSE_MBPS for s in a.seeds)} of {len(a.seeds)}")
            if gains(ref, a.seeds, al, v) is not None:
                print(f"  committed report: gain {summary(gains(ref, a.seeds, al, v))}")
        for line in a3(res, a.seeds, al):
            print(line)
        if gains(ref, a.seeds, al, "inverted") is not None:
            for line in a3(ref, a.seeds, al):
                print(f"  committed report: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
