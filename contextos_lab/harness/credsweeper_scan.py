"""Secrets in one line of text, found by CredSweeper's rule set and its bundled ML validator.

CredSweeper (Samsung, maintained) ships ~150 rules with vendor token formats (Shopify,
Databricks, Pulumi, Dynatrace, Atlassian, Hugging Face, Grafana, ...) and an ONNX model that
validates keyword candidates (`password = ...`), both inside the wheel: nothing is downloaded
and nothing is verified over the network. It is layered *beside* detect-secrets, not instead:
on the pass-4 vendor corpus (benchmarks/corpora/vendor_secrets.py) detect-secrets plus the
kit's patterns leaked 31 of 100 vendors and CredSweeper alone missed 48 (its GitHub, npm and
PyPI rules check the token's checksum, so a token of the right shape but a wrong checksum, as
a typo'd or a synthetic one, passes), while the two together missed 13; what is left is caught
by the kit's format rules (`token_shapes`). CredSweeper's `UUID` rule is not used: a UUID in a
log is an id, not a secret.
"""

from __future__ import annotations

import logging
import warnings
from functools import lru_cache
from typing import Any

#: Rules whose hits are public identifiers, not secrets.
_PUBLIC_RULES = frozenset({"UUID"})


@lru_cache(maxsize=1)
def _sweeper() -> Any:
    # Imported on first use: CredSweeper loads its rules and ONNX session (~0.7 s), which a
    # command that records nothing should not pay.
    from credsweeper.app import CredSweeper

    logging.getLogger("credsweeper").setLevel(logging.ERROR)
    return CredSweeper(log_level="ERROR")


@lru_cache(maxsize=4096)
def credsweeper_hit(line: str) -> str | None:
    """Name of the CredSweeper rule that finds a credential in `line` (ML-validated where the
    rule asks for it), or None."""
    if len(line) < 8 or not line.strip():
        return None
    from credsweeper.file_handler.string_content_provider import StringContentProvider

    sweeper = _sweeper()
    with warnings.catch_warnings():  # CredSweeper marks the provider's export as deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        scanned = sweeper.file_scan(StringContentProvider([line]))
    found = [c for c in scanned if c.rule_name not in _PUBLIC_RULES]
    sure = [c for c in found if not c.use_ml]
    if sure:
        return _name(sure[0].rule_name)
    unsure = [c for c in found if c.use_ml]
    if unsure:
        groups = [((c.rule_name, i), [c]) for i, c in enumerate(unsure)]
        is_cred, _ = sweeper.ml_validator.validate_groups(groups, len(groups), None)
        for c, ok in zip(unsure, is_cred, strict=True):
            if ok:
                return _name(c.rule_name)
    return None


def _name(rule: str) -> str:
    """A marker name (`[redacted: NAME]` holds one word): `Shopify Token` -> `shopify_token`."""
    return "cs_" + "_".join("".join(ch if ch.isalnum() else " " for ch in rule).lower().split())
