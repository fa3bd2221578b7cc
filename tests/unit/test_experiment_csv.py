"""The reproductions' CSV writer (ccscope.experiment.write_csv): atomic, listed in the figures folder's manifest,
and never over a file of the same name that ccscope did not write."""

from __future__ import annotations

import csv
import json

import pytest

from ccscope import store
from ccscope.experiment import check_data_destination, save_figure, start_log, write_csv

ROWS = [{"alpha": 1.05, "seed": 11, "h": 0.91}, {"alpha": 1.95, "seed": 11, "h": 0.55}]


def read_rows(path):
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def manifest_files(folder):
    return json.loads((folder / store.MANIFEST).read_text())["files"]


def leftovers(folder):
    return [p.name for p in folder.iterdir() if p.name.startswith((store.TMP_PREFIX, store.COMMIT))]


def test_a_new_figures_folder_gets_the_csv_and_a_manifest_naming_it(tmp_path):
    d = tmp_path / "mtsc"
    assert write_csv(d / "fig1_hurst.csv", ROWS) == d / "fig1_hurst.csv"
    assert read_rows(d / "fig1_hurst.csv") == [{"alpha": "1.05", "seed": "11", "h": "0.91"},
                                               {"alpha": "1.95", "seed": "11", "h": "0.55"}]
    assert (d / "fig1_hurst.csv").read_text().splitlines()[0] == "alpha,seed,h"
    assert manifest_files(d) == ["fig1_hurst.csv"]


def test_a_csv_ccscope_wrote_is_replaced_and_the_others_are_kept_beside_the_users_files(tmp_path):
    d = tmp_path / "mtsc"
    d.mkdir()
    (d / "notes.txt").write_text("mine")  # a folder ccscope did not make: its files stay
    (d / "fig1_hurst.png").write_bytes(b"png")
    write_csv(d / "fig1_hurst.csv", ROWS)
    write_csv(d / "sac_runs.csv", ROWS)
    write_csv(d / "fig1_hurst.csv", ROWS[:1])
    assert len(read_rows(d / "fig1_hurst.csv")) == 1 and len(read_rows(d / "sac_runs.csv")) == 2
    assert manifest_files(d) == ["fig1_hurst.csv", "sac_runs.csv"]
    assert (d / "notes.txt").read_text() == "mine" and (d / "fig1_hurst.png").read_bytes() == b"png"
    assert leftovers(d) == []


@pytest.mark.parametrize("with_manifest", [False, True])
def test_a_foreign_file_with_the_csvs_name_is_refused_and_left_byte_identical(tmp_path, with_manifest):
    d = tmp_path / "mtsc"
    if with_manifest:
        write_csv(d / "fig2_condprob.csv", ROWS)  # ccscope owns another file there, not this one
    else:
        d.mkdir()
    foreign = d / "fig1_hurst.csv"
    data = b"my,own\r\n1,2\n\xff"
    foreign.write_bytes(data)
    for refuse in (lambda: write_csv(foreign, ROWS), lambda: check_data_destination(d, ["fig1_hurst.csv"])):
        with pytest.raises(store.OutputError) as e:
            refuse()
        msg = str(e.value)
        assert len(msg.splitlines()) == 1
        assert msg == f"figures folder {d}: fig1_hurst.csv is there and ccscope did not write it; move it away first"
        assert foreign.read_bytes() == data
    assert leftovers(d) == []
    assert manifest_files(d) == ["fig2_condprob.csv"] if with_manifest else not (d / store.MANIFEST).exists()


def test_the_destination_check_passes_for_the_csvs_ccscope_wrote_and_for_a_missing_folder(tmp_path):
    d = tmp_path / "mtsc"
    check_data_destination(d, ["fig1_hurst.csv"])
    assert not d.exists()
    write_csv(d / "fig1_hurst.csv", ROWS)
    check_data_destination(d, ["fig1_hurst.csv", "sac_runs.csv"])
    assert sorted(p.name for p in d.iterdir()) == ["ccscope-manifest.json", "fig1_hurst.csv"]


# ---------------------------------------------------------------- figures and the SAC runs log, by the same rule


def a_figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    return fig


def test_a_figure_is_written_as_the_bytes_of_the_plain_figure_writer_and_listed(tmp_path):
    from ccscope.analysis.figures import save_figure as plain_save

    d = tmp_path / "mtsc"
    assert save_figure(a_figure(), d / "fig1_hurst.png") == d / "fig1_hurst.png"
    plain_save(a_figure(), tmp_path / "plain", ("png",), dpi=110)
    assert (d / "fig1_hurst.png").read_bytes() == (tmp_path / "plain.png").read_bytes()
    save_figure(a_figure(), d / "fig1_hurst.png")  # its own figure: replaced
    assert manifest_files(d) == ["fig1_hurst.png"] and leftovers(d) == []


def test_a_foreign_figure_is_refused_left_byte_identical_and_the_figure_closed(tmp_path):
    import matplotlib.pyplot as plt

    d = tmp_path / "mtsc"
    write_csv(d / "fig1_hurst.csv", ROWS)
    data = b"\x89PNG a user's picture"
    (d / "fig1_hurst.png").write_bytes(data)
    fig = a_figure()
    with pytest.raises(store.OutputError) as e:
        save_figure(fig, d / "fig1_hurst.png")
    assert str(e.value) == f"figures folder {d}: fig1_hurst.png is there and ccscope did not write it; move it away first"
    assert (d / "fig1_hurst.png").read_bytes() == data and not plt.fignum_exists(fig.number)
    assert manifest_files(d) == ["fig1_hurst.csv"] and leftovers(d) == []


def test_a_fresh_log_replaces_ccscopes_own_with_an_empty_one_and_keep_leaves_it(tmp_path):
    d = tmp_path / "mtsc"
    log = d / "sac_runs.jsonl"
    assert start_log(log, keep=True) == log and log.read_bytes() == b""  # none yet: a new empty one, listed
    assert manifest_files(d) == ["sac_runs.jsonl"]
    log.write_text('{"run": 1}\n')
    start_log(log, keep=True)
    assert log.read_text() == '{"run": 1}\n'
    start_log(log, keep=False)
    assert log.read_bytes() == b"" and manifest_files(d) == ["sac_runs.jsonl"] and leftovers(d) == []


@pytest.mark.parametrize("keep", [False, True])
def test_a_foreign_log_is_refused_and_left_byte_identical(tmp_path, keep):
    d = tmp_path / "mtsc"
    d.mkdir()
    data = b'{"mine": true}\n'
    (d / "sac_runs.jsonl").write_bytes(data)
    with pytest.raises(store.OutputError) as e:
        start_log(d / "sac_runs.jsonl", keep=keep)
    assert str(e.value) == f"figures folder {d}: sac_runs.jsonl is there and ccscope did not write it; move it away first"
    assert (d / "sac_runs.jsonl").read_bytes() == data and sorted(p.name for p in d.iterdir()) == ["sac_runs.jsonl"]
