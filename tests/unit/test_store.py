"""The results store: -o never deletes, moves or overwrites a file ccscope did not write; a results
folder records what reproduces it; a write interrupted at any step leaves the old or the new state."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

import ccscope
from ccscope import api, store
from ccscope.provenance import build_id, file_sha256

SHORT = {"duration_s": 5}


def snapshot(folder: Path) -> dict:
    """Every file under `folder` (relative name -> bytes)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def tables(folder: Path) -> dict:
    """The results tables of a folder, as bytes-free comparable frames."""
    r = api.load_result(folder)
    return {"summary": r.summary, "flows": r.flows, "timeseries": r.timeseries}


def assert_same_tables(a: dict, b: dict) -> None:
    assert a["summary"] == b["summary"]
    pd.testing.assert_frame_equal(a["flows"], b["flows"])
    pd.testing.assert_frame_equal(a["timeseries"], b["timeseries"])


@pytest.fixture(scope="module")
def result() -> api.Result:
    return ccscope.run("examples/datagrump.toml", overrides=SHORT)


# --- where results may go ------------------------------------------------------------------------


def test_a_missing_folder_is_created_with_its_parents(tmp_path, result):
    out = result.save(tmp_path / "a" / "b" / "res")
    manifest = json.loads((out / store.MANIFEST).read_text())
    assert sorted(manifest["files"]) == sorted(p.name for p in out.iterdir() if p.name != store.MANIFEST)
    assert {"summary.json", "provenance.json", "scenario.toml", "flows.parquet", "timeseries.parquet"} <= set(manifest["files"])
    assert manifest["ccscope"] == build_id()
    assert [p.name for p in tmp_path.iterdir()] == ["a"]


def test_a_non_empty_folder_ccscope_did_not_write_is_refused_and_untouched(tmp_path, result):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("my notes")
    before = snapshot(tmp_path)
    with pytest.raises(store.OutputError, match="not a ccscope results folder"):
        result.save(out)
    assert snapshot(tmp_path) == before


def test_overwrite_adds_results_beside_the_users_files_and_never_over_them(tmp_path, result):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("my notes")
    result.save(out, overwrite=True)
    assert (out / "notes.txt").read_text() == "my notes"
    assert "notes.txt" not in json.loads((out / store.MANIFEST).read_text())["files"]
    # A user's file with a name ccscope writes is never replaced, even with overwrite.
    other = tmp_path / "theirs"
    other.mkdir()
    (other / "summary.json").write_text("{}")
    before = snapshot(tmp_path)
    with pytest.raises(store.OutputError, match="summary.json is there and ccscope did not write it"):
        result.save(other, overwrite=True)
    assert snapshot(tmp_path) == before


def test_rewriting_a_results_folder_replaces_only_ccscope_files(tmp_path):
    out = tmp_path / "res"
    first = ccscope.run("examples/datagrump.toml", overrides=SHORT, packets=True)
    first.save(out)
    (out / "notes.txt").write_text("kept")
    second = ccscope.run("examples/datagrump.toml", overrides={**SHORT, "flows.0.window": 3})
    second.save(out)
    # The old run's packet log was ccscope's: it goes; the user's notes stay.
    assert not (out / "packets.parquet").exists()
    assert (out / "notes.txt").read_text() == "kept"
    assert api.load_result(out).summary == second.summary
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res"]
    assert not [p for p in out.iterdir() if p.name.startswith(".ccscope")]


def test_a_file_named_as_output_is_refused(tmp_path, result):
    f = tmp_path / "res"
    f.write_text("a file")
    with pytest.raises(store.OutputError, match="is a file, not a folder"):
        result.save(f)
    assert f.read_text() == "a file" and [p.name for p in tmp_path.iterdir()] == ["res"]


def test_a_file_where_a_parent_folder_should_be_is_refused(tmp_path, result):
    (tmp_path / "f").write_text("x")
    with pytest.raises(store.OutputError, match="is a file, not a folder"):
        result.save(tmp_path / "f" / "res")


