"""Python controllers as a first-class path: exceptions keep their type, file and line; bad windows,
misspelled handlers and misdirected `controllers=` are errors naming the class, handler or flow; the
tables name the class; `validate` imports it."""

from __future__ import annotations

import math
import traceback

import pytest

import ccscope
from ccscope import _native, api

PY_FLOW = {"duration_s": 3, "flows.0.controller": "python"}


class Boom(Exception):
    pass


class RaisesOnAck(ccscope.Controller):
    cwnd = 4

    def on_ack(self, now_ms, ack):
        raise Boom(f"on_ack at {now_ms} ms")


def test_a_handlers_exception_keeps_its_type_traceback_and_origin():
    with pytest.raises(Boom) as info:
        ccscope.run("examples/datagrump.toml", overrides=PY_FLOW, controllers={0: RaisesOnAck()})
    e = info.value
    frames = traceback.extract_tb(e.__traceback__)
    assert frames[-1].filename == __file__ and frames[-1].name == "on_ack"
    assert (e.ccscope_flow, e.ccscope_controller, e.ccscope_event) == (0, "RaisesOnAck", "on_ack")
    assert e.ccscope_time_ms > 0
    line = api.controller_error_line(e)
    assert f"{__file__}:{frames[-1].lineno}" in line
    assert "flow 0 (RaisesOnAck.on_ack at t = " in line and "Boom" in line and "on_ack at" in line


class NanWindow(ccscope.Controller):
    cwnd = 4

    def on_ack(self, now_ms, ack):
        self.cwnd = math.nan


class NegativeWindow(ccscope.Controller):
    cwnd = 4

    def on_loss(self, now_ms, seq, send_time_ms, in_flight, cause):
        self.cwnd = -1


class InfinitePacing(ccscope.Controller):
    cwnd = 4
    pacing_rate_mbps = math.inf


class TextWindow(ccscope.Controller):
    cwnd = "ten"


@pytest.mark.parametrize("ctl,attr,event", [
    (NanWindow, "cwnd", "after on_ack at t = "),
    (InfinitePacing, "pacing_rate_mbps", "after __init__"),
    (TextWindow, "cwnd", "after __init__"),
])
def test_a_window_or_rate_that_is_not_a_finite_non_negative_number_is_an_error(ctl, attr, event):
    with pytest.raises(_native.ControllerError) as info:
        ccscope.run("examples/datagrump.toml", overrides=PY_FLOW, controllers={0: ctl()})
    msg = str(info.value)
    assert ctl.__name__ in msg and f"`{attr}`" in msg and event in msg and "finite number >= 0" in msg


def test_a_negative_window_after_a_loss_names_on_loss():
    # A lossy link, so that losses happen in three seconds.
    with pytest.raises(_native.ControllerError, match=r"NegativeWindow\): `cwnd` = -1 after on_loss at t = "):
        ccscope.run("examples/datagrump.toml", overrides={**PY_FLOW, "data_link.loss": {"kind": "bernoulli", "p": 0.05}},
                    controllers={0: NegativeWindow()})


class Misspelled(ccscope.Controller):
    cwnd = 4

    def on_acks(self, now_ms, ack):  # never called: ccscope calls on_ack
        self.cwnd = 100


def test_a_misspelled_handler_is_an_error_naming_it_and_the_known_ones():
    with pytest.raises(_native.ControllerError,
                       match="Misspelled has a method on_acks that ccscope never calls .the handlers are on_ack, on_loss, on_send, on_timeout"):
        ccscope.run("examples/datagrump.toml", overrides=PY_FLOW, controllers={0: Misspelled()})


def test_controllers_for_a_flow_that_is_not_python_is_an_error():
    with pytest.raises(_native.ControllerError, match=r'controllers\[0\]: flow 0 is `controller = "fixed"`'):
        ccscope.run("examples/datagrump.toml", overrides={"duration_s": 3}, controllers={0: RaisesOnAck()})


def test_controllers_for_a_flow_out_of_range_is_an_error():
    with pytest.raises(_native.ControllerError, match=r"controllers\[3\]: the scenario has flows 0..0"):
        ccscope.run("examples/datagrump.toml", overrides=PY_FLOW, controllers={3: RaisesOnAck()})


class Twelve(ccscope.Controller):
    cwnd = 12


