"""The conditional-probability table of paper 003 (§2.3, Appendix A) and its average entropy (§2.4).

A series is cut into contiguous blocks of T1 + T2 bins; V1 sums the first T1 bins of a block, V2 the next
T2. Each V_k is quantised into m = 8 levels by its mean and standard deviation, L_k = 1 below mu - 3 sigma,
2 in [mu - 3 sigma, mu - 2 sigma), ..., 8 at mu + 3 sigma and above (Appendix A.1). CondProb[l][l'] counts
blocks with L1 = l and L2 = l'; column 9 holds h_l, the blocks with L1 = l; Pr{L2 = l' | L1 = l} =
CondProb[l][l'] / h_l.
"""

from __future__ import annotations

import math
import numbers
import struct
from bisect import bisect_right
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence, Tuple

import numpy as np

from ccscope.stats.errors import StatsError, check_seed, check_series

#: Number of levels (paper 003 §2.3: m = 8).
M = 8
#: Largest block length accepted, in bins (bounds the allocation of the block sums).
MAX_BLOCK_BINS = 1 << 26
#: Rows with fewer blocks than this are left out of the average entropy (spec §3.2 [D]: h_l >= 10).
ENTROPY_MIN_COUNT = 10


def sigma_edges(mu: float, sigma: float) -> np.ndarray:
    """The 7 inner level boundaries mu - 3 sigma, ..., mu + 3 sigma (Appendix A.1)."""
    return mu + sigma * np.arange(-3.0, 4.0)


def levels(v, edges: np.ndarray) -> np.ndarray:
    """Level 1..8 of each value: the number of boundaries at or below it, plus 1 (intervals closed below).
    With sigma = 0 every boundary is mu, so the literal intervals give 8 for V >= mu and 1 below it."""
    return np.searchsorted(edges, np.asarray(v, dtype=np.float64), side="right") + 1


