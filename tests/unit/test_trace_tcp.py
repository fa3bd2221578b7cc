"""experiments/mahimahi/trace_tcp.sh against a plain folder laid out like tracefs (TRACEFS=...), never the
kernel's: what it copies out, what it puts back, and its refusals."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "mahimahi" / "trace_tcp.sh"


def _tracefs(root: Path, probe_on: str = "0", probe_filter: str = "none", xmit_on: str = "0") -> Path:
    t = root / "tracing"
    for sub in ("events/tcp/tcp_probe", "events/net/net_dev_start_xmit", "events/tcp/tcp_rcvbuf_grow"):
        (t / sub).mkdir(parents=True)
    (t / "trace").write_text("old\n")
    (t / "tracing_on").write_text("1\n")
    (t / "buffer_size_kb").write_text("1408\n")
    (t / "events/tcp/tcp_probe/enable").write_text(probe_on + "\n")
    (t / "events/tcp/tcp_probe/filter").write_text(probe_filter + "\n")
    (t / "events/net/net_dev_start_xmit/enable").write_text(xmit_on + "\n")
    (t / "events/net/net_dev_start_xmit/filter").write_text("none\n")
    (t / "events/tcp/tcp_rcvbuf_grow/enable").write_text("0\n")
    return t


def _run(t: Path, out: Path, *cmd: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TRACEFS": str(t)}
    return subprocess.run(["sh", str(SCRIPT), str(out), *cmd], env=env, capture_output=True, text=True)


def test_the_trace_is_copied_out_and_the_buffer_size_and_tracing_switch_put_back(tmp_path):
    t = _tracefs(tmp_path)
    out = tmp_path / "trace.txt"
    r = _run(t, out, "sh", "-c", f"echo event >> {t / 'trace'}")
    assert r.returncode == 0, r.stderr
    assert out.read_text() == "\nevent\n"
    assert (t / "buffer_size_kb").read_text().strip() == "1408"
    assert (t / "tracing_on").read_text().strip() == "1"


def test_tracepoints_already_on_stay_on_with_their_filters(tmp_path):
    # Another recording had tcp_probe on with its own filter: "put back as they were" keeps it.
    t = _tracefs(tmp_path, probe_on="1", probe_filter="sport == 443")
    r = _run(t, tmp_path / "trace.txt", "true")
    assert r.returncode == 0, r.stderr
    assert (t / "events/tcp/tcp_probe/enable").read_text().strip() == "1"
    assert (t / "events/tcp/tcp_probe/filter").read_text().strip() == "sport == 443"
    assert (t / "events/net/net_dev_start_xmit/enable").read_text().strip() == "0"
    assert (t / "events/tcp/tcp_rcvbuf_grow/enable").read_text().strip() == "0"


def test_an_out_file_in_a_missing_folder_is_refused_before_anything_is_turned_on(tmp_path):
    t = _tracefs(tmp_path)
    out = tmp_path / "none" / "trace.txt"
    r = _run(t, out, "true")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [f"trace_tcp.sh: OUT_FILE: `{out}`: no such folder"]
    assert (t / "trace").read_text() == "old\n"
