"""The Python API: load scenarios, run them, get pandas results, save them atomically."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Union

import numpy as np
import pandas as pd

from ccscope import _native

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

import tomli_w

PACKAGE_DIR = Path(__file__).resolve().parent
TRACES_DIR = PACKAGE_DIR / "data" / "traces"
EXAMPLES_DIR = PACKAGE_DIR / "examples"


def trace_search_path() -> list[str]:
    """Where trace names are looked up after the scenario's own folder: $CCSCOPE_TRACE_PATH, then
    the traces shipped with the package."""
    extra = [p for p in os.environ.get("CCSCOPE_TRACE_PATH", "").split(os.pathsep) if p]
    return extra + [str(TRACES_DIR)]


def resolve_scenario_path(path: Union[str, Path]) -> Path:
    """A scenario path as given, or an embedded example (``examples/NAME.toml`` or ``NAME``)."""
    p = Path(path)
    if p.exists():
        return p
    for cand in (EXAMPLES_DIR / p.name, EXAMPLES_DIR / f"{p.name}.toml"):
        if p.parent.name in ("examples", "") and cand.exists():
            return cand
    raise _native.ScenarioError(f"{path}: no such scenario file (embedded examples: {', '.join(examples())})")


def examples() -> list[str]:
    return sorted(p.stem for p in EXAMPLES_DIR.glob("*.toml"))


def _set_path(d: dict, dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    cur: Any = d
    for i, part in enumerate(parts[:-1]):
        nxt = parts[i + 1]
        if isinstance(cur, list):
            cur = cur[int(part)]
            continue
        if part not in cur:
            cur[part] = [] if nxt.isdigit() else {}
        cur = cur[part]
    last = parts[-1]
    if isinstance(cur, list):
        cur[int(last)] = value
    else:
        cur[last] = value


def parse_value(text: str) -> Any:
    """A command-line value as TOML would read it (numbers, booleans, strings)."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


@dataclass
class Scenario:
    """Scenario text plus where it came from (relative trace paths resolve next to `file`)."""

    text: str
    file: Optional[str] = None

    @classmethod
    def load(cls, path: Union[str, Path]) -> "Scenario":
        p = resolve_scenario_path(path)
        return cls(p.read_text(), str(p))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], file: Optional[str] = None) -> "Scenario":
        return cls(tomli_w.dumps(dict(d)), file)

    def to_dict(self) -> dict:
        return tomllib.loads(self.text)

    def with_overrides(self, overrides: Mapping[str, Any]) -> "Scenario":
        """A copy with dotted keys set, e.g. ``{"flows.0.window": 5, "seed": 3}``."""
        if not overrides:
            return self
        d = self.to_dict()
        for k, v in overrides.items():
            try:
                _set_path(d, k, v)
            except (IndexError, ValueError, KeyError, TypeError) as e:
                raise _native.ScenarioError(f"{self.file or '<scenario>'}: field `{k}`: cannot set ({e})") from None
        return Scenario.from_dict(d, self.file)

    def validate(self) -> dict:
        return _native.validate_scenario(self.text, self.file, trace_search_path())


ScenarioLike = Union[Scenario, str, Path, Mapping[str, Any]]


def as_scenario(s: ScenarioLike) -> Scenario:
    if isinstance(s, Scenario):
        return s
    if isinstance(s, Mapping):
        return Scenario.from_dict(s)
    if isinstance(s, Path) or (isinstance(s, str) and "\n" not in s and (s.endswith(".toml") or Path(s).exists() or "=" not in s)):
        return Scenario.load(s)
    return Scenario(str(s))


def _load_class(spec: str, origin: Optional[str]) -> Callable[..., Any]:
    mod_name, _, cls_name = spec.rpartition(":")
    if not mod_name or not cls_name:
        raise ValueError(f"`class` must look like 'module:Class' or 'file.py:Class', got {spec!r}")
    if mod_name.endswith(".py"):
        path = Path(mod_name)
        if not path.is_absolute() and origin:
            path = Path(origin).parent / path
        sp = importlib.util.spec_from_file_location(path.stem, path)
        if sp is None or sp.loader is None or not path.exists():
            raise ValueError(f"cannot load controller file {path}")
        mod = importlib.util.module_from_spec(sp)
        sp.loader.exec_module(mod)
    else:
        mod = importlib.import_module(mod_name)
    try:
        return getattr(mod, cls_name)
    except AttributeError:
        raise ValueError(f"{mod_name} has no class {cls_name!r}") from None


