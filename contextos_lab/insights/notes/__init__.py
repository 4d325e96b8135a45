"""The operator surface of the loop: Chief-of-Staff notes, the research queue, and their
place in the experience store.
"""

__all__ = [
    "chief_of_staff",
    "research_queue",
    "store",
]
