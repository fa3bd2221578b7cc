"""Every kind of bad input to the command line, one table: traces, scenarios, models, Python
controllers, options and output paths. Each case exits 2 with exactly one line on stderr naming the
file (and line) and field, or the option; prints no traceback; and leaves every file as it was
(nothing deleted, moved or written)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Union

import pytest

from ccscope import api
from ccscope.cli import app

RATE = """\
name = "bad"
duration_s = 2

[data_link]
rate_mbps = 10
delay_ms = 20

[ack_link]
rate_mbps = 10
delay_ms = 20

[[flows]]
controller = "fixed"
window = 10
"""

TRACE = RATE.replace("rate_mbps = 10\ndelay_ms = 20\n\n[ack_link]", 'trace = "t.trace"\ndelay_ms = 20\n\n[ack_link]', 1)
assert 'trace = "t.trace"' in TRACE


TOPO = """\
name = "topo"
duration_s = 2

[links.bottleneck]
rate_mbps = 10
delay_ms = 5

[links.back]
rate_mbps = 100
delay_ms = 5

[[flows]]
controller = "newreno"
route = ["bottleneck"]
ack_route = ["back"]
"""


def sub(text: str, old: str, new: str) -> str:
    """`text` with `old` replaced once (the case fails loudly if `old` is not there)."""
    assert old in text, old
    return text.replace(old, new, 1)


def flow(extra: str) -> str:
    """RATE with lines added to its flow table."""
    return RATE + extra + "\n"


def python_flow(spec: str, extra: str = "") -> str:
    return sub(RATE, 'controller = "fixed"\nwindow = 10', f'controller = "python"\nclass = "{spec}"\n{extra}')


CTL = """\
import ccscope


class Ctl(ccscope.Controller):
    cwnd = 4
