"""Input checks shared by the CMT models (paper 002): one error type naming the field, and byte sizes.

Readings (docs/deviations.md, "Paper 002: renewal model (§4.4) and window allocation (§5)"):
A11: KB = 1000 B (the paper's "128 KB"); KiB = 1024 B is accepted too; W = floor(RBUF / packet) (footnote 8).
"""

from __future__ import annotations

import math
import numbers
import re
import sys
from typing import Callable

from ccscope import _native

# Units of a receive-buffer size; A11 reads the paper's "KB" as 1000 B.
BYTE_UNITS = {"": 1, "B": 1, "KB": 1000, "KIB": 1024, "MB": 1000**2, "MIB": 1024**2}
# Bound before allocating: no model here needs a window above 2^24 packets (25 GB of 1500 B packets).
MAX_WINDOW_PACKETS = 1 << 24
# The simulator's own bounds (ccscope_core's, which the scenario loader applies): link rates and the longest run.
RATE_RANGE_MBPS = (_native.MIN_RATE_MBPS, _native.MAX_RATE_MBPS)
MAX_DELAY_MS = _native.MAX_RUN_S * 1e3
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*$")


class CmtInputError(ValueError):
    """A CMT model input is out of range; `field` names it (the CLI maps it to its option)."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.detail = message


def parse_bytes(text: str, field: str = "rbuf") -> int:
    """`128KB`, `128kB` (1000 B a KB, A11), `128KiB` (1024 B), `1MB`, `131072` -> bytes."""
    m = _SIZE.match(str(text))
    if not m or m.group(2).upper() not in BYTE_UNITS:
        raise CmtInputError(field, f"{text!r} is not a size (use bytes, or a number with KB, KiB, MB or MiB)")
    value = float(m.group(1)) * BYTE_UNITS[m.group(2).upper()]
    if value != math.floor(value):
        raise CmtInputError(field, f"{text!r} is not a whole number of bytes")
    return int(value)


def number(x, field: str, error: Callable[[str, str], Exception] = CmtInputError) -> float:
    """float(x) of a real number (int, float, numpy's), else the exception `error(field, detail)`: text, bytes,
    bools and None are not numbers, though float() reads some of them as one. Every CMT model checks its
    numbers here (the Markov chain with its own error type)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise error(field, f"{x!r} is not a number")
    try:
        return float(x)
    except OverflowError:  # an int or Fraction beyond the largest float
        raise error(field, f"{type(x).__name__} beyond the largest float") from None


def _whole(x, field: str) -> bool:
    """True when x is a whole number (bools, NaN, text and None are not)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        return False
    try:
        return int(x) == x
    except (ValueError, OverflowError):
        return False


def check_loss_rate(p: float, field: str = "p") -> float:
    p = number(p, field)
    if not (0.0 < p < 1.0):
        raise CmtInputError(field, f"{p!r} must be in (0, 1)")
    if p < sys.float_info.min:
        # A subnormal float: 1/p overflows and p (1-p)^k keeps a few bits (the Markov solver refuses it too).
        raise CmtInputError(field, f"{p!r} is below {sys.float_info.min:.1e}, the smallest normal float")
    return p


def check_positive(x: float, field: str, unit: str) -> float:
    x = number(x, field)
    if not (math.isfinite(x) and x > 0.0):
        raise CmtInputError(field, f"{x!r} {unit} must be a positive finite number")
    return x


def check_rate(b_mbps: float, field: str = "b") -> float:
    b_mbps = check_positive(b_mbps, field, "Mbit/s")
    lo, hi = RATE_RANGE_MBPS
    if not lo <= b_mbps <= hi:
        raise CmtInputError(field, f"{b_mbps:g} Mbit/s is out of range: must be in [{lo:g}, {hi:g}], as a link's rate")
    return b_mbps


def check_delay(d_ms: float, field: str = "d") -> float:
    d_ms = number(d_ms, field)
    if not (math.isfinite(d_ms) and d_ms >= 0.0):
        raise CmtInputError(field, f"{d_ms!r} ms must be a finite number >= 0")
    if d_ms > MAX_DELAY_MS:
        raise CmtInputError(field, f"{d_ms:g} ms is beyond {MAX_DELAY_MS:g} ms (the longest run)")
    return d_ms


def check_packet_bytes(packet_bytes: int, field: str = "packet_bytes") -> int:
    if not _whole(packet_bytes, field) or packet_bytes <= 0:
        raise CmtInputError(field, f"{packet_bytes!r} must be a positive whole number of bytes")
    return int(packet_bytes)


def window_packets(rbuf_bytes: int, packet_bytes: int, field: str = "rbuf", minimum: int = 1) -> int:
    """W = floor(r / packet) (paper 002 footnote 8), at least `minimum` packets and at most MAX_WINDOW_PACKETS."""
    if not _whole(rbuf_bytes, field) or rbuf_bytes < 0:
        raise CmtInputError(field, f"{rbuf_bytes!r} must be a whole number of bytes")
    w = int(rbuf_bytes) // packet_bytes
    if w < minimum:
        need = minimum * packet_bytes
        raise CmtInputError(field, f"{int(rbuf_bytes)} B holds {w} packet(s) of {packet_bytes} B; need at least {need} B")
    if w > MAX_WINDOW_PACKETS:
        raise CmtInputError(field, f"{int(rbuf_bytes)} B is {w} packets, above the limit of {MAX_WINDOW_PACKETS}")
    return w


def check_loss_model(loss: str, allowed: tuple = ("correlated", "independent"), field: str = "loss") -> str:
    if loss not in allowed:
        raise CmtInputError(field, f"{loss!r} must be one of {', '.join(allowed)}")
    return loss


def packets_per_second(b_mbps: float, packet_bytes: int) -> float:
    """Bandwidth in packets/s, the unit of b in paper 002 eq. 8."""
    return b_mbps * 1e6 / (8.0 * packet_bytes)


def mbps(packets_per_s: float, packet_bytes: int) -> float:
    return packets_per_s * 8.0 * packet_bytes / 1e6


def check_path(
    p: float, b_mbps: float, d_ms: float, rbuf_bytes: int, loss: str, rto_max_s: float, packet_bytes: int
) -> tuple:
    """Every input of a one-path model, checked in the order of its signature: (p, b, d, W, loss, rto_max, packet)."""
    p = check_loss_rate(p)
    b_mbps = check_rate(b_mbps)
    d_ms = check_delay(d_ms)
    packet_bytes = check_packet_bytes(packet_bytes)
    w = window_packets(rbuf_bytes, packet_bytes)
    loss = check_loss_model(loss)
    rto_max_s = check_positive(rto_max_s, "rto_max", "s")
    return p, b_mbps, d_ms, w, loss, rto_max_s, packet_bytes
