"""Static congestion-window management of CMT (paper 002 §5.2, eqs. 56-60; heuristic eq. 61).

Choose an integer window limit c_i per destination to maximise sum_i eta_i(c_i) (eq. 56) subject to
sum_i c_i <= r (eq. 57) and c_i <= ceil(b_i d_i + 1) (eq. 58), where r = W_total = floor(RBUF / packet)
and eta_i(c) is one path's throughput with window c (§6.2: the Markov model with independent loss).
Readings (docs/deviations.md, "Paper 002: renewal model (§4.4) and window allocation (§5)"):
- A16: 2 <= c_i <= a_i = min(W_total, ceil(b_i d_i + 1)), b_i in packets/s and d_i the round-trip delay in s.
- The objective is separable, so the exact optimum is a multiple-choice knapsack: a DP over the capacity
  in O(n W^2) ("dp"), or the same as a binary MILP on HiGHS ("milp", which also takes side constraints).
- Eq. 61 with step k: destination i takes only {k_i x : 1 <= x <= floor(a_i / k_i)}, k_i = min(k, a_i)
  (eq. 61's "k <= a"), intersected with c_i >= 2; the product of these sets is searched exhaustively.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np

from ccscope.models.cmt.inputs import (
    CmtInputError,
    check_delay,
    check_loss_rate,
    check_packet_bytes,
    check_positive,
    check_rate,
    window_packets,
)

SOLVERS = ("dp", "milp", "heuristic")
MIN_LIMIT = 2  # A16: a window limit of one packet is not a state of the Markov model (eq. 12 starts at 2)
# Bound before allocating: the heuristic's exhaustive product, and the DP/MILP table n * W.
MAX_COMBINATIONS = 4_000_000
MAX_TABLE = 50_000_000
# The Markov objective solves one chain of about c (c + 1) / 2 states per candidate window c (§4.3); the total is
# bounded before the first solve: 2^28 states, about 8 chains of the largest W (8192) markov_throughput takes.
MAX_OBJECTIVE_STATES = 1 << 28


@dataclass(frozen=True)
class Destination:
    """One path of the association: bandwidth (Mbit/s), round-trip delay (ms), loss probability, RTO_max (s)."""

    b_mbps: float
    d_ms: float
    p: float
    rto_max_s: float = 60.0


@dataclass(frozen=True)
class LinearConstraint:
    """A side constraint lower <= sum_i coefficients[i] * c_i <= upper on the limits in packets (MILP only)."""

    coefficients: Tuple[float, ...]
    lower: float = -math.inf
    upper: float = math.inf


@dataclass(frozen=True)
class Allocation:
    """Window limits per destination (packets and bytes) and the throughput the objective predicts for them."""

    limits_packets: Tuple[int, ...]
    limits_bytes: Tuple[int, ...]
    throughput_mbps: Tuple[float, ...]
    total_mbps: float
    w_total: int  # r = floor(RBUF / packet) (eq. 57)
    upper_bounds: Tuple[int, ...]  # a_i = min(W_total, ceil(b_i d_i + 1)) (eq. 58, A16)
    solver: str
    k: int
    solve_time_s: float  # the optimisation (DP, MILP or exhaustive search), objective evaluations excluded
    objective_time_s: float  # evaluating eta_i at the candidate windows
    evaluations: int  # windows evaluated, summed over destinations
    packet_bytes: int

    def to_dict(self) -> dict:
        return asdict(self)


Objective = Callable[[Destination, np.ndarray], np.ndarray]


def markov_objective(dest: Destination, windows: np.ndarray, packet_bytes: int = 1500) -> np.ndarray:
    """eta_i(c) for every c in `windows`: the Markov model with W = c and independent loss (paper 002 §6.2)."""
    from ccscope.models.cmt.markov import markov_throughput_curve

    curve = markov_throughput_curve(dest.p, dest.b_mbps, dest.d_ms, windows, loss="independent",
                                    rto_max_s=dest.rto_max_s, packet_bytes=packet_bytes)
    return np.asarray(curve, dtype=float)


def renewal_objective(dest: Destination, windows: np.ndarray, packet_bytes: int = 1500) -> np.ndarray:
    """eta_i(c) from the renewal model (§4.4) with W_max = c; footnote 5 allows either model. The renewal model
    is derived for correlated loss (eqs. 26-27), so p is read as the correlated model's p here."""
    from ccscope.models.cmt.renewal import renewal_throughput

    return np.array([renewal_throughput(dest.p, dest.b_mbps, dest.d_ms, int(c) * packet_bytes, "correlated",
                                        dest.rto_max_s, packet_bytes).throughput_mbps for c in windows])


