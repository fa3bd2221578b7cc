"""Calibrate the idle (OFF) mean of ON/OFF background sources to a target load (paper 003 §4.1).

The paper tuned "the mean of the idle time distribution between successive file transfers" until the
background reached a target contention level, without saying how; specs/003-mtsc.md §1.2 reads it as
background-only pilot runs over several seeds, searching the idle mean until the realised mean
throughput at the bottleneck is within ±5% of the target. The realised load falls as the idle mean
rises, so the search brackets the root of ``mean_throughput(m) - target`` in log m and closes it with
Brent's method (scipy.optimize.brentq), stopping as soon as a pilot lands within the tolerance.

Every pilot uses the same seeds, so the ON/OFF draws are common random numbers across idle means (the
idle times of one seed scale with the mean) and the search is deterministic for given seeds.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence, Union

from . import api

__all__ = ["Calibration", "calibrate_idle_mean", "background_tables"]


@dataclass
class Calibration:
    """The outcome of :func:`calibrate_idle_mean`."""

    #: The calibrated idle mean, seconds (``traffic.off_mean_s``).
    idle_mean_s: float
    target_mbps: float
    #: Realised bottleneck throughput of each seed's pilot at ``idle_mean_s``, Mbit/s.
    realised_mbps: list
    #: Their mean, and its relative error against the target.
    mean_mbps: float
    rel_error: float
    #: Simulation runs made (pilots x seeds).
    runs: int
    seeds: list
    #: Every idle mean tried, in order, with its mean realised throughput: (idle_mean_s, mean_mbps).
    trials: list = field(default_factory=list)


class _Found(Exception):
    def __init__(self, m: float) -> None:
        self.m = m


def background_tables(d: Mapping[str, Any]) -> list:
    """Indices of the ``[[flows]]`` tables whose traffic is ON/OFF (the background)."""
    return [i for i, f in enumerate(d.get("flows", [])) if (f.get("traffic") or {}).get("kind") == "onoff"]


def _pilot_dict(sc: api.Scenario, flows: Optional[int], duration_s: float) -> dict:
    """The background-only scenario: ON/OFF tables kept, the rest dropped, ``flows`` spread evenly."""
    d = copy.deepcopy(sc.to_dict())
    keep = background_tables(d)
    if not keep:
        raise ValueError(f"{sc.file or '<scenario>'}: no [[flows]] table has traffic = {{ kind = \"onoff\", ... }}")
    if keep != list(range(len(keep))):
        # ON/OFF draws are keyed by (seed, flow index): background listed after other flows would be
        # renumbered in the pilot and draw other files than in the full run.
        raise ValueError(f"{sc.file or '<scenario>'}: the ON/OFF [[flows]] tables must come first (flow indices key the draws)")
    d["flows"] = [d["flows"][i] for i in keep]
    if flows is not None:
        if flows < len(keep):
            raise ValueError(f"flows = {flows}: at least one per background table ({len(keep)})")
        for j, f in enumerate(d["flows"]):
            f["count"] = flows // len(keep) + (1 if j < flows % len(keep) else 0)
    d["duration_s"] = duration_s
    d["timeseries"] = "none"  # the pilots need the link totals only
    return d


def _seeds(seeds: Union[int, Sequence[int]]) -> list:
    if isinstance(seeds, int):
        if seeds < 1:
            raise ValueError(f"seeds = {seeds}: need at least one")
        return list(range(1, seeds + 1))
    out = [int(s) for s in seeds]
    if not out:
        raise ValueError("seeds: need at least one")
    return out


def calibrate_idle_mean(
    scenario: api.ScenarioLike,
    target_mbps: float,
    *,
    flows: Optional[int] = None,
    seeds: Union[int, Sequence[int]] = 5,
    duration_s: float = 10_000,
    tol: float = 0.05,
    link: Optional[str] = None,
    initial_s: Optional[float] = None,
    max_pilots: int = 30,
) -> Calibration:
    """Search the ON/OFF idle mean giving ``target_mbps`` of background at the bottleneck.

    ``scenario``'s ``traffic = { kind = "onoff", ... }`` tables are the background (other flows are
    dropped from the pilots); ``flows`` sets their total count (spread evenly over the tables);
    ``seeds`` is a count (1..n) or a list; each pilot runs every seed for ``duration_s`` and takes the
    mean over seeds of the throughput leaving ``link`` (default: the scenario's ``monitor``). Stops
    when that mean is within ``tol`` (relative) of the target.
    """
    if not (target_mbps > 0 and math.isfinite(target_mbps)):
        raise ValueError(f"target_mbps = {target_mbps}: must be a finite number > 0")
    if not (0 < tol < 1):
        raise ValueError(f"tol = {tol}: must be in (0, 1)")
    sc = api.as_scenario(scenario)
    d = _pilot_dict(sc, flows, duration_s)
    seed_list = _seeds(seeds)
    n_flows = sum(int(f.get("count", 1)) for f in d["flows"])
    cache: dict = {}
    trials: list = []
    runs = 0

    def pilot(m: float) -> list:
        nonlocal runs
        if m not in cache:
            for f in d["flows"]:
                f["traffic"]["off_mean_s"] = m
            pilot_sc = api.Scenario.from_dict(d, sc.file)
            out = []
            for s in seed_list:
                r = api.run(pilot_sc, seed=s)
                name = link or r.scenario["monitor"]
                row = r.links[r.links["link"] == name]
                if row.empty:
                    raise ValueError(f"link `{name}` is not in the scenario")
                out.append(float(row["throughput_mbps"].iloc[0]))
                runs += 1
            cache[m] = out
            trials.append((m, sum(out) / len(out)))
        return cache[m]

    def excess(log_m: float) -> float:
        m = math.exp(log_m)
        e = sum(pilot(m)) / len(seed_list) / target_mbps - 1.0
        if abs(e) <= tol:
            raise _Found(m)
        return e

    if initial_s is None:
        # Fluid guess: each source carries target/n; a cycle is one mean file at that rate (ON time
        # neglected), so the idle mean is about n E[size] 8 / target.
        t = d["flows"][0]["traffic"]
        mean_b = t.get("mean_bytes")
        if mean_b is None and t.get("size") == "pareto" and "min_bytes" in t:
            mean_b = t["alpha"] * t["min_bytes"] / (t["alpha"] - 1.0)
        mean_b = mean_b or (32_000.0 if t.get("size") == "pareto" else 4e6)
        initial_s = n_flows * mean_b * 8.0 / (target_mbps * 1e6)
    try:
        lo = hi = math.log(initial_s)
        e_lo = e_hi = excess(lo)
        # Bracket: load above target -> idle longer; below -> shorter; factor 2 per step.
        while e_lo < 0:
            if len(trials) >= max_pilots:
                raise ValueError(f"target {target_mbps} Mbit/s not reached: idle mean {math.exp(lo):.3g} s gives {trials[-1][1]:.3f} Mbit/s")
            hi, e_hi = lo, e_lo
            lo -= math.log(2)
            e_lo = excess(lo)
        while e_hi > 0:
            if len(trials) >= max_pilots:
                raise ValueError(f"no idle mean up to {math.exp(hi):.3g} s brings the load down to {target_mbps} Mbit/s")
            lo, e_lo = hi, e_hi
            hi += math.log(2)
            e_hi = excess(hi)
        from scipy.optimize import brentq

        try:
            brentq(excess, lo, hi, xtol=1e-4, maxiter=max_pilots)
        except RuntimeError:
            pass  # did not converge in max_pilots steps
        raise ValueError(f"no idle mean within {tol:.0%} of {target_mbps} Mbit/s (trials: {trials})")
    except _Found as f:
        m = f.m
    realised = cache[m]
    mean = sum(realised) / len(realised)
    return Calibration(
        idle_mean_s=m, target_mbps=target_mbps, realised_mbps=realised, mean_mbps=mean,
        rel_error=mean / target_mbps - 1.0, runs=runs, seeds=seed_list, trials=trials,
    )
