"""Paper 002 (Wallace & Shami): analytic throughput models of one CMT-SCTP path.

Each section below is one model; its names are re-exported here.
"""

# Markov chain (§4.3)
from ccscope.models.cmt.markov import CmtMarkovError, MarkovResult, markov_throughput, markov_throughput_curve

__all__ = [
    "CmtMarkovError",
    "MarkovResult",
    "markov_throughput",
    "markov_throughput_curve",
]
