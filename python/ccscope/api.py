"""The Python API: load scenarios, run them, get pandas results, save them atomically."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Union

from ccscope import _native

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# numpy, pandas, pyarrow and tomli_w are imported where they are used, so that `import ccscope` and
# `ccscope run` do not pay for them (pandas alone is about half a second of start-up).
if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

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


#: The most a scenario file is read (64 MiB; a scenario is a few kB): /dev/zero was read until memory ran out.
MAX_SCENARIO_BYTES = 1 << 26


def read_text_file(p: Path) -> str:
    """A UTF-8 text file's contents; a ScenarioError naming the file (and line) when it cannot be read."""
    try:
        with p.open("rb") as f:
            raw = f.read(MAX_SCENARIO_BYTES + 1)
    except IsADirectoryError:
        raise _native.ScenarioError(f"{p}: is a folder, not a scenario file") from None
    except OSError as e:
        raise _native.ScenarioError(f"{p}: cannot read ({e.strerror or e})") from None
    if len(raw) > MAX_SCENARIO_BYTES:
        raise _native.ScenarioError(f"{p}: more than {MAX_SCENARIO_BYTES} bytes, the most a scenario file may be")
    try:
        # A leading byte-order mark (Windows editors write one) is not part of the text: TOML parsers disagree on it.
        return raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise _native.ScenarioError(
            f"{p}:{line}: not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start})") from None


def examples() -> list[str]:
    return sorted(p.stem for p in EXAMPLES_DIR.glob("*.toml"))


def one_line(text: str) -> str:
    """`text` as the loader's errors quote user text, by the loader's own rule: control characters and line
    separators escaped (`\\n`, `\\u{c}`, `\\u{2028}`), so the error stays one line; a character that is not
    UTF-8 (a surrogate standing for an undecodable byte) as `\\udcXX`."""
    return _native.one_line(text.encode("utf-8", "backslashreplace").decode("utf-8"))


def _index(part: str) -> int:
    """A dotted key's list index: 0, 1, ... (Python's negative indices would pick a flow from the end)."""
    if not part.isdigit():
        raise ValueError(f"`{part}` is not a list index (0, 1, ...)")
    return int(part)


def _set_path(d: dict, dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    cur: Any = d
    for i, part in enumerate(parts[:-1]):
        nxt = parts[i + 1]
        if isinstance(cur, list):
            cur = cur[_index(part)]
            continue
        if part not in cur:
            cur[part] = [] if nxt.isdigit() else {}
        cur = cur[part]
    last = parts[-1]
    if isinstance(cur, list):
        cur[_index(last)] = value
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
    #: Dotted keys set by `with_overrides`: an error in one names the override, not a line.
    overridden: tuple = ()
    #: The file as written, when `text` is it rewritten with overrides: other errors name its lines.
    written: Optional[str] = None

    @classmethod
    def load(cls, path: Union[str, Path]) -> "Scenario":
        p = resolve_scenario_path(path)
        try:
            str(p).encode("utf-8")  # the loader names the file in UTF-8; a byte the shell passed undecoded is not
        except UnicodeEncodeError:
            shown = str(p).encode("utf-8", "backslashreplace").decode("utf-8")
            raise _native.ScenarioError(one_line(f"{shown}: the file name is not UTF-8 text; rename the file")) from None
        return cls(read_text_file(p), str(p))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], file: Optional[str] = None) -> "Scenario":
        import tomli_w

        return cls(tomli_w.dumps(dict(d)), file)

    def to_dict(self) -> dict:
        try:
            return tomllib.loads(self.text)
        except tomllib.TOMLDecodeError as e:
            # The loader's message (file:line: ...), as the same run without overrides gives; else Python's, named.
            self.validate()
            raise _native.ScenarioError(f"{self.file or '<scenario>'}: {e}") from None

    def with_overrides(self, overrides: Mapping[str, Any]) -> "Scenario":
        """A copy with dotted keys set, e.g. ``{"flows.0.window": 5, "seed": 3}``."""
        if not overrides:
            return self
        import tomli_w

        d = self.to_dict()
        for k, v in overrides.items():
            if not isinstance(k, str):
                raise _native.ScenarioError(one_line(
                    f"{self.file or '<scenario>'}: override `{k!r}`: a key must be a dotted name, not {type(k).__name__}"))
            try:
                # Text is UTF-8 (a byte the shell passed undecoded is a lone surrogate; the loader named nothing).
                (k + tomli_w.dumps({"v": v})).encode("utf-8")
            except UnicodeEncodeError:
                shown = k.encode("utf-8", "backslashreplace").decode("utf-8")
                raise _native.ScenarioError(one_line(f"{self.file or '<scenario>'}: override `{shown}`: not UTF-8 text")) from None
            except (TypeError, ValueError) as e:  # None (TOML has no null), objects TOML cannot write
                raise _native.ScenarioError(one_line(f"{self.file or '<scenario>'}: override `{k}`: {e}")) from None
            if any(not part.strip() for part in k.split(".")):
                # `--set =3` set the key `` and was refused at a line of the file, not as the override.
                raise _native.ScenarioError(one_line(
                    f"{self.file or '<scenario>'}: override `{k}`: an empty part in the key (expected a dotted name, "
                    "e.g. flows.0.window)"))
            big = _beyond_toml_integer(v)
            if big is not None:
                raise _native.ScenarioError(one_line(
                    f"{self.file or '<scenario>'}: override `{k}`: {big} is outside the range of a TOML integer"))
            try:
                _set_path(d, k, v)
            except (IndexError, ValueError, KeyError, TypeError) as e:
                raise _native.ScenarioError(one_line(f"{self.file or '<scenario>'}: override `{k}`: cannot set ({e})")) from None
        out = Scenario.from_dict(d, self.file)
        out.overridden = tuple(self.overridden) + tuple(k for k in overrides if k not in self.overridden)
        out.written = self.text if self.written is None else self.written
        return out

    def validate(self) -> dict:
        return _native.validate_scenario(self.text, self.file, trace_search_path(), list(self.overridden), self.written)


