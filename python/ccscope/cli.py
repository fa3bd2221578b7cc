"""The ``ccscope`` command line: a thin layer over :mod:`ccscope.api`.

Errors in input print one line (file, line, field) on stderr and exit with status 2; no results
folder is written.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import List, Optional

import typer
from typer.core import TyperGroup

try:  # typer >= 0.20 carries its own copy of click, which raises its own exceptions even when click
    # itself is installed too (dask needs it)
    from typer._click import exceptions as click_errors
except ImportError:
    from click import exceptions as click_errors  # type: ignore[no-redef]
from rich import box
from rich.table import Table

from ccscope import _native, api, run_command
from ccscope.arguments import MAX_SEED
from ccscope.run_command import (  # noqa: F401  (shared with the start-up path; tests import them from here)
    FIGURE_FORMATS, INPUT_ERRORS, console, err, fail, figure_names, fmt, links_table, model_range_warnings,
    one_line_errors, parse_sets, summary_table, TABLE_ROWS,
)


class OneLineErrors(TyperGroup):
    """Usage errors (a bad option value, an unknown option, a missing argument) as one line naming
    the command and option, exit 2, like every other input error."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):  # type: ignore[override]
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click_errors.NoArgsIsHelpError as e:
            e.show()
            sys.exit(e.exit_code)
        except click_errors.ClickException as e:
            ctx = getattr(e, "ctx", None)
            where = f"{ctx.command_path}: " if ctx is not None else ""
            msg = " ".join(e.format_message().split())
            err.print(f"error: {where}{msg}", markup=False, highlight=False, soft_wrap=True)
            sys.exit(e.exit_code if isinstance(e, click_errors.UsageError) else 2)
        except (typer.Abort, getattr(click_errors, "Abort", typer.Abort)):
            err.print("aborted", markup=False)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


app = typer.Typer(cls=OneLineErrors, add_completion=False, no_args_is_help=True,
                  help="ccscope: congestion-control laboratory")
repro_app = typer.Typer(no_args_is_help=True, help="Regenerate a paper reproduction under docs/reproductions/.")
app.add_typer(repro_app, name="repro")
markov_app = typer.Typer(no_args_is_help=True, help="Train and inspect (delay, window) Markov models (paper 000).")
app.add_typer(markov_app, name="markov")
cmt_app = typer.Typer(no_args_is_help=True, help="CMT path models and window allocation (paper 002).")
app.add_typer(cmt_app, name="cmt")
stats_app = typer.Typer(no_args_is_help=True,
                        help="Self-similar traffic statistics: Hurst estimates and CondProb tables (paper 003).")
app.add_typer(stats_app, name="stats")


def parse_formats(formats: str) -> tuple:
    fs = tuple(f.strip() for f in formats.split(",") if f.strip())
    bad = [f for f in fs if f not in FIGURE_FORMATS]
    if bad or not fs:
        raise ValueError(f"--formats {formats}: expected a comma-separated list of {', '.join(FIGURE_FORMATS)}")
    return fs


@app.command()
def run(
    scenario: str = typer.Argument(..., help="Scenario TOML (or an embedded example: examples/NAME.toml)"),
    out: Path = typer.Option(..., "-o", "--out", help="Results folder (written atomically; only ccscope's own files are ever replaced)"),
    seed: Optional[int] = typer.Option(None, min=0, max=MAX_SEED, help="Override the scenario's seed"),
    sets: Optional[List[str]] = typer.Option(None, "--set", help="Override a value, e.g. flows.0.window=20"),
    packets: bool = typer.Option(False, "--packets", help="Keep the per-packet log (packets.parquet, link.log)"),
    cwnd: bool = typer.Option(False, "--cwnd", help="Record every window change (cwnd.parquet)"),
    plot: bool = typer.Option(False, "--plot", help="Also draw the throughput and delay plots"),
    overwrite: bool = typer.Option(
        False, "--overwrite",
        help="Write into a non-empty folder that is not a results folder (beside its files, never over them)"),
) -> None:
    """Run one scenario, print its table and write a results folder."""
    run_command.run(scenario, out, seed, sets, packets, cwnd, plot, overwrite)


@app.command()
def validate(
    scenario: str = typer.Argument(..., help="Scenario TOML"),
    seed: Optional[int] = typer.Option(None, min=0, max=MAX_SEED, help="Override the scenario's seed (as `run` would)"),
    sets: Optional[List[str]] = typer.Option(None, "--set", help="Override a value, e.g. flows.0.window=20"),
) -> None:
    """Check a scenario without running it, with `run`'s overrides (Python controllers' classes are imported)."""
    with one_line_errors():
        overrides = parse_sets(sets)
        if seed is not None:
            overrides["seed"] = seed
        info = api.validate(api.Scenario.load(scenario).with_overrides(overrides))
    ctl = info.get("controllers")
    if isinstance(ctl, list) and len(ctl) > TABLE_ROWS:
        # Many flows: how many run each controller (a list of 10^5 names took seconds to print).
        info["controllers"] = dict(Counter(ctl))
    console.print(info)


@app.command()
def plot(
    results: Path = typer.Argument(..., help="Results folder from `ccscope run`"),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="Where to write the figures (default: the results folder)"),
    formats: str = typer.Option("png,svg", "--formats", help="Comma-separated: png, svg, pdf"),
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Write into a non-empty -o folder that ccscope did not write (beside its files)"),
) -> None:
    """Draw Mahimahi-style throughput and delay over time."""
    from ccscope import store

    with one_line_errors():
        fs = parse_formats(formats)
        api.load_result(results)  # a folder that is not a results folder, or a corrupt file in it, fails here
        writer = store.FolderWriter(out if out is not None else results, overwrite=overwrite, merge=True,
                                    names=figure_names(fs))
    from ccscope import plots
    from ccscope.analysis import AnalysisInputError

    with writer:
        try:
            written = plots.plot_results(results, writer.stage, fs)
        except AnalysisInputError as e:
            raise fail(e)
    for p in written:
        console.print(f"wrote {writer.path / p.name}")