OBJECTIVES = {"markov": markov_objective, "renewal": renewal_objective}


def bdp_bound(dest: Destination, packet_bytes: int) -> int:
    """ceil(b d + 1) of eq. 58 with b in packets/s and d in s, computed exactly from the decimal inputs."""
    b_pps = Fraction(repr(float(dest.b_mbps))) * 1_000_000 / (8 * packet_bytes)
    d_s = Fraction(repr(float(dest.d_ms))) / 1000
    return math.ceil(b_pps * d_s + 1)


def check_destination(dest: Destination, index: int) -> Destination:
    """Range checks; the error names the destination (`path[i].p`)."""
    name = f"path[{index}]"
    if not isinstance(dest, Destination):
        raise CmtInputError(name, f"expected a Destination(b_mbps, d_ms, p, rto_max_s), got {type(dest).__name__}")
    try:
        return Destination(
            b_mbps=check_rate(dest.b_mbps),
            d_ms=check_delay(dest.d_ms),
            p=check_loss_rate(dest.p),
            rto_max_s=check_positive(dest.rto_max_s, "rto_max", "s"),
        )
    except CmtInputError as e:
        raise CmtInputError(f"{name}.{e.field}", e.detail) from None


def candidate_windows(a: int, lo: int, hi: int, k: Optional[int]) -> np.ndarray:
    """Windows a destination may take: lo..hi, or eq. 61's multiples of k_i = min(k, a) within lo..hi."""
    if k is None:
        return np.arange(lo, hi + 1, dtype=np.int64)
    k_i = min(k, a)  # eq. 61: k <= a
    ws = k_i * np.arange(1, a // k_i + 1, dtype=np.int64)  # eq. 61: {k x : 1 <= x <= floor(a / k)}
    return ws[(ws >= lo) & (ws <= hi)]


def _evaluate(objective: Objective, dests: Sequence[Destination], windows: List[np.ndarray]) -> List[np.ndarray]:
    out = []
    for i, (dest, ws) in enumerate(zip(dests, windows)):
        try:
            v = np.asarray(objective(dest, ws.copy()), dtype=float)
        except CmtInputError as e:  # the model's own domain (the renewal model's p): this destination's field
            raise CmtInputError(f"path[{i}].{e.field}", e.detail) from None
        if v.shape != ws.shape or not np.all(np.isfinite(v)):
            raise CmtInputError(f"path[{i}]", f"the objective returned {v.shape} values (finite ones needed for {ws.shape})")
        out.append(v)
    return out


def solve_dp(values: Sequence[np.ndarray], windows: Sequence[np.ndarray], capacity: int) -> Optional[Tuple[int, ...]]:
    """Exact multiple-choice knapsack: f_i(r') = max_c f_{i-1}(r' - c) + eta_i(c), f_0 = 0; O(sum_i |C_i| W).

    Returns the index into windows[i] per destination, or None when no choice fits under the capacity."""
    f = np.zeros(capacity + 1)  # best value using at most r' packets, no destination yet
    choice = []
    for v, ws in zip(values, windows):
        g = np.full(capacity + 1, -np.inf)
        arg = np.full(capacity + 1, -1, dtype=np.int64)
        for j, c in enumerate(ws):
            if c > capacity:
                break
            cand = f[: capacity + 1 - c] + v[j]
            better = cand > g[c:]  # strict: the smallest window wins a tie
            g[c:][better] = cand[better]
            arg[c:][better] = j
        f = g
        choice.append(arg)
    if not np.isfinite(f[capacity]):
        return None
    picks, left = [], capacity
    for arg, ws in zip(reversed(choice), reversed(windows)):
        j = int(arg[left])
        picks.append(j)
        left -= int(ws[j])
    return tuple(reversed(picks))


def _quiet_highs(highspy):
    """A Highs instance whose constructor's banner (printed to the C stdout once per process) is discarded,
    so `--json` output stays one JSON object."""
    import ctypes
    import os
    import sys

    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 1)
            h = highspy.Highs()
            ctypes.CDLL(None).fflush(None)
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    return h