def _beyond_toml_integer(v: Any) -> Optional[int]:
    """The first integer in `v` (or in its tables and arrays) that a TOML integer (i64) cannot hold: the
    loader's parser would refuse it at a line of the rewritten file, not the override."""
    if isinstance(v, int) and not isinstance(v, bool):
        return None if -(2**63) <= v < 2**63 else v
    items = v.values() if isinstance(v, Mapping) else v if isinstance(v, (list, tuple)) else ()
    for x in items:
        big = _beyond_toml_integer(x)
        if big is not None:
            return big
    return None


ScenarioLike = Union[Scenario, str, Path, Mapping[str, Any]]


def as_scenario(s: ScenarioLike) -> Scenario:
    if isinstance(s, Scenario):
        return s
    if isinstance(s, Mapping):
        return Scenario.from_dict(s)
    if not isinstance(s, (str, os.PathLike)):
        raise TypeError(f"scenario: expected a path, TOML text, a mapping or a Scenario, got {type(s).__name__}")
    if isinstance(s, str) and not s.strip():  # Path("") is the current folder
        raise _native.ScenarioError("<scenario>: empty: give a scenario file, its TOML text or a dict")
    if isinstance(s, os.PathLike):
        s = Path(s)
    if isinstance(s, Path) or (isinstance(s, str) and "\n" not in s and (s.endswith(".toml") or Path(s).exists() or "=" not in s)):
        return Scenario.load(s)
    return Scenario(str(s))


def _load_class(spec: str, origin: Optional[str]) -> Callable[..., Any]:
    """The class a ``class = "module:Class"`` or ``"file.py:Class"`` names. A file or module that is
    not there, or a missing class, is a ControllerError; an exception raised by the module's own
    code while it is imported keeps its type."""
    mod_name, _, cls_name = spec.rpartition(":")
    if not mod_name or not cls_name:
        raise _native.ControllerError(f"`class` must look like 'module:Class' or 'file.py:Class', got {spec!r}")
    if mod_name.endswith(".py"):
        path = Path(mod_name)
        if not path.is_absolute() and origin:
            path = Path(origin).parent / path
        sp = importlib.util.spec_from_file_location(path.stem, path)
        if sp is None or sp.loader is None or not path.is_file():
            raise _native.ControllerError(f"controller file {path} not found")
        mod = importlib.util.module_from_spec(sp)
        sp.loader.exec_module(mod)
    else:
        try:
            mod = importlib.import_module(mod_name)
        except ModuleNotFoundError as e:
            if e.name is None or not mod_name.startswith(e.name):
                raise  # the module exists but imports something missing: the user's own error
            raise _native.ControllerError(f"no module named {mod_name!r} (is it on PYTHONPATH?)") from None
    cls = getattr(mod, cls_name, None)
    if cls is None:
        raise _native.ControllerError(f"{mod_name} has no class {cls_name!r}")
    if not callable(cls):
        raise _native.ControllerError(f"{mod_name}:{cls_name} is not a class")
    return cls


