"""The value syntax of ``--param KEY=VALUES`` for sweeps and ``ccscope tune``.

A sweep value list is comma-separated items, each a TOML value or an inclusive range ``a:b`` /
``a:b:step``; or the whole list is ``linspace(a, b, n)``, ``logspace(a, b, n)`` (base-10 exponents,
as numpy's) or ``geomspace(a, b, n)`` (endpoints). A tuning range is ``low:high`` (``:log`` for a
log-uniform search, ``:STEP`` for a discrete one) or a comma-separated list of choices.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Optional, Union

from ccscope import _native, api

#: The most runs (grid points times seeds) a sweep accepts: checked before any list is built.
MAX_RUNS = 1_000_000

_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_RANGE = re.compile(rf"^({_NUM}):({_NUM})(?::({_NUM}))?$")
_SPACE = re.compile(r"^(linspace|logspace|geomspace)\((.*)\)$")
_INT = re.compile(r"^[-+]?\d+$")


def _bad(opt: str, item: str, why: str) -> _native.ScenarioError:
    return _native.ScenarioError(f"{opt} {item}: {why}")


def _split_item(opt: str, item: str) -> tuple[str, str]:
    key, eq, values = item.partition("=")
    key, values = key.strip(), values.strip()
    if not eq or not key or not values:
        raise _bad(opt, item, "expected KEY=VALUES")
    if key == "seed":
        raise _bad(opt, item, "use --seeds to vary the seed")
    return key, values


def _range_count(opt: str, item: str, a: Decimal, b: Decimal, step: Decimal) -> int:
    if step == 0:
        raise _bad(opt, item, "the step must not be 0")
    if (b - a) * step < 0:
        raise _bad(opt, item, f"the range {a}:{b} is empty with step {step}")
    n = int((b - a) / step) + 1
    if n > MAX_RUNS:
        raise _bad(opt, item, f"{n} values, more than the limit of {MAX_RUNS}")
    return n


def _expand_range(opt: str, item: str, m: re.Match) -> list:
    """``a:b`` or ``a:b:step``, both ends included when the steps land on b (computed in decimal)."""
    a_s, b_s, step_s = m.group(1), m.group(2), m.group(3)
    ints = all(_INT.match(s) for s in (a_s, b_s, step_s or "1"))
    try:
        a, b, step = Decimal(a_s), Decimal(b_s), Decimal(step_s or "1")
    except InvalidOperation:  # pragma: no cover - the pattern admits only numbers
        raise _bad(opt, item, "not a number") from None
    if step_s is None and a > b:
        raise _bad(opt, item, f"the range {a_s}:{b_s} is empty (give a negative step to count down)")
    n = _range_count(opt, item, a, b, step)
    return [int(a + i * step) if ints else float(a + i * step) for i in range(n)]


def _expand_space(opt: str, item: str, kind: str, args: str) -> list:
    import numpy as np

    parts = [p.strip() for p in args.split(",")]
    if len(parts) != 3:
        raise _bad(opt, item, f"{kind} takes three arguments (start, stop, n)")
    try:
        a, b = float(parts[0]), float(parts[1])
    except ValueError:
        raise _bad(opt, item, f"{kind}: start and stop must be numbers") from None
    if not _INT.match(parts[2]) or int(parts[2]) < 1:
        raise _bad(opt, item, f"{kind}: n must be a whole number of at least 1")
    n = int(parts[2])
    if n > MAX_RUNS:
        raise _bad(opt, item, f"{n} values, more than the limit of {MAX_RUNS}")
    if not (math.isfinite(a) and math.isfinite(b)):
        raise _bad(opt, item, f"{kind}: start and stop must be finite")
    if kind == "geomspace" and (a <= 0 or b <= 0):
        raise _bad(opt, item, "geomspace: start and stop must be positive (they are the endpoints)")
    fn = {"linspace": np.linspace, "logspace": np.logspace, "geomspace": np.geomspace}[kind]
    return [float(v) for v in fn(a, b, n)]


def parse_values(opt: str, item: str, values: str) -> list:
    """The list of values one ``--param`` item stands for."""
    space = _SPACE.match(values)
    if space:
        return _expand_space(opt, item, space.group(1), space.group(2))
    out: list = []
    for part in (p.strip() for p in values.split(",")):
        if not part:
            raise _bad(opt, item, "empty value (expected V1,V2,... with no empty values)")
        rng = _RANGE.match(part)
        if rng:
            out += _expand_range(opt, item, rng)
            if len(out) > MAX_RUNS:
                raise _bad(opt, item, f"more than the limit of {MAX_RUNS} values")
        else:
            out.append(api.parse_value(part))
    return out


def parse_grid(params: list[str], opt: str = "--param") -> dict[str, list]:
    """``["flows.0.window=1:3", "duration_s=10"]`` -> ``{"flows.0.window": [1, 2, 3], "duration_s": [10]}``."""
    grid: dict[str, list] = {}
    total = 1
    for item in params:
        key, values = _split_item(opt, item)
        if key in grid:
            raise _bad(opt, item, f"`{key}` is given twice")
        grid[key] = parse_values(opt, item, values)
        total *= len(grid[key])
        if total > MAX_RUNS:
            raise _bad(opt, item, f"the grid has {total} points, more than the limit of {MAX_RUNS}")
    return grid


@dataclass(frozen=True)
class Interval:
    """A tuning dimension: numbers in ``[low, high]``, integers when both ends are, maybe log-scaled or stepped."""

    low: Union[int, float]
    high: Union[int, float]
    log: bool = False
    step: Optional[Union[int, float]] = None

    @property
    def integer(self) -> bool:
        return isinstance(self.low, int) and isinstance(self.high, int) and (self.step is None or isinstance(self.step, int))


@dataclass(frozen=True)
class Choice:
    """A tuning dimension over a fixed list of values."""

    values: tuple


_TUNE_RANGE = re.compile(rf"^({_NUM}):({_NUM})(?::(log|{_NUM}))?$")


def _number(s: str) -> Union[int, float]:
    return int(s) if _INT.match(s) else float(s)


def parse_space(params: list[str], opt: str = "--param") -> dict[str, Any]:
    """``["flows.0.alpha=0.01:1:log", "flows.0.kind=a,b"]`` -> ``{key: Interval | Choice}``."""
    space: dict[str, Any] = {}
    for item in params:
        key, values = _split_item(opt, item)
        if key in space:
            raise _bad(opt, item, f"`{key}` is given twice")
        m = _TUNE_RANGE.match(values)
        if m:
            low, high = _number(m.group(1)), _number(m.group(2))
            extra = m.group(3)
            log = extra == "log"
            step = _number(extra) if extra and not log else None
            if not (math.isfinite(low) and math.isfinite(high)) or low >= high:
                raise _bad(opt, item, "expected LOW:HIGH with LOW below HIGH")
            if log and low <= 0:
                raise _bad(opt, item, "a log range needs LOW above 0")
            if step is not None and not step > 0:
                raise _bad(opt, item, "the step must be positive")
            space[key] = Interval(low, high, log, step)
        elif ":" in values and "," not in values and re.match(r"^[-+.\d]", values):
            raise _bad(opt, item, "expected LOW:HIGH, LOW:HIGH:log, LOW:HIGH:STEP or V1,V2,...")
        else:
            space[key] = Choice(tuple(parse_values(opt, item, values)))
    return space
