"""The reliable receiver's delayed ACKs (`delayed_ack`, and the `stack` presets that turn them on) pass
through `ccscope.run(..., overrides=...)` like the other transport switches."""

import pytest

import ccscope

# 12 Mbit/s both ways, 20 ms each way, one NewReno flow for 5 s.
DUMBBELL = """\
duration_s = 5
[data_link]
rate_mbps = 12
delay_ms = 20
queue = { kind = "droptail", packets = 100 }
[ack_link]
rate_mbps = 12
delay_ms = 20
[[flows]]
controller = "newreno"
"""


def acks_per_packet(overrides: dict) -> float:
    paths = ccscope.run(DUMBBELL, overrides=overrides).paths
    return paths["acks_sent"].sum() / paths["delivered"].sum()


def test_delayed_ack_halves_the_acks_and_the_stack_presets_turn_it_on_unless_told_otherwise():
    assert acks_per_packet({}) == 1.0
    for overrides in ({"flows.0.delayed_ack": "ns3"}, {"flows.0.stack": "ns3"},
                      {"flows.0.delayed_ack": "linux"}, {"flows.0.stack": "linux"}):
        assert 0.45 < acks_per_packet(overrides) < 0.6, overrides
    # An explicit key next to `stack` wins, as for the other switches.
    assert acks_per_packet({"flows.0.stack": "linux", "flows.0.delayed_ack": "none"}) == 1.0


def test_an_unknown_delayed_ack_policy_is_a_scenario_error_naming_the_override():
    with pytest.raises(ccscope.ScenarioError) as e:
        ccscope.run(DUMBBELL, overrides={"flows.0.delayed_ack": "bsd"})
    msg = str(e.value)
    assert "override `flows.0.delayed_ack`" in msg and 'expected "none", "ns3" or "linux", got "bsd"' in msg
