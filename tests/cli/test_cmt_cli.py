"""`ccscope cmt model` and `ccscope cmt allocate` (paper 002): JSON output equals the API, sizes follow A11
(KB = 1000 B), and every bad input prints one line naming its option and exits 2."""

from __future__ import annotations

import inspect
import json

import pytest
from typer.testing import CliRunner

from ccscope.cli import app
from ccscope.models.cmt import Destination, allocate, mathis_throughput, pftk_throughput, renewal_throughput
from ccscope.models.cmt.renewal import reference_rtt

if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters:
    runner = CliRunner(mix_stderr=False)
else:
    runner = CliRunner()

FOCUS = ["--p", "1e-3", "--b", "21", "--d", "40"]
PATHS = ["--path", "b=21,d=40,p=1e-3", "--path", "b=10,d=50,p=1e-2"]


def all_output(res) -> str:
    try:
        return res.stdout + res.stderr
    except ValueError:
        return res.output


def markov_available() -> bool:
    try:
        from ccscope.models.cmt.markov import markov_throughput  # noqa: F401
    except ImportError:
        return False
    return True


def test_model_json_matches_the_api():
    res = runner.invoke(app, ["cmt", "model", *FOCUS, "--rbuf", "128KB", "--json"])
    assert res.exit_code == 0, all_output(res)
    out = json.loads(res.stdout)
    assert out["inputs"]["w"] == 85 and out["inputs"]["rbuf_bytes"] == 128_000
    assert out["renewal"] == renewal_throughput(1e-3, 21, 40, 128_000).to_dict()
    rtt, rto = reference_rtt(1e-3, 21, 40, 128_000)
    assert out["reference"] == {
        "rtt_s": rtt,
        "rto_s": rto,
        "mathis_mbps": mathis_throughput(1e-3, rtt),
        "pftk_mbps": pftk_throughput(1e-3, rtt, rto, 85),
    }
    if markov_available():
        from ccscope.models.cmt.markov import markov_throughput

        m = markov_throughput(1e-3, 21, 40, 128_000, loss="correlated", rto_max_s=60.0, packet_bytes=1500)
        assert out["markov"]["throughput_mbps"] == m.throughput_mbps
        assert out["markov"]["states"] == m.states and out["markov"]["residual"] <= 1e-10
    else:
        assert out["markov"] is None and "markov_error" in out


def test_model_eq62_option_reaches_the_renewal_model():
    res = runner.invoke(app, ["cmt", "model", *FOCUS, "--rbuf", "128000", "--eq62", "--json"])
    assert res.exit_code == 0, all_output(res)
    assert json.loads(res.stdout)["renewal"] == renewal_throughput(1e-3, 21, 40, 128_000, eq62=True).to_dict()


@pytest.mark.parametrize("rbuf,bytes_,w", [("128KB", 128_000, 85), ("128kB", 128_000, 85), ("131072", 131_072, 87),
                                           ("128KiB", 131_072, 87), ("1MB", 1_000_000, 666)])
def test_rbuf_sizes_read_kb_as_1000_bytes(rbuf, bytes_, w):
    res = runner.invoke(app, ["cmt", "model", *FOCUS, "--rbuf", rbuf, "--json"])
    assert res.exit_code == 0, all_output(res)
    assert json.loads(res.stdout)["inputs"]["rbuf_bytes"] == bytes_ and json.loads(res.stdout)["inputs"]["w"] == w


def test_model_table_prints_w_in_both_conventions():
    res = runner.invoke(app, ["cmt", "model", *FOCUS, "--rbuf", "128KB"], terminal_width=200)
    assert res.exit_code == 0, all_output(res)
    assert "W = floor(128000/1500) = 85 packets" in res.stdout and "W = 87" in res.stdout
    assert f"{renewal_throughput(1e-3, 21, 40, 128_000).throughput_mbps:.4f}" in res.stdout
    assert "Mathis" in res.stdout and "PFTK" in res.stdout and "Markov" in res.stdout


