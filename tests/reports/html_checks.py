"""What a reviewer report (rendered HTML) must and must not contain."""

from __future__ import annotations

import re
from pathlib import Path

#: Text that means a report leaks something a reviewer should not have to read past.
FORBIDDEN = (
    "Traceback",  # an exception
    "Warning:",  # DeprecationWarning: / UserWarning: / TqdmWarning: ...
    "warnings.warn",
    "it/s]",  # tqdm frames
    "trial/s]",
    "without encryption",  # kernel transport warning
    "hl-ipython3",  # a code cell's (syntax-highlighted) input
)


def images(html: str) -> int:
    return len(re.findall(r"<img\b[^>]*src=\"data:image/png;base64,", html))


def check_reviewer_html(
    path: Path, *, min_images: int, summary: bool = True, whole_tables: bool = True
) -> str:
    html = path.read_text(encoding="utf-8")
    leaked = [t for t in FORBIDDEN if t in html]
    assert not leaked, f"{path.name} shows {leaked}"
    assert images(html) >= min_images, f"{path.name}: {images(html)} figure(s), want {min_images}"
    # a pandas table cut with "..." (max_rows / max_columns) has a cell holding only "..."
    cut = re.search(r"<t[dh][^>]*>\s*(\.\.\.|…)\s*</t[dh]>", html)
    assert not (whole_tables and cut), f"{path.name}: cut table"
    if not summary:
        return html
    head = re.search(r"<h2[^>]*>Summary", html)
    assert head and "## Summary" not in html, f"{path.name}: no rendered summary"
    first_table = html.find("<table")
    assert first_table == -1 or head.start() < first_table, "summary is not at the top"
    return html
