"""What ``ccscope run`` does, shared by the full command line (:mod:`ccscope.cli`, typer) and the
console script's start-up path (:mod:`ccscope.entry`), which runs a well-formed ``ccscope run``
without importing typer (and the pydantic it builds every option's validator with).

Errors in input print one line (file, line, field) on stderr and exit with status 2; no results
folder is written.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, List, Mapping, Optional

from rich.console import Console
from rich.table import Table

from ccscope import _native, api

console = Console()
err = Console(stderr=True, emoji=False)  # user text like a:b:c must not turn into emoji

INPUT_ERRORS = (_native.ScenarioError, FileNotFoundError, IsADirectoryError, UnicodeDecodeError)

FIGURE_FORMATS = ("png", "svg", "pdf")


def fail(e: BaseException, options: Optional[Mapping[str, str]] = None) -> SystemExit:
    """Print `e` as one ``error:`` line on stderr; the exit (status 2) to raise. Given `options` (argument ->
    option), an error naming an API function's argument names the command's option instead."""
    from ccscope.arguments import NamedArgument

    if options is not None and isinstance(e, NamedArgument):
        e = ValueError(e.worded(options))
    # The first line of a long message; any other break in it (a form feed, U+2028) is user text, shown escaped.
    msg = api.one_line(str(e).replace("\r\n", "\n").split("\n")[0]) if str(e) else type(e).__name__
    err.print(f"error: {msg}", markup=False, highlight=False, soft_wrap=True)
    return SystemExit(2)


@contextmanager
def one_line_errors() -> Iterator[None]:
    """Bad input, an output path ccscope will not write and an exception raised by a Python
    controller's own code (tagged by the run) as one line on stderr, exit 2."""
    try:
        yield
    except Exception as e:
        if hasattr(e, "ccscope_flow"):  # first: a controller's own ValueError is not bad input
            raise fail(RuntimeError(api.controller_error_line(e))) from None
        if isinstance(e, (*INPUT_ERRORS, ValueError)):
            raise fail(e) from None
        raise


def parse_sets(sets: Optional[List[str]]) -> dict:
    out = {}
    for s in sets or []:
        if "=" not in s:
            raise _native.ScenarioError(f"--set {api.one_line(s)}: expected KEY=VALUE")
        k, v = s.split("=", 1)
        out[k.strip()] = api.parse_value(v.strip())
    return out


def fmt(v, digits: int = 2) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


#: Rows of flows (and of links) the printed tables show; the rest are in the results folder. Laying out
#: a table of 10^5 flows took rich minutes and gigabytes, longer than the run.
TABLE_ROWS = 32


def more(n: int, what: str) -> str:
    """`n` more `what`s (one more flow, 2 more flows)."""
    return f"{n:,} more {what}{'' if n == 1 else 's'}"


def flow_cells(r: dict) -> list:
    return [
        "all" if r["flow"] == -1 else str(r["flow"]),
        str(r["controller"]),
        fmt(r["throughput_mbps"], 3),
        fmt(r["utilization"], 3),
        fmt(r["queue_delay_p95_ms"], 0),
        fmt(r["signal_delay_p95_ms"], 0),
        fmt(r["one_way_delay_p95_ms"], 1),
        fmt(r["loss_rate"], 4),
        fmt(r["score"], 2),
    ]


def summary_table(res: api.Result, title: str) -> Table:
    t = Table(title=title)
    for col in ["flow", "controller", "Mbit/s", "util", "p95 qdelay ms", "p95 signal ms", "p95 owd ms", "loss", "score"]:
        t.add_column(col, justify="right" if col not in ("controller",) else "left", overflow="fold")
    flows = res.flow_records()
    for r in flows[:TABLE_ROWS]:
        t.add_row(*flow_cells(r))
    if len(flows) > TABLE_ROWS:
        t.add_row("...")
        t.caption = f"{more(len(flows) - TABLE_ROWS, 'flow')} in flows.parquet"
    t.add_row(*flow_cells(res.summary))
    return t


