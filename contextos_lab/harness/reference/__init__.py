"""The bundled reference harness: a deterministic support desk with every adjustment layer."""

from contextos_lab.harness.reference.harness import SupportDeskHarness, reference_harness

__all__ = ["SupportDeskHarness", "reference_harness"]