"""


@dataclass
class Case:
    name: str
    args: list  # "{d}" is the case's folder
    expect: list  # substrings of the one error line
    files: dict = field(default_factory=dict)  # name -> text, bytes, or None for a folder
    setup: Optional[Callable[[Path], None]] = None


def run_case(name: str, scenario: Union[str, bytes], expect: list, files: Optional[dict] = None, args: Optional[list] = None) -> Case:
    """`ccscope run s.toml -o {d}/out` with `scenario` as s.toml."""
    return Case(name, ["run", "{d}/s.toml", "-o", "{d}/out", *(args or [])], expect, {"s.toml": scenario, **(files or {})})


def trace_case(name: str, trace: Union[str, bytes], line: int, detail: str = "") -> Case:
    return run_case(name, TRACE, [f"t.trace:{line}:", *([detail] if detail else [])], {"t.trace": trace})


CASES = [
    # --- traces --------------------------------------------------------------------------------
    trace_case("trace decreasing timestamp", "0\n5\n3\n10\n", 3, "timestamp"),
    trace_case("trace non-number line", "0\n5\nabc\n10\n", 3, "timestamp"),
    trace_case("trace empty", "", 1, "timestamp"),
    trace_case("trace zero-length period", "0\n", 1, "timestamp"),
    trace_case("trace negative timestamp", "-5\n10\n", 1, "timestamp"),
    trace_case("trace fractional timestamp", "1.5\n10\n", 1, "timestamp"),
    trace_case("trace timestamp too large", "99999999999999999999999\n", 1, "timestamp"),
    trace_case("trace not UTF-8", b"0\n\xff\xfe\n10\n", 2, "timestamp"),
    trace_case("trace two numbers on a line", "1 2\n10\n", 1, "timestamp"),
    trace_case("trace trailing letters", "10x\n20\n", 1, "timestamp"),
    trace_case("trace NUL byte", b"1\x00\n10\n", 1, "timestamp"),
    trace_case("trace only zeros", "0\n0\n0\n", 3, "timestamp"),
    run_case("trace missing", TRACE, ["s.toml:", "data_link.trace", "t.trace", "not found"]),
    run_case("trace is a folder", TRACE, ["s.toml:5", "data_link.trace", "t.trace"], {"t.trace": None}),
    run_case("trace name empty", sub(TRACE, 't.trace', ''), ["s.toml:5", "data_link.trace", "an empty file name"]),
    run_case("ack trace bad", sub(TRACE, "[ack_link]\nrate_mbps = 10", '[ack_link]\ntrace = "a.trace"'),
             ["a.trace:2:", "timestamp"], {"t.trace": "1\n2\n", "a.trace": "5\n3\n"}),
    run_case("trace once not a boolean", sub(TRACE, 'trace = "t.trace"', 'trace = "t.trace"\nonce = "yes"'),
             ["s.toml:", "data_link.once"], {"t.trace": "1\n2\n"}),
    # --- scenario syntax and fields ----------------------------------------------------------------
    run_case("toml unclosed string", sub(RATE, 'name = "bad"', 'name = "bad'), ["s.toml:1"]),
    run_case("toml duplicate key", sub(RATE, "duration_s = 2", "duration_s = 2\nduration_s = 3"), ["s.toml:3", "duration_s"]),
    run_case("toml missing equals", sub(RATE, "duration_s = 2", "duration_s 2"), ["s.toml:2"]),
    run_case("toml bad table header", sub(RATE, "[ack_link]", "[ack_link"), ["s.toml:8"]),
    run_case("toml error beside an override", sub(RATE, "duration_s = 2", "duration_s 2"), ["s.toml:2"],
             args=["--set", "flows.0.window=3"]),
    run_case("toml error beside --seed", sub(RATE, "[ack_link]", "[ack_link"), ["s.toml:8"], args=["--seed", "3"]),
    run_case("toml integer beyond 64 bits", sub(RATE, "rate_mbps = 10\ndelay_ms = 20\n\n[ack_link]",
                                                "rate_mbps = 99999999999999999999\ndelay_ms = 20\n\n[ack_link]"),
             ["s.toml:5", "data_link.rate_mbps"]),
    run_case("override integer beyond 64 bits", RATE, ["flows.0.window", "99999999999999999999"],
             args=["--set", "flows.0.window=99999999999999999999"]),
    run_case("unknown top-level key", "colour = 3\n" + RATE, ["s.toml:1", "colour"]),
    run_case("reliable-only key on a datagram flow", RATE + 'delayed_ack = "linux"\n',
             ["s.toml:15", "flows[0].delayed_ack", "runs on datagrams"]),
    run_case("socket buffer on a datagram flow", RATE + "rbuf_bytes = 30000\n",
             ["s.toml:15", "flows[0].rbuf_bytes", "runs on datagrams"]),
    run_case("read rate on a datagram flow", RATE + "rbuf_bytes = 30000\nread_rate_mbps = 1\n",
             ["s.toml:15", "flows[0].rbuf_bytes", "runs on datagrams"]),
    run_case("no-ACK timer of 1 ns", RATE + "timeout_ms = 1e-6\n", ["s.toml:15", "timeout_ms", "the shortest timer"]),
    run_case("duration not a number", sub(RATE, "duration_s = 2", 'duration_s = "ten"'), ["s.toml:2", "duration_s"]),
    run_case("duration negative", sub(RATE, "duration_s = 2", "duration_s = -2"), ["s.toml:2", "duration_s"]),
    run_case("duration zero", sub(RATE, "duration_s = 2", "duration_s = 0"), ["s.toml:2", "duration_s"]),
    run_case("duration absurd", sub(RATE, "duration_s = 2", "duration_s = 1e15"), ["s.toml:2", "duration_s"]),
    # 1e-12 s is 0 ns on the clock: it ran a run of no time and wrote its empty results.
    run_case("duration below a nanosecond", sub(RATE, "duration_s = 2", "duration_s = 1e-12"),
             ["s.toml:2", "duration_s", "below 1 ns"]),
    run_case("--set duration below a nanosecond", RATE, ["override `duration_s`", "below 1 ns"],
             args=["--set", "duration_s=1e-12"]),
    run_case("duration 1e300 shown short", sub(RATE, "duration_s = 2", "duration_s = 1e300"), ["s.toml:2", "duration_s", "`: 1e300 s is beyond 1e7 s (the longest run)"]),
    run_case("duration nan", sub(RATE, "duration_s = 2", "duration_s = nan"), ["s.toml:2", "duration_s"]),
    run_case("seed negative", "seed = -1\n" + RATE, ["s.toml:1", "seed"]),
    run_case("seed fractional", "seed = 1.5\n" + RATE, ["s.toml:1", "seed"]),
    run_case("seed text", 'seed = "one"\n' + RATE, ["s.toml:1", "seed"]),
    run_case("name not text", sub(RATE, 'name = "bad"', "name = 3"), ["s.toml:1", "name"]),
    run_case("bin width zero", "bin_ms = 0\n" + RATE, ["s.toml:1", "bin_ms"]),
    run_case("bin width absurd", "bin_ms = 1e300\n" + RATE, ["s.toml:1", "bin_ms", "1e300 ms is beyond 1e10 ms (the longest run)"]),
    run_case("bin width negative", "bin_ms = -5\n" + RATE, ["s.toml:1", "bin_ms"]),
    run_case("no data link", RATE.split("[data_link]")[0] + "[ack_link]" + RATE.split("[ack_link]")[1], ["s.toml", "data_link"]),
    run_case("link with trace and rate", sub(RATE, "rate_mbps = 10", 'rate_mbps = 10\ntrace = "x"'), ["s.toml:5", "data_link.rate_mbps"]),
    run_case("link with neither trace nor rate", sub(RATE, "rate_mbps = 10\n", ""), ["s.toml", "data_link"]),
    run_case("rate zero", sub(RATE, "rate_mbps = 10", "rate_mbps = 0"), ["s.toml:5", "data_link.rate_mbps"]),
    run_case("rate negative", sub(RATE, "rate_mbps = 10", "rate_mbps = -5"), ["s.toml:5", "data_link.rate_mbps"]),
    run_case("rate nan", sub(RATE, "rate_mbps = 10", "rate_mbps = nan"), ["s.toml:5", "data_link.rate_mbps"]),
    run_case("rate infinite", sub(RATE, "rate_mbps = 10", "rate_mbps = inf"), ["s.toml:5", "data_link.rate_mbps"]),
    run_case("rate text", sub(RATE, "rate_mbps = 10", 'rate_mbps = "fast"'), ["s.toml:5", "data_link.rate_mbps"]),
    run_case("delay negative", sub(RATE, "delay_ms = 20", "delay_ms = -1"), ["s.toml:6", "data_link.delay_ms"]),
    run_case("delay absurd", sub(RATE, "delay_ms = 20", "delay_ms = 1e300"), ["s.toml:6", "data_link.delay_ms", "1e300 ms"]),
    run_case("flow delay absurd", flow("delay_ms = 1e13"), ["s.toml:15", "flows[0].delay_ms"]),
    run_case("flow ack delay absurd", flow("ack_delay_ms = 1e13"), ["s.toml:15", "flows[0].ack_delay_ms"]),
    run_case("start absurd", flow("start_s = 1e300"), ["s.toml:15", "flows[0].start_s"]),
    run_case("stop absurd", flow("stop_s = 1e300"), ["s.toml:15", "flows[0].stop_s"]),
    run_case("start jitter absurd", flow("start_jitter_s = 1e300"), ["s.toml:15", "flows[0].start_jitter_s"]),
    run_case("send overhead negative", flow('transport = "reliable"\nsend_overhead_ms = -1'),
             ["s.toml:16", "flows[0].send_overhead_ms", "must be in [0, 1000] ms"]),
    run_case("send overhead nan", flow('transport = "reliable"\nsend_overhead_ms = nan'),
             ["s.toml:16", "flows[0].send_overhead_ms", "not a finite number"]),
    run_case("send overhead absurd", flow('transport = "reliable"\nsend_overhead_ms = 1e300'),
             ["s.toml:16", "flows[0].send_overhead_ms", "1e300 is out of range"]),
    run_case("send overhead on a datagram flow", flow('transport = "datagram"\nsend_overhead_ms = 1'),
             ["s.toml:16", "flows[0].send_overhead_ms", "reliable"]),
    run_case("delay text", sub(RATE, "delay_ms = 20", 'delay_ms = "slow"'), ["s.toml:6", "data_link.delay_ms"]),
    run_case("unknown link key", sub(RATE, "delay_ms = 20", "delay_ms = 20\nbandwidth = 3"), ["s.toml:7", "data_link.bandwidth"]),
    run_case("ack link rate zero", sub(RATE, "[ack_link]\nrate_mbps = 10", "[ack_link]\nrate_mbps = 0"), ["s.toml:9", "ack_link.rate_mbps"]),
    run_case("no flows", RATE.split("[[flows]]")[0], ["s.toml", "flows"]),
    run_case("flows a table", sub(RATE, "[[flows]]", "[flows]"), ["s.toml", "flows"]),
    run_case("unknown controller", sub(RATE, '"fixed"', '"bogus"'), ["s.toml:13", "flows[0].controller"]),
    run_case("controller not text", sub(RATE, '"fixed"', "7"), ["s.toml:13", "flows[0].controller"]),
    run_case("unknown parameter", flow("windoww = 3"), ["s.toml:15", "flows[0].windoww"]),
    run_case("copa restart silence other than the ctcp sender's", sub(RATE, 'controller = "fixed"\nwindow = 10', 'controller = "copa"\nrestart_after_s = 5'),
             ["s.toml:14", "flows[0].restart_after_s", "fixed 2 s"]),
    run_case("window negative", sub(RATE, "window = 10", "window = -1"), ["s.toml:14", "flows[0].window"]),
    run_case("window text", sub(RATE, "window = 10", 'window = "big"'), ["s.toml:14", "flows[0].window"]),
    run_case("start negative", flow("start_s = -1"), ["s.toml:15", "flows[0].start_s"]),
    run_case("stop before start", flow("start_s = 2\nstop_s = 1"), ["s.toml", "flows[0].stop_s"]),
    run_case("count zero", flow("count = 0"), ["s.toml:12", "flows", "count = 0"]),
    run_case("count absurd", flow("count = 1000000000"), ["s.toml:15", "flows[0].count"]),
    run_case("queue kind unknown", sub(RATE, "delay_ms = 20", 'delay_ms = 20\nqueue = { kind = "magic" }'), ["s.toml:7", "data_link.queue"]),
    run_case("queue size negative", sub(RATE, "delay_ms = 20", 'delay_ms = 20\nqueue = { kind = "droptail", packets = -3 }'), ["s.toml:7", "data_link.queue"]),
    run_case("queue bytes zero", sub(RATE, "delay_ms = 20", 'delay_ms = 20\nqueue = { kind = "droptail", bytes = 0 }'),
             ["s.toml:7", "data_link.queue.bytes", ">= 1"]),
    run_case("loss probability above one", sub(RATE, "delay_ms = 20", 'delay_ms = 20\nloss = { kind = "bernoulli", p = 1.5 }'), ["s.toml:7", "data_link.loss"]),
    run_case("loss kind unknown", sub(RATE, "delay_ms = 20", 'delay_ms = 20\nloss = { kind = "sometimes" }'), ["s.toml:7", "data_link.loss"]),
    run_case("transport unknown", flow('transport = "carrier-pigeon"'), ["s.toml:15", "flows[0].transport"]),
    run_case("scenario not UTF-8", RATE.encode() + b"# caf\xe9\n", ["s.toml:15", "not UTF-8"]),
    run_case("scenario binary junk", b"\x00\x01\x02\xff" * 8, ["s.toml:1", "not UTF-8"]),
    run_case("scenario empty", "", ["s.toml"]),
    Case("scenario is a folder", ["run", "{d}/s.toml", "-o", "{d}/out"], ["s.toml", "is a folder"], {"s.toml": None}),
    Case("scenario missing", ["run", "{d}/nope.toml", "-o", "{d}/out"], ["nope.toml", "no such scenario file"]),
    Case("validate scenario missing", ["validate", "{d}/nope.toml"], ["nope.toml", "no such scenario file"]),
    Case("validate scenario not UTF-8", ["validate", "{d}/s.toml"], ["s.toml:1", "not UTF-8"], {"s.toml": b"\xff"}),
    Case("validate unknown controller", ["validate", "{d}/s.toml"], ["s.toml:13", "flows[0].controller"],
         {"s.toml": sub(RATE, '"fixed"', '"bogus"')}),
    # A file name with a byte that is not UTF-8: the error named nothing (the loader takes UTF-8 names).
    Case("validate a scenario named in bytes that are not UTF-8", ["validate", "{d}/s\udc85.toml"],
         ["s\\udc85.toml", "not UTF-8"], {"s\udc85.toml": RATE}),
    Case("validate bad trace", ["validate", "{d}/s.toml"], ["t.trace:2:", "timestamp"], {"s.toml": TRACE, "t.trace": "5\n3\n"}),
    Case("validate --set wrong type", ["validate", "{d}/s.toml", "--set", "flows.0.window=big"],
         ["override `flows.0.window`", "flows[0].window"], {"s.toml": RATE}),
    Case("validate --set unknown key", ["validate", "{d}/s.toml", "--set", "colour=3"], ["override `colour`"],
         {"s.toml": RATE}),
    Case("validate error beside an override keeps the file's line",
         ["validate", "{d}/s.toml", "--set", "duration_s=3"], ["s.toml:13", "flows[0].controller"],
         {"s.toml": sub(RATE, '"fixed"', '"bogus"')}),
    run_case("controller name with a line break", sub(RATE, '"fixed"', '"fi\\nxed"'),
             ["s.toml:13", "flows[0].controller", "fi\\nxed", "known: fixed"]),
    run_case("controller time beyond the longest run", sub(RATE, 'controller = "fixed"\nwindow = 10',
                                                           'controller = "lied"\ntau_floor_ms = 1e300'),
             ["s.toml:14", "flows[0].tau_floor_ms", "1e300 ms is beyond 1e10 ms (the longest run)"]),
    # A u32 window passed and queued 4e9 packets in one burst (out of memory): the Python controllers' bound.
    run_case("controller window beyond the largest", sub(RATE, "window = 10", "window = 4294967295"),
             ["s.toml:14", "flows[0].window", "4294967295 packets is beyond 1e7 packets (the largest window)"]),
    # --- models (controllers' input files) ---------------------------------------------------------
    run_case("markov model missing", sub(RATE, 'controller = "fixed"\nwindow = 10', 'controller = "markov"\nmodel = "m.ccm"'),
             ["m.ccm", "flows[0].model"]),
    run_case("markov model corrupt", sub(RATE, 'controller = "fixed"\nwindow = 10', 'controller = "markov"\nmodel = "m.ccm"'),
             ["m.ccm"], {"m.ccm": b"not a model at all"}),
    run_case("markov model empty", sub(RATE, 'controller = "fixed"\nwindow = 10', 'controller = "markov"\nmodel = "m.ccm"'),
             ["m.ccm"], {"m.ccm": b""}),
    run_case("markov model is a folder", sub(RATE, 'controller = "fixed"\nwindow = 10', 'controller = "markov"\nmodel = "m.ccm"'),
             ["m.ccm"], {"m.ccm": None}),
    run_case("markov model not text path", sub(RATE, 'controller = "fixed"\nwindow = 10', 'controller = "markov"\nmodel = 3'),
             ["s.toml:14", "flows[0].model"]),
    # --- Python controllers --------------------------------------------------------------------------
    run_case("python without class", sub(RATE, 'controller = "fixed"\nwindow = 10', 'controller = "python"'),
             ["flows[0].controller", "class"]),
    run_case("python class file missing", python_flow("gone.py:Ctl"), ["s.toml:14", "flows[0].class", "gone.py not found"]),
    run_case("python class missing", python_flow("ctl.py:Nope"), ["s.toml:14", "flows[0].class", "no class 'Nope'"], {"ctl.py": CTL}),
    run_case("python class spec without colon", python_flow("ctl.py"), ["s.toml", "flows[0].class", "module:Class"], {"ctl.py": CTL}),
    run_case("python module missing", python_flow("no_such_module_xyz:Ctl"), ["s.toml:14", "flows[0].class", "no_such_module_xyz"]),
    run_case("python misspelled handler", python_flow("ctl.py:Ctl"), ["flows[0].controller", "on_acks", "on_ack, on_loss"],
             {"ctl.py": CTL + "\n    def on_acks(self, now_ms, ack):\n        pass\n"}),
    run_case("python unknown keyword", python_flow("ctl.py:Ctl", "windw = 3"), ["flows[0].controller", "windw"], {"ctl.py": CTL}),
    run_case("python raises in constructor", python_flow("ctl.py:Ctl"), ["flow 0 (Ctl.__init__)", "RuntimeError", "ctl.py:8", "no"],
             {"ctl.py": CTL + "\n    def __init__(self):\n        raise RuntimeError('no')\n"}),
    run_case("python raises in on_ack", python_flow("ctl.py:Ctl"), ["flow 0 (Ctl.on_ack at t = ", "KeyError", "ctl.py:8"],
             {"ctl.py": CTL + "\n    def on_ack(self, now_ms, ack):\n        {}['x']\n"}),
    run_case("python nan window", python_flow("ctl.py:Ctl"), ["flow 0 (Ctl)", "`cwnd` = NaN after on_ack"],
             {"ctl.py": CTL + "\n    def on_ack(self, now_ms, ack):\n        self.cwnd = float('nan')\n"}),
    run_case("python negative pacing", python_flow("ctl.py:Ctl"), ["Ctl", "`pacing_rate_mbps` = -1"],
             {"ctl.py": CTL + "    pacing_rate_mbps = -1\n"}),
    # A 1 ns no-ACK timeout fired a billion times per simulated second: the run never finished.
    run_case("python no-ACK timer of 1 ns", python_flow("ctl.py:Ctl"), ["Ctl", "`timeout_ms` = 0.000001", "0.001"],
             {"ctl.py": CTL + "    timeout_ms = 1e-6\n"}),
    run_case("python syntax error", python_flow("ctl.py:Ctl"), ["SyntaxError", "ctl.py:2"], {"ctl.py": "import ccscope\nclass Ctl(:\n"}),
    run_case("python module raises on import", python_flow("ctl.py:Ctl"), ["ZeroDivisionError", "ctl.py:1"], {"ctl.py": "1 / 0\n"}),
    Case("validate python class missing", ["validate", "{d}/s.toml"], ["s.toml:14", "flows[0].class", "no class 'Nope'"],
         {"s.toml": python_flow("ctl.py:Nope"), "ctl.py": CTL}),
    Case("validate python file missing", ["validate", "{d}/s.toml"], ["s.toml:14", "flows[0].class", "gone.py not found"],
         {"s.toml": python_flow("gone.py:Ctl")}),
    # --- options -----------------------------------------------------------------------------------
    run_case("--set without equals", RATE, ["--set", "KEY=VALUE"], args=["--set", "duration_s"]),
    run_case("--set unknown key", RATE, ["override `colour`", "colour"], args=["--set", "colour=3"]),
    run_case("--set flow out of range", RATE, ["flows.5.window"], args=["--set", "flows.5.window=3"]),
    run_case("--set wrong type", RATE, ["override `flows.0.window`", "flows[0].window"], args=["--set", "flows.0.window=big"]),
    run_case("--set empty value", RATE, ["flows[0].window"], args=["--set", "flows.0.window="]),
    run_case("--set unknown delayed_ack", RATE, ["override `flows.0.delayed_ack`", "flows[0].delayed_ack",
                                                 '"none", "ns3" or "linux", got "bsd"'],
             args=["--set", 'flows.0.delayed_ack="bsd"']),
    run_case("delayed_ack unknown", RATE + 'delayed_ack = "bsd"\n', ["s.toml:15", "flows[0].delayed_ack", '"ns3"']),
    run_case("--set negative flow index", RATE, ["flows.-1.window"], args=["--set", "flows.-1.window=3"]),
    run_case("--set a link the file does not have", TOPO, ["override `links.bottelneck.rate_mbps`", "unknown link `bottelneck`",
                                                           "bottleneck, back"], args=["--set", "links.bottelneck.rate_mbps=5"]),
    # A whole table under a misspelt name added a link no flow crosses, as a field of one did.
    run_case("--set a whole link the file does not have", TOPO, ["override `links.bottelneck`", "unknown link `bottelneck`",
                                                                 "bottleneck, back"],
             args=["--set", "links.bottelneck={rate_mbps=5, delay_ms=1}"]),
    run_case("--set into a number", RATE, ["duration_s.x"], args=["--set", "duration_s.x=1"]),
    # A byte the shell passed that is not UTF-8 (Python keeps it as a surrogate): the error named nothing.
    run_case("--set key not UTF-8", RATE, ["override `flows.0.win\\udc85dow`", "not UTF-8"], args=["--set", "flows.0.win\udc85dow=3"]),
    run_case("--set value not UTF-8", RATE, ["override `name`", "not UTF-8"], args=["--set", "name=a\udc85b"]),
    # A line break in a key the user typed is shown escaped: the one error line was cut at it (the reason lost).
    run_case("--set a link with a line break in its name", TOPO, ["override `links.bot\\ntle.rate_mbps`", "unknown link",
                                                                  "bottleneck, back"], args=["--set", "links.bot\ntle.rate_mbps=5"]),
    run_case("--set a path with a line break", RATE, ["flows.x\\ny.window", "cannot set"], args=["--set", "flows.x\ny.window=3"]),
    # An empty key (or an empty part of one) was set as the key `` and refused at a line of the file.
    run_case("--set an empty key", RATE, ["override ``", "empty"], args=["--set", "=3"]),
    run_case("--set a key with an empty part", RATE, ["override `.seed`", "empty"], args=["--set", ".seed=3"]),
    run_case("--set a key with two dots", RATE, ["override `flows..window`", "empty"], args=["--set", "flows..window=3"]),
    run_case("--set a list index beyond the file's", RATE, ["override `flows.5.window`", "cannot set"],
             args=["--set", "flows.5.window=3"]),
    run_case("--set without = and with a line break", RATE, ["--set a\\nb", "KEY=VALUE"], args=["--set", "a\nb"]),
    # Python splits lines at a form feed or U+2028 too: the line stays whole, whatever the Rust side escapes.
    run_case("--set key with a form feed", RATE, ["override `flows.0.win", "dow`", "known: window"],
             args=["--set", "flows.0.win\x0cdow=3"]),
    run_case("--set key with a line separator", RATE, ["override `flows.0.win", "dow`", "known: window"],
             args=["--set", "flows.0.win\u2028dow=3"]),
    run_case("--set negative duration", RATE, ["override `duration_s`", "duration_s"], args=["--set", "duration_s=-1"]),
    # An error in a field the file gives names the file's line, whatever else was overridden.
    run_case("file error beside an override", sub(RATE, "window = 10", "window = -1"), ["s.toml:14", "flows[0].window"],
             args=["--set", "duration_s=3"]),
    run_case("ack link rate zero beside an override", sub(RATE, "[ack_link]\nrate_mbps = 10", "[ack_link]\nrate_mbps = 0"),
             ["s.toml:9", "ack_link.rate_mbps"], args=["--set", "flows.0.window=3"]),
    run_case("--seed not a number", RATE, ["--seed", "integer"], args=["--seed", "abc"]),
    run_case("--seed negative", RATE, ["--seed"], args=["--seed", "-1"]),
    run_case("--seed too large", RATE, ["--seed"], args=["--seed", str(2**64)]),
    # A scenario file cannot hold it (a TOML integer is i64), so no saved scenario.toml could replay it.
    run_case("--seed beyond a TOML integer", RATE, ["--seed", str(2**63 - 1)], args=["--seed", str(2**63)]),
    run_case("unknown option", RATE, ["--sed"], args=["--sed", "3"]),
    run_case("option without value", RATE, ["--set"], args=["--set"]),
    Case("run without -o", ["run", "{d}/s.toml"], ["'-o'"], {"s.toml": RATE}),
    Case("run without scenario", ["run", "-o", "{d}/out"], ["argument 'scenario'"]),
    Case("unknown command", ["rnu"], ["rnu"]),
    Case("validate without scenario", ["validate"], ["argument 'scenario'"]),
    Case("plot bad format", ["plot", "{d}/res", "--formats", "bmp"], ["--formats", "png, svg, pdf"], {"res": None}),
    Case("plot no formats", ["plot", "{d}/res", "--formats", ","], ["--formats"], {"res": None}),
    Case("sweep zero seeds", ["sweep", "{d}/s.toml", "--seeds", "0", "-o", "{d}/sw"], ["--seeds 0"], {"s.toml": RATE}),
    Case("sweep param without values", ["sweep", "{d}/s.toml", "--param", "flows.0.window", "-o", "{d}/sw"], ["--param"], {"s.toml": RATE}),
    Case("sweep param seed", ["sweep", "{d}/s.toml", "--param", "seed=1,2", "-o", "{d}/sw"], ["--param", "--seeds"], {"s.toml": RATE}),
    Case("sweep bad grid value", ["sweep", "{d}/s.toml", "--param", "flows.0.window=1,big", "-o", "{d}/sw"], ["flows[0].window"],
         {"s.toml": RATE}),
    Case("sweep -o names a file", ["sweep", "{d}/s.toml", "--param", "flows.0.window=5,6", "-j", "1", "-o", "{d}/f"],
         ["-o", "is a file"], {"s.toml": RATE, "f": "x"}),
    Case("sweep -o below a file", ["sweep", "{d}/s.toml", "--param", "flows.0.window=5,6", "-j", "1", "-o", "{d}/f/sw"],
         ["-o", "f is a file, not a folder"], {"s.toml": RATE, "f": "x"}),
    Case("sweep -o a folder of the user's", ["sweep", "{d}/s.toml", "--param", "flows.0.window=5,6", "-j", "1", "-o", "{d}/mine"],
         ["-o", "not a ccscope sweep folder"], {"s.toml": RATE, "mine/sweep.parquet": "mine"}),
    Case("tune -o a folder of the user's", ["tune", "{d}/s.toml", "--param", "flows.0.window=2:20", "--trials", "2", "-j", "1",
                                            "-o", "{d}/mine"], ["-o", "not a ccscope tuning folder"],
         {"s.toml": RATE, "mine/best.json": "mine"}),
    Case("tune trials absurd", ["tune", "{d}/s.toml", "--param", "flows.0.window=2:20", "--trials", "99999999999", "-j", "1",
                                "-o", "{d}/tn"], ["--trials 99999999999", "more than the limit"], {"s.toml": RATE}),
    # tune() names its Python arguments (trials=0, out PATH); the command rewords them with its options.
    Case("tune zero trials", ["tune", "{d}/s.toml", "--param", "flows.0.window=2:20", "--trials", "0", "-o", "{d}/tn"],
         ["error: --trials 0: need at least one trial"], {"s.toml": RATE}),
    Case("tune zero seeds", ["tune", "{d}/s.toml", "--param", "flows.0.window=2:20", "--trials", "2", "--seeds", "0",
                             "-o", "{d}/tn"], ["error: --seeds 0: need at least one seed"], {"s.toml": RATE}),
    Case("tune zero batch", ["tune", "{d}/s.toml", "--param", "flows.0.window=2:20", "--trials", "2", "--batch", "0",
                             "-o", "{d}/tn"], ["error: --batch 0: need at least one trial per batch"], {"s.toml": RATE}),
    Case("tune no param", ["tune", "{d}/s.toml", "--trials", "2", "-o", "{d}/tn"],
         ["error: --param: give at least one parameter to tune"], {"s.toml": RATE}),
    Case("tune -o names a file", ["tune", "{d}/s.toml", "--param", "flows.0.window=2:20", "--trials", "2", "-j", "1",
                                  "-o", "{d}/f"], ["error: -o ", "f: is a file, not a folder"], {"s.toml": RATE, "f": "x"}),
    # compare() and report() name out, delay and inputs; the commands name -o, --delay and RESULTS.
    Case("compare bad delay", ["compare", "{d}/res", "-o", "{d}/cmp", "--delay", "fast"],
         ["error: --delay fast: not one of one_way, signal, queue"]),
    Case("compare -o names a file", ["compare", "{d}/res", "-o", "{d}/f"], ["error: -o ", "f: is a file, not a folder"],
         {"f": "x"}),
    Case("compare -o a folder of the user's", ["compare", "{d}/res", "-o", "{d}/mine"],
         ["error: -o ", "not a ccscope results folder", "or --overwrite to add"], {"mine/notes.txt": "mine"}),
    Case("compare -o an input", ["compare", "{d}/res", "-o", "{d}/res"], ["error: -o ", "res: is one of the inputs"]),
    Case("report -o a folder", ["report", "{d}/res", "-o", "{d}"], ["error: -o ", ": is a folder; give the HTML file"]),
    Case("report -o a user's page", ["report", "{d}/res", "-o", "{d}/page.html"],
         ["error: -o ", "page.html is there and ccscope did not write it"], {"page.html": "<p>mine</p>"}),
    Case("cmt model p subnormal", ["cmt", "model", "--p", "5e-324", "--b", "10", "--d", "40", "--rbuf", "128000"],
         ["--p", "5e-324", "smallest normal float"]),
    Case("cmt model delay absurd", ["cmt", "model", "--p", "1e-3", "--b", "21", "--d", "1e300", "--rbuf", "128KB"],
         ["--d", "1e+300 ms is beyond 1e+10 ms (the longest run)"]),
    Case("cmt model bandwidth absurdly small", ["cmt", "model", "--p", "1e-3", "--b", "1e-300", "--d", "40", "--rbuf", "128KB"],
         ["--b", "1e-300 Mbit/s is out of range"]),
    Case("cmt allocate bandwidth absurd", ["cmt", "allocate", "--path", "b=1e300,d=40,p=1e-3", "--rbuf", "128KB"],
         ["--path #1", "1e+300 Mbit/s is out of range"]),
    Case("cmt model p zero", ["cmt", "model", "--p", "0", "--b", "10", "--d", "40", "--rbuf", "128000"], ["--p", "(0, 1)"]),
    Case("cmt model rbuf above the window limit", ["cmt", "model", "--p", "1e-300", "--b", "10", "--d", "40", "--rbuf",
                                                   "26000MB"], ["--rbuf", "above the limit"]),
    # --- output paths ----------------------------------------------------------------------------
    run_case("-o names a file", RATE, ["-o", "out: is a file"], {"out": "my file"}),
    Case("-o below a file", ["run", "{d}/s.toml", "-o", "{d}/f/out"], ["-o", "f is a file, not a folder"], {"s.toml": RATE, "f": "x"}),
    Case("-o deep below a file", ["run", "{d}/s.toml", "-o", "{d}/f/a/b"], ["-o", "f is a file, not a folder"], {"s.toml": RATE, "f": "x"}),
    run_case("-o a folder of the user's", RATE, ["-o", "not a ccscope results folder", "--overwrite"], {"out/notes.txt": "mine"}),
    Case("-o the scenario's own folder", ["run", "{d}/s.toml", "-o", "{d}"], ["not a ccscope results folder"], {"s.toml": RATE}),
    run_case("--overwrite over a user's summary.json", RATE, ["summary.json is there and ccscope did not write it"],
             {"out/summary.json": "{}"}, args=["--overwrite"]),
    run_case("--overwrite over a user's scenario.toml", RATE, ["scenario.toml is there and ccscope did not write it"],
             {"out/scenario.toml": "x"}, args=["--overwrite"]),
    run_case("--overwrite over a user's figure with --plot", RATE, ["throughput.png is there"],
             {"out/throughput.png": "x"}, args=["--overwrite", "--plot"]),
    run_case("-o results folder of a newer ccscope", RATE, ["-o", "newer ccscope", "version 99"],
             {"out/ccscope-manifest.json": '{"format": "ccscope-results", "version": 99, "files": ["summary.json"]}',
              "out/summary.json": "{}"}),
    run_case("-o folder with a corrupt manifest", RATE, ["not a ccscope results folder"],
             {"out/ccscope-manifest.json": "{not json", "out/summary.json": "{}"}),
    run_case("-o folder with a foreign manifest", RATE, ["not a ccscope results folder"],
             {"out/ccscope-manifest.json": '{"format": "other", "files": []}', "out/x": "y"}),
    run_case("-o manifest naming a path outside", RATE, ["not a ccscope results folder"],
             {"out/ccscope-manifest.json": '{"format": "ccscope-results", "files": ["../s.toml"]}'}),
    run_case("-o results folder with a user's packet log", RATE, ["packets.parquet is there and ccscope did not write it"],
             {"out/ccscope-manifest.json": '{"format": "ccscope-results", "version": 1, "files": ["summary.json"]}',
              "out/summary.json": "{}", "out/packets.parquet": "mine"}, args=["--packets"]),
    Case("plot of a missing folder", ["plot", "{d}/nope"], ["nope", "not a results folder"]),
    Case("plot of a file", ["plot", "{d}/f"], ["f: not a results folder"], {"f": "x"}),
    Case("plot of an empty folder", ["plot", "{d}/res"], ["res: not a results folder (no summary.json)"], {"res": None}),
    Case("plot of a folder without timeseries", ["plot", "{d}/res"], ["not a results folder (no flows.parquet)"], {"res/summary.json": "{}"}),
]


def queue(spec: str) -> str:
    """RATE with `spec` as its data link's queue (or loss) line."""
    return sub(RATE, "delay_ms = 20", "delay_ms = 20\n" + spec)