def _construct(cls: Callable[..., Any], params: dict, index: int) -> Any:
    """``cls(**params)``; a keyword the constructor does not take is a ControllerError naming it."""
    try:
        return cls(**params)
    except TypeError as e:
        tb = e.__traceback__
        if tb is not None and tb.tb_next is None:  # raised by the call itself: the arguments do not fit
            given = ", ".join(f"{k}=" for k in params) or "no keywords"
            raise _native.ControllerError(f"{getattr(cls, '__name__', cls)}({given}): {e}") from None
        _tag_class(e, cls)
        raise
    except Exception as e:
        _tag_class(e, cls)
        raise


def _tag_class(e: BaseException, cls: Any) -> None:
    try:
        e.ccscope_controller = getattr(cls, "__name__", str(cls))  # type: ignore[attr-defined]
    except AttributeError:  # pragma: no cover - an exception type with __slots__
        pass


def _class_line(text: str, spec: str) -> Optional[int]:
    """The line of a scenario that names `spec` (for errors found in Python, not by the loader)."""
    for n, line in enumerate(text.splitlines(), 1):
        if spec in line and "class" in line:
            return n
    return None


def check_python_classes(sc: "Scenario") -> dict:
    """Import the class of every ``controller = "python"`` flow that names one; a missing file,
    module or class is a ControllerError naming the scenario, line and field. Returns
    ``{class spec: class}``."""
    if '"python"' not in sc.text and "'python'" not in sc.text:
        return {}
    classes: dict = {}
    flows = sc.to_dict().get("flows", [])
    for i, flow in enumerate(flows if isinstance(flows, list) else []):
        spec = flow.get("class") if isinstance(flow, dict) and flow.get("controller") == "python" else None
        if not isinstance(spec, str) or spec in classes:
            continue
        try:
            classes[spec] = _load_class(spec, sc.file)
        except _native.ScenarioError as e:
            line = _class_line(sc.text, spec)
            where = f"{sc.file or '<scenario>'}{f':{line}' if line else ''}"
            raise _native.ControllerError(f"{where}: field `flows[{i}].class`: {e}") from None
        except Exception as e:  # the module's own code failed while imported: keep its type
            from ccscope.provenance import controller_source

            src = controller_source(spec, sc.file)
            for k, v in (("ccscope_flow", i), ("ccscope_controller", spec.rpartition(":")[2]),
                         ("ccscope_event", "import"), ("ccscope_scenario", sc.file),
                         ("ccscope_source", src.resolve() if src else None)):
                setattr(e, k, v)
            raise
    return classes


PACKET_EVENTS = ["opportunity", "arrival", "departure", "drop"]


def _timeseries_columns(d: dict) -> dict:
    import numpy as np

    cols = {k: np.frombuffer(v, dtype="<f8") for k, v in d["timeseries"].items()}
    cols["flow"] = cols["flow"].astype("int32")
    return cols


def _packets_columns(d: dict) -> Optional[dict]:
    """Packet-log columns, with `event` as int8 codes into PACKET_EVENTS."""
    import numpy as np

    p = d["packets"]
    if p is None:
        return None
    return {
        "time_ms": np.frombuffer(p["time_ns"], dtype="<u8") / 1e6,
        "event": np.frombuffer(p["event"], dtype="u1").astype("int8"),
        "flow": np.frombuffer(p["flow"], dtype="<i4"),
        "seq": np.frombuffer(p["seq"], dtype="<u8"),
        "bytes": np.frombuffer(p["bytes"], dtype="<u4"),
        "delay_ms": np.frombuffer(p["delay_ms"], dtype="<u8"),
    }


def _cwnd_columns(d: dict) -> Optional[dict]:
    import numpy as np

    c = d["cwnd"]
    if not len(c["time_ns"]):
        return None
    return {
        "time_ms": np.frombuffer(c["time_ns"], dtype="<u8") / 1e6,
        "flow": np.frombuffer(c["flow"], dtype="<u4").astype("int32"),
        "cwnd": np.frombuffer(c["cwnd"], dtype="<u4"),
    }


def _samples_columns(d: dict) -> Optional[dict]:
    import numpy as np

    s = d["samples"]
    if not len(s["t_ns"]):
        return None
    return {
        "user": np.frombuffer(s["user"], dtype="<u4").astype("int64"),
        "t_ms": np.frombuffer(s["t_ns"], dtype="<u8") / 1e6,
        "d_ms": np.frombuffer(s["d_ms"], dtype="<u4").astype("int64"),
        "w": np.frombuffer(s["w"], dtype="<u4").astype("int64"),
    }


