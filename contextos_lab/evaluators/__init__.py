"""The five evaluators (policy, safety, utility, latency, economics) and the Scorecard."""