def solve_milp(
    values: Sequence[np.ndarray],
    windows: Sequence[np.ndarray],
    capacity: int,
    constraints: Sequence[LinearConstraint] = (),
) -> Optional[Tuple[int, ...]]:
    """The same knapsack as a MILP on HiGHS: binary x_{i,c}; sum_c x_{i,c} = 1 per i; sum c x_{i,c} <= r (57);
    each side constraint sum_i a_i c_i becomes sum_{i,c} a_i c x_{i,c}. Returns indices, or None if infeasible."""
    import highspy

    n = len(values)
    rows_lo = [1.0] * n + [-highspy.kHighsInf] + [c.lower if math.isfinite(c.lower) else -highspy.kHighsInf for c in constraints]
    rows_hi = [1.0] * n + [float(capacity)] + [c.upper if math.isfinite(c.upper) else highspy.kHighsInf for c in constraints]
    cost, start, index, value = [], [0], [], []
    for i, (v, ws) in enumerate(zip(values, windows)):
        for j, c in enumerate(ws):
            cost.append(float(v[j]))
            index += [i, n]  # its destination's choice row, the capacity row
            value += [1.0, float(c)]
            for r, con in enumerate(constraints):
                if con.coefficients[i] != 0.0:
                    index.append(n + 1 + r)
                    value.append(float(con.coefficients[i]) * float(c))
            start.append(len(index))
    lp = highspy.HighsLp()
    lp.num_col_ = len(cost)
    lp.num_row_ = len(rows_lo)
    lp.sense_ = highspy.ObjSense.kMaximize
    lp.col_cost_ = np.array(cost)
    lp.col_lower_ = np.zeros(len(cost))
    lp.col_upper_ = np.ones(len(cost))
    lp.row_lower_ = np.array(rows_lo)
    lp.row_upper_ = np.array(rows_hi)
    lp.integrality_ = [highspy.HighsVarType.kInteger] * len(cost)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.array(start, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(value)
    h = _quiet_highs(highspy)
    for name, opt in (("output_flag", False), ("threads", 1), ("random_seed", 0), ("mip_rel_gap", 0.0), ("mip_abs_gap", 0.0)):
        h.setOptionValue(name, opt)
    h.passModel(lp)
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    x = np.asarray(h.getSolution().col_value)
    picks, base = [], 0
    for ws in windows:
        picks.append(int(np.argmax(x[base : base + len(ws)])))
        base += len(ws)
    return tuple(picks)


def solve_exhaustive(values: Sequence[np.ndarray], windows: Sequence[np.ndarray], capacity: int) -> Optional[Tuple[int, ...]]:
    """Eq. 61's search: every combination of the candidate sets under sum c_i <= r (57); ties go to the
    lexicographically smallest limits."""
    total = np.zeros(())
    used = np.zeros((), dtype=np.int64)
    for v, ws in zip(values, windows):
        total = total[..., None] + v
        used = used[..., None] + ws
    total = np.where(used <= capacity, total, -np.inf)
    flat = int(np.argmax(total))
    if not np.isfinite(total.flat[flat]):
        return None
    return tuple(int(j) for j in np.unravel_index(flat, total.shape))


def allocate(
    dests: Sequence[Destination],
    rbuf_bytes: int,
    solver: str = "dp",
    k: int = 1,
    *,
    objective: "Optional[Objective | str]" = None,
    packet_bytes: int = 1500,
    bounds: Optional[Sequence[Tuple[int, int]]] = None,
    constraints: Sequence[LinearConstraint] = (),
) -> Allocation:
    """Window limits maximising the summed throughput (paper 002 eqs. 56-60; eq. 61 with solver="heuristic").

    objective(dest, windows) -> Mbit/s per window, or "markov" (the default: the Markov model with independent
    loss, §6.2) or "renewal" (footnote 5);
    bounds: per-destination (lo, hi) in packets, intersected with [2, a_i]; constraints: extra linear rows on
    the limits (solver="milp" only). k is eq. 61's step and only used by the heuristic."""
    if solver not in SOLVERS:
        raise CmtInputError("solver", f"{solver!r} must be one of {', '.join(SOLVERS)}")
    if isinstance(k, bool) or not isinstance(k, (int, float, np.integer)) or not math.isfinite(k) or int(k) != k or k < 1:
        raise CmtInputError("k", f"{k!r} must be a whole number >= 1")
    k = int(k)
    if len(dests) == 0:
        raise CmtInputError("path", "at least one destination is needed")
    packet_bytes = check_packet_bytes(packet_bytes)
    dests = [check_destination(d, i) for i, d in enumerate(dests)]
    n = len(dests)
    w_total = window_packets(rbuf_bytes, packet_bytes, minimum=MIN_LIMIT * n)
    if n * w_total > MAX_TABLE:
        raise CmtInputError("rbuf", f"{n} destinations x {w_total} packets exceeds the table limit of {MAX_TABLE}")
    if bounds is not None and len(bounds) != n:
        raise CmtInputError("bounds", f"{len(bounds)} bounds for {n} destinations")
    if constraints and solver != "milp":
        raise CmtInputError("constraints", "side constraints need solver='milp'")
    for r, con in enumerate(constraints):
        if len(con.coefficients) != n:
            raise CmtInputError(f"constraints[{r}]", f"{len(con.coefficients)} coefficients for {n} destinations")
    a = [min(w_total, bdp_bound(d, packet_bytes)) for d in dests]  # eq. 58 capped by eq. 57
    windows = []
    for i in range(n):
        lo, hi = MIN_LIMIT, a[i]
        if bounds is not None:
            lo, hi = max(lo, int(bounds[i][0])), min(hi, int(bounds[i][1]))
        ws = candidate_windows(a[i], lo, hi, k if solver == "heuristic" else None)
        if ws.size == 0:
            raise CmtInputError(f"path[{i}]", f"no window limit in [{lo}, {hi}] (a_i = {a[i]})")
        windows.append(ws)
    if solver == "heuristic" and math.prod(len(ws) for ws in windows) > MAX_COMBINATIONS:
        raise CmtInputError("k", f"the exhaustive search would visit more than {MAX_COMBINATIONS} combinations")

    if objective is None or isinstance(objective, str):
        name = objective or "markov"
        if name not in OBJECTIVES:
            raise CmtInputError("objective", f"{name!r} must be one of {', '.join(OBJECTIVES)} or a callable")
        model = OBJECTIVES[name]
        objective = lambda dest, windows: model(dest, windows, packet_bytes)  # noqa: E731
    else:
        model = objective
    # The bound holds however the Markov objective is named: by default, by name, or as the function itself.
    states = sum(int((ws * (ws + 1) // 2).sum()) for ws in windows) if model is markov_objective else 0
    if states > MAX_OBJECTIVE_STATES:
        raise CmtInputError("rbuf", f"the Markov objective would solve chains of {states} states in all (windows up to "
                            f"{max(a)} packets), above the limit of {MAX_OBJECTIVE_STATES}; use objective='renewal', "
                            "bounds or solver='heuristic' with a larger k")
    t0 = time.perf_counter()
    values = _evaluate(objective, dests, windows)
    t1 = time.perf_counter()
    if solver == "dp":
        picks = solve_dp(values, windows, w_total)
    elif solver == "milp":
        picks = solve_milp(values, windows, w_total, constraints)
    else:
        picks = solve_exhaustive(values, windows, w_total)
    t2 = time.perf_counter()
    if picks is None:
        raise CmtInputError("rbuf", f"no window limits satisfy the constraints with W_total = {w_total} packets")
    limits = tuple(int(ws[j]) for ws, j in zip(windows, picks))
    per = tuple(float(v[j]) for v, j in zip(values, picks))
    return Allocation(
        limits_packets=limits,
        limits_bytes=tuple(c * packet_bytes for c in limits),
        throughput_mbps=per,
        total_mbps=float(sum(per)),
        w_total=w_total,
        upper_bounds=tuple(a),
        solver=solver,
        k=k,
        solve_time_s=t2 - t1,
        objective_time_s=t1 - t0,
        evaluations=int(sum(len(ws) for ws in windows)),
        packet_bytes=packet_bytes,
    )