def controller(spec: str) -> str:
    """RATE with its fixed flow replaced by the lines `spec`."""
    return sub(RATE, 'controller = "fixed"\nwindow = 10', spec)


# Values beyond what they can mean, refused naming the field rather than saturated, clamped or run.
CASES += [
    run_case("max retransmission timeout absurd", flow("max_rto_ms = 1e300"), ["s.toml:15", "flows[0].max_rto_ms", "1e300 ms"]),
    run_case("initial retransmission timeout absurd", flow("initial_rto_ms = 1e300"),
             ["s.toml:15", "flows[0].initial_rto_ms", "1e300 ms"]),
    run_case("codel target absurd", queue('queue = { kind = "codel", flavour = "rfc8289", target_ms = 1e300 }'),
             ["s.toml:7", "data_link.queue.target_ms", "1e300 ms"]),
    run_case("codel interval absurd", queue('queue = { kind = "codel", interval_ms = 1e300 }'),
             ["s.toml:7", "data_link.queue.interval_ms", "1e300 ms"]),
    run_case("codel mtu absurd", queue('queue = { kind = "codel", mtu_bytes = 99999999999 }'),
             ["s.toml:7", "data_link.queue.mtu_bytes", "1..=65535"]),
    run_case("pie target not whole", queue('queue = { kind = "pie", flavour = "mahimahi", qdelay_ref_ms = 15.5 }'),
             ["s.toml:7", "data_link.queue.qdelay_ref_ms", "whole milliseconds"]),
    run_case("pie burst zero", queue('queue = { kind = "pie", max_burst_ms = 0 }'),
             ["s.toml:7", "data_link.queue.max_burst_ms", "must be > 0"]),
    run_case("pie update period absurd", queue('queue = { kind = "pie", t_update_ms = 1e300 }'),
             ["s.toml:7", "data_link.queue.t_update_ms", "1e300 ms"]),
    run_case("pie alpha negative", queue('queue = { kind = "pie", alpha = -0.5 }'),
             ["s.toml:7", "data_link.queue.alpha", "[0, 1e6]"]),
    run_case("pie beta absurd", queue('queue = { kind = "pie", beta = 1e300 }'),
             ["s.toml:7", "data_link.queue.beta", "[0, 1e6]"]),
    run_case("pie unknown flavour", queue('queue = { kind = "pie", flavour = "linux" }'),
             ["s.toml:7", "data_link.queue.flavour", "rfc8033"]),
    run_case("pie update period under a millisecond", queue('queue = { kind = "pie", t_update_ms = 0.5 }'),
             ["s.toml:7", "data_link.queue.t_update_ms", ">= 1 ms"]),
    run_case("pie unknown key", queue('queue = { kind = "pie", target_ms = 15 }'),
             ["s.toml:7", "target_ms"]),
    # A wrong type inside a queue, loss or traffic table named the table, not its key; set by --set, it
    # named the file's line of the table, not the override.
    run_case("pie weight of the wrong type names the key", queue('queue = { kind = "pie", beta = "x" }'),
             ["s.toml:7", "field `data_link.queue.beta`", "expected f64"]),
    run_case("--set pie weight of the wrong type", queue('queue = { kind = "pie" }'),
             ["override `data_link.queue.beta`", "field `data_link.queue.beta`", "expected f64"],
             args=["--set", "data_link.queue.beta=x"]),
    run_case("--set queue limit negative", queue('queue = { kind = "pie", flavour = "rfc8033" }'),
             ["override `data_link.queue.packets`", "field `data_link.queue.packets`", "-1"],
             args=["--set", "data_link.queue.packets=-1"]),
    run_case("--set queue unknown key", queue('queue = { kind = "codel" }'),
             ["override `data_link.queue.bogus`", "unknown key `bogus`"], args=["--set", "data_link.queue.bogus=1"]),
    run_case("--set loss probability of the wrong type", queue('loss = { kind = "bernoulli", p = 0.1 }'),
             ["override `data_link.loss.p`", "field `data_link.loss.p`"], args=["--set", "data_link.loss.p=high"]),
    # An integer beyond 64 bits inside a table given by --set was refused by the TOML parser at a line
    # of the rewritten file (a line the user's file does not have).
    run_case("--set queue table with an integer beyond 64 bits", RATE,
             ["override `data_link.queue`", "18446744073709551615", "outside the range of a TOML integer"],
             args=["--set", 'data_link.queue={kind="droptail", packets=18446744073709551615}']),
    run_case("red mean packet size zero", queue('queue = { kind = "red", mean_packet_bytes = 0 }'),
             ["s.toml:7", "data_link.queue.mean_packet_bytes", "1..=65535"]),
    run_case("burst loss window absurd", queue('loss = { kind = "burst_after_loss", p = 0.1, window_ms = 1e300 }'),
             ["s.toml:7", "data_link.loss.window_ms", "1e300 ms"]),
    run_case("on/off idle mean absurd", flow('traffic = { kind = "onoff", off_mean_s = 1e300 }'),
             ["s.toml:15", "flows[0].traffic.off_mean_s", "1e300 s"]),
    # sigma^2 = ln(1 + std^2/mean^2) was infinite and building the run panicked.
    run_case("on/off size spread overflowing", flow('traffic = { kind = "onoff", mean_bytes = 1e-300, std_bytes = 1e6 }'),
             ["s.toml:15", "flows[0].traffic.std_bytes", "not finite"]),
    run_case("on/off largest size absurd", flow('traffic = { kind = "onoff", max_bytes = 1e300 }'),
             ["s.toml:15", "flows[0].traffic.max_bytes", "1e300 B"]),
    run_case("read rate below a bit per second", flow('transport = "reliable"\nrbuf_bytes = 100000\nread_rate_mbps = 1e-300'),
             ["s.toml:17", "flows[0].read_rate_mbps", "got 1e-300"]),
    # A flow keeping its own series beside timeseries = "none" allocated 1e10 bins unchecked.
    run_case("bins of a flow's own series absurd", 'bin_ms = 1e-6\ntimeseries = "none"\n' + flow("timeseries = true"),
             ["s.toml:1", "bin_ms", "bins"]),
    run_case("count given as a huge float shown short", flow("count = 1e300"), ["s.toml:15", "flows[0].count", "`1e300`"]),
    run_case("integer parameter given as a huge float shown short", controller('controller = "timely"\nhai_threshold = 1e300'),
             ["s.toml:14", "flows[0].hai_threshold", "`1e300`, expected u32"]),
    # Each flow copies each per-flow link it names: 2^19 + 1 flows over two such links are 2^20 + 2 links.
    run_case("per-flow link copies absurd", sub(sub(TOPO, "[links.bottleneck]", "[links.bottleneck]\nper_flow = true"),
                                                "[links.back]", "[links.back]\nper_flow = true")
             + "count = 524289\n", ["s.toml:18", "flows[0].count", "1048578 per-flow link copies"]),
    # 2000 s at 2 Gbit/s logged about 6.7e8 rows and ran out of memory; refused before the run.
    run_case("packet log of a long fast run", "packet_log = true\n" + sub(sub(RATE, "duration_s = 2", "duration_s = 2000"),
                                                                          "rate_mbps = 10", "rate_mbps = 2000"),
             ["s.toml:1", "packet_log", "rows"]),
    run_case("--packets on a long fast run", sub(sub(RATE, "duration_s = 2", "duration_s = 2000"), "rate_mbps = 10", "rate_mbps = 2000"),
             ["override `packet_log`", "rows"], args=["--packets"]),
    # 3000 s of NewReno at 2 Gbit/s logged about 5e8 window changes and ran out of memory.
    run_case("window log of a long fast run", "cwnd_log = true\n" + sub(sub(RATE, "duration_s = 2", "duration_s = 3000"),
                                                                        "rate_mbps = 10", "rate_mbps = 2000"),
             ["s.toml:1", "cwnd_log", "rows"]),
    run_case("--cwnd on a long fast run", sub(sub(RATE, "duration_s = 2", "duration_s = 3000"), "rate_mbps = 10", "rate_mbps = 2000"),
             ["override `cwnd_log`", "rows"], args=["--cwnd"]),
    # Without duration_s a trace played once runs one period: 1e10 s ran (and ran out of memory).
    run_case("trace played once outlasting the longest run", sub(sub(TRACE, "duration_s = 2\n", ""), 'trace = "t.trace"',
                                                                  'trace = "t.trace"\nonce = true'),
             ["s.toml:4", "data_link.trace", "beyond 1e7 s", "give duration_s"], {"t.trace": "0\n10000000000000\n"}),
    # An input that never ends was read until memory ran out; it is read no further than the input bound.
    *([run_case("trace that never ends", sub(TRACE, 't.trace', '/dev/zero'), ["/dev/zero", "more than 268435456 bytes"]),
       run_case("markov model that never ends", controller('controller = "markov"\nmodel = "/dev/zero"'),
                ["s.toml:14", "flows[0].model", "/dev/zero", "more than 268435456 bytes"]),
       run_case("sac table that never ends", controller('controller = "sac"\ntable = "file"\ntable_file = "/dev/zero"'),
                ["s.toml:15", "flows[0].table_file", "more than 268435456 bytes"]),
       run_case("sac oracle that never ends", controller('controller = "sac"\ntable = "oracle"\noracle_file = "/dev/zero"'),
                ["s.toml:15", "flows[0].oracle_file", "more than 268435456 bytes"])]
      if os.path.exists("/dev/zero") else []),
    *([Case("validate a scenario that never ends", ["validate", "/dev/zero"], ["/dev/zero", "more than 67108864 bytes"]),
       Case("run a scenario that never ends", ["run", "/dev/zero", "-o", "{d}/out"], ["/dev/zero", "more than 67108864 bytes"])]
      if os.path.exists("/dev/zero") else []),
    # 2^20 flows of 255 paths each asked for 2.7e8 paths and ran out of memory.
    run_case("paths in all absurd", sub(sub(TOPO, '"newreno"', '"fixed"'), 'route = ["bottleneck"]\nack_route = ["back"]',
                                        'paths = [' + ", ".join(['{ route = ["bottleneck"], ack_route = ["back"] }'] * 255)
                                        + ']\ncount = 1048576'), ["s.toml:15", "flows[0].count", "paths in all"]),
    # 2^20 flows passed every count bound and asked for about 6.6 GB of per-flow state.
    run_case("per-flow state beyond 4 GiB", flow("count = 1000000"),
             ["s.toml:15", "flows[0].count", "GiB of per-flow state", "1000000 flows"]),
    # 1e-12 ms is 0 ns: the retransmission timer fired forever at one instant and ran out of memory.
    run_case("retransmission timeout below a nanosecond", sub(RATE, 'controller = "fixed"\nwindow = 10',
                                                            'controller = "newreno"\nmax_rto_ms = 1e-12\nmin_rto_ms = 1e-12\n'
                                                            'initial_rto_ms = 1e-12'),
             ["s.toml:15", "flows[0].min_rto_ms", "below 1 ns"]),
    # fixed's timeout_ms = 1e-12 was 0 ns: its timer fired forever at one instant and the run hung.
    run_case("controller time below a nanosecond", flow("timeout_ms = 1e-12"), ["s.toml:15", "flows[0].timeout_ms", "below 1 ns"]),
    run_case("parameter in round trips absurd", controller('controller = "vivace"\nmi_rtts = 1e300'),
             ["s.toml:14", "flows[0].mi_rtts", "1e10", "round trips"]),
]