@app.command()
def compare(
    results: List[Path] = typer.Argument(..., help="Results folders (ccscope run -o) and sweep folders (ccscope sweep -o)"),
    out: Path = typer.Option(..., "-o", "--out", help="Folder for the figures and compare.json (new, empty, or an earlier compare)"),
    overwrite: bool = typer.Option(False, "--overwrite", help="Write into a non-empty folder that is not a ccscope results folder (its files are kept)"),
    label: Optional[str] = typer.Option(
        None, "--label",
        help="Group runs by this scenario key (e.g. flows.0.window) or sweep column; default: the flows' "
             "controllers (results folders), the grid point (sweeps)"),
    delay: str = typer.Option("one_way", "--delay", help="Delay axis, 95th percentiles: one_way (Pantheon), signal or queue"),
    formats: str = typer.Option("svg,png", "--formats", help="Comma-separated: svg, png, pdf"),
) -> None:
    """Pantheon-style comparison: throughput against 95th-percentile delay per scheme (1-sigma ellipse
    over runs), delay CDFs, throughput and window over time."""
    from ccscope.analysis import AnalysisInputError
    from ccscope.analysis.comparison import CLI_OPTIONS
    from ccscope.analysis.comparison import compare as run_compare

    try:
        res = run_compare(results, out, label=label, delay=delay, formats=parse_formats(formats.lower()), overwrite=overwrite)
    except (AnalysisInputError, ValueError) as e:  # compare() names its arguments; the command names its options
        raise fail(e, CLI_OPTIONS)
    t = Table(title=f"{len(res.groups)} schemes, {len(res.runs)} runs (mean \u00b1 s.d. over runs)")
    for col in ("scheme", "runs", "Mbit/s", f"p95 {delay.replace('_', '-')} delay ms"):
        t.add_column(col, justify="left" if col == "scheme" else "right", overflow="fold")
    for g in res.groups:
        sd_t = "" if g.throughput_sd != g.throughput_sd else f" \u00b1 {g.throughput_sd:.3f}"
        sd_d = "" if g.delay_sd != g.delay_sd else f" \u00b1 {g.delay_sd:.1f}"
        t.add_row(g.label, str(g.runs), f"{g.throughput_mean:.3f}{sd_t}", f"{g.delay_mean:.1f}{sd_d}")
    console.print(t)
    for n in res.notes:
        # Folded at the terminal's width like the tables (a note is advice, not a one-line error).
        err.print(f"note: {n}", markup=False, highlight=False)
    for p in res.files:
        console.print(f"wrote {p}", highlight=False)


@app.command()
def report(
    folder: Path = typer.Argument(..., help="A results, sweep or compare folder"),
    out: Path = typer.Option(..., "-o", "--out", help="The HTML file to write (atomically)"),
) -> None:
    """One self-contained HTML page: summary tables, figures (inline SVG), the scenario and the inputs' hashes."""
    from ccscope.analysis import AnalysisInputError
    from ccscope.analysis.html_report import CLI_OPTIONS
    from ccscope.analysis.html_report import report as write_report

    from ccscope.store import OutputError

    try:
        path = write_report(folder, out)
    except (AnalysisInputError, OutputError) as e:  # report() names its arguments; the command names its options
        raise fail(e, CLI_OPTIONS)
    console.print(f"wrote {path}", highlight=False)


@app.command()
def sweep(
    scenario: str = typer.Argument(..., help="Scenario TOML"),
    params: Optional[List[str]] = typer.Option(
        None, "--param",
        help="KEY=VALUES (repeatable; the grid is their product). VALUES: V1,V2,...; START:STOP or START:STOP:STEP (inclusive); "
             "linspace(a,b,n); logspace(a,b,n) (10^a .. 10^b); geomspace(a,b,n) (a .. b)"),
    seeds: int = typer.Option(1, "--seeds", help="Seeds per grid point: runs seeds 1..N and reports mean and 95% CI"),
    out: Path = typer.Option(Path("sweep-results"), "-o", "--out", help="Sweep folder (resumable)"),
    jobs: int = typer.Option(0, "--jobs", "-j", help="Local worker processes (0 = all cores)"),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="Run on this dask scheduler (tcp://HOST:PORT, or the JSON file of dask scheduler --scheduler-file) instead of a local cluster"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar and no table: only warnings, errors and the files written"),
) -> None:
    """Run a parameter grid on dask and write sweep.parquet (per seed) and summary.parquet (mean, 95% CI)."""
    from ccscope import store
    from ccscope import sweep as sw
    from ccscope.runner import check_jobs

    try:
        if jobs < 0:
            raise ValueError(f"--jobs {jobs}: need at least one worker (0 = all cores)")
        check_jobs(jobs)
        grid = sw.parse_grid(params or [])
        store.check_resumable_folder(out, sw.FOLDER_MARKERS, "sweep")  # first here, to name -o
        result = sw.run_sweep(scenario, grid, seeds=seeds, out=out, jobs=jobs or None, scheduler=scheduler,
                              progress=not quiet)
    except sw.SweepArgumentError as e:  # the API names its arguments; the command names its options
        raise fail(ValueError(e.worded(sw.CLI_OPTIONS)))
    except INPUT_ERRORS as e:
        raise fail(e)
    except (ValueError, sw.SweepError) as e:
        raise fail(e)
    for w in result.warnings:
        err.print(w, markup=False, highlight=False, soft_wrap=True)
    if not quiet:
        console.print(sw.render_table(result))
        console.print(f"{result.ran} runs simulated, {result.loaded} loaded from {out / 'points'}", highlight=False)
    console.print(f"wrote {out / 'sweep.parquet'} and {out / 'summary.parquet'}", highlight=False)


