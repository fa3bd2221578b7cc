"""Markdown for written reports (the reproductions under experiments/ write theirs with it)."""

from __future__ import annotations

from typing import Any, Iterable


def table(header: Iterable[str], rows: Iterable[Iterable[Any]], right: Iterable[bool]) -> list[str]:
    """A pipe table as lines; `right` says which columns align right."""
    header = list(header)
    align = ["---:" if r else "---" for r in right]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines
