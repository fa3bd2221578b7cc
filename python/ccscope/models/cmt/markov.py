"""The CMT Markov-chain throughput model of paper 002 §4.3 (Wallace & Shami), solved in Rust.

One path's SCTP sender as a chain of rounds (cwnd w, packets sent x, ssthresh t): congestion avoidance
(eq. 12), slow start (eqs. 15-16) and exponential backoff (eqs. 17-18), loss per round from eq. 6
(``"independent"``, binomial) or eq. 7 (``"correlated"``: after the first loss the rest of the round is
lost), round times from eq. 8 and RTO = 3 RTT (eq. 10). Throughput is eta = (E[x] - E[g]) / E[delta]
(eqs. 19-22). The readings of the paper's ambiguities are listed in docs/deviations.md ("Paper 002:
Markov chain (§4.3)"); the solvers and their speed in crates/ccscope-models and docs/performance.md.

    >>> from ccscope.models.cmt import markov_throughput
    >>> r = markov_throughput(1e-3, 21, 40, 128_000)
    >>> r.throughput_mbps, r.window_packets, r.residual
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Optional

from ccscope import _native
from ccscope._native import CmtMarkovError
from ccscope.models.cmt.inputs import number

if TYPE_CHECKING:  # numpy is imported only by the curve function (keeps `import ccscope` light)
    import numpy as np

LOSS_MODELS = ("correlated", "independent")
SOLVERS = ("auto", "explicit", "structured")


@dataclass(frozen=True)
class MarkovResult:
    """One solved chain: throughput and the diagnostics every answer carries."""

    throughput_mbps: float
    """eta (eq. 19) in Mbit/s of ``packet_bytes`` packets."""
    throughput_pps: float
    """eta in packets per second."""
    window_packets: int
    """W = floor(rbuf_bytes / packet_bytes) (footnote 8; KB = 1000 B), or as given."""
    loss: str
    states: int
    nonzeros: int
    """Non-zeros of Q: stored (explicit solver) or counted from the rules (structured)."""
    iterations: int
    """Gauss-Seidel sweeps."""
    residual: float
    """An upper bound on ||pi Q - pi||_1 (always <= 1e-10)."""
    solve_time_s: float
    solver: str
    """The solver that ran: ``"explicit"`` or ``"structured"``."""
    mean_sent: float
    """E[x], packets sent per round (eq. 20)."""
    mean_lost: float
    """E[g], packets lost per round (eq. 21)."""
    mean_duration_s: float
    """E[delta], seconds per round (eq. 22)."""
    fast_retransmits_per_round: float
    """Rounds ending in a fast retransmit and halving (eq. 14), per round."""
    timeouts_per_round: float
    """Rounds ending in a timeout (failed backoff rounds included), per round."""

    @property
    def timeout_share(self) -> float:
        """Timeouts over loss events (timeouts + halvings): the simulation's ``timeouts / loss_events``."""
        return self.timeouts_per_round / (self.timeouts_per_round + self.fast_retransmits_per_round)

    @property
    def loss_events_per_s(self) -> float:
        """Halvings and timeouts per second (the simulation's ``loss_events / duration``)."""
        return (self.timeouts_per_round + self.fast_retransmits_per_round) / self.mean_duration_s


def _error(field: str, detail: str) -> CmtMarkovError:
    """The chain's error naming `field`, worded as the Rust solver's (``field `p`: ...``)."""
    return CmtMarkovError(f"field `{field}`: {detail}")


def _check_choice(field: str, value: str, allowed: tuple) -> None:
    if value not in allowed:
        raise _error(field, f"`{value}` is not one of {', '.join(allowed)}")


def _int(field: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if hasattr(value, "__index__"):
            return value.__index__()
        raise _error(field, f"{value!r} is not an integer")
    if not -(2**63) <= value < 2**63:  # the solver takes 64-bit integers; a larger one is no window
        raise _error(field, f"{value} is not a non-negative integer in range")
    return value


def markov_throughput(
    p: float,
    b_mbps: float,
    d_ms: float,
    rbuf_bytes: int,
    loss: str = "correlated",
    rto_max_s: float = 60.0,
    packet_bytes: int = 1500,
    *,
    window_packets: Optional[int] = None,
    solver: str = "auto",
) -> MarkovResult:
    """Throughput of one path by the Markov chain of §4.3.

    p: loss probability in (0, 1); b_mbps: bottleneck bandwidth; d_ms: round-trip propagation delay;
    rbuf_bytes: the receive buffer (W = floor(rbuf_bytes / packet_bytes) >= 2); loss: ``"correlated"``
    (eq. 7, the paper's Figs. 5-8) or ``"independent"`` (eq. 6, Figs. 9-14); rto_max_s: RTO_max (eq. 18);
    window_packets: W directly (``rbuf_bytes`` is then unused); solver: ``"auto"`` (= structured),
    ``"explicit"`` (CSR, small chains only) or ``"structured"`` (matrix-free, up to W = 8192).
    Raises CmtMarkovError (a ValueError) naming the field on bad input.
    """
    _check_choice("loss", loss, LOSS_MODELS)
    _check_choice("solver", solver, SOLVERS)
    w = None if window_packets is None else _int("window_packets", window_packets)
    d = _native.cmt_markov(
        number(p, "p", _error),
        number(b_mbps, "b_mbps", _error),
        number(d_ms, "d_ms", _error),
        _int("rbuf_bytes", rbuf_bytes),
        loss,
        number(rto_max_s, "rto_max_s", _error),
        _int("packet_bytes", packet_bytes),
        w,
        solver,
    )
    return MarkovResult(**d)


def markov_throughput_curve(
    p: float,
    b_mbps: float,
    d_ms: float,
    windows: Iterable[int],
    loss: str = "correlated",
    rto_max_s: float = 60.0,
    packet_bytes: int = 1500,
) -> "np.ndarray":
    """eta in Mbit/s for each window in ``windows`` (packets, each >= 2): the static allocator's
    eta_i(c_i) of §5.2 (eq. 56). One structured solve per window (W = 200 takes ~3 ms)."""
    import numpy as np

    _check_choice("loss", loss, LOSS_MODELS)
    ws = [_int("windows", w) for w in windows]
    rows = _native.cmt_markov_curve(number(p, "p", _error), number(b_mbps, "b_mbps", _error),
                                     number(d_ms, "d_ms", _error), ws, loss, number(rto_max_s, "rto_max_s", _error),
                                     _int("packet_bytes", packet_bytes))
    return np.array([r["throughput_mbps"] for r in rows], dtype=float)