def flow_records(rows: list) -> list:
    """Per-flow summary dicts as ``pd.DataFrame(rows).to_dict(orient="records")`` gives them, without
    pandas (as pandas 3 builds them): every row gets every key (first-seen order); a missing value
    is NaN, as is None among text; a column of numbers with a gap or a float is float."""
    keys: dict = {}
    for r in rows:
        keys.update(dict.fromkeys(r))
    nan = float("nan")
    out: list = [{} for _ in rows]
    for k in keys:
        vals = [r.get(k, nan) for r in rows]
        present = [v for v in vals if v is not None and v == v]
        numeric = bool(present) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present)
        # pandas stores such a column as float64 when a value is missing or any value is a float.
        as_float = numeric and (len(present) < len(vals) or any(isinstance(v, float) for v in present))
        # pandas >= 3 stores text as `str`, whose missing value is NaN (None too).
        as_str = bool(present) and all(isinstance(v, str) for v in present)
        for o, v in zip(out, vals):
            if as_str and v is None:
                o[k] = nan
            elif as_float:
                o[k] = nan if v is None or v != v else float(v)
            else:
                o[k] = v
    return out


def _arrow_column(values: Any) -> Any:
    """A pyarrow array from a numpy array or a list of records' values. Built from buffers: `pa.array`
    imports pandas to check for pandas inputs. Missing values (None, NaN) become nulls, as
    `DataFrame.to_parquet` writes them."""
    import numpy as np
    import pyarrow as pa

    if isinstance(values, np.ndarray):
        kind = {"f8": pa.float64(), "i4": pa.int32(), "i8": pa.int64(), "u4": pa.uint32(), "u8": pa.uint64(), "i1": pa.int8()}
        return pa.Array.from_buffers(kind[values.dtype.str[1:]], len(values), [None, pa.py_buffer(np.ascontiguousarray(values))])
    n = len(values)
    valid = np.array([v is not None and v == v for v in values], dtype=bool)
    bitmap = None if valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little"))
    present = [v for v, ok in zip(values, valid) if ok]
    if not present:
        return pa.nulls(n)
    if all(isinstance(v, str) for v in present):
        raw = [v.encode() if ok else b"" for v, ok in zip(values, valid)]
        offsets = np.zeros(n + 1, dtype="<i4")
        np.cumsum([len(b) for b in raw], out=offsets[1:])
        return pa.Array.from_buffers(pa.string(), n, [bitmap, pa.py_buffer(offsets), pa.py_buffer(b"".join(raw))])
    if all(isinstance(v, bool) for v in present):
        bits = np.packbits(np.array([bool(v) if ok else False for v, ok in zip(values, valid)]), bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), n, [bitmap, pa.py_buffer(bits)])
    if all(isinstance(v, int) for v in present) and bitmap is None:
        return pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(np.array(values, dtype="<i8"))])
    data = np.array([float(v) if ok else 0.0 for v, ok in zip(values, valid)], dtype="<f8")
    return pa.Array.from_buffers(pa.float64(), n, [bitmap, pa.py_buffer(data)])


def _arrow_table(cols: Mapping[str, Any]) -> Any:
    import pyarrow as pa

    return pa.Table.from_arrays([_arrow_column(v) for v in cols.values()], names=list(cols))


def _frame_property(name: str, doc: str) -> property:
    def get(self: "Result") -> Any:
        if name not in self._frames:
            self._frames[name] = self._build(name)
        return self._frames[name]

    def put(self: "Result", value: Any) -> None:
        self._frames[name] = value

    return property(get, put, doc=doc)


