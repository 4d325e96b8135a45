"""Where the kit keeps what must not sit beside the database: the signing key and the anchors.

Threat model: someone who can write the experience database (a copy on a shared disk, a
backup, a CI artifact) must not be able to rewrite it so that `store verify` passes. So the
key that MACs every row, and the anchor naming the chain's last row, live in the user's
configuration folder, not in the project's `.contextos/` folder beside the database:
`$CONTEXTOS_HOME`, else `$XDG_CONFIG_HOME/contextos-lab`, else `~/.config/contextos-lab`.
"""

from __future__ import annotations

import os
from pathlib import Path


def config_dir() -> Path:
    explicit = os.environ.get("CONTEXTOS_HOME")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "contextos-lab"


def default_key_file() -> Path:
    """`CONTEXTOS_SIGNING_KEY_FILE`, else `signing.key` in the configuration folder."""
    explicit = os.environ.get("CONTEXTOS_SIGNING_KEY_FILE")
    return Path(explicit) if explicit else config_dir() / "signing.key"


def anchor_dir() -> Path:
    """`CONTEXTOS_ANCHOR_DIR`, else `anchors/` in the configuration folder (beside the key)."""
    explicit = os.environ.get("CONTEXTOS_ANCHOR_DIR")
    return Path(explicit) if explicit else config_dir() / "anchors"
