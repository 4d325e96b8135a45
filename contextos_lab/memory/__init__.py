"""Agent memory the reference harness reads: routing feedback (seed 002), reflections (seed 004)."""
