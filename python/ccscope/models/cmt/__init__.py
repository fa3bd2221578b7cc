"""Analytic models of concurrent multipath transfer with a shared receive buffer (paper 002, Wallace & Shami)."""

# Renewal model of one path (paper 002 §4.4, eqs. 26-55; eq. 62 optional).
from ccscope.models.cmt.renewal import RenewalResult, renewal_throughput
# Reference formulas: Mathis et al. 1997 and PFTK (Padhye et al. 1998).
from ccscope.models.cmt.reference import mathis_throughput, pftk_throughput
# Static congestion-window allocation (paper 002 §5.2, eqs. 56-61): exact DP, HiGHS MILP, eq. 61 heuristic.
from ccscope.models.cmt.allocate import Allocation, Destination, allocate
# Input checks shared by the CMT models (one error type naming the field; sizes with KB = 1000 B).
from ccscope.models.cmt.inputs import CmtInputError, parse_bytes
# Every model of one path side by side (what `ccscope cmt model` prints).
from ccscope.models.cmt.compare import compare_models