def test_a_users_file_ccscope_did_not_list_is_never_replaced_in_a_results_folder(tmp_path):
    out = tmp_path / "res"
    ccscope.run("examples/datagrump.toml", overrides=SHORT).save(out)
    (out / "packets.parquet").write_bytes(b"mine")  # not listed in the manifest: the user's
    with pytest.raises(store.OutputError, match="packets.parquet is there"):
        ccscope.run("examples/datagrump.toml", overrides=SHORT, packets=True).save(out)
    assert (out / "packets.parquet").read_bytes() == b"mine"


def _write(out: Path, names: list, run=None, merge=True) -> None:
    with store.FolderWriter(out, merge=merge, names=names, run=run) as w:
        for n in names:
            (w.stage / n).write_text(f"{n} of {run}")


def test_a_folder_written_file_by_file_records_the_run_of_each_file(tmp_path):
    # A command that writes its files one by one (experiments/ns3/cwnd.py) and fails half way leaves files of two
    # runs side by side: the manifest says which run wrote which.
    out = tmp_path / "figs"
    _write(out, ["a.csv", "b.csv", "fig.png"], run="run 1")
    _write(out, ["a.csv"], run="run 2")
    m = store.read_manifest(out)
    assert m["files"] == ["a.csv", "b.csv", "fig.png"]
    assert m["runs"] == {"a.csv": "run 2", "b.csv": "run 1", "fig.png": "run 1"}
    _write(out, ["b.csv"])  # a write without a run: its file's older run is no longer true
    assert store.read_manifest(out)["runs"] == {"a.csv": "run 2", "fig.png": "run 1"}
    _write(out, ["fig.png"], run="run 3", merge=False)  # the others are deleted, and so are their runs
    assert store.read_manifest(out)["runs"] == {"fig.png": "run 3"}
    _write(out, ["fig.png"], merge=False)
    assert "runs" not in store.read_manifest(out)  # no runs recorded: the manifest is as before


# --- interrupted writes --------------------------------------------------------------------------


def _stage_commit(out: Path, files: dict) -> None:
    """Reproduce what a write does up to its commit point, then stop as a kill would."""
    w = store.FolderWriter(out)
    for name, data in files.items():
        (w.stage / name).write_bytes(data)
    old = store.read_manifest(out)
    own = set(old["files"]) if old else set()
    (w.stage / store.MANIFEST).write_text(w._manifest(sorted(files)))
    (w.stage / store.PLAN).write_text(json.dumps({"move": sorted(files), "delete": sorted(own - set(files))}))
    os.rename(w.stage, out / store.COMMIT)


def test_a_write_killed_after_its_commit_point_is_finished_by_the_next_reader(tmp_path, result):
    out = tmp_path / "res"
    result.save(out)
    new = {n: (out / n).read_bytes() + b"" for n in ("summary.json", "flows.parquet", "timeseries.parquet")}
    new["summary.json"] = new["summary.json"].replace(b'"sent"', b'"sent"', 1)
    _stage_commit(out, new)
    # Half-applied: the first move done, as if the kill came in the middle of the plan.
    os.replace(out / store.COMMIT / "flows.parquet", out / "flows.parquet")
    api.load_result(out)
    assert not (out / store.COMMIT).exists()
    assert sorted(json.loads((out / store.MANIFEST).read_text())["files"]) == sorted(new)
    # scenario.toml and provenance.json were ccscope's and not rewritten: deleted by the plan.
    assert sorted(p.name for p in out.iterdir()) == sorted([*new, store.MANIFEST])


def test_a_write_killed_before_its_commit_point_leaves_the_old_state_and_its_leftover_is_removed(tmp_path, result):
    out = tmp_path / "res"
    result.save(out)
    before = snapshot(out)
    w = store.FolderWriter(out)
    (w.stage / "summary.json").write_text("half")
    # A kill now: the staging folder stays, named for a process that no longer exists.
    dead = out / w.stage.name.replace(f"-{os.getpid()}-", "-999999999-")
    os.rename(w.stage, dead)
    assert dead.exists()
    result.save(out)
    assert not dead.exists()
    assert snapshot(out) == before