def test_model_with_independent_loss_explains_the_missing_renewal_number():
    res = runner.invoke(app, ["cmt", "model", *FOCUS, "--rbuf", "128KB", "--loss", "independent", "--json"])
    assert res.exit_code == 0, all_output(res)
    out = json.loads(res.stdout)
    assert out["renewal"] is None and "correlated" in out["renewal_error"]


@pytest.mark.parametrize("solver,k", [("dp", 1), ("milp", 1), ("heuristic", 1), ("heuristic", 5)])
def test_allocate_json_matches_the_api(solver, k):
    res = runner.invoke(app, ["cmt", "allocate", *PATHS, "--rbuf", "128KB", "--solver", solver, "--k", str(k),
                              "--model", "renewal", "--json"])
    assert res.exit_code == 0, all_output(res)
    out = json.loads(res.stdout)
    api = allocate([Destination(21, 40, 1e-3), Destination(10, 50, 1e-2)], 128_000, solver=solver, k=k,
                   objective="renewal")
    assert out["limits_packets"] == list(api.limits_packets)
    assert out["limits_bytes"] == list(api.limits_bytes)
    assert out["throughput_mbps"] == list(api.throughput_mbps) and out["total_mbps"] == api.total_mbps
    assert out["upper_bounds"] == [71, 43] and out["w_total"] == 85 and out["solver"] == solver


def test_allocate_table_prints_limits_and_total():
    res = runner.invoke(app, ["cmt", "allocate", *PATHS, "--rbuf", "128KB", "--model", "renewal"], terminal_width=200)
    assert res.exit_code == 0, all_output(res)
    api = allocate([Destination(21, 40, 1e-3), Destination(10, 50, 1e-2)], 128_000, objective="renewal")
    assert f"{api.total_mbps:.4f}" in res.stdout
    for c in api.limits_packets:
        assert str(c * 1500) in res.stdout


@pytest.mark.skipif(not markov_available(), reason="the Markov model (ccscope.models.cmt.markov) is not in this build")
def test_allocate_defaults_to_the_markov_objective():
    res = runner.invoke(app, ["cmt", "allocate", *PATHS, "--rbuf", "128KB", "--json"])
    assert res.exit_code == 0, all_output(res)
    out = json.loads(res.stdout)
    api = allocate([Destination(21, 40, 1e-3), Destination(10, 50, 1e-2)], 128_000)
    assert out["model"] == "markov" and out["limits_packets"] == list(api.limits_packets)


MODEL_BAD = [
    ("p zero", ["--p", "0", "--b", "21", "--d", "40", "--rbuf", "128KB"], "--p"),
    ("p one", ["--p", "1", "--b", "21", "--d", "40", "--rbuf", "128KB"], "--p"),
    ("p above one", ["--p", "1.5", "--b", "21", "--d", "40", "--rbuf", "128KB"], "--p"),
    ("p subnormal", ["--p", "5e-324", "--b", "21", "--d", "40", "--rbuf", "128KB"], "--p"),
    ("zero bandwidth", ["--p", "1e-3", "--b", "0", "--d", "40", "--rbuf", "128KB"], "--b"),
    ("negative bandwidth", ["--p", "1e-3", "--b", "-2", "--d", "40", "--rbuf", "128KB"], "--b"),
    ("negative delay", ["--p", "1e-3", "--b", "21", "--d", "-1", "--rbuf", "128KB"], "--d"),
    ("rbuf below a packet", ["--p", "1e-3", "--b", "21", "--d", "40", "--rbuf", "1KB"], "--rbuf"),
    ("rbuf not a size", ["--p", "1e-3", "--b", "21", "--d", "40", "--rbuf", "lots"], "--rbuf"),
    ("unknown loss model", ["--p", "1e-3", "--b", "21", "--d", "40", "--rbuf", "128KB", "--loss", "bursty"], "--loss"),
    ("zero rto max", ["--p", "1e-3", "--b", "21", "--d", "40", "--rbuf", "128KB", "--rto-max", "0"], "--rto-max"),
]
ALLOCATE_BAD = [
    ("no path", ["--rbuf", "128KB"], "--path"),
    ("path without =", ["--path", "b21,d=40,p=1e-3", "--rbuf", "128KB"], "--path #1"),
    ("path missing p", ["--path", "b=21,d=40", "--rbuf", "128KB"], "--path #1"),
    ("path unknown key", ["--path", "b=21,d=40,p=1e-3,q=2", "--rbuf", "128KB"], "--path #1"),
    ("path p not a number", ["--path", "b=21,d=40,p=x", "--rbuf", "128KB"], "--path #1"),
    ("path p outside (0,1)", [*PATHS[:2], "--path", "b=10,d=50,p=2", "--rbuf", "128KB"], "--path #2"),
    ("path zero bandwidth", [*PATHS[:2], "--path", "b=0,d=50,p=1e-3", "--rbuf", "128KB"], "--path #2"),
    ("rbuf below a packet", [*PATHS, "--rbuf", "1000"], "--rbuf"),
    ("rbuf below two packets a path", [*PATHS, "--rbuf", "5999"], "--rbuf"),
    ("unknown solver", [*PATHS, "--rbuf", "128KB", "--solver", "greedy"], "--solver"),
    ("zero step", [*PATHS, "--rbuf", "128KB", "--solver", "heuristic", "--k", "0"], "--k"),
    ("unknown model", [*PATHS, "--rbuf", "128KB", "--model", "fluid"], "--model"),
    # `cmt allocate` has no --p: the renewal model's own domain (E[W] >= 1) is the path's p.
    ("path outside the renewal domain", [*PATHS[:2], "--path", "b=10,d=50,p=0.7", "--rbuf", "128KB", "--model",
                                         "renewal"], "--path #2 'b=10,d=50,p=0.7': p: 0.7 is outside"),
]


