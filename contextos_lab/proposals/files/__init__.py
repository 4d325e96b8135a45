"""Proposal files: emitted by a gate run, written atomically, kept in the store, and
bundled for a reviewer.
"""

__all__ = [
    "change_bundle",
    "emit",
    "emitted_store",
    "proposal_files",
]
