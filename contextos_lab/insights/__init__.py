"""Patterns over corrections and runs: typed and free-text clusters, their computed support,
signal routing, research candidates and chief-of-staff notes (seeds 000 Step 2 and 001)."""