@pytest.mark.parametrize("command,case,args,option",
                         [("model", *c) for c in MODEL_BAD] + [("allocate", *c) for c in ALLOCATE_BAD],
                         ids=[f"model: {c[0]}" for c in MODEL_BAD] + [f"allocate: {c[0]}" for c in ALLOCATE_BAD])
def test_bad_input_gives_one_line_naming_the_option_and_exit_2(command, case, args, option):
    res = runner.invoke(app, ["cmt", command, *args])
    assert res.exit_code == 2, all_output(res)
    lines = [ln for ln in all_output(res).splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: ") and option in lines[0]
    assert "Traceback" not in all_output(res)


@pytest.mark.parametrize("p", [1e-12, 1e-17, 1e-30, 1e-300, 2.9e-308])
@pytest.mark.parametrize("rbuf", ["128000", "25000MB"])
def test_a_vanishing_loss_rate_gives_every_model_the_window_limited_rate(p, rbuf):
    # W = 85 (128 kB) or 16.7 M packets (25,000 MB), both above b d = 33 packets: as p -> 0 the renewal model
    # and PFTK reach the link rate, 10 Mbit/s (eq. 8); 1 - p rounds to 1 below 1.1e-16.
    res = runner.invoke(app, ["cmt", "model", "--p", repr(p), "--b", "10", "--d", "40", "--rbuf", rbuf, "--json"])
    assert res.exit_code == 0, all_output(res)
    out = json.loads(res.stdout)
    assert out["renewal"]["throughput_mbps"] == pytest.approx(10.0, rel=1e-4)
    assert out["reference"]["pftk_mbps"] == pytest.approx(10.0, rel=1e-4)
    assert 0.0 < out["renewal"]["p_timeout"] <= 1.0
    if rbuf == "128000" and markov_available():
        assert out["markov"]["throughput_mbps"] == pytest.approx(10.0, rel=1e-4)
    assert renewal_throughput(p, 10, 40, 128_000, eq62=True).throughput_mbps == pytest.approx(10.0, rel=1e-4)


def test_milp_json_stays_one_object_on_the_real_stdout():
    # HiGHS prints a banner on the C stdout when its first instance is built; CliRunner does not see fd 1.
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "ccscope.cli", "cmt", "allocate", *PATHS, "--rbuf", "128KB",
                          "--solver", "milp", "--model", "renewal", "--json"], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["solver"] == "milp"