def links_table(res: api.Result) -> Table:
    t = Table(title="links")
    for col in ["link", "Mbit/s", "capacity", "util", "arrivals", "dropped", "loss", "p95 qdelay ms"]:
        t.add_column(col, justify="left" if col == "link" else "right", overflow="fold")
    links = res._records("links")
    for r in links[:TABLE_ROWS]:
        t.add_row(
            str(r["link"]), fmt(r["throughput_mbps"], 3), fmt(r["capacity_mbps"], 3), fmt(r["utilization"], 3),
            str(r["arrivals"]), str(r["dropped"]), fmt(r["loss_rate"], 4), fmt(r["queue_delay_p95_ms"], 0),
        )
    if len(links) > TABLE_ROWS:
        t.add_row("...")
        t.caption = f"{more(len(links) - TABLE_ROWS, 'link')} in summary.json"
    return t


def figure_names(formats) -> list:
    """The files `ccscope plot` writes (throughput and delay, one per format)."""
    return [f"{stem}.{f}" for stem in ("throughput", "delay") for f in formats]


def model_range_warnings(flows, threshold: float = 0.01) -> List[str]:
    """One line per markov flow whose walk perceived delays outside its model in over `threshold` of epochs.

    `flows` is the flows DataFrame or its records (:meth:`api.Result.flow_records`)."""
    records = flows.to_dict(orient="records") if hasattr(flows, "to_dict") else flows
    out = []
    for f in records:
        n = f.get("model_epochs")
        if n is None or n != n or n <= 0:
            continue
        below, above = f["model_delay_below"] / n, f["model_delay_above"] / n
        if below + above > threshold:
            out.append(f"warning: flow {int(f['flow'])}: the perceived delay was outside the model's range in "
                       f"{below + above:.1%} of epochs ({below:.1%} below, {above:.1%} above); the model was "
                       "trained on other links")
    return out


def run(
    scenario: str,
    out: Path,
    seed: Optional[int] = None,
    sets: Optional[List[str]] = None,
    packets: bool = False,
    cwnd: bool = False,
    plot: bool = False,
    overwrite: bool = False,
) -> None:
    """Run one scenario, print its table and write a results folder (``ccscope run``'s options)."""
    from ccscope import store

    with one_line_errors():
        sc = api.Scenario.load(scenario)
        overrides = parse_sets(sets)
        # Every output-path problem shows here, before anything runs.
        writer = store.FolderWriter(out, overwrite=overwrite, names=[*api.RESULT_FILES, *figure_names(FIGURE_FORMATS[:2])],
                                    not_of=api.OTHER_RESULTS, own="summary.json")
    # On an error the staging folder goes and the destination stays as it was.
    with one_line_errors(), writer:
        log = writer.stage / "link.log" if packets else None
        res = api.run(sc, seed=seed, overrides=overrides, packets=packets, log_path=log, cwnd=cwnd)
        res.write_into(writer.stage)
        figures = []
        if plot:
            from ccscope import plots

            figures = [writer.path / p.name for p in plots.plot_results(writer.stage, writer.stage)]
    console.print(summary_table(res, f"{res.scenario['name']} (seed {res.scenario['seed']}, {res.scenario['duration_s']:.1f} s)"))
    if "links" in res.scenario:
        # A topology (not just the dumbbell's two links): the per-link table too.
        if set(res.scenario["links"]) - {"data_link", "ack_link"}:
            console.print(links_table(res))
    flows = res.flow_records()
    if res.summary.get("jain_index") is not None and len(flows) > 1:
        console.print(f"Jain's fairness index: {res.summary['jain_index']:.4f}")
    for line in model_range_warnings(flows):
        err.print(line, markup=False)
    for p in figures:
        console.print(f"wrote {p}")
    console.print(f"results in {out}")
