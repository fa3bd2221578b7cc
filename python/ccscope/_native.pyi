"""Type stubs for the Rust extension module (crates/ccscope-py)."""

from typing import Any, Callable, Optional

class ScenarioError(ValueError): ...
class TraceError(ScenarioError): ...
class ControllerError(ScenarioError): ...
class CmtMarkovError(ValueError): ...

# ccscope_core's bounds: the longest run (s) and a link's slowest and fastest rate (Mbit/s).
MAX_RUN_S: float
MIN_RATE_MBPS: float
MAX_RATE_MBPS: float

class Ack:
    seq: int
    bytes: int
    send_time_ms: float
    recv_time_ms: float
    rtt_ms: float
    ca_rtt_ms: float
    in_flight: int
    last_sent_seq: int
    newly_acked: int
    snd_una_advanced: bool
    in_recovery: bool
    rate_delivered: Optional[int]
    rate_interval_ms: Optional[float]
    delivery_rate_pps: Optional[float]
    rate_prior_delivered: Optional[int]
    delivered_total: Optional[int]
    rate_rtt_ms: Optional[float]
    rate_app_limited: Optional[bool]

def validate_scenario(
    text: str,
    file: Optional[str] = None,
    search: list[str] = ...,
    overrides: list[str] = ...,
    written: Optional[str] = None,
) -> dict[str, Any]: ...
def run_scenario(
    text: str,
    file: Optional[str] = None,
    search: list[str] = ...,
    factory: Optional[Callable[[int, dict[str, Any]], Any]] = None,
    log_path: Optional[str] = None,
    seed: Optional[int] = None,
    overrides: list[str] = ...,
    written: Optional[str] = None,
) -> dict[str, Any]: ...
def controllers() -> list[dict[str, Any]]: ...
def run_bench(traces_dirs: list[str], names: Optional[list[str]] = None, repeats: int = 3) -> list[dict[str, Any]]: ...
def event_queue_baseline(pending: int, ops: int) -> tuple[float, float]: ...
def fnv1a64(data: bytes) -> int: ...
def one_line(text: str) -> str: ...
def cmt_markov(
    p: float,
    b_mbps: float,
    d_ms: float,
    rbuf_bytes: int,
    loss: str = "correlated",
    rto_max_s: float = 60.0,
    packet_bytes: int = 1500,
    window_packets: Optional[int] = None,
    solver: str = "auto",
) -> dict[str, Any]: ...
def cmt_markov_curve(
    p: float,
    b_mbps: float,
    d_ms: float,
    windows: list[int],
    loss: str = "correlated",
    rto_max_s: float = 60.0,
    packet_bytes: int = 1500,
) -> list[dict[str, Any]]: ...
