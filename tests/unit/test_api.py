"""The Python API: every way to name a scenario, result frames, conservation, determinism, the packet
log, Python controllers, config round-trips and atomic results folders."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccscope
from ccscope import api

SHORT = {"duration_s": 10}

SUMMARY_KEYS = {
    "flow", "controller", "sent", "delivered", "dropped", "in_flight", "declared_lost", "duration_s",
    "throughput_mbps", "goodput_mbps", "retransmissions", "rtos", "capacity_mbps", "utilization", "queue_delay_p95_ms", "queue_delay_mean_ms",
    "signal_delay_p95_ms", "one_way_delay_p95_ms", "one_way_delay_mean_ms", "loss_rate", "score",
    "log2_score", "jain_index", "events", "sim_end_s", "acks_sent", "acks_delivered", "acks_dropped",
    "acks_in_flight",
}
FLOW_COLUMNS = [
    "flow", "controller", "sent", "delivered", "dropped", "in_flight", "declared_lost", "duration_s",
    "throughput_mbps", "goodput_mbps", "first_tx_mbps", "retransmissions", "rtos", "capacity_mbps", "utilization", "queue_delay_p95_ms", "queue_delay_mean_ms",
    "signal_delay_p95_ms", "one_way_delay_p95_ms", "one_way_delay_mean_ms", "loss_rate", "score", "log2_score",
    "transfers_done", "fct_mean_s", "transfers_started", "file_bytes_done", "goodput_bytes", "on_rate_mbps",
    "largest_file_bytes", "files_capped",
]
TIMESERIES_COLUMNS = [
    "time_s", "flow", "capacity_mbps", "ingress_mbps", "throughput_mbps", "delivered_mbps",
    "queue_delay_mean_ms", "queue_delay_max_ms", "one_way_delay_mean_ms", "one_way_delay_max_ms", "drops", "cwnd",
]
PACKET_COLUMNS = ["time_ms", "event", "flow", "seq", "bytes", "delay_ms"]


# --- naming a scenario -------------------------------------------------------------------------------


def test_run_by_path_str_and_path_object_agree(short):
    path = api.EXAMPLES_DIR / "datagrump.toml"
    a = ccscope.run(path, overrides=short)
    b = ccscope.run(str(path), overrides=short)
    assert a.summary == b.summary
    assert a.scenario["name"] == "datagrump"
    assert a.summary["delivered"] > 0


def test_run_by_embedded_example_name_works_from_any_cwd(tmp_cwd, short):
    assert not (tmp_cwd / "examples").exists()
    by_name = ccscope.run("examples/datagrump.toml", overrides=short)
    by_path = ccscope.run(api.EXAMPLES_DIR / "datagrump.toml", overrides=short)
    assert by_name.summary == by_path.summary


def test_run_by_dict_equals_run_by_path(short):
    d = api.Scenario.load("examples/datagrump.toml").to_dict()
    assert isinstance(d, dict) and d["flows"][0]["controller"] == "fixed"
    assert ccscope.run(d, overrides=short).summary == ccscope.run("examples/datagrump.toml", overrides=short).summary


def test_run_by_toml_text_equals_run_by_path(contest_toml, short):
    assert "\n" in contest_toml
    by_text = ccscope.run(contest_toml, overrides=short)
    assert by_text.summary == ccscope.run("examples/datagrump.toml", overrides=short).summary


def test_unknown_scenario_name_raises_scenario_error(tmp_cwd):
    with pytest.raises(ccscope.ScenarioError, match="no_such_example"):
        ccscope.run("examples/no_such_example.toml")


# --- result shape ------------------------------------------------------------------------------------


def test_result_has_summary_flows_and_timeseries_frames(short):
    r = ccscope.run("examples/datagrump.toml", overrides=short)
    assert SUMMARY_KEYS <= set(r.summary)
    assert r.summary["flow"] == -1 and r.summary["controller"] == "all"
    assert isinstance(r.flows, pd.DataFrame) and list(r.flows.columns) == FLOW_COLUMNS
    assert len(r.flows) == 1 and r.flows.loc[0, "controller"] == "fixed"
    assert isinstance(r.timeseries, pd.DataFrame) and list(r.timeseries.columns) == TIMESERIES_COLUMNS
    assert set(r.timeseries["flow"]) == {-1, 0}
    # 500 ms bins over 10 s, for the link row and the one flow.
    assert (r.timeseries["flow"] == -1).sum() == 20
    assert r.packets is None
    assert r.scenario["duration_s"] == 10.0


@pytest.mark.parametrize("example", api.examples())
def test_every_example_conserves_packets_and_acks(example, short):
    s = ccscope.run(f"examples/{example}.toml", overrides=short).summary
    assert s["sent"] > 0
    assert s["sent"] == s["delivered"] + s["dropped"] + s["in_flight"]
    assert s["acks_sent"] == s["acks_delivered"] + s["acks_dropped"] + s["acks_in_flight"]
    # An ACK is sent for every delivered packet.
    assert s["acks_sent"] == s["delivered"]


@pytest.mark.parametrize("example", api.examples())
def test_every_example_conserves_packets_per_flow(example, short):
    r = ccscope.run(f"examples/{example}.toml", overrides=short)
    f = r.flows
    assert (f["sent"] == f["delivered"] + f["dropped"] + f["in_flight"]).all()
    for col in ("sent", "delivered", "dropped", "in_flight"):
        assert f[col].sum() == r.summary[col]


# --- determinism -------------------------------------------------------------------------------------


def test_same_seed_gives_identical_results(short):
    a = ccscope.run("examples/red_lossy.toml", overrides=short, seed=7)
    b = ccscope.run("examples/red_lossy.toml", overrides=short, seed=7)
    assert a.summary == b.summary
    pd.testing.assert_frame_equal(a.flows, b.flows)
    pd.testing.assert_frame_equal(a.timeseries, b.timeseries)


def test_random_loss_scenario_differs_between_seeds(short):
    a = ccscope.run("examples/red_lossy.toml", overrides=short, seed=1).summary
    b = ccscope.run("examples/red_lossy.toml", overrides=short, seed=2).summary
    assert a != b
    assert a["dropped"] != b["dropped"]


def test_seed_argument_overrides_the_scenario_seed(short):
    a = ccscope.run("examples/red_lossy.toml", overrides={**short, "seed": 5})
    b = ccscope.run("examples/red_lossy.toml", overrides=short, seed=5)
    assert a.summary == b.summary and b.scenario["seed"] == 5


# --- packet log --------------------------------------------------------------------------------------


@pytest.mark.parametrize("example", ["datagrump", "red_lossy"])
def test_packet_log_accounts_for_every_data_packet(example, short):
    r = ccscope.run(f"examples/{example}.toml", overrides=short, packets=True)
    s = r.summary
    pk = r.packets
    assert isinstance(pk, pd.DataFrame) and list(pk.columns) == PACKET_COLUMNS
    counts = pk["event"].value_counts()
    arrivals, departures, drops = counts.get("arrival", 0), counts.get("departure", 0), counts.get("drop", 0)
    assert arrivals == s["sent"]
    assert drops == s["dropped"]
    # Departed packets are delivered or still on the far delay line; the rest are still queued.
    assert s["delivered"] <= departures <= arrivals - drops
    assert arrivals - drops - departures <= s["in_flight"]
    size = api.Scenario.load(f"examples/{example}.toml").to_dict()["flows"][0].get("packet_bytes", 1500)
    assert (pk.loc[pk.event == "departure", "bytes"] == size).all()
    dep = pk[pk.event == "departure"]
    assert dep["time_ms"].is_monotonic_increasing  # a FIFO link releases packets in time order




def test_packet_log_is_in_time_order(short):
    pk = ccscope.run("examples/datagrump.toml", overrides=short, packets=True).packets
    assert pk["time_ms"].is_monotonic_increasing


def test_packet_log_of_a_trace_link_has_its_delivery_opportunities(short):
    pk = ccscope.run("examples/datagrump.toml", overrides=short, packets=True).packets
    opp = pk[pk.event == "opportunity"]
    assert len(opp) > 0 and (opp["bytes"] == 1504).all()


def test_packet_log_does_not_change_the_results(short):
    a = ccscope.run("examples/datagrump.toml", overrides=short)
    b = ccscope.run("examples/datagrump.toml", overrides=short, packets=True)
    assert a.summary == b.summary


# --- Python controllers ------------------------------------------------------------------------------


class FixedTwelve(ccscope.Controller):
    cwnd = 12


def test_python_fixed_window_equals_builtin_fixed_window_exactly():
    builtin = ccscope.run("examples/datagrump.toml", overrides={"flows.0.window": 12})
    py = ccscope.run("examples/datagrump.toml", overrides={"flows.0.controller": "python"},
                     controllers={0: FixedTwelve()})
    assert py.summary == builtin.summary
    numeric = [c for c in builtin.flows.columns if c != "controller"]
    pd.testing.assert_frame_equal(py.flows[numeric], builtin.flows[numeric])
    pd.testing.assert_frame_equal(py.timeseries, builtin.timeseries)


def test_python_controller_class_is_instantiated_when_passed_as_a_class(short):
    py = ccscope.run("examples/datagrump.toml", overrides={**short, "flows.0.controller": "python"},
                     controllers={0: FixedTwelve})
    assert py.summary == ccscope.run("examples/datagrump.toml", overrides=short).summary


CTL_PY = """\
import ccscope

