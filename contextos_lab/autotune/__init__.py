"""Autotune (seed 001): a declared run spec, a constrained multi-objective Optuna study over a
harness's tunable surfaces, and the ranked feasible Pareto front. Output is for review only."""