def _results_case(name: str, corrupt: dict, expect: list, args: Optional[list] = None) -> Case:
    """`ccscope plot` of a real results folder with some files replaced by `corrupt`."""

    def setup(d: Path) -> None:
        (d / "s.toml").write_text(RATE)
        api.run(RATE_SC(d)).save(d / "res")
        for n, data in corrupt.items():
            (d / "res" / n).write_bytes(data)

    return Case(name, ["plot", "{d}/res", *(args or [])], expect, setup=setup)


def RATE_SC(d: Path) -> api.Scenario:  # noqa: N802 - a scenario factory used as a constant
    return api.Scenario(RATE, str(d / "s.toml"))


CASES += [
    _results_case("plot corrupt flows parquet", {"flows.parquet": b"PAR1garbage"}, ["flows.parquet: not a readable Parquet file"]),
    _results_case("plot corrupt timeseries parquet", {"timeseries.parquet": b"junk"}, ["timeseries.parquet: not a readable Parquet file"]),
    _results_case("plot empty timeseries parquet", {"timeseries.parquet": b""}, ["timeseries.parquet: not a readable Parquet file"]),
    _results_case("plot corrupt summary", {"summary.json": b"{"}, ["summary.json: not a ccscope summary"]),
    _results_case("plot summary of another program", {"summary.json": b"[1, 2]"}, ["summary.json: not a ccscope summary"]),
    _results_case("plot corrupt packets parquet", {"packets.parquet": b"junk"}, ["packets.parquet: not a readable Parquet file"]),
    _results_case("plot over a user's figure", {"delay.svg": b"<svg/>"}, ["delay.svg is there and ccscope did not write it"]),
    _results_case("plot into a results folder of a newer ccscope",
                  {"ccscope-manifest.json": b'{"format": "ccscope-results", "version": 99, "files": ["summary.json", '
                                            b'"flows.parquet", "timeseries.parquet"]}'}, ["newer ccscope", "version 99"]),
    _results_case("plot -o names a file", {}, ["-o", "is a file"], args=["-o", "{d}/s.toml"]),
    _results_case("plot -o a folder of the user's", {}, ["not a ccscope results folder"], args=["-o", "{d}/res/../mine"]),
]


