"""Racing (multi-fidelity): a trial meets the search set in growing stratified stages and
is dropped once its bounds prove it cannot reach the front (order, bounds, proofs, promotion).
"""

__all__ = [
    "bounds",
    "order",
    "promotion",
    "proof",
    "racing",
    "references",
]
