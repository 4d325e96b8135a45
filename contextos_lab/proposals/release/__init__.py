"""Release (seed 000 Step 5): signed reviews, the checklist and lint, releasing policy and
layer rules, and a rule's lifecycle after (rollback, retire, supersede, why).
"""

__all__ = [
    "checklist",
    "layer_registry",
    "layer_release",
    "lint",
    "release",
    "reviews",
    "rule_lifecycle",
    "why",
]