def _add_mine(case: Case) -> Case:
    old = case.setup

    def setup(d: Path) -> None:
        old(d)
        (d / "mine").mkdir()
        (d / "mine" / "a.txt").write_text("mine")

    case.setup = setup
    return case


CASES[-1] = _add_mine(CASES[-1])


def _samples(d: Path) -> None:
    """A small (delay, window) sample file as `ccscope markov collect` writes it, at d/s.parquet."""
    import pandas as pd

    from ccscope.models import markov

    n = 400
    df = pd.DataFrame({"user": [0] * n, "t_ms": [5.0 * i for i in range(n)], "d_ms": [40 + i % 7 for i in range(n)],
                       "w": [1 + i % 5 for i in range(n)]})
    markov.save_samples(df, d / "s.parquet")


def _model(d: Path) -> None:
    """A model trained from :func:`_samples`, at d/m.ccm."""
    from ccscope.models import markov

    _samples(d)
    markov.train([d / "s.parquet"], quantize_ms=2).save(d / "m.ccm")


CASES += [
    Case("markov heatmap over the model itself", ["markov", "inspect", "{d}/m.ccm", "--heatmap", "{d}/m.ccm"],
         ["--heatmap", "m.ccm", "png, svg, pdf"], setup=_model),
    Case("markov heatmap with a text suffix", ["markov", "inspect", "{d}/m.ccm", "--heatmap", "{d}/h.txt"],
         ["--heatmap", "h.txt", "png, svg, pdf"], setup=_model),
    Case("markov heatmap over a user's file named .png", ["markov", "inspect", "{d}/m.ccm", "--heatmap", "{d}/fig.png"],
         ["--heatmap", "fig.png is there and is not a figure ccscope wrote"], {"fig.png": "my notes"}, setup=_model),
    # A picture of the user's is a PNG, PDF or SVG too: only a figure carrying ccscope's mark may be replaced.
    Case("markov heatmap over a user's PNG", ["markov", "inspect", "{d}/m.ccm", "--heatmap", "{d}/photo.png"],
         ["--heatmap", "photo.png is there and is not a figure ccscope wrote"],
         {"photo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR a user's picture"}, setup=_model),
    Case("markov heatmap over a user's PDF", ["markov", "inspect", "{d}/m.ccm", "--heatmap", "{d}/paper.pdf"],
         ["--heatmap", "paper.pdf is there and is not a figure ccscope wrote"], {"paper.pdf": b"%PDF-1.4 a user's paper"},
         setup=_model),
    Case("markov heatmap over a user's SVG", ["markov", "inspect", "{d}/m.ccm", "--heatmap", "{d}/logo.svg"],
         ["--heatmap", "logo.svg is there and is not a figure ccscope wrote"],
         {"logo.svg": '<svg xmlns="http://www.w3.org/2000/svg"><title>ccscope</title></svg>'}, setup=_model),
    Case("markov train over a user's file", ["markov", "train", "{d}/s.parquet", "-o", "{d}/notes.txt"],
         ["-o", "notes.txt is there and is not a .ccm model ccscope wrote"], {"notes.txt": "my notes"}, setup=_samples),
    # The API's argument names (quantize_ms, truncate) were shown instead of the command's options.
    Case("markov train quantize zero", ["markov", "train", "{d}/s.parquet", "--quantize", "0", "-o", "{d}/m.ccm"],
         ["--quantize 0", "positive"], setup=_samples),
    Case("markov train truncate beyond 100", ["markov", "train", "{d}/s.parquet", "--truncate", "120", "-o", "{d}/m.ccm"],
         ["--truncate 120", "(0, 100]"], setup=_samples),
    Case("markov train over its own samples", ["markov", "train", "{d}/s.parquet", "-o", "{d}/s.parquet"],
         ["-o", "s.parquet is there and is not a .ccm model ccscope wrote"], setup=_samples),
    Case("markov collect over a user's file", ["markov", "collect", "--traces", "{d}/traces", "--set", "t.down", "--users", "1",
                                               "--seconds", "1", "-q", "-o", "{d}/notes.txt"],
         ["-o", "notes.txt is there and is not a sample file ccscope wrote"],
         {"traces/t.down": "".join(f"{t}\n" for t in range(1, 1001)), "notes.txt": "my notes"}),
]


