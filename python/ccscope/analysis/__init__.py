"""Analysis of results folders and sweeps: Pantheon-style comparisons, paper-standard figures, HTML reports.

Matplotlib is imported by these modules only (with the Agg backend), so `ccscope run` never pays for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence, Union

from ccscope.analysis.inputs import AnalysisInputError

__all__ = ["AnalysisInputError", "compare", "report"]


def compare(
    inputs: Sequence[Union[str, Path]],
    out: Union[str, Path],
    *,
    label: Optional[str] = None,
    delay: str = "one_way",
    formats: Sequence[str] = ("svg", "png"),
    overwrite: bool = False,
) -> Any:
    """Pantheon-style comparison of results and sweep folders into `out` (figures and compare.json);
    see :func:`ccscope.analysis.comparison.compare`."""
    from ccscope.analysis.comparison import compare as _compare

    return _compare(inputs, out, label=label, delay=delay, formats=formats, overwrite=overwrite)


def report(folder: Union[str, Path], out: Union[str, Path]) -> Path:
    """A self-contained HTML page for a results, sweep or compare folder; see
    :func:`ccscope.analysis.html_report.report`."""
    from ccscope.analysis.html_report import report as _report

    return _report(folder, out)
