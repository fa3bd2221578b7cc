"""Tuning controller parameters: an optuna study over a scenario, evaluated on held-out traces.

Trials are asked in batches of ``batch`` and their runs go to the same dask cluster and point store as
sweeps (``DIR/points``), so a trial whose runs were done before costs nothing. The study lives in
``DIR/study.db`` (optuna's RDB storage on sqlite) and resumes where it stopped. Every trial's TPE
sampler is seeded from ``seed`` and the trial's position in the study, so a run, and a run
interrupted while a batch runs and then resumed, suggest the same parameters whatever the cluster.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Union

from ccscope import api, provenance, store
from ccscope.arguments import ArgumentError
from ccscope.grid import MAX_RUNS, Choice, Interval
from ccscope.progress import Progress
from ccscope.sweep import SUMMARY_FIELDS, PointRunner, absolute, clean_temporaries, plan

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from distributed import Client

STUDY_NAME = "ccscope-tune"
# The files whose presence marks an output folder as a tuning's (one a rerun may resume in).
FOLDER_MARKERS = ("study.db", "points")
# How `ccscope tune` names tune()'s arguments (its errors name the options, the API's the arguments).
CLI_OPTIONS = {"trials": "--trials", "seeds": "--seeds", "batch": "--batch", "space": "--param",
               "objective": "--objective", "out": "-o"}
#: Trials whose runs are queued together: fixed (not the cluster's size) so the search is the same anywhere.
DEFAULT_BATCH = 4


@dataclass(frozen=True)
class Objective:
    """A summary metric to maximize or minimize; a leading ``-`` negates it (``-signal_delay_p95_ms``)."""

    metric: str
    sign: float
    direction: str

    @classmethod
    def parse(cls, text: str, direction: str = "maximize") -> "Objective":
        metric = text[1:] if text.startswith("-") else text
        if metric not in SUMMARY_FIELDS:
            raise ValueError(f"--objective {text}: not a summary metric (one of {', '.join(SUMMARY_FIELDS)})")
        if direction not in ("maximize", "minimize"):
            raise ValueError(f"--direction {direction}: not one of maximize, minimize")
        return cls(metric, -1.0 if text.startswith("-") else 1.0, direction)

    @property
    def label(self) -> str:
        return ("-" if self.sign < 0 else "") + self.metric

    def of(self, summaries: list[dict]) -> float:
        """The mean of the signed metric over runs; NaN if any run has none."""
        vals = [s.get(self.metric) for s in summaries]
        if not vals or any(v is None or not math.isfinite(float(v)) for v in vals):
            return math.nan
        return self.sign * sum(float(v) for v in vals) / len(vals)


def parse_traces(opt: str, text: Optional[str]) -> list[tuple[str, dict]]:
    """``"A,B+C"`` -> ``[("A", {data_link.trace: A}), ("B+C", {data_link.trace: B, ack_link.trace: C})]``."""
    out: list[tuple[str, dict]] = []
    for item in (t.strip() for t in (text or "").split(",")):
        if not item:
            if text:
                raise ValueError(f"{opt} {text}: empty trace name")
            continue
        down, plus, up = item.partition("+")
        if not down or (plus and not up):
            raise ValueError(f"{opt} {item}: expected DOWN or DOWN+UP trace names")
        ov = {"data_link.trace": down, **({"ack_link.trace": up} if plus else {})}
        out.append((item, ov))
    return out


def _suggest(trial: Any, key: str, dim: Union[Interval, Choice]) -> Any:
    if isinstance(dim, Choice):
        return trial.suggest_categorical(key, list(dim.values))
    if dim.integer:
        return trial.suggest_int(key, dim.low, dim.high, step=dim.step or 1, log=dim.log)
    return trial.suggest_float(key, float(dim.low), float(dim.high), log=dim.log,
                               step=float(dim.step) if dim.step is not None else None)


def _spec(base: api.Scenario, space: dict, objective: Objective, tune_traces: list, seeds: int, seed: int,
          batch: int) -> str:
    """What makes a study this study: a resumed one must have been started with the same."""
    dims = {k: repr(v) for k, v in space.items()}
    # Content keys of the scenario on each tuning trace: an edited trace, controller or build is another study.
    keys = [plan(base, [ov], [1])[0].key for _, ov in tune_traces]
    return json.dumps({"scenario": keys, "space": dims, "objective": objective.label, "direction": objective.direction,
                       "traces": [n for n, _ in tune_traces], "seeds": seeds, "seed": seed, "batch": batch},
                      sort_keys=True)


@dataclass
class Tuning:
    """What :func:`tune` returns."""

    best_params: dict
    best_value: float
    best_trial: int
    trials: int
    table: "pd.DataFrame"  # one row per (set, trace, params): default or tuned


def _open_study(out: Path, spec: str, direction: str) -> Any:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = optuna.storages.RDBStorage(url=f"sqlite:///{(out / 'study.db').resolve()}")
    study = optuna.create_study(study_name=STUDY_NAME, storage=storage, direction=direction, load_if_exists=True)
    have = study.user_attrs.get("spec")
    if have is None:
        study.set_user_attr("spec", spec)
    elif have != spec:
        raise ArgumentError.naming("out", "holds a study of another tuning (the scenario, its inputs, the ccscope "
                                   "build, the parameters, objective, traces, seeds, seed or batch differ); give a new "
                                   "folder", value=out, path=True)
    # Trials left running by an interrupted run: ask their parameters again, in order (their runs are stored).
    from optuna.trial import TrialState

    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        study.enqueue_trial(t.params)
        study.tell(t.number, state=TrialState.FAIL)
    return study


def _done(study: Any) -> int:
    from optuna.trial import TrialState

    return sum(1 for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.FAIL))
               if "value_nan" in t.user_attrs or t.state == TrialState.COMPLETE)


def tune(
    scenario: Union[str, Path, api.Scenario],
    space: dict,
    objective: Objective,
    trials: int,
    out: Path,
    tune_traces: Optional[list] = None,
    report_traces: Optional[list] = None,
    seeds: int = 1,
    seed: int = 1,
    batch: int = DEFAULT_BATCH,
    jobs: Optional[int] = None,
    scheduler: Optional[str] = None,
    client: Optional["Client"] = None,
    progress: bool = False,
) -> Tuning:
    """Search `space` for the parameters that optimise `objective` (mean over tuning traces and seeds),
    then run the defaults and the best on the tuning and the held-out traces. A bad argument is an
    :class:`~ccscope.arguments.ArgumentError` naming it (``trials=0: need at least one trial``), and a bad
    `out` a :class:`~ccscope.store.OutputError` (``out PATH: ...``); ``ccscope tune`` names its options."""
    from contextlib import nullcontext

    import optuna
    import pandas as pd

    from ccscope.cluster import open_client

    if trials < 1:
        raise ArgumentError.naming("trials", "need at least one trial", value=trials)
    if seeds < 1:
        raise ArgumentError.naming("seeds", "need at least one seed", value=seeds)
    if batch < 1:
        raise ArgumentError.naming("batch", "need at least one trial per batch", value=batch)
    if not space:
        raise ArgumentError.naming("space", "give at least one parameter to tune")
    base = absolute(scenario if isinstance(scenario, api.Scenario) else api.Scenario.load(scenario))
    base.validate()
    tune_sets = tune_traces or [("(scenario)", {})]
    report_sets = report_traces or []
    # Every trial on every tuning trace and seed, then default and best on every trace: bounded as a sweep is.
    runs = seeds * (trials * len(tune_sets) + 2 * (len(tune_sets) + len(report_sets)))
    if runs > MAX_RUNS:
        raise ArgumentError.naming("trials", f"{runs} runs, more than the limit of {MAX_RUNS}", value=trials)
    for _, ov in report_sets:
        plan(base, [ov], [1])  # a missing trace fails here, before anything runs (tuning traces: in _spec)
    spec = _spec(base, space, objective, tune_sets, seeds, seed, batch)
    # Each dimension's ends must be valid values: check both before any trial.
    for key, dim in space.items():
        ends = dim.values if isinstance(dim, Choice) else (dim.low, dim.high)
        for v in ends:
            plan(base, [{key: v}], [1])
    out = Path(out)
    store.check_resumable_folder(out, FOLDER_MARKERS, "tuning", option="out")
    seed_list = list(range(1, seeds + 1))

    def runs_for(params: dict, sets: list) -> list:
        return [plan(base, [{**ov, **params}], seed_list) for _, ov in sets]

    with (open_client(scheduler, jobs) if client is None else nullcontext(client)) as c, \
            Progress(progress, "tune") as bar:
        out.mkdir(parents=True, exist_ok=True)  # once the cluster is up: a bad --scheduler leaves no folder
        clean_temporaries(out)
        study = _open_study(out, spec, objective.direction)
        runner = PointRunner(c, base, out / "points", bar)
        while (done := _done(study)) < trials:
            bar.describe(f"tune: trials {done + 1}-{min(done + batch, trials)} of {trials}, runs")
            asked = []
            for i in range(min(batch, trials - done)):
                # Seeded by position: the same history gives the same suggestion, resumed or not.
                study.sampler = optuna.samplers.TPESampler(seed=seed * 1_000_003 + done + i)
                t = study.ask()
                params = {k: _suggest(t, k, d) for k, d in space.items()}
                per_set = runs_for(params, tune_sets)
                runner.submit([r for rs in per_set for r in rs])
                asked.append((t, per_set))
            runner.drain()
            for t, per_set in asked:
                value = objective.of([runner.results[r.key] for rs in per_set for r in rs])
                if math.isnan(value):
                    t.set_user_attr("value_nan", True)
                    study.tell(t, state=optuna.trial.TrialState.FAIL)
                else:
                    study.tell(t, value)
        try:
            best = study.best_trial
        except ValueError:
            raise ArgumentError.naming("objective", "no trial gave a finite value", value=objective.label) from None
        bar.describe("tune: default and tuned on every trace, runs")
        rows = []
        evals = []
        for set_name, sets in (("tune", tune_sets), ("held-out", report_sets)):
            for (name, ov), (label, params) in ((s, p) for s in sets for p in (("default", {}), ("tuned", best.params))):
                rs = plan(base, [{**ov, **params}], seed_list)
                runner.submit(rs)
                evals.append((set_name, name, label, rs))
        runner.drain()
    for set_name, name, label, rs in evals:
        summaries = [runner.results[r.key] for r in rs]
        row = {"set": set_name, "trace": name, "params": label, "objective": objective.of(summaries)}
        for m in SUMMARY_FIELDS:
            vals = [s.get(m) for s in summaries]
            row[m] = (sum(float(v) for v in vals) / len(vals)) if all(v is not None for v in vals) else math.nan
        rows.append(row)
    table = pd.DataFrame(rows, columns=["set", "trace", "params", "objective", *SUMMARY_FIELDS])
    store.write_file(out / "tune.parquet", lambda p: table.to_parquet(p, index=False))
    best_rec = {"objective": objective.label, "direction": objective.direction, "value": best.value,
                "trial": best.number, "params": best.params, "trials": _done(study), "ccscope": provenance.build_id()}
    text = json.dumps(best_rec, indent=1, default=str) + "\n"
    store.write_file(out / "best.json", lambda p: p.write_text(text))
    return Tuning(dict(best.params), float(best.value), best.number, _done(study), table)


def render_table(t: Tuning, objective: Objective) -> Any:
    """Default against tuned, per trace, on the tuning traces and the held-out ones."""
    from rich import box
    from rich.table import Table

    params = ", ".join(f"{k} = {v:.4g}" if isinstance(v, float) else f"{k} = {v}" for k, v in t.best_params.items())
    tab = Table(title=f"tuned ({params}; trial {t.best_trial} of {t.trials}) vs default", box=box.SIMPLE_HEAD)
    shown = (("Mbit/s", "throughput_mbps", 3), ("p95 signal ms", "signal_delay_p95_ms", 0), ("score", "score", 2))
    # The objective gets its own column unless it is one of those already shown.
    extra = objective.sign < 0 or objective.metric not in {m for _, m, _ in shown}
    tab.add_column("set", no_wrap=True)
    tab.add_column("trace (down)", overflow="fold")
    tab.add_column("params", no_wrap=True)
    for col in ([objective.label] if extra else []) + [h for h, _, _ in shown]:
        tab.add_column(col, justify="right", no_wrap=True)
    for r in t.table.to_dict(orient="records"):
        tab.add_row(r["set"], r["trace"].split("+")[0], r["params"], *([_num(r["objective"], 3)] if extra else []),
                    *(_num(r[m], d) for _, m, d in shown))
    return tab


def _num(v: Any, digits: int) -> str:
    return "-" if v is None or v != v else f"{float(v):.{digits}f}"
