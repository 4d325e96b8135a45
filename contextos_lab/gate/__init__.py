"""The held-out gate: paired re-evaluation of Pareto candidates against the baseline."""
