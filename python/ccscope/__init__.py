"""ccscope: a fast, faithful laboratory for congestion-control research.

    >>> import ccscope
    >>> r = ccscope.run("examples/datagrump.toml")
    >>> r.summary["score"], r.flows, r.timeseries
"""

from ccscope._native import ControllerError, ScenarioError, TraceError
from ccscope.analysis import compare, report
from ccscope.api import Result, Scenario, controllers, run, validate
from ccscope.controller import Controller

__all__ = [
    "Controller",
    "ControllerError",
    "Result",
    "Scenario",
    "ScenarioError",
    "TraceError",
    "compare",
    "controllers",
    "report",
    "run",
    "validate",
]
__version__ = "0.1.0"
