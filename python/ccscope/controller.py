"""Base class for congestion controllers written in Python.

A subclass runs in the Rust simulator unchanged, like datagrump's controller.cc: the simulator calls
the event methods with the current time in milliseconds and re-reads ``cwnd`` (packets in flight
allowed), ``timeout_ms`` and ``pacing_rate_mbps`` after every call. Use it from a scenario file with
``controller = "python"`` and ``class = "module:Class"`` (or ``"path/to/file.py:Class"``); every other
key of the flow table is passed to the constructor as a keyword argument.

The simulator checks a controller as it checks its own: ``cwnd``, ``timeout_ms`` and
``pacing_rate_mbps`` must be finite numbers >= 0 after every call, ``cwnd`` at most 10,000,000 packets
(the bound every built-in controller keeps) and a ``timeout_ms`` above 0 at least 0.001 (1 us, the shortest
timer), else a ``ControllerError`` naming the class and the handler; an exception raised in a handler ends the run and reaches the caller
with its type and traceback; and a method named ``on_*`` other than the four handlers below (a
misspelled ``on_acks``) is an error when the run starts, since it would never be called.
"""

from __future__ import annotations

from typing import Optional

from ccscope._native import Ack


class Controller:
    #: Packets the sender may keep in flight.
    cwnd: float = 1
    #: Milliseconds without an ACK before ``on_timeout`` fires and one packet is sent regardless.
    timeout_ms: float = 1000.0
    #: Optional pacing rate; ``None`` sends as fast as the window allows.
    pacing_rate_mbps: Optional[float] = None

    def on_send(self, now_ms: float, seq: int, in_flight: int, after_timeout: bool) -> None:
        """A packet left the sender."""

    def on_ack(self, now_ms: float, ack: Ack) -> None:
        """An ACK arrived (``ack.seq``, ``ack.rtt_ms``, ``ack.ca_rtt_ms`` (the newest packet's, as Linux hands it),
        ``ack.send_time_ms``, ``ack.recv_time_ms``, the packets it newly acknowledged ``ack.newly_acked`` (two for a
        delayed ACK), ``ack.snd_una_advanced``, ``ack.in_recovery``; its delivery-rate sample in
        ``ack.delivery_rate_pps``, ``ack.rate_delivered``, ``ack.rate_interval_ms``, ``ack.rate_app_limited``, ... or
        ``None`` when it has none)."""

    def on_loss(self, now_ms: float, seq: int, send_time_ms: float, in_flight: int, cause: str) -> None:
        """A packet was declared lost (``cause`` is ``"reordering"`` or ``"timeout"``)."""

    def on_timeout(self, now_ms: float) -> None:
        """No ACK arrived for ``timeout_ms``."""


__all__ = ["Ack", "Controller"]
