"""Secrets in one line of text, found by CredSweeper's rule set.

CredSweeper (Samsung, maintained) ships ~150 rules with vendor token formats (Shopify,
Databricks, Pulumi, Dynatrace, Atlassian, Hugging Face, Grafana, ...) and an ONNX model,
both inside the wheel: nothing is downloaded and nothing is verified over the network. It is
layered *beside* detect-secrets, not instead: on the pass-4 vendor corpus
(benchmarks/corpora/vendor_secrets.py) detect-secrets plus the kit's patterns leaked 31 of
100 vendors and CredSweeper alone (with its ML validator) missed 48: its GitHub, npm and PyPI
rules check the token's checksum, so a token of the right shape but a wrong checksum (a
typo'd or a synthetic one) passes. The two together missed 13; the kit's format rules
(`token_shapes`) catch the rest. Only the rules that stand alone are used: the ML model
validates keyword candidates (`password = ...`), which the kit's keyword patterns and
detect-secrets' keyword detector have judged by the time this runs; without it the redactor
leaked no more on either corpus, and each model call cost ~0.3 s on a loaded machine.
CredSweeper's `UUID` rule is not used: a UUID in a log is an id, not a secret.
"""

from __future__ import annotations

import logging
import re
import warnings
from functools import lru_cache
from typing import Any

#: Rules whose hits are public identifiers, not secrets.
_PUBLIC_RULES = frozenset({"UUID"})
#: A run long enough to hold a credential value; a line without one is not worth a scan
#: (short `key = value` secrets are the kit's keyword patterns' job, run before this).
_CANDIDATE = re.compile(r"[A-Za-z0-9_\-+/=.$~:@%!#*]{12,}")


@lru_cache(maxsize=1)
def _scanner() -> tuple[Any, Any]:
    """CredSweeper's rule scanner, configured as its app does by default, and its text
    provider class. The `CredSweeper` app object is not built: its credential manager starts a
    `multiprocessing.Manager` server process, which a redactor inside a harness run must not
    fork. Imported on first use: loading its rules takes a second or more, which a command
    that records nothing should not pay."""
    with warnings.catch_warnings():  # its own modules subclass a class it marks deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        from credsweeper.app import APP_PATH
        from credsweeper.common.constants import Confidence, Severity
        from credsweeper.config.config import Config
        from credsweeper.file_handler.string_content_provider import StringContentProvider
        from credsweeper.scanner.scanner import Scanner
        from credsweeper.utils.util import Util

    logging.getLogger("credsweeper").setLevel(logging.ERROR)
    config = Util.json_load(APP_PATH / "secret" / "config.json")
    config.update(
        use_filters=True,
        find_by_ext=False,
        size_limit=None,
        pedantic=False,
        depth=0,
        doc=False,
        severity=Severity.INFO.value,
        confidence=Confidence.WEAK.value,
    )
    return Scanner(Config(config), None), StringContentProvider


@lru_cache(maxsize=4096)
def credsweeper_hit(line: str) -> str | None:
    """Name of the CredSweeper rule (one needing no ML validation) that finds a credential in
    `line`, or None."""
    if not _CANDIDATE.search(line):
        return None
    scanner, provider = _scanner()
    with warnings.catch_warnings():  # CredSweeper marks the provider's export as deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        scanned = scanner.scan(provider([line]))
    found = [c for c in scanned if c.rule_name not in _PUBLIC_RULES]
    sure = [c for c in found if not c.use_ml]
    return _name(sure[0].rule_name) if sure else None


def _name(rule: str) -> str:
    """A marker name (`[redacted: NAME]` holds one word): `Shopify Token` -> `shopify_token`."""
    return "cs_" + "_".join("".join(ch if ch.isalnum() else " " for ch in rule).lower().split())
