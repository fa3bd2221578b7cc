"""Statistics of self-similar traffic (paper 003 §2): exact fGn, Hurst estimators, the CondProb table,
its average entropy, and a fluid Pareto ON/OFF generator.

Imported on demand (``from ccscope import stats``); ``import ccscope`` does not load it, nor numpy.
"""

from ccscope.stats.condprob import (
    CondProbOnline,
    CondProbTable,
    EntropyCurve,
    average_entropy,
    condprob_table,
    entropy_curve,
    shuffle,
)
from ccscope.stats.errors import EmbeddingError, SeriesTooShortError, StatsError
from ccscope.stats.fgn import fgn, fgn_autocovariance
from ccscope.stats.hurst import (
    METHODS,
    HurstEstimate,
    aggregated_variance,
    hurst,
    rescaled_range,
    wavelet,
    whittle,
)
from ccscope.stats.onoff import onoff_aggregate
from ccscope.stats.series import load_series

__all__ = [
    "METHODS",
    "CondProbOnline",
    "CondProbTable",
    "EmbeddingError",
    "EntropyCurve",
    "HurstEstimate",
    "SeriesTooShortError",
    "StatsError",
    "aggregated_variance",
    "average_entropy",
    "condprob_table",
    "entropy_curve",
    "fgn",
    "fgn_autocovariance",
    "hurst",
    "load_series",
    "onoff_aggregate",
    "rescaled_range",
    "shuffle",
    "wavelet",
    "whittle",
]
