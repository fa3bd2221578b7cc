"""Paper 000 §6.6 ON/OFF users through the Python API: transfers complete and are reported."""

from __future__ import annotations

import ccscope


def test_verus_onoff_example_completes_transfers_and_conserves_packets():
    r = ccscope.run("examples/verus_onoff.toml", overrides={"duration_s": 600})
    s = r.summary
    assert s["sent"] == s["delivered"] + s["dropped"] + s["in_flight"]
    assert s["transfers_done"] == int(r.flows["transfers_done"].sum()) >= 8
    assert (r.flows["transfers_done"] >= 2).all()
    assert (r.flows["fct_mean_s"] > 0).all()