CREATED = []


class MyCtl(ccscope.Controller):
    def __init__(self, window):
        self.cwnd = window
        CREATED.append(window)
"""


def test_python_controller_loaded_from_file_gets_its_kwarg(write, contest_toml, short):
    write("ctl.py", CTL_PY)
    # `class` and `window` go into the flow table; the file path resolves next to the scenario.
    text = contest_toml.replace('controller = "fixed"\nwindow = 12',
                                'controller = "python"\nclass = "ctl.py:MyCtl"\nwindow = 7')
    assert 'class = "ctl.py:MyCtl"' in text
    sc = write("py.toml", text)
    py = ccscope.run(sc, overrides=short)
    builtin = ccscope.run("examples/datagrump.toml", overrides={**short, "flows.0.window": 7})
    assert py.summary == builtin.summary
    assert py.flows.loc[0, "controller"] == "python:MyCtl"


def test_python_controller_without_class_is_an_error(short):
    with pytest.raises(ValueError, match="class"):
        ccscope.run("examples/datagrump.toml", overrides={**short, "flows.0.controller": "python"})


# --- scenario round-trips ----------------------------------------------------------------------------

rates = st.floats(min_value=0.01, max_value=10_000, allow_nan=False, allow_infinity=False)
delays = st.one_of(st.integers(min_value=0, max_value=1000),
                   st.floats(min_value=0, max_value=1000, allow_nan=False, allow_infinity=False))


@settings(max_examples=60, deadline=None)
@given(window=st.integers(min_value=1, max_value=100_000), data_rate=rates, ack_rate=rates,
       data_delay=delays, ack_delay=delays, seed=st.integers(min_value=0, max_value=2**63 - 1),
       duration=st.integers(min_value=1, max_value=10_000))
def test_scenario_dict_round_trips_and_validates(window, data_rate, ack_rate, data_delay, ack_delay, seed, duration):
    d = {
        "name": "prop",
        "seed": seed,
        "duration_s": duration,
        "data_link": {"rate_mbps": data_rate, "delay_ms": data_delay, "queue": {"kind": "droptail", "packets": window}},
        "ack_link": {"rate_mbps": ack_rate, "delay_ms": ack_delay},
        "flows": [{"controller": "fixed", "window": window}],
    }
    sc = api.Scenario.from_dict(d)
    assert sc.to_dict() == d
    assert api.Scenario(sc.text).to_dict() == d
    info = sc.validate()
    assert info["name"] == "prop" and info["seed"] == seed and info["duration_s"] == float(duration)
    assert info["flows"] == 1 and info["controllers"] == ["fixed"]


@settings(max_examples=20, deadline=None)
@given(window=st.integers(min_value=1, max_value=1000), delay=delays)
def test_trace_scenario_with_overrides_round_trips_and_validates(window, delay):
    sc = api.Scenario.load("examples/datagrump.toml").with_overrides(
        {"flows.0.window": window, "data_link.delay_ms": delay, "ack_link.delay_ms": delay})
    d = sc.to_dict()
    assert d["flows"][0]["window"] == window and d["data_link"]["delay_ms"] == delay
    assert api.Scenario.from_dict(d, sc.file).to_dict() == d
    # One pass of the 140 s trace, its last opportunity's instant included (1 ns more).
    assert sc.validate()["duration_s"] == pytest.approx(140.0, abs=1e-9)


# --- results folders ---------------------------------------------------------------------------------


def _assert_same_result(a: api.Result, b: api.Result) -> None:
    assert a.summary == b.summary
    assert a.scenario == b.scenario
    assert a.scenario_text == b.scenario_text
    pd.testing.assert_frame_equal(a.flows, b.flows, check_dtype=False)
    pd.testing.assert_frame_equal(a.timeseries, b.timeseries)
    if a.packets is None:
        assert b.packets is None
    else:
        pd.testing.assert_frame_equal(a.packets, b.packets, check_categorical=False)


def test_save_then_load_round_trips(tmp_path, short):
    r = ccscope.run("examples/red_lossy.toml", overrides=short, packets=True)
    out = r.save(tmp_path / "res")
    assert out == tmp_path / "res"
    assert {p.name for p in out.iterdir()} == {
        "summary.json", "flows.parquet", "timeseries.parquet", "packets.parquet", "scenario.toml", "provenance.json",
        "ccscope-manifest.json"}
    _assert_same_result(r, api.load_result(out))
    assert json.loads((out / "summary.json").read_text())["summary"]["sent"] == r.summary["sent"]


def test_saved_scenario_reruns_to_the_same_summary(tmp_path, short):
    r = ccscope.run("examples/datagrump.toml", overrides=short)
    out = r.save(tmp_path / "res")
    assert ccscope.run(out / "scenario.toml").summary == r.summary


def test_saving_over_a_results_folder_replaces_ccscope_files_and_keeps_the_users(tmp_path, short):
    out = tmp_path / "res"
    first = ccscope.run("examples/datagrump.toml", overrides=short, packets=True)
    first.save(out)
    (out / "stray.txt").write_text("from the user")
    second = ccscope.run("examples/datagrump.toml", overrides={**short, "flows.0.window": 3})
    second.save(out)
    # The first run's packet log was ccscope's and is gone; the user's file is never touched.
    assert not (out / "packets.parquet").exists() and (out / "stray.txt").read_text() == "from the user"
    _assert_same_result(second, api.load_result(out))
    assert [p.name for p in tmp_path.iterdir()] == ["res"]  # no temporary or old folders left


def test_failed_save_leaves_the_existing_folder_untouched(tmp_path, short):
    out = tmp_path / "res"
    good = ccscope.run("examples/datagrump.toml", overrides=short)
    good.save(out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    bad = ccscope.run("examples/datagrump.toml", overrides=short)
    bad.timeseries = pd.DataFrame({"unwritable": [object()]})  # pyarrow cannot store a bare object
    with pytest.raises(Exception):
        bad.save(out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["res"]


def test_failed_first_save_writes_no_folder(tmp_path, short):
    bad = ccscope.run("examples/datagrump.toml", overrides=short)
    bad.flows = pd.DataFrame({"unwritable": [object()]})
    with pytest.raises(Exception):
        bad.save(tmp_path / "res")
    assert list(tmp_path.iterdir()) == []


def test_a_scenario_saved_with_a_byte_order_mark_runs_as_without_one(tmp_path):
    # Windows editors save UTF-8 with a leading BOM; the loader and the runner must read it alike.
    text = "duration_s = 2\n[data_link]\nrate_mbps = 10\ndelay_ms = 20\n[[flows]]\ncontroller = \"fixed\"\nwindow = 10\n"
    (tmp_path / "bom.toml").write_bytes(b"\xef\xbb\xbf" + text.encode())
    (tmp_path / "plain.toml").write_text(text)
    assert api.run(str(tmp_path / "bom.toml")).summary == api.run(str(tmp_path / "plain.toml")).summary


def test_a_send_overhead_override_reaches_the_reliable_sender_and_zero_changes_nothing():
    short = {**SHORT, "flows.0.count": 4}
    plain = ccscope.run("examples/newreno.toml", overrides=short)
    zero = ccscope.run("examples/newreno.toml", overrides={**short, "flows.0.send_overhead_ms": 0.0})
    pd.testing.assert_frame_equal(zero.flows, plain.flows)
    a = ccscope.run("examples/newreno.toml", overrides={**short, "flows.0.send_overhead_ms": 1.2})
    b = ccscope.run("examples/newreno.toml", overrides={**short, "flows.0.send_overhead_ms": 1.2})
    pd.testing.assert_frame_equal(a.flows, b.flows)
    assert not a.flows.equals(plain.flows)


@pytest.mark.parametrize("value,says", [
    (-1.0, "-1 is out of range: must be in [0, 1000] ms"),
    (float("nan"), "NaN is not a finite number"),
    (1e300, "1e300 is out of range: must be in [0, 1000] ms"),
])
def test_a_bad_send_overhead_override_is_a_scenario_error_naming_the_override_and_field(value, says):
    with pytest.raises(ccscope.ScenarioError) as e:
        ccscope.run("examples/newreno.toml", overrides={**SHORT, "flows.0.send_overhead_ms": value})
    assert "override `flows.0.send_overhead_ms`: field `flows[0].send_overhead_ms`" in str(e.value)
    assert str(e.value).endswith(says)


@pytest.mark.parametrize("overrides,named", [
    ({"duration_s": None}, "override `duration_s`"),  # TOML has no null: tomli_w's TypeError named nothing
    ({1: 2}, "override `1`"),  # a key that is not text: an AttributeError from str.split
])
def test_an_override_toml_cannot_hold_is_a_scenario_error_naming_it(overrides, named):
    with pytest.raises(ccscope.ScenarioError, match=named):
        ccscope.run("examples/aimd.toml", overrides=overrides)


@pytest.mark.parametrize("scenario", [5, None, b"name = 'x'"])
def test_a_scenario_that_is_not_a_path_text_dict_or_scenario_is_a_type_error_naming_it(scenario):
    with pytest.raises(TypeError, match=f"scenario: expected a path, TOML text, a mapping or a Scenario, got {type(scenario).__name__}"):
        ccscope.run(scenario)


def test_an_empty_scenario_string_is_an_error_not_the_current_folder():
    with pytest.raises(ccscope.ScenarioError, match="empty") as e:
        ccscope.run("")
    assert "folder" not in str(e.value)


def test_save_errors_name_the_out_argument_not_the_commands_option(tmp_path, short):
    # The API names its own argument (`out`, `overwrite=True`); `ccscope run` names -o and --overwrite.
    from ccscope.store import OutputError

    r = ccscope.run("examples/datagrump.toml", overrides=short)
    (tmp_path / "f").write_text("the user's")
    with pytest.raises(OutputError) as e:
        r.save(tmp_path / "f")
    assert str(e.value) == f"out {tmp_path / 'f'}: is a file, not a folder; give a folder name"
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("the user's")
    with pytest.raises(OutputError) as e:
        r.save(mine)
    assert str(e.value).startswith(f"out {mine}: the folder is not empty and is not a ccscope results folder")
    assert str(e.value).endswith("or overwrite=True to add ccscope's files beside the ones there")
    assert (tmp_path / "f").read_text() == (mine / "notes.txt").read_text() == "the user's"


def test_user_text_in_python_errors_is_escaped_as_the_loaders_errors_escape_it(tmp_path):
    # One rule for both sides: a form feed, a line separator and a tab in a key read the same whether Python
    # (an override's own error) or the Rust loader (the unknown key) quotes them.
    key = "win\x0cdow\u2028x\ty"
    assert api.one_line(key) == "win\\u{c}dow\\u{2028}x\\ty"
    p = tmp_path / "s.toml"
    p.write_text(f'duration_s = 1\n[data_link]\nrate_mbps = 1\ndelay_ms = 1\n[ack_link]\nrate_mbps = 1\ndelay_ms = 1\n'
                 f'[[flows]]\ncontroller = "fixed"\n"{key}" = 3\n'.replace("\x0c", "\\f").replace("\u2028", "\\u2028")
                 .replace("\t", "\\t"))
    with pytest.raises(ccscope.ScenarioError) as e:
        api.run(str(p))
    assert api.one_line(key) in str(e.value) and "\n" not in str(e.value)
    # A byte that was not UTF-8 (kept by Python as a surrogate) is shown, not raised on.
    assert api.one_line("a\udc85b\n") == "a\\udc85b\\n"
