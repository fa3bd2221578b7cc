"""`ccscope repro cmt --figs` and `--report-only` (experiments/cmt/repro.py): a partial rerun keeps the rows of the
figures it did not run, read back from the report's cmt/*.csv, and recomputes their models."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from _experiments import load_experiment

from ccscope.models.cmt import renewal_throughput

repro = load_experiment("cmt")
COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "reproductions"


def copy_report(tmp_path: Path) -> Path:
    shutil.copy(COMMITTED / "cmt.md", tmp_path / "cmt.md")
    shutil.copytree(COMMITTED / "cmt", tmp_path / "cmt", ignore=shutil.ignore_patterns("*.png"))
    return tmp_path / "cmt.md"


def rows(path: Path) -> list[dict]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def test_report_only_rewrites_the_report_from_its_csvs_with_the_current_models(tmp_path):
    out = copy_report(tmp_path)
    gains_before = rows(tmp_path / "cmt" / "gains.csv")
    single_before = rows(tmp_path / "cmt" / "single_path.csv")
    assert repro.main(["-o", str(out), "--report-only", "-q"]) == 0
    assert "--report-only" in out.read_text().splitlines()[2]
    assert rows(tmp_path / "cmt" / "gains.csv") == gains_before
    single = rows(tmp_path / "cmt" / "single_path.csv")
    assert [r["sim_mbps"] for r in single] == [r["sim_mbps"] for r in single_before]
    for r in single:
        model = renewal_throughput(float(r["p"]), float(r["b_mbps"]), float(r["d_ms"]), int(r["rbuf_bytes"]))
        assert float(r["renewal_mbps"]) == model.throughput_mbps


def test_figs_reruns_only_the_named_figures_and_keeps_the_other_rows(tmp_path):
    out = copy_report(tmp_path)
    before = rows(tmp_path / "cmt" / "single_path.csv")
    steps_before = rows(tmp_path / "cmt" / "steps.csv")
    args = ["-o", str(out), "--figs", "6", "--seeds", "2", "--loss-events", "5", "--cap-s", "60", "--jobs", "1", "-q"]
    assert repro.main(args) == 0
    after = rows(tmp_path / "cmt" / "single_path.csv")
    assert [(r["fig"], r["x"]) for r in after] == [(r["fig"], r["x"]) for r in before]
    for b, a in zip(before, after):
        # Fig. 6 was rerun at 2 seeds; every other figure's simulation columns are the CSV's.
        assert (a["seeds"] == "2") == (a["fig"] == "6")
        if a["fig"] != "6":
            assert (a["sim_mbps"], a["goodput_mbps"], a["min_loss_events"]) == (b["sim_mbps"], b["goodput_mbps"], b["min_loss_events"])
    assert rows(tmp_path / "cmt" / "steps.csv") == steps_before
    assert "`ccscope repro cmt --figs 6`" in out.read_text()


def snapshot(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_report_only_with_figs_is_one_error_line_and_writes_nothing(tmp_path, capsys):
    # --report-only runs nothing: a --figs beside it is a contradiction, not something to drop silently.
    out = copy_report(tmp_path)
    before = snapshot(tmp_path)
    assert repro.main(["-o", str(out), "--report-only", "--figs", "6", "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "--figs" in err[0]
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("damage", ["drop_column", "header_only"])
def test_a_damaged_csv_read_back_is_one_error_line_and_writes_nothing(tmp_path, capsys, damage):
    # A cmt/*.csv without a column the report needs, or without rows, is bad input: one error line naming the
    # file, exit 2, and no CSV, figure or report rewritten from it.
    out = copy_report(tmp_path)
    csv_path = tmp_path / "cmt" / "single_path.csv"
    lines = csv_path.read_text().splitlines()
    if damage == "drop_column":
        csv_path.write_text("\n".join(",".join(c for i, c in enumerate(l.split(",")) if i != 6) for l in lines) + "\n")
    else:
        csv_path.write_text(lines[0] + "\n")
    before = snapshot(tmp_path)
    assert repro.main(["-o", str(out), "--report-only", "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "single_path.csv" in err[0]
    assert snapshot(tmp_path) == before


def test_report_only_recomputes_the_models_of_stale_rows(tmp_path):
    # The committed CSV already holds this checkout's models, so the test above cannot tell a refresh from a copy:
    # stale model columns must come back recomputed, the errors with them, the simulation columns untouched.
    out = copy_report(tmp_path)
    path = tmp_path / "cmt" / "single_path.csv"
    before = rows(path)
    stale = [{**r, "markov_mbps": "1.0", "renewal_mbps": "1.0", "mathis_mbps": "1.0", "markov_err": "9.0",
              "renewal_err": "9.0"} for r in before]
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(before[0]))
        w.writeheader()
        w.writerows(stale)
    assert repro.main(["-o", str(out), "--report-only", "-q"]) == 0
    after = rows(path)
    for b, a in zip(before, after):
        assert a["sim_mbps"] == b["sim_mbps"]
        for k in ("markov_mbps", "renewal_mbps", "mathis_mbps", "markov_err", "renewal_err"):
            assert float(a[k]) == pytest.approx(float(b[k]), rel=1e-9), (a["fig"], a["x"], k)
    text = out.read_text()
    assert "900.0%" not in text and f"{float(after[0]['renewal_mbps']):.3f}" in text


def test_report_only_without_an_earlier_run_is_one_error_line_and_creates_no_folder(tmp_path, capsys):
    # Nothing to read back: the error comes before any folder is made for the report's CSVs and figures.
    out = tmp_path / "new" / "cmt.md"
    assert repro.main(["-o", str(out), "--report-only", "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "single_path.csv" in err[0]
    assert not (tmp_path / "new").exists()


def test_report_only_says_which_models_it_recomputed(tmp_path):
    # Only Figs. 5-8's model columns are recomputed; the gains' static predictions are the earlier run's (their
    # static runs used those limits), so the report must not claim every model was recomputed.
    out = copy_report(tmp_path)
    assert repro.main(["-o", str(out), "--report-only", "-q"]) == 0
    head = " ".join(out.read_text().splitlines()[2:6])
    assert "Figs. 5-8 models recomputed" in head and "Figs. 9-14's predictions" in head


def test_committed_two_path_rows_short_of_the_stated_loss_events_say_so_and_why_where_they_are_shown():
    # Issue 10: every Figs. 9-12 row is sized for 2,000 loss events; a row with fewer (one that ran to the 30,000 s
    # cap, or one read back from a run made before the runner lengthened runs) must be named as such in cmt.md.
    text = (COMMITTED / "cmt.md").read_text()
    gains = rows(COMMITTED / "cmt" / "gains.csv")
    short = [r for r in gains if int(r["min_loss_events"]) < 2000]
    capped = [r for r in short if float(r["sim_s"]) >= 30_000 * 0.999]
    section = text.split("## Figs. 9-12", 1)[1].split("\n## ", 1)[0]
    setup = text.split("## Setup", 1)[1].split("\n## ", 1)[0]
    assert (f"**{len(short)} of {len(gains)} rows saw fewer than 2000 loss events**" in section) == bool(short)
    assert (f"{len(capped)} ran to the 30000 s cap" in section) == bool(capped)
    assert ("read back from runs made before" in section) == (len(short) > len(capped))
    assert ("runs sized for 2000 loss events;" in setup) == (not short)


def _gain_subset(monkeypatch):
    """experiments/cmt/gain_subset.py, with its `import repro` bound to this test's cmt repro module."""
    import importlib.util

    monkeypatch.setitem(__import__("sys").modules, "repro", repro)
    spec = importlib.util.spec_from_file_location("cmt_gain_subset", Path(repro.__file__).with_name("gain_subset.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_gain_subset_refuses_an_entry_that_matches_no_point_and_names_it(tmp_path, monkeypatch, capsys):
    gs = _gain_subset(monkeypatch)
    # Every committed entry names a point of Figs. 9-12.
    assert len(gs.select(repro.gain_points(), gs.SUBSET)) == len(set(gs.SUBSET))
    bogus = ("10", "r = 65 KB", 3e-3)
    monkeypatch.setattr(gs, "SUBSET", (*gs.SUBSET[:1], bogus))
    out = tmp_path / "subset.md"
    assert gs.main(["-o", str(out), "--jobs", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: SUBSET entry") and repr(bogus) in err[0], err
    assert not out.exists()


@pytest.mark.parametrize("name", ["fig5.png", "gains.csv"])
def test_a_file_in_cmt_that_ccscope_did_not_write_is_one_error_line_and_left_as_it_was(tmp_path, capsys, name):
    # The figures folder's manifest lists ccscope's files; one it does not list is never replaced.
    import json

    out = copy_report(tmp_path)
    m = json.loads((tmp_path / "cmt" / "ccscope-manifest.json").read_text())
    m["files"].remove(name)
    (tmp_path / "cmt" / "ccscope-manifest.json").write_text(json.dumps(m))
    (tmp_path / "cmt" / name).write_bytes(b"a user's file\n")
    before = snapshot(tmp_path)
    assert repro.main(["-o", str(out), "--report-only", "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: figures folder {tmp_path / 'cmt'}: {name} is there and ccscope did not write it; "
                   "move it away first"]
    assert snapshot(tmp_path) == before


def test_report_only_replaces_ccscopes_own_figures_and_keeps_them_listed(tmp_path):
    import json

    out = copy_report(tmp_path)
    (tmp_path / "cmt" / "fig5.png").write_bytes(b"stale")
    assert repro.main(["-o", str(out), "--report-only", "-q"]) == 0
    assert (tmp_path / "cmt" / "fig5.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((tmp_path / "cmt" / "ccscope-manifest.json").read_text())["files"] == sorted(repro.DATA_FILES)
