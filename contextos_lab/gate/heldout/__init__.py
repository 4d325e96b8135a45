"""A held-out set's life: the only reader, its ledger of reads, the LORD++ error budget,
refreshing a spent set, and simulated reuse.
"""

__all__ = [
    "error_budget",
    "heldout",
    "ledger",
    "ledger_entries",
    "refresh",
    "reuse_simulation",
]
