"""Models learned from simulation samples (paper 000: the (delay, window) Markov chain)."""

from ccscope.models.markov import MarkovModel, heatmap, inspect, load_samples, train

__all__ = ["MarkovModel", "heatmap", "inspect", "load_samples", "train"]
