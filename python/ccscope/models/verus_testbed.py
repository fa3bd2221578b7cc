"""The Verus authors' testbed as paper 000 §6.1 (Table 1) describes it, shared by the Markov model's
collection runs and the paper 000/004 reproductions."""

from __future__ import annotations

# Paper 000 §6.1 and Table 1: RED AQM, min 3 Mbit, max 9 Mbit, drop probability 0.1% (ccscope's `red`
# defaults; EWMA weight 0.002, no `gentle` region, no hard limit).
RED_QUEUE = {"kind": "red", "min_bytes": 375_000, "max_bytes": 1_125_000, "max_p": 0.001, "weight": 0.002}
# Paper 000 Table 1: Verus's UDP packets.
VERUS_PACKET_BYTES = 1450
# Users start uniformly in [0, START_JITTER_S): with RED's drop draws, the only randomness of these runs.
START_JITTER_S = 1.0
# A trace without a partner carries its ACKs over an uncongested constant-rate link.
UNPAIRED_ACK_MBPS = 100.0
