"""The runs behind paper 003's SAC figures (Figs. 9-18, Tables 2-3; specs/003-mtsc.md §4): one run per `Run`,
what each measures, and the two-stage order in which they execute on a process pool.

Most runs are independent. Three kinds read a file another run writes, so they start when it finishes:
- `oracle` (§4.3.2 perfect prediction, spec §2.4 [D]): pass 1 is the `online` run of the same scenario and
  seed with the SAC flow's 10 ms series kept; the background aggregate it saw (bottleneck minus the SAC flow)
  becomes the level of every [t, t + T2) window (`ccscope.stats.condprob.oracle_levels`), which pass 2 reads;
- `trained` (Fig. 16 training time): the table of an on-line run of `train_s` seconds on seed + TRAIN_SEED_OFFSET,
  frozen (counts, mu, sigma) and loaded by a fresh run on the report seed (an empty table for train_s = 0);
- `foreign` (Fig. 16's alpha-1.95 table): the table the alpha-1.95 `online` run of the same seed ended with.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import tempfile
import time
from collections import deque
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence

import numpy as np
import tomli_w

from ccscope import api, experiment, provenance
from ccscope.runner import Runner
from ccscope.stats import condprob as cp
from mtsc_scenarios import (BASE_RTT_MS, BIN_S, REGISTERED, background_dict, controlled_indices, controller_params,
                            registered_idle_mean, with_controlled)

# The training runs of Fig. 16 use fresh seeds (never a report or development seed).
TRAIN_SEED_OFFSET = 1000
T2_S = float(REGISTERED["controller"]["t2_s"])
T1_S = float(REGISTERED["controller"]["t1_s"])
PACKET_BYTES = 1000

# variant -> (controller, extra parameters); threshold/shift/theta come from the Run.
VARIANTS = ("generic", "online", "threshold", "oracle", "inverted", "random", "trained", "foreign", "train")
# SAC's level series (spec §6 item 1): the flow's own gamma (the registered primary, spec A1) or every flow's data
# arriving at the receiving host, reported by the receiver on the ACKs (the secondary variant).
SIGNALS = ("own", "receiver_aggregate")


@dataclass(frozen=True)
class Run:
    """One simulation: the background (alpha, load, bottleneck, size law) and the controlled flows."""

    variant: str
    seed: int
    duration_s: float
    alpha: float = 1.05
    load_mbps: float = 5.0
    bottleneck_mbps: float = 10.0
    size: str = "pareto"
    n: int = 1
    rtt_ms: float = BASE_RTT_MS
    theta: float = 8.0
    shift: float = 0.0
    train_s: float = 0.0
    signal: str = "own"
    # ns-2's TCP overhead_ on the 32 background clients, ms (docs/deviations.md, "Measured at the spec's run
    # length" (9)); 0 = none, the committed report.
    tcp_overhead_ms: float = 0.0

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"variant {self.variant!r}: one of {', '.join(VARIANTS)}")
        if self.signal not in SIGNALS:
            raise ValueError(f"signal {self.signal!r}: one of {', '.join(SIGNALS)}")
        if self.signal != "own" and self.variant not in ("online", "inverted"):
            raise ValueError(f"signal {self.signal!r}: only the online and inverted variants read another signal")
        if not 0.0 <= self.tcp_overhead_ms <= 1000.0:
            raise ValueError(f"tcp_overhead_ms {self.tcp_overhead_ms!r}: in [0, 1000]")

    @property
    def key(self) -> tuple:
        return tuple(asdict(self).values())

    def parent(self) -> Optional["Run"]:
        """The run whose output this one reads (module docstring), or None."""
        if self.variant == "oracle":
            return replace(self, variant="online", theta=8.0, shift=0.0)
        if self.variant == "trained" and self.train_s > 0:
            return Run("train", self.seed + TRAIN_SEED_OFFSET, self.train_s, alpha=self.alpha, load_mbps=self.load_mbps,
                       tcp_overhead_ms=self.tcp_overhead_ms)
        if self.variant == "foreign":
            return replace(self, variant="online", alpha=1.95)
        return None

    def keeps_series(self) -> bool:
        """Pass 1 of an oracle (every single-flow on-line base run) and pass 2 keep the SAC flow's series."""
        return self.n == 1 and self.variant in ("online", "oracle") and self.rtt_ms == BASE_RTT_MS \
            and self.bottleneck_mbps == 10.0 and self.size == "pareto"


