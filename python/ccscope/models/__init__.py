"""Models: the (delay, window) Markov chain learned from simulation samples (paper 000, ``markov``) and
the analytic throughput models of concurrent multipath transfer (paper 002, ``cmt``).

The paper-000 names are loaded on first use, so importing ``ccscope.models.cmt`` does not pull in pandas.
"""

from typing import Any

__all__ = ["MarkovModel", "heatmap", "inspect", "load_samples", "train"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from ccscope.models import markov

        return getattr(markov, name)
    raise AttributeError(f"module 'ccscope.models' has no attribute {name!r}")