class Result:
    """The results of one run: ``summary`` (dict), ``flows``, ``timeseries``, ``packets`` (pandas).

    A result from :func:`run` builds its DataFrames on first access, so a run that only saves its
    folder or reads ``summary`` never imports pandas.
    """

    flows = _frame_property("flows", "Per-flow summary, one row per flow.")
    timeseries = _frame_property("timeseries", "One row per (flow, bin); flow -1 is the whole link.")
    packets = _frame_property("packets", "The per-packet log, when run with ``packets=True``.")
    links = _frame_property("links", "Per-link counters: arrivals, departures, drops, utilisation, queueing delay.")
    paths = _frame_property(
        "paths",
        "Per (flow, path) counters: data sent, delivered, dropped; ACKs on it; for an SCTP-CMT flow also "
        "retransmissions, fast_retransmits, timeouts and mean_cwnd_bytes (NaN/None for other transports).",
    )
    #: Every change of every flow's window (time_ms, flow, cwnd), when run with ``cwnd=True``.
    cwnd = _frame_property("cwnd", "Every change of every flow's window (time_ms, flow, cwnd), with ``cwnd=True``.")
    #: (delay, window) training samples recorded by controllers (e.g. Verus with ``record = "epoch"``):
    #: columns user (flow), t_ms, d_ms, w, as ``ccscope.models.markov`` reads them.
    samples = _frame_property(
        "samples", "(delay, window) samples recorded by controllers: user (flow), t_ms, d_ms, w."
    )

    def __init__(
        self,
        summary: dict,
        flows: "pd.DataFrame",
        timeseries: "pd.DataFrame",
        packets: "Optional[pd.DataFrame]",
        scenario: dict,
        cwnd: "Optional[pd.DataFrame]" = None,
        samples: "Optional[pd.DataFrame]" = None,
        scenario_text: str = "",
        extra: Optional[dict] = None,
    ) -> None:
        self.summary = summary
        self.scenario = scenario
        self.scenario_text = scenario_text
        self.extra = {} if extra is None else extra
        self._native: Optional[dict] = None
        self._provenance: Optional[dict] = None
        self._provenance_args: Optional[tuple] = None
        self._flow_rows: Optional[list] = None
        self._frames: dict = {
            "flows": flows, "timeseries": timeseries, "packets": packets, "cwnd": cwnd, "samples": samples
        }
        for name in ("links", "paths"):
            if name in self.extra:
                self._frames[name] = self.extra.pop(name)

    def __repr__(self) -> str:
        return f"Result(scenario={self.scenario.get('name')!r}, summary={len(self.summary)} fields)"

    @classmethod
    def _from_native(cls, d: dict, text: str) -> "Result":
        r = cls(d["summary"], None, None, None, d["scenario"], scenario_text=text)
        r._native = d
        r._frames = {}
        return r

    def _build(self, name: str) -> Any:
        import pandas as pd

        d = self._native
        assert d is not None
        if name in ("flows", "links", "paths"):
            return pd.DataFrame(d.get(name, []))
        if name == "timeseries":
            return pd.DataFrame(_timeseries_columns(d))
        cols = {"packets": _packets_columns, "cwnd": _cwnd_columns, "samples": _samples_columns}[name](d)
        if cols is None:
            return None
        if name == "packets":
            cols["event"] = pd.Categorical.from_codes(cols["event"], PACKET_EVENTS)
        return pd.DataFrame(cols)

    def _untouched(self) -> bool:
        """True while no DataFrame was built or assigned: the native columns are the whole result."""
        return self._native is not None and not self._frames

    def _records(self, name: str) -> list:
        """``links`` or ``paths`` as a list of dicts."""
        if name not in self._frames and self._native is not None:
            return list(self._native.get(name, []))
        frame = getattr(self, name)
        return [] if frame is None else frame.to_dict(orient="records")

    def flow_records(self) -> list:
        """``flows`` as a list of dicts (what ``flows.to_dict(orient="records")`` gives)."""
        if self._untouched():
            # Each caller gets its own dicts of the records built once.
            return [dict(r) for r in self._native_flow_records()]
        return self.flows.to_dict(orient="records")

    def _native_flow_records(self) -> list:
        """The per-flow records of the native result, built once (a run of 10^5 flows took seconds per
        build, and a run's output reads them four times); shared: the writers only read them."""
        if self._flow_rows is None:
            self._flow_rows = flow_records(self._native["flows"])  # type: ignore[index]
        return self._flow_rows

    def _write_tables(self, tmp: Path) -> None:
        """The parquet files straight from the native columns: small tables through ccscope's own
        writer (no pyarrow or numpy to import), large ones through pyarrow (compressed)."""
        d = self._native
        assert d is not None
        records = self._native_flow_records()
        keys = list(records[0]) if records else []
        flows = {k: [r[k] for r in records] for k in keys}
        series = d["timeseries"]
        rows = len(series["flow"]) // 8 if "flow" in series else 0
        if rows * max(len(series), 1) + len(records) * len(keys) <= SMALL_TABLE_VALUES:
            from ccscope import parquet

            parquet.write(tmp / "flows.parquet", {k: parquet.column_of(v) for k, v in flows.items()})
            cols = {k: parquet.doubles(v) for k, v in series.items()}
            if "flow" in cols:
                cols["flow"] = parquet.int32s([int(x) for x in memoryview(series["flow"]).cast("d")])
            parquet.write(tmp / "timeseries.parquet", cols)
        else:
            import pyarrow.parquet as pq

            pq.write_table(_arrow_table(flows), tmp / "flows.parquet")
            pq.write_table(_arrow_table(_timeseries_columns(d)), tmp / "timeseries.parquet")
        if d["packets"] is None and not len(d["cwnd"]["time_ns"]) and not len(d["samples"]["t_ns"]):
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        pk = _packets_columns(d)
        if pk is not None:
            names = _arrow_column(PACKET_EVENTS)
            events = pa.DictionaryArray.from_arrays(_arrow_column(pk.pop("event")), names)
            table = _arrow_table(pk)
            pq.write_table(table.add_column(1, "event", events), tmp / "packets.parquet")
        for name, cols in (("cwnd", _cwnd_columns(d)), ("samples", _samples_columns(d))):
            if cols is not None:
                pq.write_table(_arrow_table(cols), tmp / f"{name}.parquet")

    def provenance(self) -> Optional[dict]:
        """What reproduces this run (written to ``provenance.json``): ccscope's build, the seed, the
        overrides and the content hash of every input file (:func:`ccscope.provenance.record`)."""
        if self._provenance is None and self._provenance_args is not None:
            from ccscope import provenance

            sc, seed, applied, classes = self._provenance_args
            sources = [p for p in (provenance.object_source(c) for c in classes) if p is not None]
            self._provenance = {**provenance.record(sc, seed, applied, tuple(sources)), "scenario": "scenario.toml"}
        return self._provenance

    def write_into(self, folder: Path, log_path: Optional[Path] = None) -> None:
        """Write the results files into `folder` (not atomically: :meth:`save` stages them)."""
        folder = Path(folder)
        flows = self._native_flow_records() if self._untouched() else self.flow_records()
        meta = {"summary": self.summary, "scenario": self.scenario, "flows": flows,
                "links": self._records("links"), "paths": self._records("paths")}
        (folder / "summary.json").write_text(json.dumps(meta, indent=2, default=_json_default) + "\n")
        if self._untouched():
            self._write_tables(folder)
        else:
            self.flows.to_parquet(folder / "flows.parquet", index=False)
            self.timeseries.to_parquet(folder / "timeseries.parquet", index=False)
            for name in ("packets", "cwnd", "samples"):
                frame = getattr(self, name)
                if frame is not None:
                    frame.to_parquet(folder / f"{name}.parquet", index=False)
        if log_path is not None and Path(log_path).exists() and Path(log_path) != folder / "link.log":
            shutil.move(str(log_path), folder / "link.log")
        (folder / "scenario.toml").write_text(self.scenario_text)
        prov = self.provenance()
        if prov is not None:
            (folder / "provenance.json").write_text(json.dumps(prov, indent=2, default=str) + "\n")

    def save(self, out: Union[str, Path], log_path: Optional[Path] = None, *, overwrite: bool = False) -> Path:
        """Write the results folder through :class:`ccscope.store.FolderWriter`: atomically, replacing
        only files ccscope wrote there. A folder that is not a results folder and not empty is refused
        (:class:`ccscope.store.OutputError`) unless ``overwrite``, which adds the results beside the
        files there (and still refuses to replace any of them). The error names the argument: ``out PATH: ...``."""
        from ccscope import store

        with store.FolderWriter(out, overwrite=overwrite, names=RESULT_FILES, option="out", not_of=OTHER_RESULTS,
                                own="summary.json") as w:
            self.write_into(w.stage, log_path)
        return Path(out)


