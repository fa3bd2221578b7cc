"""`ccscope repro schemes` (experiments/schemes/repro.py) at a reduced size: which registry entries are schemes,
and what a deep drop-tail buffer on a constant-rate link must show (Pantheon's setup: one flow, 20 ms each way,
250-packet buffer): delay-based schemes keep the queue short, loss-based ones fill it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ccscope.cli import app

from _experiments import load_experiment  # noqa: E402

rs = load_experiment("schemes")

SEEDS = 3
DURATION_S = 15.0
PANTHEON_SCHEMES_WE_HAVE = {"cubic", "newreno", "vegas", "bbr", "ledbat", "verus", "sprout"}
# What a deep drop-tail buffer must show, per scheme: the report's own classification is checked against these.
LOSS_BASED, DELAY_BASED = ("cubic", "newreno"), ("vegas", "ledbat", "bbr")
PACKAGE_TRACES = Path(__file__).resolve().parents[2] / "python" / "ccscope" / "data" / "traces"


def test_every_registered_controller_is_a_scheme_or_excluded_with_a_reason():
    reg = rs.registered()
    schemes = rs.scheme_names(reg)
    assert rs.stale_exclusions(reg) == []
    assert set(schemes) | set(rs.EXCLUDED) == set(reg)
    assert set(schemes) & set(rs.EXCLUDED) == set()
    assert all(len(reason) > 20 for reason in rs.EXCLUDED.values())


def test_a_controller_registered_later_joins_the_comparison_unasked():
    reg = rs.registered()
    assert rs.scheme_names([*reg, "copa", "vivace"])[-2:] == ["copa", "vivace"]


def test_an_exclusion_whose_controller_left_the_registry_is_reported():
    reg = [n for n in rs.registered() if n != "markov"]
    assert rs.stale_exclusions(reg) == ["markov"]


def test_the_pantheon_schemes_ccscope_has_are_all_compared():
    assert PANTHEON_SCHEMES_WE_HAVE <= set(rs.scheme_names())


def test_the_report_classes_the_schemes_as_the_claims_here_do():
    assert (rs.LOSS_BASED, rs.DELAY_BASED) == (LOSS_BASED, DELAY_BASED)


@pytest.fixture(scope="module")
def constant(tmp_path_factory) -> dict:
    """scheme -> Cell on the constant 12 Mbit/s link, seeds 1..3, 15 s, through the sweep machinery."""
    work = tmp_path_factory.mktemp("schemes")
    sweeps = rs.run_links([rs.CONSTANT], rs.scheme_names(), SEEDS, DURATION_S, work, jobs=2)
    return rs.cells_of(sweeps[rs.CONSTANT.key])


def _numbers(cells: dict) -> str:
    return ", ".join(f"{k} {c.thr:.2f} Mbit/s p95 {c.p95:.0f} ms loss {c.loss:.2%}" for k, c in cells.items())


def test_each_scheme_ran_every_seed(constant):
    assert set(constant) == set(rs.scheme_names())
    assert all(c.seeds == SEEDS and len(c.thr_runs) == SEEDS for c in constant.values())


def test_delay_based_schemes_keep_p95_delay_below_every_loss_based_one_on_the_constant_link(constant):
    # The verdict is the cells' own p95s, compared here; the report's `delay_ordering` must agree with them.
    above = [(d, lb) for d in DELAY_BASED for lb in LOSS_BASED if not constant[d].p95 < constant[lb].p95]
    assert above == [], _numbers(constant)
    assert rs.delay_ordering(constant) == [(d, lb, True) for d in DELAY_BASED for lb in LOSS_BASED]


def test_loss_based_schemes_fill_most_of_the_drop_tail_buffer(constant):
    # 250 packets at 12 Mbit/s drain in 250 ms; 20 ms of propagation on top.
    buffer_ms = rs.QUEUE_PACKETS * rs.PACKET_BYTES * 8 / (rs.CONSTANT_MBPS * 1e3)
    for k in LOSS_BASED:
        assert constant[k].p95 > rs.ONE_WAY_DELAY_MS + 0.8 * buffer_ms, _numbers(constant)


def test_loss_based_schemes_lose_packets_and_delay_based_ones_lose_none(constant):
    assert all(constant[k].loss > 0 for k in LOSS_BASED), _numbers(constant)
    assert all(constant[k].loss == 0 for k in DELAY_BASED), _numbers(constant)


def test_every_scheme_uses_most_of_an_uncontended_constant_link(constant):
    assert all(c.util >= 0.8 for c in constant.values()), _numbers(constant)


def test_repro_schemes_writes_the_report_table_and_one_compare_figure_per_link(tmp_path):
    md = tmp_path / "repro" / "schemes.md"
    res = CliRunner().invoke(app, ["repro", "schemes", "-o", str(md), "--traces", str(PACKAGE_TRACES), "--seeds", "2",
                                   "--duration", "5", "--schemes", "cubic,vegas", "--jobs", "2",
                                   "--links", "constant 12 Mbit/s,Verizon-LTE-short.down"])
    assert res.exit_code == 0, res.output
    text = md.read_text()
    assert "`ccscope repro schemes`" in text
    assert "ccscope repro schemes -o docs/reproductions/schemes.md --seeds 2 --duration 5" in text
    assert "| `cubic` |" in text and "| `vegas` |" in text and "| `bbr` |" not in text
    assert "### Verizon-LTE-short.down" in text and "### constant 12 Mbit/s" in text
    for key in ("constant-12mbps", "Verizon-LTE-short_down"):
        assert (tmp_path / "repro" / "schemes" / key / "throughput_delay.png").stat().st_size > 1000
        assert (tmp_path / "repro" / "schemes" / key / "compare.json").is_file()
        assert f"](schemes/{key}/throughput_delay.png)" in text


def _one_error_line(res) -> str:
    assert res.exit_code == 2, res.stdout + res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in res.stdout + res.stderr
    return lines[0]


def test_repro_schemes_refuses_a_name_that_is_not_a_scheme(tmp_path):
    res = CliRunner().invoke(app, ["repro", "schemes", "-o", str(tmp_path / "s.md"), "--schemes", "markov"])
    assert "--schemes markov" in _one_error_line(res)
    assert list(tmp_path.iterdir()) == []


def test_repro_schemes_will_not_replace_a_file_it_did_not_write(tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_text("mine")
    res = CliRunner().invoke(app, ["repro", "schemes", "-o", str(notes), "--links", "constant-12mbps"])
    assert str(notes) in _one_error_line(res)
    assert notes.read_text() == "mine" and [p.name for p in tmp_path.iterdir()] == ["notes.md"]


@pytest.fixture(scope="module")
def verizon(tmp_path_factory) -> dict:
    """link label -> scheme -> Cell on the package's Verizon LTE pair (each direction, ACKs over the other),
    seeds 1..2, 20 s."""
    lks, _ = rs.links(PACKAGE_TRACES, constant=False)
    assert [lk.label for lk in lks] == ["Verizon-LTE-short.down", "Verizon-LTE-short.up"]
    sweeps = rs.run_links(lks, rs.scheme_names(), 2, 20.0, tmp_path_factory.mktemp("verizon"), jobs=2)
    return {lk.label: rs.cells_of(sweeps[lk.key]) for lk in lks}


@pytest.mark.parametrize("trace", ["Verizon-LTE-short.down", "Verizon-LTE-short.up"])
@pytest.mark.parametrize("scheme", ["vegas", "bbr", "ledbat", "sprout"])
def test_delay_aware_schemes_keep_p95_delay_below_cubic_on_the_cellular_traces(verizon, trace, scheme):
    # Sprout (Winstein et al. 2013 §5) and BBR, Vegas, LEDBAT by design: Cubic fills the 250-packet buffer.
    cells = verizon[trace]
    assert cells[scheme].p95 < cells["cubic"].p95, _numbers(cells)
