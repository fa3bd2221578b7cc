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
