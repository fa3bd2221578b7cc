"""The SAC runs' log (experiments/mtsc/sac_runs.py `run_all`): each run is in the log as soon as it ends, so
an interrupted report keeps what it made, and `--reuse` takes back only runs made by the same native build
from the same scenario (a cache keyed by content)."""

import json
from dataclasses import asdict

import pytest

from _experiments import load_experiment

load_experiment("mtsc")
import sac_runs  # noqa: E402  (experiments/mtsc, on sys.path through load_experiment)

RUNS = [sac_runs.Run("generic", s, 60.0) for s in (1, 2, 3)]


def _fake(logged_before, cache):
    def execute(run, input_file=None, **kw):
        logged_before.append(len(cache.read_text().splitlines()) if cache.exists() else 0)
        return {"run": asdict(run), "wall_s": 0.0, "total_pps": float(run.seed)}
    return execute


def test_on_one_process_each_run_is_logged_before_the_next_one_starts(tmp_path, monkeypatch):
    cache, seen = tmp_path / "sac_runs.jsonl", []
    monkeypatch.setattr(sac_runs, "execute", _fake(seen, cache))
    out = sac_runs.run_all(RUNS, 1, cache=cache)
    assert seen == [0, 1, 2]
    assert [json.loads(x)["run"]["seed"] for x in cache.read_text().splitlines()] == [1, 2, 3]
    assert sorted(r["total_pps"] for r in out.values()) == [1.0, 2.0, 3.0]


def test_reuse_takes_back_a_run_only_when_its_build_and_scenario_match(tmp_path, monkeypatch):
    cache, seen = tmp_path / "sac_runs.jsonl", []
    monkeypatch.setattr(sac_runs, "execute", _fake(seen, cache))
    sac_runs.run_all(RUNS, 1, cache=cache)
    lines = [json.loads(x) for x in cache.read_text().splitlines()]
    assert all(r["fingerprint"] == sac_runs.fingerprint(sac_runs.Run(**r["run"])) for r in lines)
    lines[1]["fingerprint"] = "made-by-another-build"
    del lines[2]["fingerprint"]  # a log written before fingerprints: not reusable either
    cache.write_text("".join(json.dumps(r) + "\n" for r in lines))
    seen.clear()
    sac_runs.run_all(RUNS, 1, cache=cache, reuse=True)
    assert len(seen) == 2  # seeds 2 and 3 ran again, seed 1 was taken back
    assert sac_runs.fresh(sac_runs.load_cache(cache)).keys() == {r.key for r in RUNS}


def test_the_fingerprint_changes_with_the_scenario_and_the_build(monkeypatch):
    a, b = sac_runs.Run("generic", 1, 60.0), sac_runs.Run("generic", 1, 60.0, load_mbps=2.5)
    assert sac_runs.fingerprint(a) == sac_runs.fingerprint(sac_runs.Run("generic", 1, 60.0))
    assert sac_runs.fingerprint(a) != sac_runs.fingerprint(b)
    before = sac_runs.fingerprint(a)
    monkeypatch.setattr(sac_runs.provenance, "build_id", lambda: "0.0.0+another")
    assert sac_runs.fingerprint(a) != before


def test_the_report_names_the_builds_that_made_its_runs(tmp_path, monkeypatch):
    import sac_report

    cache = tmp_path / "sac_runs.jsonl"
    monkeypatch.setattr(sac_runs, "execute", _fake([], cache))
    out = sac_runs.run_all(RUNS, 1, cache=cache)
    out[RUNS[0].key].pop("build")  # as a line of a log written before builds were recorded
    res = sac_report.Results(out, sac_report.Scale(duration_s=60.0, seeds=(1, 2, 3)))
    assert sac_report.builds(res) == f"`{sac_runs.provenance.build_id()}` (1 runs logged before builds were recorded)"