@app.command()
def tune(
    scenario: str = typer.Argument(..., help="Scenario TOML"),
    params: Optional[List[str]] = typer.Option(
        None, "--param",
        help="KEY=LOW:HIGH (integers if both are), LOW:HIGH:log, LOW:HIGH:STEP or V1,V2,... (repeatable)"),
    objective: str = typer.Option("score", "--objective", help="Summary metric to optimise; a leading - negates it (-signal_delay_p95_ms)"),
    direction: str = typer.Option("maximize", "--direction", help="maximize or minimize"),
    trials: int = typer.Option(..., "--trials", help="Trials in the study (a resumed study runs only the missing ones)"),
    traces_tune: Optional[str] = typer.Option(None, "--traces-tune", help="Comma-separated traces to tune on (DOWN or DOWN+UP; default: the scenario's own)"),
    traces_report: Optional[str] = typer.Option(None, "--traces-report", help="Comma-separated held-out traces to report on (DOWN or DOWN+UP)"),
    seeds: int = typer.Option(1, "--seeds", help="Seeds per trace: the objective is the mean over traces and seeds"),
    seed: int = typer.Option(1, "--seed", help="Seed of the TPE sampler"),
    batch: int = typer.Option(4, "--batch", help="Trials run at once (part of the search: keep it to resume)"),
    out: Path = typer.Option(..., "-o", "--out", help="Study folder: study.db, points/, tune.parquet, best.json (resumable)"),
    jobs: int = typer.Option(0, "--jobs", "-j", help="Local worker processes (0 = all cores)"),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="Run on this dask scheduler (tcp://HOST:PORT or a scheduler file)"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar"),
) -> None:
    """Search controller parameters with optuna (TPE), then compare tuned and default on held-out traces."""
    from ccscope import grid as gr
    from ccscope import tune as tn
    from ccscope.runner import check_jobs
    from ccscope.sweep import SweepError

    try:
        if jobs < 0:
            raise ValueError(f"--jobs {jobs}: need at least one worker (0 = all cores)")
        check_jobs(jobs)
        space = gr.parse_space(params or [])
        obj = tn.Objective.parse(objective, direction)
        result = tn.tune(scenario, space, obj, trials, out, tune_traces=tn.parse_traces("--traces-tune", traces_tune),
                         report_traces=tn.parse_traces("--traces-report", traces_report), seeds=seeds, seed=seed,
                         batch=batch, jobs=jobs or None, scheduler=scheduler, progress=not quiet)
    except INPUT_ERRORS as e:
        raise fail(e)
    except (ValueError, SweepError) as e:  # tune() names its arguments; the command names its options
        raise fail(e, tn.CLI_OPTIONS)
    console.print(tn.render_table(result, obj))
    console.print(f"wrote {out / 'tune.parquet'} and {out / 'best.json'}", highlight=False)


@app.command()
def controllers(
    markdown: bool = typer.Option(False, "--markdown", help="Print a Markdown reference (docs/controllers.md)"),
) -> None:
    """List the built-in controllers and their parameters with defaults."""
    if markdown:
        print(controllers_markdown(), end="")
        return
    for c in api.controllers():
        t = Table(title=f"{c['name']}: {c['summary']}", title_justify="left")
        for col in ["parameter", "default", "unit", "meaning"]:
            t.add_column(col, overflow="fold")
        for p in c["params"]:
            t.add_row(*p)
        console.print(t)


def controllers_markdown() -> str:
    lines = [
        "# Controllers",
        "",
        "Generated by `ccscope controllers --markdown`. Every key is a flow-table key in a scenario file",
        "and a keyword of `ccscope.run(..., overrides={\"flows.0.KEY\": value})`. A value given in ms or s",
        "is at most the longest run (1e7 s) and, unless 0, at least the clock's 1 ns; in Mbit/s or kbit/s",
        "at most the fastest link (1e9 Mbit/s); in packets or packets/RTT at most the largest window",
        "(10,000,000; an initial_ssthresh 4294967295); in packets/tau at most 4294967295; in round trips",
        "(srtt, min RTTs, RTTs, slowdowns) at most 1e10 (the longest run in round trips of 1 ms).",
        "",
    ]
    for c in api.controllers():
        lines += [f"## `{c['name']}`", "", c["summary"], "", "| parameter | default | unit | meaning |", "|---|---|---|---|"]
        lines += [f"| `{n}` | `{d}` | {u} | {m} |" for n, d, u, m in c["params"]]
        lines.append("")
    return "\n".join(lines)


@app.command()
def bench(
    repeats: int = typer.Option(3, help="Runs per case (1 to 1000); the median is reported"),
    cases: Optional[str] = typer.Option(None, help="Comma-separated case names (default: all)"),
) -> None:
    """Measure simulator speed (delivered packets and simulated seconds per wall-second)."""
    from ccscope import bench as b
    from ccscope.arguments import ArgumentError

    try:
        table = b.run_bench(repeats=repeats, names=[c.strip() for c in cases.split(",")] if cases else None)
    except ArgumentError as e:
        raise fail(e, b.CLI_OPTIONS)
    except _native.ScenarioError as e:  # an unknown case name
        raise fail(ValueError(f"--cases {cases}: {e}"))
    console.print(b.render(table))


