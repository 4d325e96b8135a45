"""The replay gate (seed 000 Step 4): goldens, their recording, and replaying a policy patch
or an adjustment-layer rule on them.
"""

__all__ = [
    "golden_recording",
    "goldens",
    "layers",
    "replay",
]
