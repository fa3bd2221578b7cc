"""What a result depends on, by content: the scenario's input files, Python controller source and the
ccscope build that ran it.

A results folder records :func:`record` so a run can be reproduced exactly; a sweep keys its points by
:func:`point_key` so that editing a trace, a model, a controller's source or ccscope itself re-runs
exactly the points it affects, and editing nothing re-runs none.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import time
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Optional

from ccscope import __version__, _native

_CHUNK = 1 << 20
#: A file whose change time is less than this old is hashed but not remembered (see cached_file_sha256).
_SETTLED_NS = 2_000_000_000


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _cache_dir() -> Path:
    """Where ccscope keeps what it can recompute: ``$CCSCOPE_CACHE_DIR``, else ``$XDG_CACHE_HOME/ccscope``,
    else ``~/.cache/ccscope``."""
    if os.environ.get("CCSCOPE_CACHE_DIR"):
        return Path(os.environ["CCSCOPE_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ccscope"


def cached_file_sha256(path: Path) -> str:
    """:func:`file_sha256` of a large file that rarely changes, remembered in the cache folder under its
    path, size, inode, modification and change times: a file rebuilt or replaced in any way (the change
    time cannot be set back) is hashed again. Without a writable cache folder it is hashed every time."""
    path = Path(path).resolve()
    st = path.stat()
    stamp = [str(path), st.st_size, st.st_ino, st.st_mtime_ns, st.st_ctime_ns]
    entry = _cache_dir() / f"sha256-{hashlib.sha256(str(path).encode()).hexdigest()[:16]}.json"
    try:
        known = json.loads(entry.read_text(encoding="utf-8"))
        if known.get("stamp") == stamp and len(known.get("sha256", "")) == 64:
            return known["sha256"]
    except (OSError, ValueError, AttributeError):
        pass
    digest = file_sha256(path)
    # A file changed within the file system's timestamp granularity of this moment could change again
    # with the same stamp (git's "racy" entries): only a file whose change time is settled is remembered.
    if time.time_ns() - st.st_ctime_ns < _SETTLED_NS:
        return digest
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp = entry.with_name(f"{entry.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"stamp": stamp, "sha256": digest}), encoding="utf-8")
        os.replace(tmp, entry)
    except OSError:
        pass
    return digest


@lru_cache(maxsize=1)
def build_id() -> str:
    """ccscope's version plus a hash of the native module, so an edited and rebuilt core counts as new.

    The module's hash (~14 MB of it) is remembered across processes by :func:`cached_file_sha256`."""
    return f"{__version__}+{cached_file_sha256(Path(_native.__file__))[:16]}"


def controller_source(spec: str, scenario_file: Optional[str]) -> Optional[Path]:
    """The source file of a ``class = "module:Class"`` or ``"file.py:Class"`` controller, if found.

    A ``file.py`` path is relative to the scenario's folder, as :func:`ccscope.api.run` loads it.
    """
    mod, _, _ = spec.rpartition(":")
    if not mod:
        return None
    if mod.endswith(".py"):
        p = Path(mod)
        if not p.is_absolute() and scenario_file:
            p = Path(scenario_file).parent / p
        return p if p.is_file() else None
    try:
        found = importlib.util.find_spec(mod)
    except (ImportError, ValueError):
        return None
    origin = getattr(found, "origin", None) if found else None
    return Path(origin) if origin and Path(origin).is_file() else None


def input_files(scenario: Any, info: Optional[Mapping[str, Any]] = None) -> list[Path]:
    """Every file `scenario` (an :class:`ccscope.api.Scenario`) reads, as absolute paths, sorted.

    Traces and controller input files come from the loader (``info`` is ``scenario.validate()``,
    computed here when not given); Python controller classes are found as ``ccscope.run`` finds them.
    """
    info = info if info is not None else scenario.validate()
    # The loader names each input as it opened it: already joined to the scenario's folder, so relative to here.
    files = {Path(p).resolve() for p in info.get("inputs", [])}
    for flow in scenario.to_dict().get("flows", []):
        spec = flow.get("class") if isinstance(flow, dict) else None
        if isinstance(spec, str):
            src = controller_source(spec, scenario.file)
            if src is not None:
                files.add(src.resolve())
    return sorted(files)


def input_hashes(scenario: Any, info: Optional[Mapping[str, Any]] = None) -> dict[str, str]:
    """``{absolute path: sha256}`` for every file in :func:`input_files`."""
    return {str(p): file_sha256(p) for p in input_files(scenario, info)}


def object_source(obj: Any) -> Optional[Path]:
    """The source file of a controller object (or class) passed to ``ccscope.run(controllers=...)``."""
    import inspect

    cls = obj if isinstance(obj, type) else type(obj)
    try:
        src = inspect.getsourcefile(cls)
    except TypeError:
        return None
    return Path(src).resolve() if src and Path(src).is_file() else None


def record(scenario: Any, seed: Optional[int], overrides: Mapping[str, Any], extra_sources: tuple = ()) -> dict:
    """What reproduces a run: ccscope's build, the seed, the overrides and every input's content hash."""
    hashes = input_hashes(scenario)
    for p in extra_sources:
        hashes[str(p)] = file_sha256(Path(p))
    return {
        "ccscope": build_id(),
        "scenario_file": scenario.file,
        "seed": seed,
        "overrides": dict(overrides),
        "inputs": dict(sorted(hashes.items())),
    }


def point_key(text: str, overrides: Mapping[str, Any], seed: int, inputs: Mapping[str, str]) -> str:
    """A sweep point's key: a hash of everything that determines its result (by content)."""
    # Inputs count by name and content, not by where the checkout lives.
    files = sorted((Path(p).name, h) for p, h in inputs.items())
    canon = json.dumps(
        {"scenario": text, "overrides": dict(overrides), "seed": seed, "inputs": files, "ccscope": build_id()},
        sort_keys=True, separators=(",", ":"), default=str,
    )
    return hashlib.sha256(canon.encode()).hexdigest()[:20]