PASS_THROUGH = {"allow_extra_args": True, "ignore_unknown_options": True}


@repro_app.command("datagrump", context_settings=PASS_THROUGH)
def repro_datagrump(ctx: typer.Context) -> None:
    """Paper 001: the fixed-window sweep and the controller ladder on the contest link.

    Runs experiments/datagrump/repro.py of this checkout; its options (-o, --jobs, --quiet) pass through.
    """
    _run_experiment("datagrump", ctx.args)


@repro_app.command("verus", context_settings=PASS_THROUGH)
def repro_verus(ctx: typer.Context) -> None:
    """Paper 004: Verus R = 2, 4, 6 against Cubic, NewReno, Vegas and Sprout on every trace.

    Runs experiments/verus/repro.py of this checkout; its options (-o, --traces, --seeds, --duration,
    --jobs, --quiet) pass through.
    """
    _run_experiment("verus", ctx.args)


@repro_app.command("markov", context_settings=PASS_THROUGH)
def repro_markov(ctx: typer.Context) -> None:
    """Paper 000: Markov models of Verus trained on trace set 1, evaluated against Verus on set 2.

    Runs experiments/markov/repro.py of this checkout; its options (-o, --traces, --seconds, --seeds, --train,
    --eval, --fast-links/--no-fast-links, --jobs, --quiet) pass through.
    """
    _run_experiment("markov", ctx.args)


def find_experiment(name: str) -> Path:
    """`experiments/NAME/repro.py` of the ccscope checkout holding the current folder: reproductions live
    beside the library, never inside it (the library does not import them)."""
    for d in (Path.cwd(), *Path.cwd().parents):
        script = d / "experiments" / name / "repro.py"
        if script.is_file():
            return script
    raise FileNotFoundError(f"experiments/{name}/repro.py: not found here or above; run from a ccscope checkout")


@repro_app.command("cmt", context_settings=PASS_THROUGH)
def repro_cmt(ctx: typer.Context) -> None:
    """Paper 002: SCTP-CMT simulation against the Markov and renewal models; static vs dynamic windows.

    Runs experiments/cmt/repro.py of this checkout; its options (-o, --figs, --report-only, --seeds,
    --loss-events, --jobs, --quiet, ...) pass through.
    """
    _run_experiment("cmt", ctx.args)


@repro_app.command("mtsc", context_settings=PASS_THROUGH)
def repro_mtsc(ctx: typer.Context) -> None:
    """Paper 003: Hurst, CondProb and entropy (Figs. 1-3; --part traffic) and SAC (Figs. 9-18; --part sac).

    Runs experiments/mtsc/repro.py of this checkout; its options (-o, --part, --seeds, --duration-s,
    --sac-seeds, --sac-duration-s, --thetas, --figs, --reuse, --jobs, --quiet, ...) pass through.
    """
    _run_experiment("mtsc", ctx.args)


@repro_app.command("schemes", context_settings=PASS_THROUGH)
def repro_schemes(ctx: typer.Context) -> None:
    """Pantheon-style: every registered scheme on a constant-rate link and every trace, throughput against p95 delay.

    Runs experiments/schemes/repro.py of this checkout; its options (-o, --traces, --seeds, --duration, --links,
    --schemes, --work, --jobs) pass through.
    """
    _run_experiment("schemes", ctx.args)


def _run_experiment(name: str, args: List[str]) -> None:
    """Run experiments/NAME/repro.py of this checkout as a script with `args`; its exit code is ours."""
    import runpy

    try:
        script = find_experiment(name)
    except FileNotFoundError as e:
        raise fail(e)
    argv = sys.argv
    sys.argv = [str(script), *args]
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as e:
        if e.code not in (0, None):
            raise typer.Exit(e.code if isinstance(e.code, int) else 2)
    finally:
        sys.argv = argv


def _markov_table(figures: dict, title: str) -> Table:
    t = Table(title=title)
    t.add_column("figure", overflow="fold")
    t.add_column("value", justify="right", overflow="fold")
    for k, v in figures.items():
        if isinstance(v, tuple):
            v = f"{v[0]} .. {v[1]}"
        elif isinstance(v, float):
            v = f"{v:.3g}"
        t.add_row(k, str(v))
    return t


@markov_app.command("train")
def markov_train(
    samples: List[Path] = typer.Argument(..., help="Parquet sample files (columns user, t_ms, d_ms, w)"),
    quantize: int = typer.Option(2, "--quantize", help="Delay interval width, ms (paper: 1, 2, 5, 10, 20)"),
    truncate: float = typer.Option(99.9, "--truncate", help="Drop samples above this delay percentile (100 = keep all)"),
    out: Path = typer.Option(Path("model.ccm"), "-o", "--out", help="Model file to write (.ccm)"),
) -> None:
    """Count state transitions and write a row-normalised .ccm model (paper 000 §4, Eq. 5)."""
    import time

    from ccscope.models import markov

    from ccscope import store

    try:
        # train() names its arguments (quantize_ms, truncate); the command names its options.
        if quantize < 1:
            raise markov.ScenarioError(f"--quantize {quantize}: expected a positive whole number of ms")
        if not 0 < truncate <= 100:
            raise markov.ScenarioError(f"--truncate {truncate:g}: expected a percentile in (0, 100]")
        markov.check_model_destination(out, "-o")  # before the training; save() checks again
        t0 = time.perf_counter()
        model = markov.train(samples, quantize_ms=quantize, truncate=truncate)
        train_s = time.perf_counter() - t0
        model.save(out)
    except (*INPUT_ERRORS, store.OutputError) as e:
        raise fail(e, markov.CLI_OPTIONS)
    figures = markov.inspect(model)
    figures["train_s"] = round(train_s, 3)
    console.print(_markov_table(figures, f"{out}"))