def test_a_temporary_file_of_a_running_process_is_not_removed(tmp_path):
    mine = tmp_path / f"{store.TMP_PREFIX}{os.getpid()}-abcd-x"
    mine.write_text("busy")
    store.clean_leftovers(tmp_path)
    assert mine.exists()


def test_write_file_replaces_atomically_and_leaves_no_temporary(tmp_path):
    p = tmp_path / "t.json"
    store.write_text(p, "one")
    store.write_text(p, "two")
    assert p.read_text() == "two" and [x.name for x in tmp_path.iterdir()] == ["t.json"]
    with pytest.raises(RuntimeError):
        store.write_file(p, lambda t: (t.write_text("half"), (_ for _ in ()).throw(RuntimeError("x"))))
    assert p.read_text() == "two" and [x.name for x in tmp_path.iterdir()] == ["t.json"]


# --- what reproduces a run -----------------------------------------------------------------------


def test_results_folder_records_seed_overrides_build_and_input_hashes(tmp_path):
    r = ccscope.run("examples/datagrump.toml", seed=7, overrides={"duration_s": 4, "flows.0.window": 9})
    out = r.save(tmp_path / "res")
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["ccscope"] == build_id()
    assert prov["seed"] == 7 and prov["overrides"]["flows.0.window"] == 9 and prov["overrides"]["seed"] == 7
    trace = api.TRACES_DIR / "Verizon-LTE-short.up"
    assert prov["inputs"][str(trace.resolve())] == file_sha256(trace)
    eff = api.Scenario.load(out / "scenario.toml").to_dict()
    assert eff["seed"] == 7 and eff["duration_s"] == 4 and eff["flows"][0]["window"] == 9


def test_rerunning_a_results_folders_scenario_reproduces_it_bit_for_bit(tmp_path, write, contest_toml):
    # A trace named relative to the scenario's own folder still resolves from the results folder.
    src = tmp_path / "src"
    src.mkdir()
    (src / "my.up").write_bytes((api.TRACES_DIR / "Verizon-LTE-short.up").read_bytes())
    (src / "s.toml").write_text(contest_toml.replace('"Verizon-LTE-short.up"', '"my.up"'))
    assert '"my.up"' in (src / "s.toml").read_text()
    a = ccscope.run(src / "s.toml", seed=3, overrides={"duration_s": 4, "flows.0.window": 20}, packets=True)
    out_a = a.save(tmp_path / "a")
    b = ccscope.run(out_a / "scenario.toml")
    out_b = b.save(tmp_path / "b")
    for name in ("flows.parquet", "timeseries.parquet", "packets.parquet"):
        assert (out_a / name).read_bytes() == (out_b / name).read_bytes(), name
    assert json.loads((out_a / "summary.json").read_text()) == json.loads((out_b / "summary.json").read_text())
    assert (out_a / "scenario.toml").read_text() == (out_b / "scenario.toml").read_text()


def test_load_result_of_a_corrupt_parquet_names_the_file(tmp_path, result):
    out = result.save(tmp_path / "res")
    (out / "flows.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(store.ResultsFolderError, match="flows.parquet: not a readable Parquet file"):
        api.load_result(out)


def test_a_folder_that_takes_files_but_lets_none_be_removed_is_refused_naming_the_option(tmp_path, monkeypatch):
    # An append-only folder (chattr +a) takes the check's file and keeps it: the removal raised
    # PermissionError, a traceback, before any word naming -o.
    real_unlink = Path.unlink

    def unlink(self, missing_ok=False):
        if self.name.startswith(store.TMP_PREFIX):
            raise PermissionError(1, "Operation not permitted", str(self))
        return real_unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", unlink)
    with pytest.raises(store.OutputError, match=r"^-o .*out: cannot write in .*\(Operation not permitted"):
        store.FolderWriter(tmp_path / "out", option="-o")