def _report_case(name: str, page: Union[str, bytes], expect: list) -> Case:
    """`ccscope report` of a real results folder, -o naming a file that is already there."""
    case = _results_case(name, {}, expect)
    case.args = ["report", "{d}/res", "-o", "{d}/page.html"]
    case.files = {"page.html": page}
    return case


CASES += [
    # The folder named was a file: the error said it did not exist.
    Case("report -o inside a file", ["report", "{d}/res", "-o", "{d}/s.toml/page.html"], ["-o", "s.toml is a file, not a folder"],
         setup=_results_case("", {}, []).setup),
]

CASES += [
    _report_case("report over a user's HTML page", "<html>my notes</html>\n", ["page.html", "ccscope did not write it"]),
    _report_case("report over a page another program generated", '<meta name="generator" content="pandoc">\n',
                 ["page.html", "ccscope did not write it"]),
]


CASES += [
    # `bench` printed a traceback (exit 1) for an unknown case or a negative --repeats, ran --repeats 0 as
    # 1, and took any count (the run's timings were allocated up front: 10^12 repeats asked for 8 TB).
    Case("bench unknown case", ["bench", "--cases", "nope"], ["--cases nope", "unknown bench case `nope`", "contest"]),
    Case("bench repeats zero", ["bench", "--repeats", "0", "--cases", "contest"], ["--repeats 0", "1..=1000"]),
    Case("bench repeats negative", ["bench", "--repeats", "-1", "--cases", "contest"], ["--repeats -1", "1..=1000"]),
    Case("bench repeats absurd", ["bench", "--repeats", "1000000000000", "--cases", "contest"],
         ["--repeats 1000000000000", "1..=1000"]),
]


