"""Every bundled attributor keeps the attributor contract (`contextos_lab.testing`); a rule a
user plugs in is checked the same way."""

from __future__ import annotations

import pytest

from contextos_lab.insights.attribution.registry import get_attributor
from contextos_lab.testing import AttributorContract, AttributorFactory


class TestBundledAttributors(AttributorContract):
    @pytest.fixture(params=["default", "last-actor-before-error"])
    def attributor(self, request: pytest.FixtureRequest) -> AttributorFactory:
        return lambda: get_attributor(request.param)
