"""experiments/ns3/parking_lot.py without ns-3: a stand-in program prints parking_lot.cc's JSON, and the script
runs ccscope on the example's lot with the long flow over 1, 2 and 3 hops, compares, and writes only into the
folder it is given: a same-named file ccscope did not write stops it before any build or run, with one error line
and exit 2; its own files are listed in the folder's manifest, each written as its run ends."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "experiments" / "ns3" / "parking_lot.py"
FOREIGN = b"a user's,table\r\n1,2\n"


def load_script():
    spec = importlib.util.spec_from_file_location("ns3_parking_lot", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def fake_ns3(path: Path, fails_for_hops: int = 0, output: str = "") -> Path:
    """A stand-in for parking_lot.cc's binary: long flow 1 Mbit/s, cross flows 4 Mbit/s, utilisation 0.9, 7 drops
    per link; fails for --hops=<fails_for_hops>; prints `output` instead when given."""
    path.write_text(
        f"#!{sys.executable}\n"
        "import json, sys\n"
        "hops = int(next(a for a in sys.argv if a.startswith('--hops=')).split('=')[1])\n"
        f"if hops == {fails_for_hops}:\n"
        "    sys.exit(1)\n"
        f"if {output!r}:\n"
        f"    print({output!r}); sys.exit(0)\n"
        "flows = [{'flow': i, 'goodput_mbps': 1.0 if i == 0 else 4.0, 'rtos': 0} for i in range(hops + 1)]\n"
        "links = [{'link': f'hop{k}', 'utilization': 0.9, 'drops': 7} for k in range(1, hops + 1)]\n"
        "print(json.dumps({'config': {'hops': hops}, 'flows': flows, 'links': links}))\n")
    path.chmod(0o755)
    return path


def compare(out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "-o", str(out), "--sim-s", "2", *extra],
                          capture_output=True, text=True, timeout=600)


def own_files(seeds=(1,), ns3=True) -> list:
    names = [f"ccscope_newreno_ns3_{h}hop_seed{s}.json" for h in (1, 2, 3) for s in seeds]
    names += [f"ns3_newreno_{h}hop_seed{s}.json" for h in (1, 2, 3) for s in seeds] if ns3 else []
    return sorted(names + ["parking_lot_newreno_ns3.md"])


def manifest_files(d: Path) -> list:
    return json.loads((d / "ccscope-manifest.json").read_text())["files"]


def test_the_long_flow_crosses_the_first_hops_and_its_acks_return_the_same_links_reversed():
    mod = load_script()
    ov = mod.ccscope_overrides("Cubic", "ns3", 2, 30.0, 1.0, 4)
    assert ov["duration_s"] == 30.0 and ov["seed"] == 4
    flows = ov["flows"]
    assert [(f["route"], f["ack_route"]) for f in flows] == [
        (["hop1", "hop2"], ["back2", "back1"]), (["hop1"], ["back1"]), (["hop2"], ["back2"])]
    assert all(f["controller"] == "cubic" and f["packet_bytes"] == 1502 and f["ack_bytes"] == 54
               and f["stack"] == "ns3" and f["delayed_ack"] == "none" and f["start_jitter_s"] == 1.0 for f in flows)
    # Three hops are the example's own routes; no jitter leaves the example's start times.
    three = mod.ccscope_overrides("NewReno", "rfc", 3, 30.0, 0.0, 1)["flows"]
    assert three[0]["route"] == ["hop1", "hop2", "hop3"] and three[0]["ack_route"] == ["back3", "back2", "back1"]
    assert all("start_jitter_s" not in f for f in three)


def test_share_and_jain_index_follow_their_definitions():
    mod = load_script()
    run = {"flows": [{"goodput_mbps": 1.0}, {"goodput_mbps": 4.0}, {"goodput_mbps": 2.0}],
           "links": [{"link": "hop1", "utilization": 0.5, "drops": 3}]}
    m = mod.metrics(run)
    # long / (long + mean cross) = 1 / (1 + 3); Jain = 7^2 / (3 x 21).
    assert m["share"] == pytest.approx(0.25) and m["jain"] == pytest.approx(49 / 63)
    assert (m["long"], m["cross1"], m["cross2"], m["hop1 util"], m["hop1 drops"]) == (1.0, 4.0, 2.0, 0.5, 3.0)


def test_it_compares_each_hop_count_and_lists_its_outputs(tmp_path):
    d = tmp_path / "lot"
    res = compare(d, "--ns3-bin", str(fake_ns3(tmp_path / "ns3")))
    assert res.returncode == 0, res.stderr
    detail, short = res.stdout.split("\n\n")
    rows = [r.split(" | ") for r in detail.splitlines()[2:]]
    ns3 = {(r[0].strip("| "), r[1]): r[2] for r in rows}
    assert {h for h, _ in ns3} == {"1", "2", "3"}
    # The stand-in's figures come through: share 1 / (1 + 4), Jain over 1 + hops flows.
    assert ns3[("3", "long")] == "1.000" and ns3[("3", "share")] == "0.200"
    assert ns3[("2", "jain")] == f"{81 / (3 * 33):.3f}" and ns3[("3", "hop3 drops")] == "7"
    # The summary: one row per hop count and simulator; drops summed over the hops.
    rows = [[c.strip() for c in r.strip("|").split(" | ")] for r in short.splitlines()[2:]]
    assert [(r[0], r[1]) for r in rows] == [(h, s) for h in "123" for s in ("ns-3.37", 'ccscope `"ns3"`')]
    assert rows[4][2:] == ["1.000", "4.000", "0.200", f"{13 ** 2 / (4 * 49):.3f}", "0.9000", "21", "0"]
    assert (d / "parking_lot_newreno_ns3.md").read_text() == res.stdout
    assert manifest_files(d) == own_files()
    saved = json.loads((d / "ccscope_newreno_ns3_2hop_seed1.json").read_text())
    assert [l["link"] for l in saved["links"]] == ["hop1", "hop2"] and len(saved["flows"]) == 3


@pytest.mark.parametrize("name", ["ns3_newreno_2hop_seed1.json", "parking_lot", "parking_lot_newreno_ns3.md",
                                  "ccscope_newreno_ns3_3hop_seed1.json"])
def test_a_foreign_file_named_like_an_output_stops_it_before_any_build_or_run(tmp_path, name):
    d = tmp_path / "lot"
    d.mkdir()
    (d / name).write_bytes(FOREIGN)
    # The source is missing: reaching the build would fail differently.
    res = compare(d, "--ns3-source", str(tmp_path / "missing.cc"))
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.splitlines() == [
        f"error: figures folder {d}: {name} is there and ccscope did not write it; move it away first"]
    assert (d / name).read_bytes() == FOREIGN and [p.name for p in d.iterdir()] == [name]


def test_a_late_failure_keeps_every_output_written_before_it(tmp_path):
    d = tmp_path / "lot"
    res = compare(d, "--ns3-bin", str(fake_ns3(tmp_path / "ns3", fails_for_hops=3)))
    assert res.returncode == 2 and res.stderr.splitlines()[-1].startswith("error: Command "), res.stderr
    done = [n for n in own_files() if "3hop" not in n and n.endswith(".json")]
    assert manifest_files(d) == done


def test_output_that_is_not_the_programs_json_is_one_error_line(tmp_path):
    d = tmp_path / "lot"
    res = compare(d, "--ns3-bin", str(fake_ns3(tmp_path / "ns3", output='{"flows": []}')))
    assert res.returncode == 2
    assert len(res.stderr.splitlines()) == 1 and "expected 2 flows with goodput_mbps and 1 links" in res.stderr


def test_recorded_ns3_outputs_are_read_instead_of_running_ns3(tmp_path):
    first, again = tmp_path / "first", tmp_path / "again"
    assert compare(first, "--ns3-bin", str(fake_ns3(tmp_path / "ns3"))).returncode == 0
    res = compare(again, "--ns3-json-dir", str(first))
    assert res.returncode == 0, res.stderr
    assert res.stdout == (first / "parking_lot_newreno_ns3.md").read_text()
    assert manifest_files(again) == own_files(ns3=False)
    # A recorded output missing: one error line, before any ccscope run.
    (first / "ns3_newreno_3hop_seed1.json").unlink()
    res = compare(tmp_path / "third", "--ns3-json-dir", str(first))
    assert res.returncode == 2 and len(res.stderr.splitlines()) == 1 and "ns3_newreno_3hop_seed1.json" in res.stderr
    assert not (tmp_path / "third").exists()