@dataclass(frozen=True, eq=False)
class CondProbTable:
    """``counts`` is CondProb, an 8 x 9 integer array (0-based: row l-1; column 8 is h_l).

    ``mu``/``sigma`` are (mu_1, mu_2)/(sigma_1, sigma_2) of V1 and V2 (population statistics over the
    blocks; for an on-line table, the running values at its last update); ``partition`` is "sigma"
    (Appendix A.1) or "quantile" (the uniform alternative the paper mentions, off-line only)."""

    counts: np.ndarray
    t1_bins: int
    t2_bins: int
    blocks: int
    mu: Tuple[float, float]
    sigma: Tuple[float, float]
    partition: str = "sigma"

    @property
    def h(self) -> np.ndarray:
        """h_l, blocks with L1 = l, for l = 1..8."""
        return self.counts[:, M]

    def probabilities(self) -> np.ndarray:
        """Pr{L2 = l' | L1 = l} as an 8 x 8 array; rows never seen (h_l = 0) are NaN."""
        h = self.h.astype(np.float64)[:, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(h > 0, self.counts[:, :M] / np.where(h > 0, h, 1.0), np.nan)

    def expected_next(self) -> np.ndarray:
        """E(L2 | L1 = l) = sum_l' l' Pr{L2 = l' | L1 = l} (§3.2.2), NaN for unseen rows."""
        return self.probabilities() @ np.arange(1.0, M + 1.0)

    def row_entropy(self) -> np.ndarray:
        """S_l = -sum_l' p log p in nats (§2.4; 0 log 0 = 0), NaN for unseen rows."""
        p = self.probabilities()
        with np.errstate(invalid="ignore", divide="ignore"):
            terms = np.where(p > 0, -p * np.log(np.where(p > 0, p, 1.0)), 0.0)
        return np.where(self.h > 0, terms.sum(axis=1), np.nan)

    def kendall_tau(self) -> float:
        """Kendall's tau_b between L1 and L2 over the blocks (the spec's Fig. 2 check), NaN if undefined."""
        from scipy.stats import kendalltau

        c = self.counts[:, :M]
        l1, l2 = np.nonzero(c)
        w = c[l1, l2]
        if w.sum() < 2:
            return math.nan
        return float(kendalltau(np.repeat(l1, w), np.repeat(l2, w)).statistic)

    def to_dict(self) -> dict:
        """Plain types for JSON (NaN as None)."""
        def clean(a):
            return [[None if isinstance(v, float) and math.isnan(v) else v for v in row] for row in a.tolist()]

        e = self.expected_next()
        s = self.row_entropy()
        return {
            "t1_bins": self.t1_bins, "t2_bins": self.t2_bins, "blocks": self.blocks, "partition": self.partition,
            "mu": list(self.mu), "sigma": list(self.sigma), "counts": self.counts.tolist(),
            "h": self.h.tolist(), "probabilities": clean(self.probabilities()),
            "expected_next": clean(e[None, :])[0], "row_entropy": clean(s[None, :])[0],
            "average_entropy": _none_if_nan(average_entropy(self)),
            "conditional_entropy": _none_if_nan(average_entropy(self, weighted=True)),
        }


def _none_if_nan(v: float):
    return None if math.isnan(v) else v


def _check_bins(name: str, v) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise StatsError(f"{name}: must be a positive whole number of bins, got {v!r}")
    if v > MAX_BLOCK_BINS:
        raise StatsError(f"{name}: {v} bins is above the limit of {MAX_BLOCK_BINS}")
    return int(v)


def block_sums(x, t1_bins: int, t2_bins: int) -> Tuple[np.ndarray, np.ndarray]:
    """V1 and V2 of each complete block of T1 + T2 bins (an incomplete last block is dropped)."""
    a = check_series(x)
    t1, t2 = _check_bins("t1_bins", t1_bins), _check_bins("t2_bins", t2_bins)
    nb = len(a) // (t1 + t2)
    if nb < 2:
        raise StatsError(f"x: {len(a)} bins hold {nb} block(s) of t1 + t2 = {t1 + t2} bins; at least 2 are needed")
    b = a[: nb * (t1 + t2)].reshape(nb, t1 + t2)
    return b[:, :t1].sum(axis=1), b[:, t1:].sum(axis=1)


def _count(l1: np.ndarray, l2: np.ndarray) -> np.ndarray:
    counts = np.zeros((M, M + 1), dtype=np.int64)
    np.add.at(counts, (l1 - 1, l2 - 1), 1)
    counts[:, M] = np.bincount(l1 - 1, minlength=M)
    return counts


def condprob_table(x, t1_bins: int, t2_bins: int, partition: str = "sigma") -> CondProbTable:
    """Off-line CondProb (Appendix A.1) of series `x`, blocks of `t1_bins` followed by `t2_bins` bins.

    partition="sigma": the mean +- k sigma levels of the paper, with mu_k and sigma_k (population) of V_k
    over all blocks; "quantile": levels at the k/8 quantiles of V_k (the uniform alternative, A.1)."""
    v1, v2 = block_sums(x, t1_bins, t2_bins)
    mu = (float(v1.mean()), float(v2.mean()))
    sd = (float(v1.std()), float(v2.std()))
    if partition == "sigma":
        e1, e2 = sigma_edges(mu[0], sd[0]), sigma_edges(mu[1], sd[1])
    elif partition == "quantile":
        q = np.arange(1, M) / M
        e1, e2 = np.quantile(v1, q), np.quantile(v2, q)
    else:
        raise StatsError(f"partition: must be 'sigma' or 'quantile', got {partition!r}")
    return CondProbTable(_count(levels(v1, e1), levels(v2, e2)), int(t1_bins), int(t2_bins), len(v1), mu, sd,
                         partition)


class _Running:
    """Running mean and population standard deviation, O(1) per value (Welford 1962; the same quantity
    as A.2's E(X^2) - E(X)^2 without its cancellation)."""

    __slots__ = ("n", "mean", "m2")

    def __init__(self) -> None:
        self.n, self.mean, self.m2 = 0, 0.0, 0.0

    def push(self, v: float) -> None:
        self.n += 1
        d = v - self.mean
        self.mean += d / self.n
        self.m2 += d * (v - self.mean)

    @property
    def sd(self) -> float:
        return math.sqrt(self.m2 / self.n) if self.n else 0.0


def _frozen_stats(frozen) -> Tuple[float, float, float, float]:
    """(mu1, sigma1, mu2, sigma2) as finite floats with sigmas >= 0, else a StatsError naming `frozen`."""
    bad = StatsError(f"frozen: expected (mu1, sigma1, mu2, sigma2), finite numbers with sigmas >= 0, got {frozen!r}")
    try:
        f = tuple(float(v) for v in check_series(frozen, "frozen"))
    except StatsError:
        raise bad from None
    if len(f) != 4 or min(f[1], f[3]) < 0:
        raise bad
    return f


class CondProbOnline:
    """On-line CondProb (Appendix A.2): O(1) work per block.

    Call :meth:`end_t1` with V1 at each T1 alarm and :meth:`end_t2` with V2 at the following T2 alarm
    (or :meth:`update` with both). Each updates the running mu_k, sigma_k with the new value first, then
    classifies it with the updated statistics; earlier blocks are never reclassified, so the table is
    A.2's approximation of the off-line one. With ``frozen=(mu1, sigma1, mu2, sigma2)`` the statistics
    stay fixed (the spec's training-time mode), and the table equals :func:`condprob_table` on the same
    series when given that table's mu and sigma."""

    def __init__(self, t1_bins: int = 0, t2_bins: int = 0,
                 frozen: Optional[Tuple[float, float, float, float]] = None) -> None:
        self.t1_bins, self.t2_bins = int(t1_bins), int(t2_bins)
        self.counts = np.zeros((M, M + 1), dtype=np.int64)
        self._s1, self._s2 = _Running(), _Running()
        self._frozen = None if frozen is None else _frozen_stats(frozen)
        self._l1: Optional[int] = None
        self.blocks = 0

    def _stats(self, k: int) -> Tuple[float, float]:
        if self._frozen is not None:
            return self._frozen[2 * k - 2], self._frozen[2 * k - 1]
        s = self._s1 if k == 1 else self._s2
        return s.mean, s.sd

    def level(self, v: float, k: int = 1) -> int:
        """L_k(v) under the current mu_k, sigma_k (what SAC uses for S_t, §3.2.2)."""
        mu, sd = self._stats(k)
        # The same boundaries as sigma_edges (one multiply, one add each), without numpy's per-call cost.
        return bisect_right([mu + sd * j for j in (-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0)], v) + 1

    def _observe(self, v: float, k: int) -> int:
        """A.2 at an alarm: update mu_k, sigma_k with V_k first (unless frozen), then classify V_k."""
        v = float(v)
        if not math.isfinite(v):
            raise StatsError(f"v{k}: {v} is not finite")
        if self._frozen is None:
            (self._s1 if k == 1 else self._s2).push(v)
        return self.level(v, k)

    def end_t1(self, v1: float) -> int:
        """The T1 alarm: update mu_1, sigma_1 with V1, classify it, add 1 to h_l; returns l."""
        if self._l1 is not None:
            raise StatsError("end_t1: called twice without end_t2 (the clock alternates T1, T2)")
        self._l1 = self._observe(v1, 1)
        self.counts[self._l1 - 1, M] += 1
        return self._l1

    def end_t2(self, v2: float) -> int:
        """The T2 alarm: update mu_2, sigma_2 with V2, classify it, add 1 to CondProb[l][l']; returns l'."""
        if self._l1 is None:
            raise StatsError("end_t2: called before end_t1 (the clock alternates T1, T2)")
        l2 = self._observe(v2, 2)
        self.counts[self._l1 - 1, l2 - 1] += 1
        self._l1 = None
        self.blocks += 1
        return l2

    def update(self, v1: float, v2: float) -> Tuple[int, int]:
        """One whole block: :meth:`end_t1` then :meth:`end_t2`."""
        return self.end_t1(v1), self.end_t2(v2)

    def expected_next(self, l1: int) -> float:
        """E(L2 | L1 = l1) over the complete blocks counted so far (a T1 awaiting its T2 is not one); NaN
        if there are none. The Rust controller's table (ccscope-cc common/condprob.rs) does the same."""
        row = self.counts[l1 - 1, :M]
        n = int(row.sum())
        return float(np.arange(1, M + 1) @ row / n) if n else math.nan

    def table(self) -> CondProbTable:
        """A snapshot as a :class:`CondProbTable` (complete blocks only)."""
        counts = self.counts.copy()
        if self._l1 is not None:  # a T1 seen without its T2: not a complete block
            counts[self._l1 - 1, M] -= 1
        mu1, sd1 = self._stats(1)
        mu2, sd2 = self._stats(2)
        return CondProbTable(counts, self.t1_bins, self.t2_bins, self.blocks, (mu1, mu2), (sd1, sd2))


def average_entropy(table: CondProbTable, min_count: int = ENTROPY_MIN_COUNT, weighted: bool = False) -> float:
    """S-bar of §2.4: the mean of S_l over rows with h_l >= min_count (spec §3.2 [D]; the paper averages
    over all m rows, which leaves unseen rows undefined), in nats. weighted=True gives the h-weighted mean,
    the conditional entropy H(L2 | L1). NaN if no row qualifies."""
    if not (hasattr(table, "row_entropy") and hasattr(table, "h")):
        raise StatsError(f"table: expected a CondProbTable (from condprob_table), got {type(table).__name__}")
    if isinstance(min_count, bool) or not isinstance(min_count, numbers.Integral):
        raise StatsError(f"min_count: must be a whole number of observations, got {min_count!r}")
    s = table.row_entropy()
    ok = table.h >= max(1, int(min_count))
    if not ok.any():
        return math.nan
    if weighted:
        return float(np.sum(s[ok] * table.h[ok]) / np.sum(table.h[ok]))
    return float(np.mean(s[ok]))


def shuffle(x, seed: int) -> np.ndarray:
    """A random permutation of the bins of `x` (``default_rng(seed)``): the same marginal distribution with
    the correlation destroyed, the control of the entropy curve (spec §3.2 [D])."""
    a = check_series(x)
    return np.random.default_rng(check_seed(seed)).permutation(a)


@dataclass(frozen=True, eq=False)
class EntropyCurve:
    """S-bar(T1) with T1 = T2 = each scale (Fig. 3); ``weighted`` is H(L2 | L1); ``blocks`` per scale; the
    ``control_*`` arrays are the same on the shuffled series (None without a control seed)."""

    scales_s: np.ndarray
    entropy: np.ndarray
    weighted: np.ndarray
    blocks: np.ndarray
    control_entropy: Optional[np.ndarray] = None
    control_weighted: Optional[np.ndarray] = None


def _scale_list(scales) -> list:
    """`scales` as a list of at least one item, or a StatsError naming `scales`."""
    if isinstance(scales, (str, bytes)) or not isinstance(scales, Iterable):
        raise StatsError(f"scales: expected a sequence of time scales in seconds, got {scales!r}")
    out = list(scales)
    if not out:  # an empty curve would be drawn and reported as nothing, without a word
        raise StatsError("scales: no time scales given; the curve needs at least one")
    return out


def _scale_bins(scales: Sequence[float], bin_s: float) -> np.ndarray:
    if not (math.isfinite(bin_s) and bin_s > 0):
        raise StatsError(f"bin_s: must be positive, got {bin_s}")
    out = []
    for s in scales:
        if isinstance(s, bool) or not isinstance(s, numbers.Real) or not math.isfinite(s):
            raise StatsError(f"scales: {s!r} is not a finite number of seconds")
        k = s / bin_s
        r = round(k)
        if r < 1 or abs(k - r) > 1e-6 * max(1.0, k):
            raise StatsError(f"scales: {s} s is not a positive whole number of {bin_s} s bins")
        out.append(r)
    return np.asarray(out, dtype=np.int64)


def _curve(a: np.ndarray, bins: np.ndarray, min_count: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    tables = [condprob_table(a, int(b), int(b)) for b in bins]
    return (np.array([average_entropy(t, min_count) for t in tables]),
            np.array([average_entropy(t, min_count, weighted=True) for t in tables]),
            np.array([t.blocks for t in tables]))


def entropy_curve(x, bin_s: float, scales: Sequence[float], control_seed: Optional[int] = None,
                  min_count: int = ENTROPY_MIN_COUNT) -> EntropyCurve:
    """Average entropy against time scale (§2.4, Fig. 3): for each T in `scales` (seconds, whole multiples
    of `bin_s`), the off-line table with T1 = T2 = T. With `control_seed`, the same on
    :func:`shuffle` (x, control_seed)."""
    a = check_series(x)
    scales = _scale_list(scales)
    bins = _scale_bins(scales, bin_s)
    e, w, nb = _curve(a, bins, min_count)
    ce = cw = None
    if control_seed is not None:
        check_seed(control_seed, "control_seed")
        ce, cw, _ = _curve(shuffle(a, control_seed), bins, min_count)
    return EntropyCurve(np.asarray(scales, dtype=np.float64), e, w, nb, ce, cw)


def _f64_from_halves(hi, lo) -> float:
    return struct.unpack("<d", struct.pack("<Q", (int(hi) << 32) | (int(lo) & 0xFFFFFFFF)))[0]


def sac_table(counters) -> CondProbTable:
    """The CondProb table a ``sac`` flow ended its run with, from its counters (a row of
    ``Result.flows`` or a plain mapping): ``sac_table_<l>_<l'>`` (column 9 = h_l) and mu, sigma of V1 and
    V2 as the two 32-bit halves of each double (``sac_mu1_hi``, ``sac_mu1_lo``, ...)."""
    counts = np.array([[int(counters[f"sac_table_{l}_{j}"]) for j in range(1, M + 2)] for l in range(1, M + 1)],
                      dtype=np.int64)
    stat = {k: _f64_from_halves(counters[f"sac_{k}_hi"], counters[f"sac_{k}_lo"])
            for k in ("mu1", "sigma1", "mu2", "sigma2")}
    return CondProbTable(counts, 0, 0, int(counts[:, :M].sum()), (stat["mu1"], stat["mu2"]),
                         (stat["sigma1"], stat["sigma2"]))


def sac_table_toml(table: CondProbTable) -> str:
    """``table`` as the TOML a ``sac`` flow loads with ``table = "file"``: counts (8 rows of 9), mu and
    sigma of [V1, V2]. Floats are written with ``repr``, so they read back to the same doubles."""
    rows = ",\n  ".join("[" + ", ".join(str(int(c)) for c in row) + "]" for row in table.counts)
    return (f"# CondProb table (paper 003 Appendix A.2): column 9 is h_l\ncounts = [\n  {rows},\n]\n"
            f"mu = [{table.mu[0]!r}, {table.mu[1]!r}]\nsigma = [{table.sigma[0]!r}, {table.sigma[1]!r}]\n")


def oracle_levels(x, bin_s: float, t2_s: float) -> Tuple[np.ndarray, float, float]:
    """The perfect predictor's series (paper 003 §4.3.2; specs/003-mtsc.md §2.4 [D]): for every bin i of the
    aggregate ``x`` (one value per ``bin_s``), the level of the sum over bins [i, i + T2), quantised with the
    whole run's mu and sigma of V2 over contiguous T2 blocks (Appendix A.1). Windows running past the end are
    left out, so the series is T2 - 1 bins shorter than ``x``. Returns (levels 1..8, mu, sigma)."""
    a = check_series(x, "series")
    if not (bin_s > 0 and math.isfinite(bin_s)):
        raise StatsError(f"bin_s = {bin_s}: must be > 0 and finite")
    b = _check_bins("t2_s / bin_s", int(round(t2_s / bin_s)))
    if len(a) < 2 * b:
        raise StatsError(f"series of {len(a)} bins: the oracle needs at least two T2 blocks of {b} bins")
    blocks = a[: len(a) // b * b].reshape(-1, b).sum(axis=1)
    mu, sigma = float(blocks.mean()), float(blocks.std())
    c = np.concatenate(([0.0], np.cumsum(a)))
    sliding = c[b:] - c[:-b]
    return levels(sliding, sigma_edges(mu, sigma)).astype(np.int8), mu, sigma


def oracle_levels_toml(lv: np.ndarray, bin_s: float, **meta) -> str:
    """Levels from :func:`oracle_levels` as the TOML a ``sac`` flow reads with ``table = "oracle"``
    (``oracle_file``): ``bin_s``, ``levels`` as one digit per bin, and ``meta`` (what produced them)."""
    lv = np.asarray(lv)
    if lv.size == 0 or lv.min() < 1 or lv.max() > M:
        raise StatsError("oracle levels must be 1..8 and not empty")
    digits = (lv.astype(np.uint8) + ord("0")).tobytes().decode("ascii")
    lines = [f"bin_s = {float(bin_s)!r}", f'levels = "{digits}"']
    if meta:
        lines.append("[meta]")
        for k, v in meta.items():
            lines.append(f"{k} = {v!r}" if not isinstance(v, str) else f'{k} = "{v}"')
    return "\n".join(lines) + "\n"