@markov_app.command("collect")
def markov_collect(
    traces: Optional[Path] = typer.Option(
        None, "--traces", help="Mahimahi trace folder (default: $CCSCOPE_TRACE_PATH, then ../shared/traces)"
    ),
    trace_set: str = typer.Option(..., "--set", help="Comma-separated trace files in that folder (data direction)"),
    users: str = typer.Option("1", "--users", help="Comma-separated numbers of Verus users; one run per trace and number"),
    seconds: float = typer.Option(300.0, "--seconds", help="Simulated seconds per run"),
    seed: int = typer.Option(1, "--seed", help="Scenario seed (start jitter, RED drops)"),
    r: float = typer.Option(2.0, "--r", help="Verus's R (paper 000 ran R = 2)"),
    ack: str = typer.Option("uncongested", "--ack", help="ACK path: uncongested (paper 000) or paired (the opposite trace)"),
    out: Path = typer.Option(Path("samples.parquet"), "-o", "--out", help="Parquet sample file to write"),
    record: str = typer.Option(
        "epoch", "--record",
        help="epoch: largest delay and packets sent per 5 ms epoch (what the controller steps on); packet: each ACK's delay and its packet's window",
    ),
    jobs: int = typer.Option(0, "--jobs", min=0, help="Worker processes (0: one per core)"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar"),
) -> None:
    """Run Verus with N users on each trace (paper 000 §4.1) and write (delay, window) samples."""
    from ccscope import traces as trace_files
    from ccscope.models import markov

    from ccscope import store

    try:
        markov.check_samples_destination(out, "-o")  # before the runs; save_samples() checks again
        trace_dir = trace_files.find_traces(traces)
        names = [t.strip() for t in trace_set.split(",") if t.strip()]
        try:
            ns = [int(u) for u in users.split(",") if u.strip()]
        except ValueError:
            raise markov.ScenarioError(f"--users {users!r}: expected comma-separated integers") from None
        df = markov.collect([trace_dir / n for n in names], ns, seconds, seed, jobs=jobs or None, r=r, ack=ack,
                            record=record, quiet=quiet)
        markov.save_samples(df, out)
    except (*INPUT_ERRORS, store.OutputError) as e:
        raise fail(e, markov.CLI_OPTIONS)
    t = Table(title=str(out))
    for c in ("trace", "users", "samples"):
        t.add_column(c, justify="right" if c != "trace" else "left", overflow="fold")
    for (tr, n), g in df.groupby(["trace", "users"], sort=False):
        t.add_row(str(tr), str(n), str(len(g)))
    console.print(t)


@markov_app.command("inspect")
def markov_inspect(
    model_path: Path = typer.Argument(..., help="Model file (.ccm)"),
    heatmap: Optional[Path] = typer.Option(None, "--heatmap", help="Write the Figure 5/6 heatmap PNG here"),
    zoom: Optional[int] = typer.Option(None, "--zoom", help="Also plot delay interval K alone (needs --heatmap)"),
    w_max: Optional[int] = typer.Option(None, "--w-max", help="Show windows up to this one (default: all)"),
    samples: Optional[List[Path]] = typer.Option(
        None, "--samples", help="Sample files: also print how the two draws scale the windows at their transitions"
    ),
) -> None:
    """Print a model's Table 2 figures; optionally draw its transition heatmap."""
    from ccscope.models import markov

    try:
        if heatmap is not None:
            markov.check_heatmap_destination(heatmap, "--heatmap")  # before the model is read; heatmap() again
        model = markov.MarkovModel.load(model_path)
        bias = markov.draw_bias(model, markov.load_samples(samples)) if samples else None
        if heatmap is not None:
            markov.heatmap(model, heatmap, zoom_interval=zoom, w_max=w_max)
    except (*INPUT_ERRORS, ValueError) as e:
        raise fail(e, markov.CLI_OPTIONS)
    console.print(_markov_table(markov.inspect(model), f"{model_path}"))
    if bias is not None:
        console.print(_markov_table(bias, "mean window per epoch at the samples' transitions (paper 000 §3.2 draw vs chain)"))
    if heatmap is not None:
        console.print(f"wrote {heatmap}")

# --------------------------------------------------------------------------- cmt (paper 002)

# The option that carries each model input (errors name the option, not the API field).
CMT_OPTIONS = {"p": "--p", "b": "--b", "d": "--d", "rbuf": "--rbuf", "loss": "--loss", "rto_max": "--rto-max",
               "packet_bytes": "--packet-bytes", "k": "--k", "solver": "--solver", "path": "--path",
               "objective": "--model"}


def cmt_fail(e, paths: Optional[List[str]] = None) -> SystemExit:
    """One line naming the option of a CmtInputError (`path[i].b` -> `--path #i+1 'b=..'` ... b)."""
    field = getattr(e, "field", "")
    head, _, sub = field.partition(".")
    if head.startswith("path[") and paths is not None:
        i = int(head[5:-1])
        where = f"--path #{i + 1} {paths[i]!r}" + (f": {sub}" if sub else "")
    else:
        where = CMT_OPTIONS.get(head, head)
    return fail(ValueError(f"{where}: {getattr(e, 'detail', str(e))}"))


def parse_cmt_path(text: str, index: int):
    """`b=21,d=40,p=1e-3` (Mbit/s, ms round trip, loss probability) -> Destination."""
    from ccscope.models.cmt import CmtInputError, Destination

    fields = {}
    for part in text.split(","):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or key not in ("b", "d", "p") or key in fields:
            raise CmtInputError(f"path[{index}]", f"expected b=MBPS,d=MS,p=LOSS; got {part.strip()!r}")
        try:
            fields[key] = float(value)
        except ValueError:
            raise CmtInputError(f"path[{index}].{key}", f"{value.strip()!r} is not a number") from None
    missing = [k for k in ("b", "d", "p") if k not in fields]
    if missing:
        raise CmtInputError(f"path[{index}]", f"missing {', '.join(missing)} (expected b=MBPS,d=MS,p=LOSS)")
    return Destination(b_mbps=fields["b"], d_ms=fields["d"], p=fields["p"])


def _rbuf_line(text: str, rbuf_bytes: int, w: int, packet_bytes: int) -> str:
    """A11: the paper's KB is 1000 B; show what the other convention would give."""
    line = f"RBUF {text} = {rbuf_bytes} B: W = floor({rbuf_bytes}/{packet_bytes}) = {w} packets"
    if text.strip().lower().endswith("kb"):
        kib = int(float(text.strip()[:-2]) * 1024)
        line += f" (KB = 1000 B; with KiB, {kib} B: W = {kib // packet_bytes})"
    return line


def _fixed(v: float, digits: int) -> str:
    """`digits` decimals, or 4 significant digits once the integer part is long (p -> 0 gives E[W] ~ 1/sqrt(p))."""
    return f"{v:.{digits}f}" if abs(v) < 1e6 else f"{v:.4g}"


def _timeout_share(mk: dict) -> float:
    """Timeouts over loss events of a Markov answer (MarkovResult.timeout_share from its dict)."""
    return mk["timeouts_per_round"] / (mk["timeouts_per_round"] + mk["fast_retransmits_per_round"])


@cmt_app.command("model")
def cmt_model(
    p: float = typer.Option(..., "--p", help="Loss probability, in (0, 1)"),
    b: float = typer.Option(..., "--b", help="Bottleneck bandwidth, Mbit/s"),
    d: float = typer.Option(..., "--d", help="Round-trip delay d of eq. 8, ms"),
    rbuf: str = typer.Option(..., "--rbuf", help="Receive buffer: bytes, or 128KB (KB = 1000 B), 128KiB, 1MB"),
    loss: str = typer.Option("correlated", "--loss", help="correlated (eq. 7, Figs. 5-8) or independent (eq. 6)"),
    rto_max: float = typer.Option(60.0, "--rto-max", help="RTO_max, s"),
    packet_bytes: int = typer.Option(1500, "--packet-bytes", help="Packet size, bytes"),
    eq62: bool = typer.Option(False, "--eq62", help="Renewal model with E[L] from eq. 62 instead of E[W]/2"),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object"),
) -> None:
    """Throughput of one path: the Markov chain (§4.3), the renewal model (§4.4), Mathis and PFTK."""
    import json

    from ccscope.models.cmt import CmtInputError, compare_models, parse_bytes

    try:
        rbuf_bytes = parse_bytes(rbuf)
        rep = compare_models(p, b, d, rbuf_bytes, loss, rto_max, packet_bytes, eq62=eq62)
    except CmtInputError as e:
        raise cmt_fail(e)
    if as_json:
        print(json.dumps(rep))
        return
    inp = rep["inputs"]
    console.print(f"p = {p:g}, b = {b:g} Mbit/s, d = {d:g} ms, {loss} loss, RTO_max = {rto_max:g} s", highlight=False)
    console.print(_rbuf_line(rbuf, rbuf_bytes, inp["w"], packet_bytes), highlight=False)
    t = Table(title="throughput of one path (paper 002)")
    for col in ("model", "Mbit/s", "diagnostics"):
        t.add_column(col, justify="right" if col == "Mbit/s" else "left", overflow="fold")
    mk = rep["markov"]
    if mk is None:
        t.add_row("Markov (§4.3)", "-", rep["markov_error"])
    else:
        t.add_row("Markov (§4.3)", _fixed(mk['throughput_mbps'], 4),
                  f"{mk['states']} states, {mk['nonzeros']} non-zeros, {mk['iterations']} iterations, "
                  f"residual {mk['residual']:.2e}, {mk['solve_time_s'] * 1e3:.1f} ms, "
                  f"timeouts {_timeout_share(mk):.1%} of loss events")
    rn = rep["renewal"]
    if rn is None:
        t.add_row("renewal (§4.4)", "-", rep["renewal_error"])
    else:
        t.add_row("renewal (§4.4)" + (" eq. 62" if eq62 else ""), _fixed(rn['throughput_mbps'], 4),
                  f"{rn['regime']}, E[W] {_fixed(rn['expected_window'], 2)}, window {_fixed(rn['window'], 2)}, E[X] "
                  f"{_fixed(rn['expected_rounds_x'], 2)}, P^TO {rn['p_timeout']:.4f}, RTT {rn['rtt_s'] * 1e3:.2f} ms")
    ref = rep["reference"]
    rtt_note = f"RTT {ref['rtt_s'] * 1e3:.2f} ms (eq. 8), RTO {ref['rto_s'] * 1e3:.1f} ms (eq. 10)"
    t.add_row("Mathis 1997", _fixed(ref['mathis_mbps'], 4), rtt_note)
    t.add_row("PFTK 1998", _fixed(ref['pftk_mbps'], 4), rtt_note + f", W_max {inp['w']}")
    console.print(t)


@cmt_app.command("allocate")
def cmt_allocate(
    paths: Optional[List[str]] = typer.Option(None, "--path", help="b=MBPS,d=MS,p=LOSS (repeat per destination)"),
    rbuf: str = typer.Option(..., "--rbuf", help="Shared receive buffer: bytes, or 128KB (KB = 1000 B), 128KiB"),
    solver: str = typer.Option("dp", "--solver", help="dp (exact), milp (HiGHS) or heuristic (eq. 61)"),
    k: int = typer.Option(1, "--k", help="Step of the eq. 61 heuristic"),
    model: str = typer.Option("markov", "--model", help="eta_i: markov (§6.2, independent loss) or renewal (footnote 5)"),
    packet_bytes: int = typer.Option(1500, "--packet-bytes", help="Packet size, bytes"),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object"),
) -> None:
    """Window limits per destination maximising the Markov throughput sum (paper 002 §5.2, eqs. 56-61)."""
    import dataclasses
    import json

    from ccscope.models.cmt import CmtInputError, allocate, parse_bytes

    paths = paths or []
    try:
        if not paths:
            raise CmtInputError("path", "at least one destination is needed (--path b=MBPS,d=MS,p=LOSS)")
        dests = [parse_cmt_path(text, i) for i, text in enumerate(paths)]
        res = allocate(dests, parse_bytes(rbuf), solver=solver, k=k, objective=model, packet_bytes=packet_bytes)
    except CmtInputError as e:
        raise cmt_fail(e, paths)
    except ValueError as e:  # the Markov model's own errors name their field
        raise fail(e)
    except ImportError as e:
        err.print(f"error: --model {model}: the Markov model is not in this build ({e})", markup=False,
                  highlight=False, soft_wrap=True)
        raise typer.Exit(1)
    if as_json:
        print(json.dumps({"paths": [dataclasses.asdict(x) for x in dests], "model": model, **res.to_dict()}))
        return
    t = Table(title=f"window limits ({model} model, {solver}{f', k = {k}' if solver == 'heuristic' else ''}; "
                    f"W_total = {res.w_total} packets)")
    for col in ("path", "b Mbit/s", "d ms", "p", "a_i", "limit pkts", "limit bytes", "Mbit/s"):
        t.add_column(col, justify="right", overflow="fold")
    for i, (dst, c, a, thr) in enumerate(zip(dests, res.limits_packets, res.upper_bounds, res.throughput_mbps)):
        t.add_row(str(i + 1), f"{dst.b_mbps:g}", f"{dst.d_ms:g}", f"{dst.p:g}", str(a), str(c),
                  str(c * packet_bytes), f"{thr:.4f}")
    t.add_row("all", "", "", "", "", str(sum(res.limits_packets)), str(sum(res.limits_bytes)), f"{res.total_mbps:.4f}")
    console.print(t)
    console.print(f"solve {res.solve_time_s * 1e3:.2f} ms, objective {res.objective_time_s * 1e3:.2f} ms "
                  f"({res.evaluations} windows)", highlight=False)



COLUMN_HELP = "Column to analyse (default: throughput_mbps, or the only numeric one)"
SERIES_HELP = ("Parquet time series, or a results folder: its link series (flow -1) from timeseries.parquet. "
               "The column is throughput_mbps (what left the link per bin) unless --column names another")


def _stats_fail(e: ValueError) -> SystemExit:
    """One line naming the CLI's option or argument for a statistics input error."""
    from ccscope.stats import SeriesTooShortError

    if isinstance(e, SeriesTooShortError):
        return fail(ValueError(f"--method {e.method}: {e.detail}"))
    import re

    msg = str(e)
    for word, opt in (("column", "--column"), ("series", "SERIES")):
        if msg.startswith(word):
            msg = opt + msg[len(word):]
    # "whittle: aggregation must be ..., got 0" names the fit argument: name the option that set it, once.
    m = re.match(r"^(rs|aggvar|wavelet|whittle): (min_scale|max_scale|j1|j2|aggregation)\b(.*)$", msg)
    if m:
        method, opt, rest = m.group(1), "--" + m.group(2).replace("_", "-"), m.group(3)
        got = re.match(r"^ (must be .*), got (.+)$", rest)
        msg = f"{opt} {got.group(2)}: {got.group(1)} ({method})" if got else f"{opt}{rest} ({method})"
    elif re.match(r"^(rs|aggvar|wavelet|whittle): ", msg):  # the estimator's own refusal (a constant series)
        msg = "--method " + msg
    return fail(ValueError(msg))


@stats_app.command("hurst")
def stats_hurst(
    series: Path = typer.Argument(..., help=SERIES_HELP),
    method: str = typer.Option("all", "--method", help="all, rs, aggvar, wavelet or whittle"),
    column: Optional[str] = typer.Option(None, "--column", help=COLUMN_HELP),
    min_scale: Optional[int] = typer.Option(None, "--min-scale", help="R/S, aggvar: smallest block, bins (default 10)"),
    max_scale: Optional[int] = typer.Option(None, "--max-scale", help="R/S, aggvar: largest block, bins (default n/100)"),
    j1: Optional[int] = typer.Option(None, "--j1", help="wavelet: first octave of the fit (default 7)"),
    j2: Optional[int] = typer.Option(None, "--j2", help="wavelet: last octave of the fit (default j_max - 3)"),
    aggregation: Optional[int] = typer.Option(
        None, "--aggregation", help="whittle: fit the means over blocks of this many bins (default 128; 1: full band)"),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table"),
) -> None:
    """Hurst parameter of a series: R/S (Anis-Lloyd), aggregated variance, Abry-Veitch wavelet, Whittle."""
    import json

    from ccscope import stats

    methods = list(stats.METHODS) if method == "all" else [method]
    if method != "all" and method not in stats.METHODS:
        raise fail(ValueError(f"--method {method}: not one of all, {', '.join(stats.METHODS)}"))
    blocks = {"min_scale": min_scale, "max_scale": max_scale}
    fits = {"rs": blocks, "aggvar": blocks, "wavelet": {"j1": j1, "j2": j2}, "whittle": {"aggregation": aggregation}}
    try:
        s = stats.load_series(series, column)
        res = [stats.hurst(s.values, m, **{k: v for k, v in fits[m].items() if v is not None}) for m in methods]
    except ValueError as e:
        raise _stats_fail(e)
    if as_json:
        print(json.dumps({"source": s.source, "column": s.column, "bin_s": s.bin_s,
                          "estimates": [r.to_dict() for r in res]}, indent=2))
        return
    t = Table(title=f"{s.source}: {s.column} ({len(s.values)} points)")
    for col in ["method", "H", "95% CI", "fit range", "unit"]:
        t.add_column(col, justify="left" if col in ("method", "unit") else "right", overflow="fold")
    for r in res:
        ci = f"{r.ci[0]:.3f} .. {r.ci[1]:.3f}" if r.ci is not None else "-"
        t.add_row(r.method, f"{r.hurst:.3f}", ci, f"{r.fit_range[0]:.4g} .. {r.fit_range[1]:.4g}", r.fit_unit)
    console.print(t)


def _num(v: float, digits: int) -> str:
    """A float with `digits` decimals, "-" for NaN."""
    return "-" if v != v else f"{float(v):.{digits}f}"


def _whole_bins(opt: str, seconds: float, bin_s: float) -> int:
    import math

    from ccscope.stats.condprob import MAX_BLOCK_BINS

    k = seconds / bin_s
    if not (seconds > 0 and math.isfinite(seconds)):
        raise ValueError(f"{opt} {seconds}: not a positive whole number of {bin_s} s bins")
    # Before round(): a count of bins beyond the float range is infinite, and round() of it raises OverflowError.
    if k > MAX_BLOCK_BINS:  # checked here so the error names the option, not the table's argument
        raise ValueError(f"{opt} {seconds:g}: {k:.3g} bins of {bin_s} s, above the limit of {MAX_BLOCK_BINS}")
    if round(k) < 1 or abs(k - round(k)) > 1e-6 * max(1.0, k):
        raise ValueError(f"{opt} {seconds}: not a positive whole number of {bin_s} s bins")
    return int(round(k))


@stats_app.command("condprob")
def stats_condprob(
    series: Path = typer.Argument(..., help=SERIES_HELP),
    t1: float = typer.Option(2.0, "--t1", help="T1, seconds: the past window (paper 003: 2 s)"),
    t2: float = typer.Option(2.0, "--t2", help="T2, seconds: the future window (paper 003: 2 s)"),
    column: Optional[str] = typer.Option(None, "--column", help=COLUMN_HELP),
    bin_s: Optional[float] = typer.Option(None, "--bin-s", help="Bin width, seconds (default: the step of time_s)"),
    partition: str = typer.Option("sigma", "--partition", help="sigma (mean +- k sigma, the paper's) or quantile"),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table"),
) -> None:
    """Off-line CondProb table Pr{L2 | L1} (paper 003 §2.3, App. A.1) with E(L2 | L1) and the entropies of §2.4."""
    import json
    import math

    from ccscope import stats

    try:
        if partition not in ("sigma", "quantile"):
            raise ValueError(f"--partition {partition}: not one of sigma, quantile")
        s = stats.load_series(series, column)
        width = bin_s if bin_s is not None else s.bin_s
        if width is None:
            raise ValueError("--bin-s: the series has no time_s column, or a single row (no step); give the bin width")
        if not (width > 0 and math.isfinite(width)):
            raise ValueError(f"--bin-s {width}: must be positive")
        k1, k2 = _whole_bins("--t1", t1, width), _whole_bins("--t2", t2, width)
        if len(s.values) // (k1 + k2) < 2:  # the table's own message names its argument x, not an option
            raise ValueError(f"--t1 {t1:g} + --t2 {t2:g}: {k1 + k2} bins a block, but the series has {len(s.values)} "
                             "bins; the table needs at least 2 blocks")
        tab = stats.condprob_table(s.values, k1, k2, partition)
    except ValueError as e:
        raise _stats_fail(e)
    if as_json:
        print(json.dumps({"source": s.source, "column": s.column, "bin_s": width, "t1_s": t1, "t2_s": t2,
                          **tab.to_dict()}, indent=2))
        return
    p, e, ent = tab.probabilities(), tab.expected_next(), tab.row_entropy()
    t = Table(title=f"{s.source}: {s.column}, T1 = {t1:g} s, T2 = {t2:g} s, {tab.blocks} blocks; "
                    "columns 1-8: Pr{L2 = column | L1}, E: E(L2 | L1), S: row entropy (nats)", box=box.SIMPLE_HEAD,
              collapse_padding=True)
    for col in ["L1", "h"] + [str(k) for k in range(1, 9)] + ["E", "S"]:
        t.add_column(col, justify="right", no_wrap=True, min_width=5 if col == "S" else None)
    for i in range(8):
        t.add_row(str(i + 1), str(int(tab.h[i])), *[_num(v, 2) for v in p[i]], _num(e[i], 2), _num(ent[i], 3))
    console.print(t)
    avg, cond = stats.average_entropy(tab), stats.average_entropy(tab, weighted=True)
    console.print(f"average entropy (rows with h >= {stats.condprob.ENTROPY_MIN_COUNT}): {_num(avg, 3)} nats; "
                  f"H(L2|L1): {_num(cond, 3)} nats; Kendall tau_b: {_num(tab.kendall_tau(), 3)}")


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:  # pragma: no cover
        sys.exit(130)


if __name__ == "__main__":  # pragma: no cover
    main()
