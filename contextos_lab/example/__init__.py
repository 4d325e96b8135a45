"""Seed 000's refund example end to end on the bundled project (example-domain code, not core):
the loop example notebook 04 builds and the project data the CLI loop runs on (rewritten by -m).
"""

__all__ = [
    "loop_example",
    "project_data",
]
