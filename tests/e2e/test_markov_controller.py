"""A model trained by `ccscope.models.markov` drives the `markov` controller in the simulator."""

import numpy as np
import pandas as pd
import pytest

import ccscope
from ccscope.models import markov


def samples(seed: int = 3, n: int = 40_000) -> pd.DataFrame:
    # Delays around the link's 40-100 ms RTT range, windows 0..30 packets per 5 ms epoch.
    g = np.random.default_rng(seed)
    d = np.clip(60 + np.cumsum(g.integers(-2, 3, n)), 40, 120)
    w = np.clip(8 + np.cumsum(g.integers(-1, 2, n)), 0, 30)
    return pd.DataFrame({"user": 0, "t_ms": np.arange(n) * 5.0, "d_ms": d.astype(np.int64), "w": w.astype(np.int64)})


SCENARIO = """
duration_s = 20
seed = {seed}
[data_link]
rate_mbps = 12
delay_ms = 20
queue = {{ kind = "droptail", packets = 200 }}
[ack_link]
rate_mbps = 12
delay_ms = 20
[[flows]]
controller = "markov"
model = "{model}"
count = 2
"""


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("markov") / "model.ccm"
    markov.train(samples(), quantize_ms=2).save(path)
    return path


def test_a_trained_model_runs_as_a_controller_and_conserves_packets(model_path):
    r = ccscope.run(SCENARIO.format(seed=1, model=model_path))
    s = r.summary
    assert s["delivered"] > 1000
    assert s["sent"] == s["delivered"] + s["dropped"] + s["in_flight"]
    assert set(r.flows.controller) == {"markov"}


def test_the_random_walk_follows_the_seed(model_path):
    a = ccscope.run(SCENARIO.format(seed=1, model=model_path)).summary
    b = ccscope.run(SCENARIO.format(seed=1, model=model_path)).summary
    c = ccscope.run(SCENARIO.format(seed=2, model=model_path)).summary
    assert a == b
    assert (a["sent"], a["delivered"]) != (c["sent"], c["delivered"])


def test_a_missing_model_file_is_a_clear_error(tmp_path):
    with pytest.raises(ccscope.ScenarioError, match="model"):
        ccscope.run(SCENARIO.format(seed=1, model=tmp_path / "nope.ccm"))


def test_a_corrupt_model_file_is_a_clear_error(model_path, tmp_path):
    bad = tmp_path / "bad.ccm"
    data = bytearray(model_path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    bad.write_bytes(bytes(data))
    with pytest.raises(ccscope.ScenarioError, match="checksum|corrupt"):
        ccscope.run(SCENARIO.format(seed=1, model=bad))


def test_verus_records_per_epoch_samples_that_train_a_model_for_four_users(tmp_path):
    # Paper 000 §4.1: four Verus users behind RED record (largest delay, packets sent) per 5 ms epoch.
    r = ccscope.run("examples/verus_red_4users.toml", overrides={"flows.0.record": "epoch", "duration_s": 30})
    sm = r.samples
    assert list(sm.columns) == ["user", "t_ms", "d_ms", "w"]
    per_user = sm.groupby("user").size()
    assert len(per_user) == 4 and (per_user > 0.9 * 30_000 / 5).all(), per_user.to_dict()
    # Every packet a user sent after its first ACK is counted in exactly one epoch.
    for user, g in sm.groupby("user"):
        sent = int(r.flows.loc[r.flows.flow == user, "sent"].iloc[0])
        assert 0.9 * sent <= g.w.sum() <= sent
    model = markov.train(sm, quantize_ms=2)
    path = tmp_path / "verus4.ccm"
    model.save(path)
    run = ccscope.run(
        "examples/verus_red_4users.toml",
        overrides={"flows.0.controller": "markov", "flows.0.model": str(path), "duration_s": 30},
    )
    s = run.summary
    assert s["sent"] == s["delivered"] + s["dropped"] + s["in_flight"]
    assert s["delivered"] > 1000


def test_per_packet_samples_carry_each_acked_packets_window():
    r = ccscope.run("examples/verus.toml", overrides={"flows.0.record": "packet", "duration_s": 20})
    assert len(r.samples) == pytest.approx(r.summary["delivered"], rel=0.05)
    assert (r.samples.d_ms >= 40).all()


def test_a_model_that_does_not_cover_the_paths_round_trip_is_rejected_naming_the_field(model_path):
    # The model was trained on delays from 40 ms; a 5 ms + 5 ms path never produces them when unloaded.
    text = SCENARIO.format(seed=1, model=model_path).replace("delay_ms = 20", "delay_ms = 5")
    with pytest.raises(ccscope.ScenarioError) as e:
        ccscope.run(text)
    msg = str(e.value)
    assert msg.startswith("<scenario>:13: field `flows[0].model`:"), msg
    assert "covers delays 40.." in msg and "round trip is 10 ms" in msg, msg


def test_markov_flows_report_how_often_the_walk_left_the_model(model_path):
    f = ccscope.run(SCENARIO.format(seed=1, model=model_path)).flows
    for col in ("model_epochs", "model_delay_below", "model_delay_above", "model_dead_ends"):
        assert col in f.columns
    # 20 s of 5 ms epochs per flow, started by the first packet.
    assert (f.model_epochs > 0.95 * 20_000 / 5).all() and (f.model_epochs <= 20_000 / 5).all()
    assert (f.model_delay_below + f.model_delay_above <= f.model_epochs).all()


def test_the_proportional_draw_runs_and_differs_from_the_papers_draw(model_path):
    a = ccscope.run(SCENARIO.format(seed=1, model=model_path)).summary
    text = SCENARIO.format(seed=1, model=model_path) + 'draw = "proportional"\n'
    b = ccscope.run(text).summary
    assert b["sent"] == b["delivered"] + b["dropped"] + b["in_flight"]
    assert (a["sent"], a["delivered"]) != (b["sent"], b["delivered"])
    with pytest.raises(ccscope.ScenarioError, match="draw"):
        ccscope.run(SCENARIO.format(seed=1, model=model_path) + 'draw = "nearest"\n')


def test_run_warns_when_the_walk_perceives_delays_outside_its_model():
    import pandas as pd

    from ccscope.cli import model_range_warnings

    flows = pd.DataFrame({"flow": [0, 1], "model_epochs": [1000, 1000], "model_delay_below": [0, 5],
                          "model_delay_above": [5, 30], "model_dead_ends": [0, 0]})
    (line,) = model_range_warnings(flows)
    assert line.startswith("warning: flow 1:") and "3.5% of epochs" in line
    assert model_range_warnings(pd.DataFrame({"flow": [0]})) == []
