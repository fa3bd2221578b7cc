"""compare() and report() name their own arguments in their errors (``out PATH``, ``delay='x'``); the
commands name their options (``-o``, ``--delay``: tests/cli/test_compare_report_cli.py)."""

from __future__ import annotations

import pytest

from ccscope import analysis
from ccscope.analysis import AnalysisInputError
from ccscope.store import OutputError


@pytest.mark.parametrize("kwargs,named", [
    (dict(delay="fast"), "delay='fast': not one of one_way, signal, queue"),
    (dict(formats=("gif",)), "formats='gif': not one of svg, png, pdf"),
])
def test_a_bad_compare_argument_is_named_as_the_python_argument(tmp_path, kwargs, named):
    with pytest.raises(AnalysisInputError) as e:
        analysis.compare([tmp_path / "run"], tmp_path / "cmp", **kwargs)
    assert str(e.value) == named
    assert not (tmp_path / "cmp").exists()


def test_compare_without_inputs_names_the_inputs_argument(tmp_path):
    with pytest.raises(AnalysisInputError) as e:
        analysis.compare([], tmp_path / "cmp")
    assert str(e.value) == "inputs: give at least one results or sweep folder"


def test_a_compare_destination_it_may_not_write_is_named_out(tmp_path):
    (tmp_path / "f").write_text("the user's")
    with pytest.raises(OutputError) as e:
        analysis.compare([tmp_path / "run"], tmp_path / "f")
    assert str(e.value) == f"out {tmp_path / 'f'}: is a file, not a folder; give a folder name"
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("the user's")
    with pytest.raises(OutputError) as e:
        analysis.compare([tmp_path / "run"], mine)
    assert str(e.value).startswith(f"out {mine}: the folder is not empty")
    assert str(e.value).endswith("or overwrite=True to add ccscope's files beside the ones there")
    with pytest.raises(AnalysisInputError) as e:
        analysis.compare([tmp_path / "run"], tmp_path / "run")
    assert str(e.value) == f"out {tmp_path / 'run'}: is one of the inputs"
    assert (tmp_path / "f").read_text() == (mine / "notes.txt").read_text() == "the user's"


@pytest.mark.parametrize("where,why", [("", "is a folder; give the HTML file to write"),
                                       ("no/r.html", "folder {d}/no does not exist"),
                                       ("notes.txt", "exists and is not an .html file; refusing to overwrite it"),
                                       ("page.html", "page.html is there and ccscope did not write it; move it away first")])
def test_a_report_destination_it_may_not_write_is_named_out(tmp_path, where, why):
    (tmp_path / "notes.txt").write_text("the user's")
    (tmp_path / "page.html").write_text("<html>the user's</html>")
    out = tmp_path / where if where else tmp_path
    with pytest.raises(AnalysisInputError) as e:
        analysis.report(tmp_path / "run", out)
    assert str(e.value) == f"out {out}: " + why.format(d=tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "the user's"


def test_a_label_or_delay_a_folder_lacks_names_the_argument_after_the_file(tmp_path):
    import ccscope

    ccscope.run("examples/fixed.toml", overrides={"duration_s": 2}).save(tmp_path / "run")
    with pytest.raises(AnalysisInputError) as e:
        analysis.compare([tmp_path / "run"], tmp_path / "cmp", label="flows.0.nope")
    assert str(e.value) == f"{tmp_path / 'run' / 'scenario.toml'}: label='flows.0.nope': no such field"
    assert e.value.worded({"out": "-o"}) == f"{tmp_path / 'run' / 'scenario.toml'}: --label flows.0.nope: no such field"
    assert not (tmp_path / "cmp").exists()
