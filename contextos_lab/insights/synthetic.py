"""Moved: the sample-history generator is the example domain's, beside the reference harness
(`contextos_lab.harness.reference.synthetic_feedback`). This alias keeps older imports working
while branches catch up; new code imports the new path."""

from contextos_lab.harness.reference.synthetic_feedback import (  # noqa: F401
    EPOCH,
    THEMES,
    feedback_frame_fast,
    support_desk,
)