CASES += [
    # -j 100000 started a local dask cluster of 100000 worker processes (over 1 GB and a minute before it
    # was killed); local workers are bounded by this machine's cores.
    Case("sweep local workers absurd", ["sweep", "{d}/s.toml", "--param", "flows.0.window=1,2", "-j", "100000", "-o", "{d}/sw"],
         ["--jobs 100000", "per core"], {"s.toml": RATE}),
    Case("tune local workers absurd", ["tune", "{d}/s.toml", "--param", "flows.0.window=1:20", "--trials", "2", "-j", "100000",
                                       "-o", "{d}/tu"], ["--jobs 100000", "per core"], {"s.toml": RATE}),
]


COMPARE_FOLDER = {
    "cmp/ccscope-manifest.json": '{"format": "ccscope-results", "version": 1, "files": ["compare.json", "delay_cdf.svg"]}\n',
    "cmp/compare.json": "{}\n",
    "cmp/delay_cdf.svg": "<svg/>\n",
}

CASES += [
    # A run into a comparison's folder deleted its compare.json and figures (ccscope's files, but of
    # another command); compare already refused a run's folder.
    run_case("run into a comparison folder", RATE, ["-o", "cmp", "another kind", "compare.json"], COMPARE_FOLDER,
             args=["-o", "{d}/cmp"]),
]


