"""Provenance: a run's inputs are found and hashed by content, so a sweep re-runs exactly what changed."""

from pathlib import Path

import ccscope
from ccscope import api, provenance

SCENARIO = """duration_s = 1
[data_link]
trace = "link.trace"
[ack_link]
rate_mbps = 12
[[flows]]
controller = "python"
class = "ctl.py:Ctl"
"""

CTL = "class Ctl:\n    def cwnd(self):\n        return 10\n"


def _folder(tmp: Path, trace: str = "1\n2\n3\n", ctl: str = CTL) -> api.Scenario:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "link.trace").write_text(trace)
    (tmp / "ctl.py").write_text(ctl)
    (tmp / "s.toml").write_text(SCENARIO)
    return api.Scenario.load(tmp / "s.toml")


def _key(sc: api.Scenario) -> str:
    return provenance.point_key(sc.text, {}, 1, provenance.input_hashes(sc))


def test_inputs_are_the_trace_and_the_controller_source(tmp_path):
    sc = _folder(tmp_path)
    names = [p.name for p in provenance.input_files(sc)]
    assert names == ["ctl.py", "link.trace"]
    assert all(p.is_absolute() for p in provenance.input_files(sc))


def test_editing_the_controller_source_changes_the_key_and_editing_nothing_does_not(tmp_path):
    before = _key(_folder(tmp_path))
    assert _key(_folder(tmp_path)) == before
    assert _key(_folder(tmp_path, ctl=CTL.replace("10", "11"))) != before


def test_editing_the_trace_changes_the_key(tmp_path):
    assert _key(_folder(tmp_path)) != _key(_folder(tmp_path / "b", trace="1\n2\n4\n"))


def test_the_same_inputs_in_another_folder_give_the_same_key(tmp_path):
    assert _key(_folder(tmp_path / "a")) == _key(_folder(tmp_path / "b"))


def test_record_names_build_seed_overrides_and_hashes(tmp_path):
    sc = _folder(tmp_path)
    rec = provenance.record(sc, 7, {"duration_s": 2})
    assert rec["seed"] == 7 and rec["overrides"] == {"duration_s": 2}
    assert rec["ccscope"].startswith(ccscope.__version__ + "+")
    assert sorted(Path(p).name for p in rec["inputs"]) == ["ctl.py", "link.trace"]
    assert all(len(h) == 64 for h in rec["inputs"].values())
