"""Strategy loop (seed 000 Steps 3–5, seed 001 lifecycle): policy bundles, proposal compilers,
lint, replay gate against goldens, release, rollback, monitor window, source closure, loop
metrics and the "why does this rule exist?" view.
"""
