"""Atomic file writes for analysis outputs, through the package's one writer (:mod:`ccscope.store`)."""

from __future__ import annotations

from pathlib import Path
from typing import Union

from ccscope import store


def write_atomic(path: Union[str, Path], data: Union[bytes, str]) -> Path:
    """Write `data` to `path` atomically: readers see the old file or the whole new one, and an
    interrupted write leaves no partial file behind (:func:`ccscope.store.write_file`)."""
    raw = data.encode() if isinstance(data, str) else data
    return store.write_file(path, lambda p: p.write_bytes(raw))