def _series(columns: dict) -> Callable[[Path], None]:
    """A setup writing d/ts.parquet with these columns (a link series as a run keeps it, flow -1)."""

    def setup(d: Path) -> None:
        import pandas as pd

        pd.DataFrame(columns).to_parquet(d / "ts.parquet")

    return setup


CASES += [
    # A throughput column of text was read as numbers: the error named neither the file nor the column.
    Case("stats hurst of a text column", ["stats", "hurst", "{d}/ts.parquet", "--method", "rs"],
         ["--column 'throughput_mbps'", "ts.parquet", "not a numeric column"],
         setup=_series({"time_s": [0.0, 1.0], "flow": [-1, -1], "throughput_mbps": ["x", "y"]})),
    Case("stats condprob with a text time column", ["stats", "condprob", "{d}/ts.parquet"],
         ["SERIES", "ts.parquet", "time_s is not numeric"],
         setup=_series({"time_s": ["a", "b"], "flow": [-1, -1], "throughput_mbps": [1.0, 2.0]})),
    # One row has a time_s column but no step: the error said the column was missing.
    Case("stats condprob of a one-row series", ["stats", "condprob", "{d}/ts.parquet"],
         ["--bin-s", "a single row", "give the bin width"],
         setup=_series({"time_s": [0.0], "flow": [-1], "throughput_mbps": [1.0]})),
]


def snapshot(d: Path) -> dict:
    """Every entry under `d`: kind, and bytes for files."""
    out = {}
    for p in sorted(d.rglob("*")):
        key = str(p.relative_to(d))
        if p.is_symlink():
            out[key] = ("link", os.readlink(p))
        elif p.is_dir():
            out[key] = ("dir",)
        else:
            out[key] = ("file", p.read_bytes(), p.stat().st_mtime_ns)
    return out


def materialise(d: Path, case: Case) -> None:
    for name, content in case.files.items():
        p = d / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if content is None:
            p.mkdir()
        elif isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content)
    if case.setup is not None:
        case.setup(d)


def check_one_error_line(res, expect: list) -> str:
    try:
        stdout, stderr = res.stdout, res.stderr
    except ValueError:  # pragma: no cover - old Click mixes the two
        stdout, stderr = "", res.output
    assert res.exit_code == 2, (res.exit_code, stdout, stderr, res.exception)
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    line = lines[0]
    assert line.startswith("error: "), line
    assert "Traceback" not in stdout + stderr
    assert not stdout.strip(), stdout
    for s in expect:
        assert s in line, (s, line)
    return line


assert len(CASES) >= 100, len(CASES)
assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_exits_2_with_one_line_and_touches_nothing(tmp_path, case, cli_runner, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # importing a controller file must leave no __pycache__
    d = tmp_path / "case"
    d.mkdir()
    materialise(d, case)
    before = snapshot(tmp_path)
    args = [a.replace("{d}", str(d)) for a in case.args]
    res = cli_runner.invoke(app, args)
    check_one_error_line(res, case.expect)
    assert snapshot(tmp_path) == before


def test_bad_input_from_the_installed_command_is_one_line_too(tmp_path):
    """The console script itself (not the in-process runner): a Python controller's exception."""
    import shutil
    import subprocess

    exe = shutil.which("ccscope", path=os.path.dirname(sys.executable)) or shutil.which("ccscope")
    assert exe, "the ccscope console script is not installed"
    (tmp_path / "s.toml").write_text(python_flow("ctl.py:Ctl"))
    (tmp_path / "ctl.py").write_text(CTL + "\n    def on_ack(self, now_ms, ack):\n        raise ValueError('bad ack')\n")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run([exe, "run", "s.toml", "-o", "out"], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "ValueError at " in lines[0] and "ctl.py:8: bad ack" in lines[0], proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ctl.py", "s.toml"]


def test_output_folder_that_cannot_be_written_is_refused_before_running(tmp_path, cli_runner):
    (tmp_path / "s.toml").write_text(RATE)
    if os.geteuid() == 0:
        # Root writes in any folder whatever its mode; /proc takes no new folders from anyone.
        out = Path("/proc/ccscope-out")
    else:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        out = ro / "out"
    before = snapshot(tmp_path)
    res = cli_runner.invoke(app, ["run", str(tmp_path / "s.toml"), "-o", str(out)])
    check_one_error_line(res, ["-o", str(out), "cannot write in"])
    assert not out.exists()
    assert snapshot(tmp_path) == before


def test_a_wrong_type_in_a_named_links_queue_set_through_the_api_names_the_override(tmp_path):
    import ccscope

    (tmp_path / "s.toml").write_text(sub(TOPO, "delay_ms = 5\n", 'delay_ms = 5\nqueue = { kind = "pie" }\n'))
    with pytest.raises(ccscope.ScenarioError) as e:
        ccscope.run(str(tmp_path / "s.toml"), overrides={"links.bottleneck.queue.alpha": [1]})
    assert "override `links.bottleneck.queue.alpha`: field `links.bottleneck.queue.alpha`" in str(e.value), e.value


def test_saving_a_run_into_a_comparison_folder_is_refused_and_keeps_it(tmp_path):
    from ccscope.store import OutputError

    materialise(tmp_path, Case("", [], [], COMPARE_FOLDER))
    before = snapshot(tmp_path)
    res = api.run(RATE_SC(tmp_path))
    with pytest.raises(OutputError, match="another kind"):
        res.save(tmp_path / "cmp")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("how", ["save", "run -o"])
def test_a_run_is_not_written_into_a_reproductions_figures_folder_and_keeps_it(tmp_path, cli_runner, how):
    # A figures folder's manifest lists its CSVs and figures, no summary.json: a run deleted them all as files
    # "of the previous write" (only a comparison's compare.json was recognised as another kind).
    from ccscope.experiment import write_csv
    from ccscope.store import OutputError

    (tmp_path / "s.toml").write_text(RATE)
    write_csv(tmp_path / "figs" / "table2.csv", [{"theta": 1, "goodput": 2.5}])
    before = snapshot(tmp_path)
    if how == "save":
        with pytest.raises(OutputError, match="another kind"):
            api.run(RATE_SC(tmp_path)).save(tmp_path / "figs")
    else:
        res = cli_runner.invoke(app, ["run", str(tmp_path / "s.toml"), "-o", str(tmp_path / "figs")])
        check_one_error_line(res, ["-o", "another kind", "summary.json"])
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("command", ["report", "markov train", "markov inspect --heatmap"])
def test_a_file_destination_that_cannot_be_written_is_refused_in_one_line(tmp_path, cli_runner, command):
    # Root writes in any folder whatever its mode, so the check trusted the mode: /proc took no file and the
    # write failed at the end, after the work (report: a traceback, exit 1; markov: a line naming a temp file).
    if os.geteuid() == 0:
        folder = Path("/proc")
    else:
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o555)
    _model(tmp_path)
    (tmp_path / "s.toml").write_text(RATE)
    api.run(RATE_SC(tmp_path)).save(tmp_path / "res")
    args, option = {
        "report": (["report", str(tmp_path / "res"), "-o", str(folder / "page.html")], "-o"),
        "markov train": (["markov", "train", str(tmp_path / "s.parquet"), "-o", str(folder / "m.ccm")], "-o"),
        "markov inspect --heatmap": (["markov", "inspect", str(tmp_path / "m.ccm"), "--heatmap", str(folder / "h.png")],
                                     "--heatmap"),
    }[command]
    before = snapshot(tmp_path)
    res = cli_runner.invoke(app, args)
    check_one_error_line(res, [option, f"cannot write in {folder}"])
    assert snapshot(tmp_path) == before