def sac_params(run: Run, input_file: Optional[str]) -> tuple[str, dict]:
    """(controller, parameters) of the controlled flows of `run`."""
    v = run.variant
    if v == "generic":
        return "lied", controller_params("lied")
    p = controller_params("sac", shift=run.shift)
    if run.signal != "own":
        p.update(signal=run.signal)
    if v == "threshold":
        p.update(schedule="threshold", theta=run.theta)
    elif v == "inverted":
        p.update(invert=True)
    elif v == "random":
        p.update(table="random", table_seed=run.seed)  # one Dirichlet table per seed (spec §2.4 [D])
    elif v == "oracle":
        p.update(table="oracle", oracle_file=input_file)
    elif v in ("trained", "foreign"):
        p.update(table="file", table_file=input_file)
    return "sac", p


def scenario_dict(run: Run, input_file: Optional[str] = None) -> dict:
    idle = registered_idle_mean(run.alpha, run.load_mbps, run.bottleneck_mbps, run.size)
    d = background_dict(run.alpha, run.duration_s, idle_mean_s=idle, bottleneck_mbps=run.bottleneck_mbps,
                        size=run.size, name=f"mtsc_{run.variant}")
    if run.tcp_overhead_ms > 0:
        # The departure that breaks the phase lock: each client's sends wait ns-2's random overhead_.
        for f in d["flows"]:
            f["send_overhead_ms"] = float(run.tcp_overhead_ms)
    controller, params = sac_params(run, input_file)
    d = with_controlled(d, controller, params, count=run.n, rtt_ms=run.rtt_ms, flow_series=run.keeps_series())
    if run.signal == "receiver_aggregate" and run.keeps_series():
        # The 10 ms series of every flow the SAC flow's receiving host gets, for Spearman(receiver V, background V).
        host = d["flows"][-1]["route"][-1]
        for f in d["flows"]:
            if f["route"][-1] == host:
                f["timeseries"] = True
    return d


def same_host_indices(d: dict, flow: int) -> list[int]:
    """Flow numbers whose data arrives at the same host as flow `flow`'s (the last link of the route)."""
    out, i, host = [], 0, None
    for f in d["flows"]:
        n = int(f.get("count", 1))
        if i <= flow < i + n:
            host = f["route"][-1]
        i += n
    i = 0
    for f in d["flows"]:
        n = int(f.get("count", 1))
        if f["route"][-1] == host:
            out.extend(range(i, i + n))
        i += n
    return out


def _one_series(ts, mask, n_bins: int, bin_s: float = BIN_S) -> np.ndarray:
    """The summed throughput (Mbit/s) of the rows `mask` per `bin_s` bin, in time order; rows past the end
    count in the last bin."""
    s = ts[mask].sort_values("time_s")
    out = np.zeros(n_bins)
    idx = np.minimum((s["time_s"].to_numpy() / bin_s).round().astype(int), n_bins - 1)
    np.add.at(out, idx, s["throughput_mbps"].to_numpy(dtype=np.float64))
    return out


def _series(res, flows: Sequence[int], n_bins: int, bin_s: float = BIN_S) -> tuple[np.ndarray, np.ndarray]:
    """(bottleneck, controlled flows') throughput series in Mbit/s, one value per `bin_s` (10 ms), aligned on time."""
    ts = res.timeseries
    return (_one_series(ts, ts["flow"] == -1, n_bins, bin_s),
            _one_series(ts, ts["flow"].isin(list(flows)), n_bins, bin_s))