def test_a_run_that_read_a_stale_parent_is_stale_too(tmp_path, monkeypatch):
    # `foreign` reads the table of the alpha-1.95 on-line run: if that run's scenario changes, the child's
    # logged output is no longer what this code would make, though its own scenario did not change.
    cache = tmp_path / "sac_runs.jsonl"
    monkeypatch.setattr(sac_runs, "execute", _fake([], cache))
    child = sac_runs.Run("foreign", 1, 60.0)
    monkeypatch.setattr(sac_runs, "_child_input", lambda c, p, f: (None, {}))
    sac_runs.run_all([child], 1, cache=cache)
    assert len(sac_runs.fresh(sac_runs.load_cache(cache))) == 2
    real = sac_runs.scenario_dict
    monkeypatch.setattr(sac_runs, "scenario_dict", lambda r, f=None: {**real(r, f), **({"changed": 1} if r.variant == "online" else {})})
    assert sac_runs.fresh(sac_runs.load_cache(cache)) == {}


def test_a_logged_run_this_code_cannot_describe_is_not_fresh(tmp_path):
    cache = tmp_path / "sac_runs.jsonl"
    line = {"run": {**asdict(sac_runs.Run("generic", 1, 60.0)), "load_mbps": 3.3}, "fingerprint": "x"}
    cache.write_text(json.dumps(line) + "\n")  # no idle mean is registered for 3.3 Mbit/s
    assert sac_runs.fresh(sac_runs.load_cache(cache)) == {}


def test_the_report_says_exactly_where_its_size_is_below_the_specs():
    import sac_report

    full = sac_report.THETAS
    assert sac_report.size_shortfalls(sac_report.Scale(10_000.0, tuple(range(11, 16)), full, full, full)) == []
    got = sac_report.size_shortfalls(sac_report.Scale(10_000.0, tuple(range(11, 21)), full, (1, 2, 4, 6, 8), (1, 2, 3, 5, 8)))
    assert got == ["the theta grid of Fig. 11 ([1, 2, 4, 6, 8]; spec 1-8)",
                   "the theta grid of Fig. 17 and Tables 2-3 ([1, 2, 3, 5, 8]; spec 1-8)"]
    assert sac_report.size_shortfalls(sac_report.Scale(600.0, (11, 12), full, full, full)) == [
        "run length (600 s; spec 10,000 s)", "seeds (2; spec >= 5)"]


def test_checking_a_log_describes_a_parent_once_for_all_its_children(tmp_path, monkeypatch):
    cache = tmp_path / "sac_runs.jsonl"
    monkeypatch.setattr(sac_runs, "execute", _fake([], cache))
    monkeypatch.setattr(sac_runs, "_child_input", lambda c, p, f: (None, {}))
    children = [sac_runs.Run("oracle", 1, 60.0, theta=t) for t in (2.0, 4.0, 6.0)]
    sac_runs.run_all(children, 1, cache=cache)
    described = []
    real = sac_runs.scenario_dict
    monkeypatch.setattr(sac_runs, "scenario_dict", lambda r, f=None: described.append(r) or real(r, f))
    assert len(sac_runs.fresh(sac_runs.load_cache(cache))) == 4  # the three children and their on-line parent
    assert sorted(map(repr, described)) == sorted(map(repr, children + [children[0].parent()]))


def _outputs(background):
    """Report outputs of the Fig. 14 pairs on seeds 1-3: {(variant, alpha): [background Mbit/s per seed]}."""
    out = {}
    for (variant, alpha), bgs in background.items():
        for seed, bg in zip((1, 2, 3), bgs):
            run = sac_runs.Run(variant, seed, 60.0, alpha=alpha)
            pps = 200.0 if variant == "online" else 100.0
            out[run.key] = {"run": asdict(run), "wall_s": 0.0, "total_pps": pps + seed, "background_mbps": bg}
    return out


