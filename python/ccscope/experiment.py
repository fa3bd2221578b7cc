"""What the reproduction scripts under experiments/ share: running a report writer as a command."""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path
from typing import Callable, Iterable, Mapping, Optional, Sequence

from ccscope import _native

# The errors a reproduction reports as bad input: one line, exit 2.
INPUT_ERRORS = (_native.ScenarioError, FileNotFoundError, IsADirectoryError, UnicodeDecodeError, ValueError)


def check_report_destination(out: Path, command: str) -> Path:
    """Refuse, before any run, a report destination ccscope may not write: a folder, a name without a
    suffix (its figures go in the folder of the same stem), an unwritable place, or an existing file that
    is not a report `ccscope repro COMMAND` wrote (its first lines name the command)."""
    from ccscope import store

    out = store.check_file_destination(out)
    if not out.suffix:
        raise store.OutputError(f"-o {out}: give the report a file name with a suffix (report.md); "
                                f"its figures go in the folder {out.name}/ beside it")
    if out.exists():
        with open(out, "rb") as f:
            head = f.read(2048).decode("utf-8", "replace")
        if f"ccscope repro {command}" not in head:
            raise store.OutputError(f"-o {out}: the file is there and is not a report `ccscope repro {command}` "
                                    "wrote; give another file name")
    return out


# How the store's messages name a report's figures folder (the folder of the report's stem).
FIGURES_FOLDER = "figures folder"


def check_data_destination(folder: Path, names: Iterable[str]) -> None:
    """Refuse (store.OutputError), before any run, data files `names` of a report's figures folder when one is
    there and ccscope did not write it: the store's rule for results folders (its manifest lists the files
    ccscope wrote; a folder without one owns none of the files in it)."""
    from ccscope import store

    store.FolderWriter(folder, overwrite=True, merge=True, names=list(names), option=FIGURES_FOLDER).abort()


def run_id() -> str:
    """A name for this run of a script that writes its figures folder file by file (`run=` of write_data): the
    UTC time it started and its process id, so the manifest tells which of the folder's files it wrote."""
    import os
    import time

    return f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} pid {os.getpid()}"


def write_data(path: Path, write: Callable[[Path], None], run: Optional[str] = None) -> Path:
    """Write the file `path` of a report's figures folder by `write(staged path)`: atomically, added to the
    folder's manifest (with `run`, recorded as that run's), never over a file ccscope did not write
    (store.OutputError). The reproductions' one way to put a file in their figures folder."""
    from ccscope import store

    path = Path(path)
    with store.FolderWriter(path.parent, overwrite=True, merge=True, names=[path.name], option=FIGURES_FOLDER,
                            run=run) as w:
        write(w.stage / path.name)
    return path


def write_csv(path: Path, rows: Sequence[Mapping], restval: Optional[str] = None) -> Path:
    """Write `rows` as the CSV `path` of a report's figures folder (write_data). The header is the first row's keys
    (a row with another key is an error, ValueError, and nothing is written); with `restval`, every key any row has,
    a row without one writing `restval`."""
    keys = list(rows[0]) if restval is None else list(dict.fromkeys(k for r in rows for k in r))

    def write(p: Path) -> None:
        with p.open("w", newline="") as f:
            out = csv.DictWriter(f, fieldnames=keys, restval="" if restval is None else restval)
            out.writeheader()
            out.writerows(rows)

    return write_data(path, write)


def save_figure(fig, path: Path, dpi: int = 110, run: Optional[str] = None) -> Path:
    """Write the figure `fig` as `path` (its suffix is the format) of a report's figures folder (write_data, as
    `run`'s); closes the figure, written or refused."""
    import matplotlib.pyplot as plt

    from ccscope.analysis.figures import figure_bytes

    try:
        data = figure_bytes(fig, Path(path).suffix[1:], dpi)
    finally:
        plt.close(fig)
    return write_data(path, lambda p: p.write_bytes(data), run)


def start_log(path: Path, keep: bool) -> Path:
    """Make `path` of a report's figures folder a log to append to: with `keep`, the one ccscope wrote before
    (or a new empty one), else a new empty one (write_data); a file ccscope did not write is refused either way."""
    if keep and Path(path).exists():
        check_data_destination(Path(path).parent, [Path(path).name])
        return Path(path)
    return write_data(path, lambda p: p.write_bytes(b""))


def run_report(write: Callable[[], Path], out: Optional[Path] = None, command: str = "") -> int:
    """Call `write` (which writes the report and returns its path): print `wrote PATH` and return 0, or
    print one `error:` line on stderr and return 2 for bad input (a missing trace folder, a bad option,
    a report destination `check_report_destination` refuses: checked first when `out` is given)."""
    try:
        if out is not None:
            check_report_destination(Path(out), command)
        path = write()
    except INPUT_ERRORS as e:
        print(f"error: {str(e).splitlines()[0] if str(e) else type(e).__name__}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


def add_runner_options(ap: argparse.ArgumentParser, jobs: Optional[int] = None) -> None:
    """The options every reproduction shares: ``--jobs`` (processes of the shared runner,
    :class:`ccscope.runner.Runner`; default `jobs`, else one per core) and ``--quiet`` (no progress bar)."""
    ap.add_argument("--jobs", type=_jobs, default=jobs,
                    help="Worker processes (default: " + (str(jobs) if jobs else "one per core") + ")")
    ap.add_argument("-q", "--quiet", action="store_true", help="No progress bar")


def _jobs(text: str) -> int:
    """A pool size :class:`ccscope.runner.Runner` takes, refused as the options are read: a reproduction
    met the pool only inside its runs (mtsc: a traceback, after making its data folder)."""
    from ccscope.runner import max_jobs

    n = _positive_int(text)
    if n > max_jobs():
        raise argparse.ArgumentTypeError(f"{n}: more than {max_jobs()} local workers (4 per core)")
    return n


def _positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"need at least 1, got {n}")
    return n
