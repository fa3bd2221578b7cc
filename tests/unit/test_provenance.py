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


def test_the_cached_hash_of_a_file_is_its_sha256_and_follows_every_rewrite(tmp_path, monkeypatch):
    import os
    import time

    monkeypatch.setenv("CCSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(provenance, "_SETTLED_NS", 0)
    f = tmp_path / "module.so"
    f.write_bytes(b"a" * 1000)
    (tmp_path / "x").write_bytes(b"a" * 1000)
    assert provenance.cached_file_sha256(f) == provenance.file_sha256(f)
    assert len(list((tmp_path / "cache").iterdir())) == 1
    # Same size, modification time set back: the change time still moves, so it is hashed again (the
    # pause takes the clock past the file system's timestamp granularity, as a real rebuild would be).
    st = f.stat()
    time.sleep(0.05)
    f.write_bytes(b"b" * 1000)
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert provenance.cached_file_sha256(f) == provenance.file_sha256(f) != provenance.file_sha256(tmp_path / "x")


def test_the_cache_entry_is_what_a_second_call_returns(tmp_path, monkeypatch):
    import json

    monkeypatch.setenv("CCSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(provenance, "_SETTLED_NS", 0)
    f = tmp_path / "module.so"
    f.write_bytes(b"z" * 10)
    provenance.cached_file_sha256(f)
    (entry,) = (tmp_path / "cache").iterdir()
    entry.write_text(json.dumps({**json.loads(entry.read_text()), "sha256": "1" * 64}))
    assert provenance.cached_file_sha256(f) == "1" * 64


def test_a_stale_or_broken_cache_entry_is_never_believed(tmp_path, monkeypatch):
    import json

    monkeypatch.setenv("CCSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(provenance, "_SETTLED_NS", 0)
    f = tmp_path / "module.so"
    f.write_bytes(b"x" * 10)
    provenance.cached_file_sha256(f)
    (entry,) = (tmp_path / "cache").iterdir()
    known = json.loads(entry.read_text())
    entry.write_text(json.dumps({**known, "sha256": "0" * 64, "stamp": known["stamp"][:-1] + [0]}))
    assert provenance.cached_file_sha256(f) == provenance.file_sha256(f)
    entry.write_text("not json")
    assert provenance.cached_file_sha256(f) == provenance.file_sha256(f)


def test_without_a_writable_cache_folder_the_hash_is_still_exact(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("CCSCOPE_CACHE_DIR", str(blocker / "sub"))
    f = tmp_path / "module.so"
    f.write_bytes(b"y" * 10)
    assert provenance.cached_file_sha256(f) == provenance.file_sha256(f)


def test_a_file_changed_just_now_is_hashed_but_not_remembered(tmp_path, monkeypatch):
    monkeypatch.setenv("CCSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    f = tmp_path / "module.so"
    f.write_bytes(b"w" * 10)
    assert provenance.cached_file_sha256(f) == provenance.file_sha256(f)
    assert not (tmp_path / "cache").exists()


def test_the_build_id_names_the_native_module_by_content_and_changes_when_it_is_rebuilt(tmp_path, monkeypatch):
    import os
    import time
    import types

    monkeypatch.setenv("CCSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(provenance, "_SETTLED_NS", 0)
    module = tmp_path / "_native.abi3.so"
    module.write_bytes(b"\x7fELF" + b"a" * 4096)
    monkeypatch.setattr(provenance, "_native", types.SimpleNamespace(__file__=str(module)))
    provenance.build_id.cache_clear()
    try:
        first = provenance.build_id()
        assert first == f"{ccscope.__version__}+{provenance.file_sha256(module)[:16]}"
        # A rebuild of the same size with its modification time set back still counts as new.
        st = module.stat()
        time.sleep(0.05)
        module.write_bytes(b"\x7fELF" + b"b" * 4096)
        os.utime(module, ns=(st.st_atime_ns, st.st_mtime_ns))
        provenance.build_id.cache_clear()
        assert provenance.build_id() == f"{ccscope.__version__}+{provenance.file_sha256(module)[:16]}" != first
    finally:
        provenance.build_id.cache_clear()


def test_the_native_module_names_no_checkout_folder_so_the_same_code_built_elsewhere_has_the_same_build_id():
    # Debug info embeds the folder the code was built in (DWARF's compilation directory): the build
    # id, a hash of this file, would then depend on where the same code was built. The tests run from
    # the checkout the package was built from (editable or `pip install .`, which builds in place).
    checkout = Path(__file__).resolve().parents[2]
    data = Path(ccscope._native.__file__).read_bytes()
    assert str(checkout).encode() not in data