def test_the_report_counts_runs_whose_background_was_shut_out_and_names_their_seeds():
    import sac_report

    out = _outputs({("online", 1.05): [0.3, 4.4, 2.4], ("generic", 1.05): [4.4, 4.5, 4.3],
                    ("online", 1.95): [4.4, 4.4, 4.4], ("generic", 1.95): [4.5, 4.5, 4.5]})
    res = sac_report.Results(out, sac_report.Scale(duration_s=60.0, seeds=(1, 2, 3)))
    # Below half of the registered 5 Mbit/s: seeds 1 (0.3) and 3 (2.4) of the alpha-1.05 on-line runs only.
    assert sac_report.kept_seeds(res, [("online", {"alpha": 1.05}), ("generic", {"alpha": 1.05})]) == [2]
    text = "\n".join(sac_report.shut_out_section(res))
    assert "2 of 12 (one controlled flow: alpha 1.05 2 of 6, alpha 1.95 0 of 6), in 1 of 4 configurations" in text
    assert "| online | defaults | 3 | 2 | 1, 3 |" in text
    assert "| generic |" not in text


def test_fig14_is_also_reported_on_the_seeds_whose_four_runs_kept_their_background():
    import sac_report

    bg = {(v, a): [4.4, 4.4, 4.4] for v in ("online", "generic") for a in sac_report.GAIN_ALPHAS}
    bg[("online", 1.05)] = [0.3, 4.4, 4.4]
    out = _outputs(bg)
    for r in out.values():  # on-line at alpha 1.05: 300 + seed pkt/s, so its gain differs from 1.95's
        if r["run"]["variant"] == "online" and r["run"]["alpha"] == 1.05:
            r["total_pps"] += 100.0
    res = sac_report.Results(out, sac_report.Scale(duration_s=60.0, seeds=(1, 2, 3)))
    C = []
    sac_report._checks_14_15(res, C)
    row = next(c for c in C if "not shut out" in c.criterion)
    # Seeds 2 and 3: gains 302/102 - 1 and 303/103 - 1 (mean +195.1%) against 202/102 - 1 and 203/103 - 1 (+97.6%).
    assert row.ok is None and row.measured.startswith("seeds 2, 3: +195.1% ± ")
    assert ", +97.6% ± " in row.measured and row.measured.endswith("ratio 2.00")


def test_a_tcp_overhead_sets_ns2s_send_overhead_on_the_32_clients_only_and_zero_leaves_the_scenario_as_it_was():
    plain = sac_runs.scenario_dict(sac_runs.Run("online", 11, 60.0))
    assert all("send_overhead_ms" not in f for f in plain["flows"])
    assert sac_runs.scenario_dict(sac_runs.Run("online", 11, 60.0, tcp_overhead_ms=0.0)) == plain
    d = sac_runs.scenario_dict(sac_runs.Run("online", 11, 60.0, tcp_overhead_ms=0.8))
    background = [f for f in d["flows"] if (f.get("traffic") or {}).get("kind") == "onoff"]
    assert sum(int(f["count"]) for f in background) == 32
    assert all(f["send_overhead_ms"] == 0.8 for f in background)
    assert all("send_overhead_ms" not in f for f in d["flows"] if f not in background)
    # A training run's parent carries the same background.
    child = sac_runs.Run("trained", 11, 60.0, train_s=50.0, tcp_overhead_ms=0.8)
    assert child.parent().tcp_overhead_ms == 0.8


def test_the_report_plan_and_lookups_keep_runs_of_another_overhead_apart():
    import sac_report

    sc = sac_report.Scale(duration_s=60.0, seeds=(1, 2, 3), tcp_overhead_ms=0.8)
    assert {r.tcp_overhead_ms for r in sac_report.plan(sc, ["9", "16"])} == {0.8}
    out = _outputs({("online", 1.05): [4.4, 4.4, 4.4]})  # made without overhead
    res = sac_report.Results(out, sc)
    assert res.all() == []
    with pytest.raises(sac_report.Missing):
        res.get("online", alpha=1.05)
    assert len(sac_report.Results(out, sac_report.Scale(duration_s=60.0, seeds=(1, 2, 3))).all()) == 3
