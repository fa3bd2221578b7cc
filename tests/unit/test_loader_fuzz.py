"""Fuzzing the scenario loader: random TOML-ish documents and random mutations of the examples are
either accepted or refused with one error line (exit 2) by `ccscope validate`; never a traceback, a
panic or another exit code."""

from __future__ import annotations

import string
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccscope import api
from ccscope.cli import app

EXAMPLES = sorted(api.EXAMPLES_DIR.glob("*.toml"))

KEYS = ["name", "seed", "duration_s", "bin_ms", "rate_mbps", "delay_ms", "trace", "once", "queue", "loss", "kind",
        "packets", "p", "controller", "window", "count", "start_s", "stop_s", "transport", "paths", "links", "from",
        "to", "monitor", "per_flow", "packet_log", "cwnd_log", "model", "alpha", "beta", "rbuf_bytes", "zzz"]
HEADERS = ["[data_link]", "[ack_link]", "[[flows]]", "[[links]]", "[flows]", "[data_link.queue]", "[[flows.paths]]", "[x]"]
CONTROLLERS = ["fixed", "aimd", "cubic", "newreno", "vegas", "verus", "sprout", "markov", "sctp", "sac", "lied", "timely",
               "python", "bogus", ""]
# `class` only ever names things that are safe to import.
CLASSES = ["ctl.py:Ctl", "no_such_module_for_fuzz:X", "math:nope", "a:b:c", "", ":", "json:JSONDecoder"]

words = st.text(alphabet=string.ascii_letters + string.digits + "_-. /:", max_size=12)
scalars = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.sampled_from(["0", "-0", "1e308", "-1e-320", "nan", "inf", "-inf", "1.5", "true", "false", "0x10", "1_000"]),
    st.floats(allow_nan=False).map(repr).filter(lambda s: "e" not in s or "." in s),
    words.map(lambda w: '"' + w.replace('"', "") + '"'),
    st.sampled_from(CONTROLLERS).map(lambda c: f'"{c}"'),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.lists(st.tuples(st.sampled_from(KEYS), inner), max_size=3).map(
            lambda kv: "{ " + ", ".join(f"{k} = {v}" for k, v in kv) + " }"),
    ),
    max_leaves=6,
)


@st.composite
def lines(draw) -> str:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.sampled_from(HEADERS))
    if kind == 1:
        return f'class = "{draw(st.sampled_from(CLASSES))}"'
    if kind == 2:
        return draw(st.text(max_size=20)).replace("\n", " ")
    return f"{draw(st.sampled_from(KEYS))} = {draw(values)}"


documents = st.lists(lines(), max_size=25).map("\n".join)


@st.composite
def mutated_examples(draw) -> tuple:
    path = draw(st.sampled_from(EXAMPLES))
    ls = path.read_text().splitlines()
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.integers(0, 5))
        i = draw(st.integers(0, max(len(ls) - 1, 0)))
        if not ls:
            ls = [draw(lines())]
        elif op == 0:
            del ls[i]
        elif op == 1:
            ls.insert(i, ls[i])
        elif op == 2:
            ls.insert(i, draw(lines()))
        elif op == 3 and "=" in ls[i]:
            key = ls[i].split("=", 1)[0].strip()
            value = f'"{draw(st.sampled_from(CLASSES))}"' if key == "class" else draw(values)
            ls[i] = f"{key} = {value}"
        elif op == 4:
            j = draw(st.integers(0, len(ls) - 1))
            ls[i], ls[j] = ls[j], ls[i]
        else:
            text = "\n".join(ls)
            cut = draw(st.integers(0, len(text)))
            ls = text[:cut].splitlines()
    return path, "\n".join(ls) + "\n"


def check_validate(tmp: Path, text: str, cli_runner) -> None:
    scenario = tmp / "s.toml"
    scenario.write_text(text)
    res = cli_runner.invoke(app, ["validate", str(scenario)])
    assert res.exit_code in (0, 2), (res.exit_code, res.exception, text)
    if res.exit_code == 2:
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), (res.stderr, text)
        assert "Traceback" not in res.stdout + res.stderr


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=documents)
def test_random_documents_are_accepted_or_refused_with_one_line(tmp_path, cli_runner, text):
    check_validate(tmp_path, text, cli_runner)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=mutated_examples())
def test_mutated_examples_are_accepted_or_refused_with_one_line(tmp_path, cli_runner, case):
    _, text = case
    # Traces named by the examples are found on the search path (the package's traces).
    check_validate(tmp_path, text, cli_runner)
