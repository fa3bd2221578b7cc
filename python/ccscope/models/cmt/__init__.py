"""Paper 002 (Wallace & Shami): analytic throughput models of one CMT-SCTP path.

Each section below is one model; its names are re-exported here.
"""

# Markov chain (§4.3)
from ccscope.models.cmt.markov import CmtMarkovError, MarkovResult, markov_throughput, markov_throughput_curve

# Renewal model of one path (§4.4, eqs. 26-55; eq. 62 optional).
from ccscope.models.cmt.renewal import RenewalResult, renewal_throughput
# Reference formulas: Mathis et al. 1997 and PFTK (Padhye et al. 1998).
from ccscope.models.cmt.reference import mathis_throughput, pftk_throughput
# Static congestion-window allocation (§5.2, eqs. 56-61): exact DP, HiGHS MILP, eq. 61 heuristic.
from ccscope.models.cmt.allocate import Allocation, Destination, LinearConstraint, allocate
# Input checks of the renewal model and the allocator (one error type naming the field; KB = 1000 B, A11).
from ccscope.models.cmt.inputs import CmtInputError, parse_bytes
# Every model of one path side by side (what `ccscope cmt model` prints).
from ccscope.models.cmt.compare import compare_models

__all__ = [
    "CmtMarkovError",
    "MarkovResult",
    "markov_throughput",
    "markov_throughput_curve",
    "RenewalResult",
    "renewal_throughput",
    "mathis_throughput",
    "pftk_throughput",
    "Allocation",
    "Destination",
    "LinearConstraint",
    "allocate",
    "CmtInputError",
    "parse_bytes",
    "compare_models",
]
