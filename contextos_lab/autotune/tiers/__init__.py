"""Fidelity tiers (issue 46): a cheap screen harness trusted as far as its measured agreement
with the target harness earns. docs/tiers.md."""