def test_the_flows_table_names_the_python_class():
    r = ccscope.run("examples/datagrump.toml", overrides=PY_FLOW, controllers={0: Twelve()})
    assert r.flows.loc[0, "controller"] == "python:Twelve"
    assert r.scenario["controllers"] == ["python:Twelve"]


CTL = """\
import ccscope


class Ctl(ccscope.Controller):
    def __init__(self, window):
        self.cwnd = window

    def on_ack(self, now_ms, ack):
        if now_ms > 500:
            return 1 / 0
"""


def _py_scenario(write, contest_toml, spec):
    text = contest_toml.replace('controller = "fixed"\nwindow = 12', f'controller = "python"\nclass = "{spec}"\nwindow = 7')
    assert spec in text
    return write("py.toml", text)


def test_validate_imports_the_class_and_names_a_missing_one(write, contest_toml):
    write("ctl.py", CTL)
    assert api.validate(_py_scenario(write, contest_toml, "ctl.py:Ctl"))["flows"] == 1
    sc = _py_scenario(write, contest_toml, "ctl.py:Nope")
    with pytest.raises(_native.ControllerError, match=r"py.toml:\d+: field `flows\[0\].class`: ctl.py has no class 'Nope'"):
        api.validate(sc)
    sc = _py_scenario(write, contest_toml, "gone.py:Ctl")
    with pytest.raises(_native.ControllerError, match=r"field `flows\[0\].class`: controller file .*gone.py not found"):
        api.validate(sc)


def test_a_scenario_controllers_exception_names_its_file_and_line(write, contest_toml):
    ctl = write("ctl.py", CTL)
    sc = _py_scenario(write, contest_toml, "ctl.py:Ctl")
    with pytest.raises(ZeroDivisionError) as info:
        ccscope.run(sc, overrides={"duration_s": 2})
    line = api.controller_error_line(info.value)
    assert f"{ctl}:10" in line and "ZeroDivisionError" in line and "(Ctl.on_ack at t = " in line


def test_an_unknown_constructor_keyword_is_a_controller_error(write, contest_toml):
    write("ctl.py", CTL)
    sc = _py_scenario(write, contest_toml, "ctl.py:Ctl")
    with pytest.raises(_native.ControllerError, match=r"flows\[0\].controller.*unexpected keyword argument 'windw'"):
        ccscope.run(api.Scenario.load(sc).with_overrides({"flows.0.windw": 3}))


RESTART_CTL = """
import ccscope


class Ctl(ccscope.Controller):
    def __init__(self, window, restart_after_s):
        self.cwnd = window
"""


def test_a_python_controller_may_name_its_own_restart_after_s_on_the_ctcp_sender(write, contest_toml):
    # Only Copa's `restart_after_s` is tied to the ctcp sender's fixed 2 s; another controller's
    # parameter of the same name is its own.
    write("ctl.py", RESTART_CTL)
    text = contest_toml.replace('controller = "fixed"\nwindow = 12',
                                'controller = "python"\nclass = "ctl.py:Ctl"\nwindow = 7\nrestart_after_s = 5')
    text = text.replace('datagram_mode = "datagrump"', 'datagram_mode = "ctcp"')
    assert 'datagram_mode = "ctcp"' in text
    assert api.validate(write("py.toml", text))["flows"] == 1


class Fixed10(ccscope.Controller):
    cwnd = 10


def test_controllers_accepts_a_zero_argument_factory_as_documented():
    made = []

    def factory():
        made.append(Fixed10())
        return made[-1]

    r = ccscope.run("examples/datagrump.toml", overrides={**PY_FLOW, "duration_s": 1}, controllers={0: factory})
    assert len(made) == 1 and r.flows.loc[0, "controller"] == "python:Fixed10"


class HugeWindow(ccscope.Controller):
    cwnd = 4

    def on_ack(self, now_ms, ack):
        self.cwnd = 1e18  # finite, but billions of packets in one burst


def test_a_window_above_the_bound_every_controller_keeps_is_an_error_not_a_huge_burst():
    with pytest.raises(_native.ControllerError, match=r"HugeWindow\): `cwnd` = 1000000000000000000 after on_ack at t = .*10000000"):
        ccscope.run("examples/datagrump.toml", overrides={**PY_FLOW, "duration_s": 1}, controllers={0: HugeWindow()})