#: Every file a results folder may hold besides its manifest (figures are added by ``ccscope plot``).
#: Up to this many values (rows x columns, flows and time series together) a run's tables are written by
#: :mod:`ccscope.parquet` (uncompressed, no imports); above, by pyarrow with its compression.
SMALL_TABLE_VALUES = 1 << 18

RESULT_FILES = ("summary.json", "provenance.json", "scenario.toml", "flows.parquet", "timeseries.parquet",
                "packets.parquet", "cwnd.parquet", "samples.parquet", "link.log")
#: The record of a results folder of another kind (a comparison's): a run is not written into one.
OTHER_RESULTS = ("compare.json",)


def _json_default(o: Any) -> Any:
    import numpy as np

    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return None if np.isnan(o) else float(o)
    raise TypeError(type(o))


def load_result(path: Union[str, Path]) -> Result:
    """Read a results folder written by :meth:`Result.save` (finishing a write a kill interrupted).

    A folder that is not a results folder, or a file in it that cannot be read, is a
    :class:`ccscope.store.ResultsFolderError` naming the file.
    """
    from ccscope import store

    path = Path(path)
    if not path.is_dir():
        raise store.ResultsFolderError(f"{path}: not a results folder ({'a file' if path.exists() else 'no such folder'})")
    with store.reading(path):
        for name in ("summary.json", "flows.parquet", "timeseries.parquet"):
            if not (path / name).is_file():
                raise store.ResultsFolderError(f"{path}: not a results folder (no {name})")
        try:
            meta = json.loads((path / "summary.json").read_text(encoding="utf-8"))
            meta["summary"], meta["scenario"]
        except (ValueError, KeyError, TypeError) as e:
            raise store.ResultsFolderError(f"{path / 'summary.json'}: not a ccscope summary ({e})") from None
        frames = {name: _read_parquet(path / f"{name}.parquet")
                  for name in ("flows", "timeseries", "packets", "cwnd", "samples")}
        text = (path / "scenario.toml").read_text(encoding="utf-8", errors="replace") if (path / "scenario.toml").exists() else ""
        prov = None
        if (path / "provenance.json").is_file():
            try:
                prov = json.loads((path / "provenance.json").read_text(encoding="utf-8"))
            except ValueError as e:
                raise store.ResultsFolderError(f"{path / 'provenance.json'}: not JSON ({e})") from None
    import pandas as pd

    r = Result(
        meta["summary"], frames["flows"], frames["timeseries"], frames["packets"], meta["scenario"],
        frames["cwnd"], frames["samples"], text,
        extra={name: pd.DataFrame(meta.get(name, [])) for name in ("links", "paths")},
    )
    r._provenance = prov
    return r