@dataclass
class Result:
    """The results of one run: ``summary`` (dict), ``flows``, ``timeseries``, ``packets`` (pandas)."""

    summary: dict
    flows: pd.DataFrame
    timeseries: pd.DataFrame
    packets: Optional[pd.DataFrame]
    scenario: dict
    #: Every change of every flow's window (time_ms, flow, cwnd), when run with ``cwnd=True``.
    cwnd: Optional[pd.DataFrame] = None
    #: (delay, window) training samples recorded by controllers (e.g. Verus with ``record = "epoch"``):
    #: columns user (flow), t_ms, d_ms, w, as ``ccscope.models.markov`` reads them.
    samples: Optional[pd.DataFrame] = None
    scenario_text: str = ""
    extra: dict = field(default_factory=dict)

    @classmethod
    def _from_native(cls, d: dict, text: str) -> "Result":
        ts = pd.DataFrame({k: np.frombuffer(v, dtype="<f8") for k, v in d["timeseries"].items()})
        ts["flow"] = ts["flow"].astype("int32")
        pk = None
        if d["packets"] is not None:
            p = d["packets"]
            pk = pd.DataFrame(
                {
                    "time_ms": np.frombuffer(p["time_ns"], dtype="<u8") / 1e6,
                    "event": pd.Categorical.from_codes(
                        np.frombuffer(p["event"], dtype="u1").astype("int8"), ["opportunity", "arrival", "departure", "drop"]
                    ),
                    "flow": np.frombuffer(p["flow"], dtype="<i4"),
                    "seq": np.frombuffer(p["seq"], dtype="<u8"),
                    "bytes": np.frombuffer(p["bytes"], dtype="<u4"),
                    "delay_ms": np.frombuffer(p["delay_ms"], dtype="<u8"),
                }
            )
        cw = None
        if len(d["cwnd"]["time_ns"]):
            cw = pd.DataFrame(
                {
                    "time_ms": np.frombuffer(d["cwnd"]["time_ns"], dtype="<u8") / 1e6,
                    "flow": np.frombuffer(d["cwnd"]["flow"], dtype="<u4").astype("int32"),
                    "cwnd": np.frombuffer(d["cwnd"]["cwnd"], dtype="<u4"),
                }
            )
        sm = None
        if len(d["samples"]["t_ns"]):
            s = d["samples"]
            sm = pd.DataFrame(
                {
                    "user": np.frombuffer(s["user"], dtype="<u4").astype("int64"),
                    "t_ms": np.frombuffer(s["t_ns"], dtype="<u8") / 1e6,
                    "d_ms": np.frombuffer(s["d_ms"], dtype="<u4").astype("int64"),
                    "w": np.frombuffer(s["w"], dtype="<u4").astype("int64"),
                }
            )
        return cls(d["summary"], pd.DataFrame(d["flows"]), ts, pk, d["scenario"], cw, sm, text)

    def save(self, out: Union[str, Path], log_path: Optional[Path] = None) -> Path:
        """Write the results folder atomically: it appears complete or not at all."""
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
        try:
            meta = {"summary": self.summary, "scenario": self.scenario, "flows": self.flows.to_dict(orient="records")}
            (tmp / "summary.json").write_text(json.dumps(meta, indent=2, default=_json_default) + "\n")
            self.flows.to_parquet(tmp / "flows.parquet", index=False)
            self.timeseries.to_parquet(tmp / "timeseries.parquet", index=False)
            if self.packets is not None:
                self.packets.to_parquet(tmp / "packets.parquet", index=False)
            if self.cwnd is not None:
                self.cwnd.to_parquet(tmp / "cwnd.parquet", index=False)
            if self.samples is not None:
                self.samples.to_parquet(tmp / "samples.parquet", index=False)
            if log_path is not None and log_path.exists():
                shutil.move(str(log_path), tmp / "link.log")
            (tmp / "scenario.toml").write_text(self.scenario_text)
            if out.exists():
                old = out.with_name(f".{out.name}.old")
                shutil.rmtree(old, ignore_errors=True)
                os.replace(out, old)
                os.replace(tmp, out)
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(tmp, out)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return out


def _json_default(o: Any) -> Any:
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return None if np.isnan(o) else float(o)
    raise TypeError(type(o))


def load_result(path: Union[str, Path]) -> Result:
    """Read a results folder written by :meth:`Result.save`."""
    path = Path(path)
    meta = json.loads((path / "summary.json").read_text())
    pk = path / "packets.parquet"
    cw = path / "cwnd.parquet"
    sm = path / "samples.parquet"
    return Result(
        meta["summary"],
        pd.read_parquet(path / "flows.parquet"),
        pd.read_parquet(path / "timeseries.parquet"),
        pd.read_parquet(pk) if pk.exists() else None,
        meta["scenario"],
        pd.read_parquet(cw) if cw.exists() else None,
        pd.read_parquet(sm) if sm.exists() else None,
        (path / "scenario.toml").read_text() if (path / "scenario.toml").exists() else "",
    )


def run(
    scenario: ScenarioLike,
    *,
    seed: Optional[int] = None,
    overrides: Optional[Mapping[str, Any]] = None,
    packets: bool = False,
    log_path: Optional[Union[str, Path]] = None,
    controllers: Optional[Mapping[int, Any]] = None,
    cwnd: bool = False,
) -> Result:
    """Run a scenario (path, TOML text, dict or :class:`Scenario`) and return its :class:`Result`.

    ``controllers`` maps a flow index to a Python controller object (or a zero-argument factory) for
    flows whose scenario says ``controller = "python"``.
    """
    sc = as_scenario(scenario).with_overrides(overrides or {})
    if packets:
        sc = sc.with_overrides({"packet_log": True})
    if cwnd:
        sc = sc.with_overrides({"cwnd_log": True})

    def factory(index: int, params: dict) -> Any:
        if controllers and index in controllers:
            obj = controllers[index]
            return obj() if callable(obj) and isinstance(obj, type) else obj
        spec = params.pop("class", None)
        if spec is None:
            raise ValueError("a `python` controller needs `class = \"module:Class\"` (or pass controllers= to ccscope.run)")
        return _load_class(spec, sc.file)(**params)

    d = _native.run_scenario(
        sc.text, sc.file, trace_search_path(), factory, str(log_path) if log_path else None, seed
    )
    return Result._from_native(d, sc.text)


def validate(scenario: ScenarioLike) -> dict:
    """Check a scenario without running it; raises :class:`ScenarioError` with file, line and field."""
    return as_scenario(scenario).validate()


def controllers() -> list[dict]:
    """The built-in controllers: name, summary and (name, default, unit, doc) for each parameter."""
    return _native.controllers()