def _blocks(x: np.ndarray, b: int) -> np.ndarray:
    return x[: len(x) // b * b].reshape(-1, b).sum(axis=1)


def execute(run: Run, input_file: Optional[str] = None, oracle_levels: Optional[np.ndarray] = None,
            oracle_stats: Optional[tuple] = None) -> dict:
    """Run `run` and return what the report needs (small; the series stay here)."""
    t0 = time.perf_counter()
    d = scenario_dict(run, input_file)
    res = api.run(api.Scenario(tomli_w.dumps(d), None), seed=run.seed)
    wall = time.perf_counter() - t0
    ctl = list(controlled_indices(d))
    fl = res.flows.set_index("flow")
    dur = float(run.duration_s)
    delivered = [float(fl.loc[i, "delivered"]) for i in ctl]
    sent = [float(fl.loc[i, "sent"]) for i in ctl]
    dropped = [float(fl.loc[i, "dropped"]) for i in ctl]
    pps = [x / dur for x in delivered]
    link = res.links[res.links["link"] == res.scenario["monitor"]]
    link_mbps = float(link["throughput_mbps"].iloc[0])
    ctl_mbps = sum(delivered) * PACKET_BYTES * 8 / dur / 1e6
    loss = sum(dropped) / max(1.0, sum(sent))
    k = float(REGISTERED["controller"]["k"])
    out = {
        "run": asdict(run), "wall_s": wall,
        "pps": pps, "total_pps": float(sum(pps)), "loss": loss,
        # gamma_k = (1 - c)^k nu (eq. 4) of the controlled flows together, packets/s.
        "gamma_pps": float((1 - loss) ** k * sum(pps)),
        "background_mbps": link_mbps - ctl_mbps, "link_mbps": link_mbps,
        "largest_file_bytes": float(res.flows["largest_file_bytes"].max(skipna=True)),
    }
    row = fl.loc[ctl[0]]
    if run.variant != "generic":
        out["boosted_share"] = float(row["sac_boosted_increases"]) / max(1.0, float(row["sac_increases"]))
        out["no_row"] = int(row["sac_no_row"])
    if run.variant in ("online", "train"):
        tab = cp.sac_table(row.to_dict())
        out["table_toml"] = cp.sac_table_toml(tab)
        out["table_counts"] = tab.counts.tolist()
    if run.keeps_series():
        n_bins = int(round(dur / BIN_S))
        link_s, own = _series(res, ctl, n_bins)
        bg = np.clip(link_s - own, 0.0, None)
        b1, b2 = int(round(T1_S / BIN_S)), int(round(T2_S / BIN_S))
        # Spec §6 item 1: does the flow's own throughput move with the background or against it?
        from scipy import stats as sst

        own_v1, bg_v1 = _blocks(own, b1 + b2)[:], _blocks(bg, b1 + b2)
        out["spearman_own_bg"] = float(sst.spearmanr(own_v1, bg_v1).statistic) if len(own_v1) > 2 else math.nan
        if run.signal == "receiver_aggregate":
            # Spec §6 item 1: the same for every flow's data arriving at the SAC flow's receiving host.
            host = _one_series(res.timeseries, res.timeseries["flow"].isin(same_host_indices(d, ctl[0])), n_bins)
            host_v1 = _blocks(host, b1 + b2)
            out["spearman_host_bg"] = float(sst.spearmanr(host_v1, bg_v1).statistic) if len(host_v1) > 2 else math.nan
        if run.variant == "online":
            lv, mu, sigma = cp.oracle_levels(bg, BIN_S, T2_S)
            out["oracle_toml"] = cp.oracle_levels_toml(lv, BIN_S, t2_s=T2_S, mu=mu, sigma=sigma,
                                                       source=f"pass 1: online SAC, seed {run.seed}")
            out["oracle_stats"] = (mu, sigma)
        elif oracle_levels is not None and oracle_stats is not None:
            # Spec §2.4 [D]: the share of T2 blocks whose realised level in pass 2 differs from the oracle's.
            realised = cp.levels(_blocks(bg, b2), cp.sigma_edges(*oracle_stats))
            told = oracle_levels[:: b2][: len(realised)]
            out["oracle_mismatch"] = float(np.mean(realised[: len(told)] != told))
    return out


def _child_input(child: Run, parent_out: dict, folder: Path) -> tuple[Optional[str], dict]:
    """Write the file `child` reads from its parent's output; extra arguments for `execute`."""
    name = "_".join(str(v).replace(".", "p") for v in child.key)
    if child.variant == "oracle":
        path = folder / f"oracle_{name}.toml"
        path.write_text(parent_out["oracle_toml"])
        digits = parent_out["oracle_toml"].split('levels = "', 1)[1].split('"', 1)[0]
        lv = np.frombuffer(digits.encode(), dtype=np.uint8) - ord("0")
        return str(path), {"oracle_levels": lv, "oracle_stats": parent_out["oracle_stats"]}
    path = folder / f"table_{name}.toml"
    path.write_text(parent_out["table_toml"])
    return str(path), {}


EMPTY_TABLE = cp.sac_table_toml(cp.CondProbTable(np.zeros((8, 9), dtype=np.int64), 0, 0, 0, (0.0, 0.0), (0.0, 0.0)))


def _start(pool, run: Run, folder: Path, parent_out: Optional[dict]):
    if run.variant == "trained" and run.train_s == 0:
        path = folder / "table_empty.toml"
        path.write_text(EMPTY_TABLE)
        return pool.submit(execute, run, str(path))
    if parent_out is None:
        return pool.submit(execute, run)
    f, kw = _child_input(run, parent_out, folder)
    return pool.submit(execute, run, f, **kw)


@functools.lru_cache(maxsize=1)
def _sources_sha256() -> str:
    """The Python code a run's output is made with: every module of the ccscope package and every file of
    this experiment's folder (the simulation itself is the native build's)."""
    import ccscope

    files = sorted(Path(ccscope.__file__).parent.rglob("*.py")) + sorted(
        p for p in Path(__file__).parent.iterdir() if p.suffix in (".py", ".toml"))
    h = hashlib.sha256()
    for p in files:
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def fingerprint(run: Run, memo: Optional[dict] = None) -> str:
    """What a run's output depends on besides its description: the native build, the Python sources, the
    scenario it simulates and, for a run that reads another's output, that run's fingerprint. `memo` (a dict
    the caller keeps for one check) holds the ones computed, so a parent's is computed once for all its children."""
    # repr, not the key: 60 and 60.0 are one key but may describe different scenario text.
    seen = repr(run)
    if memo is not None and seen in memo:
        return memo[seen]
    parent = run.parent()
    canon = json.dumps({"build": provenance.build_id(), "sources": _sources_sha256(),
                        "scenario": scenario_dict(run, None),
                        "parent": fingerprint(parent, memo) if parent else None},
                       sort_keys=True, separators=(",", ":"), default=str)
    fp = hashlib.sha256(canon.encode()).hexdigest()[:20]
    if memo is not None:
        memo[seen] = fp
    return fp


def load_cache(path: Optional[Path]) -> dict:
    """{Run.key: output} of the runs a previous `run_all` appended to `path` (JSON lines; a run's last line)."""
    out: dict = {}
    if path is None or not path.exists():
        return out
    for line in path.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            out[Run(**r["run"]).key] = r
    return out


def fresh(outputs: dict) -> dict:
    """The outputs this code would make again (same fingerprint); a line this code cannot even describe (a
    scenario no longer registered, say) is not."""
    memo: dict = {}

    def same(r: dict) -> bool:
        try:
            return r.get("fingerprint") == fingerprint(Run(**r["run"]), memo)
        except (ValueError, KeyError, TypeError):
            return False
    return {k: r for k, r in outputs.items() if same(r)}


def run_all(runs: Iterable[Run], jobs: int, progress: Optional[Callable[[int, int, dict], None]] = None,
            cache: Optional[Path] = None, reuse: bool = False, quiet: bool = True) -> dict:
    """Execute `runs` and their parents (each once), children as soon as their parent is done. Each output is
    appended to `cache` (JSON lines, with its `fingerprint`) as soon as it ends; at most `jobs` runs are started
    at a time, so on one process a run is in the log before the next one starts. With `reuse`, runs already
    there with this build's fingerprint are not run again (a parent is, when one of its children is missing:
    its pass-1 file is not kept). Returns {Run.key: output}."""
    wanted: dict = {}
    for r in runs:
        for x in (r.parent(), r):
            if x is not None:
                wanted.setdefault(x.key, x)
    children: dict = {}
    roots = []
    for r in wanted.values():
        p = r.parent()
        (children.setdefault(p.key, []) if p is not None else roots).append(r)
    out: dict = {}
    build = provenance.build_id()  # the build that starts the runs (read before any of them)
    if cache is not None:  # a fresh run starts ccscope's own log again; a foreign file is refused, never replaced
        experiment.start_log(cache, keep=reuse)
    have = fresh(load_cache(cache)) if reuse else {}

    def cached(r: Run) -> bool:
        return r.key in have and all(cached(c) for c in children.get(r.key, []))

    def reuse_tree(r: Run) -> None:
        out[r.key] = have[r.key]
        for c in children.get(r.key, []):
            reuse_tree(c)

    with tempfile.TemporaryDirectory(prefix="ccscope-mtsc-") as tmp, Runner(jobs, "sac runs", quiet) as pool:
        folder = Path(tmp)
        log = open(cache, "a") if cache is not None else None
        try:
            todo = []
            for r in roots:
                if cached(r):
                    reuse_tree(r)
                else:
                    todo.append(r)
            pool.expect(len(wanted) - len(out))
            # Parents first so that their children can start while the other roots run; a finished parent's
            # children go ahead of the roots still waiting.
            ready = deque((r, None) for r in sorted(todo, key=lambda r: (r.key not in children, r.variant == "train")))
            pending: dict = {}
            while ready or pending:
                while ready and len(pending) < max(1, jobs):
                    r, parent_out = ready.popleft()
                    pending[_start(pool, r, folder, parent_out)] = r
                for fut in pool.wait_any(pending):
                    r = pending.pop(fut)
                    res = fut.result()
                    res["build"], res["fingerprint"] = build, fingerprint(r)
                    # The pass-1 levels are large: only the children that write them to their input file keep them.
                    levels = res.pop("oracle_toml", None)
                    out[r.key] = res
                    pool.done()
                    given = {**res, "oracle_toml": levels} if levels is not None else res
                    ready.extendleft((c, given) for c in reversed(children.get(r.key, [])))
                    if log is not None:
                        log.write(json.dumps(res) + "\n")
                        log.flush()
                    if progress:
                        progress(len(out), len(wanted), res)
        finally:
            if log is not None:
                log.close()
    return out