def _read_parquet(p: Path) -> "Optional[pd.DataFrame]":
    """A Parquet file as a DataFrame, None when absent; a file pyarrow cannot read is an error naming it."""
    if not p.exists():
        return None
    import pandas as pd
    import pyarrow as pa

    from ccscope import store

    try:
        return pd.read_parquet(p)
    except (OSError, ValueError, pa.ArrowException) as e:
        detail = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise store.ResultsFolderError(f"{p}: not a readable Parquet file ({detail})") from None


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
    flows whose scenario says ``controller = "python"``; any other index is a ControllerError.

    An exception raised by a Python controller propagates with its type and traceback, tagged with
    ``ccscope_flow``, ``ccscope_controller``, ``ccscope_event`` and ``ccscope_time_ms`` (see
    :func:`controller_error_line`).
    """
    applied: dict = dict(overrides or {})
    if seed is not None:
        applied["seed"] = seed  # recorded in the effective scenario, so a rerun of it is this run
    if packets:
        applied["packet_log"] = True
    if cwnd:
        applied["cwnd_log"] = True
    sc = as_scenario(scenario).with_overrides(applied)
    if controllers:
        _check_controllers(sc, controllers)
    loaded = check_python_classes(sc)
    classes: dict[int, Any] = {}

    def factory(index: int, params: dict) -> Any:
        if controllers and index in controllers:
            obj = controllers[index]
            # A class or a zero-argument factory is called; a controller object (it has on_ack) is used as is.
            made = obj() if isinstance(obj, type) or (callable(obj) and not hasattr(obj, "on_ack")) else obj
        else:
            spec = params.pop("class", None)
            if spec is None:
                raise _native.ControllerError(
                    "a `python` controller needs `class = \"module:Class\"` (or pass controllers= to ccscope.run)")
            made = _construct(loaded[spec] if spec in loaded else _load_class(spec, sc.file), params, index)
        classes[index] = type(made)
        return made

    try:
        d = _native.run_scenario(
            # The seed travels as an override, so the loader checks it and names it.
            sc.text, sc.file, trace_search_path(), factory, str(log_path) if log_path else None, None,
            list(sc.overridden), sc.written,
        )
    except Exception as e:
        if hasattr(e, "ccscope_flow"):
            cls = classes.get(e.ccscope_flow)  # type: ignore[attr-defined]
            if cls is not None and not hasattr(e, "ccscope_controller"):
                e.ccscope_controller = cls.__name__  # type: ignore[attr-defined]
            if cls is not None:
                from ccscope.provenance import object_source

                e.ccscope_source = object_source(cls)  # type: ignore[attr-defined]
            e.ccscope_scenario = sc.file  # type: ignore[attr-defined]
        raise
    for rec in d.get("flows", []):
        cls = classes.get(rec.get("flow"))
        if cls is not None:
            rec["controller"] = f"python:{cls.__name__}"
    if classes and isinstance(d.get("scenario", {}).get("controllers"), list):
        names = d["scenario"]["controllers"]
        for i, cls in classes.items():
            if 0 <= i < len(names):
                names[i] = f"python:{cls.__name__}"
    res = Result._from_native(d, effective_text(sc))
    res._provenance_args = (sc, seed, applied, tuple(classes.values()) if controllers else ())
    return res


def _check_controllers(sc: "Scenario", controllers: Mapping[int, Any]) -> None:
    """`controllers=` may only name flows the scenario declares with ``controller = "python"``."""
    kinds = sc.validate().get("controllers", [])
    for i in controllers:
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(kinds):
            raise _native.ControllerError(
                f"controllers[{i!r}]: the scenario has flows 0..{len(kinds) - 1}" if kinds else
                f"controllers[{i!r}]: the scenario has no flows")
        if kinds[i] != "python":
            raise _native.ControllerError(
                f"controllers[{i}]: flow {i} is `controller = \"{kinds[i]}\"`; a Python controller needs "
                "`controller = \"python\"` in the scenario")


def controller_error_line(e: BaseException) -> str:
    """One line for an exception a Python controller raised: scenario, flow, class and handler, the
    exception's type, the controller's file and line, and its message."""
    import traceback

    frames = traceback.extract_tb(e.__traceback__)
    src = getattr(e, "ccscope_source", None)
    where = None
    if isinstance(e, SyntaxError) and e.filename:
        where = f"{e.filename}:{e.lineno}"
    else:
        mine = [f for f in frames if src is not None and Path(f.filename).resolve() == Path(src)]
        pick = (mine or [f for f in frames if not f.filename.startswith(str(PACKAGE_DIR))] or frames or [None])[-1]
        if pick is not None:
            where = f"{pick.filename}:{pick.lineno}"
    cls = getattr(e, "ccscope_controller", "?")
    event = getattr(e, "ccscope_event", "?")
    t = getattr(e, "ccscope_time_ms", None)
    when = f" at t = {t:.3f} ms" if isinstance(t, float) and event != "__init__" else ""
    msg = str(e).splitlines()[0] if str(e) else ""
    head = f"{getattr(e, 'ccscope_scenario', None) or '<scenario>'}: flow {getattr(e, 'ccscope_flow', '?')} ({cls}.{event}{when})"
    return f"{head}: {type(e).__name__}{f' at {where}' if where else ''}{f': {msg}' if msg else ''}"


# Keys whose value names a file read next to the scenario (links' traces, controllers' inputs).
PATH_KEYS = ("trace", "model", "table_file")


def _absolute_inputs(node: Any, base: Path) -> bool:
    """Make relative input paths in a scenario dict that exist next to the scenario absolute."""
    changed = False
    if isinstance(node, list):
        for x in node:
            changed |= _absolute_inputs(x, base)
    elif isinstance(node, dict):
        for k, v in node.items():
            if isinstance(v, (dict, list)):
                changed |= _absolute_inputs(v, base)
            elif isinstance(v, str) and k in PATH_KEYS and not Path(v).is_absolute() and (base / v).exists():
                node[k] = str((base / v).resolve())
                changed = True
            elif isinstance(v, str) and k == "class":
                mod, sep, cls = v.rpartition(":")
                if sep and mod.endswith(".py") and not Path(mod).is_absolute() and (base / mod).is_file():
                    node[k] = f"{(base / mod).resolve()}:{cls}"
                    changed = True
    return changed


def effective_text(sc: "Scenario") -> str:
    """The scenario as it ran (seed and every override applied), rerunnable from any folder: input
    files found next to the scenario are named by absolute path (traces found on the search path
    keep their name). The text is the original, comments and all, when nothing needs changing."""
    if not sc.file:
        return sc.text
    d = sc.to_dict()
    if not _absolute_inputs(d, Path(sc.file).parent):
        return sc.text
    return Scenario.from_dict(d, sc.file).text


def validate(scenario: ScenarioLike) -> dict:
    """Check a scenario without running it; raises :class:`ScenarioError` with file, line and field.

    The class of every Python flow is imported too, so a missing file, module or class shows here.
    """
    sc = as_scenario(scenario)
    info = sc.validate()
    check_python_classes(sc)
    return info


def controllers() -> list[dict]:
    """The built-in controllers: name, summary and (name, default, unit, doc) for each parameter."""
    return _native.controllers()
