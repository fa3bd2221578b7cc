"""What the reproduction scripts under experiments/ share: running a report writer as a command."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

from ccscope import _native

# The errors a reproduction reports as bad input: one line, exit 2.
INPUT_ERRORS = (_native.ScenarioError, FileNotFoundError, IsADirectoryError, UnicodeDecodeError, ValueError)


def run_report(write: Callable[[], Path]) -> int:
    """Call `write` (which writes the report and returns its path): print `wrote PATH` and return 0, or
    print one `error:` line on stderr and return 2 for bad input (a missing trace folder, a bad option)."""
    try:
        path = write()
    except INPUT_ERRORS as e:
        print(f"error: {str(e).splitlines()[0] if str(e) else type(e).__name__}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0
