"""contextos-lab: turn operator corrections and failed runs into typed, evidence-bound proposals."""

__version__ = "0.1.0"
