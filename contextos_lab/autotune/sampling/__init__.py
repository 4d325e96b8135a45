"""Which sampler proposes the next config: the seeded sampler config and the Pareto local
search interleaved with it.
"""

__all__ = [
    "config",
    "local_search",
]
