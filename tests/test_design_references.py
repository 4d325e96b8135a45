"""Every "see ..." a docstring or comment gives resolves in the repo: `docs/NAME.md, "Section"`
(or `README.md "Section"`) names a file that exists and a heading it has, and nothing cites a
design file outside the repo (the team's working note is not shipped)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CITE = re.compile(r'((?:docs/[\w/.-]+|README)\.md),?\s+"([^"]+)"')
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.MULTILINE)


def _sources() -> list[Path]:
    files = [*ROOT.joinpath("contextos_lab").rglob("*.py"), ROOT / ".importlinter"]
    files += ROOT.joinpath("benchmarks").glob("*.py")
    return [f for f in files if f.is_file()]


def _citations() -> list[tuple[str, str, str]]:
    found = []
    for path in _sources():
        text = path.read_text(encoding="utf-8")
        for match in CITE.finditer(text):
            found.append((str(path.relative_to(ROOT)), match.group(1), match.group(2)))
    return found


def test_the_design_is_cited_from_the_code() -> None:
    cited = {(doc, section) for _, doc, section in _citations()}
    assert ("docs/design.md", "Seams") in cited
    assert ("docs/design.md", "Gate semantics") in cited


@pytest.mark.parametrize(("where", "doc", "section"), _citations())
def test_a_cited_section_exists(where: str, doc: str, section: str) -> None:
    target = ROOT / doc
    assert target.is_file(), f"{where} cites {doc}, which is not in the repo"
    headings = [h.lower() for h in HEADING.findall(target.read_text(encoding="utf-8"))]
    want = section.lower()
    assert any(h == want or h.startswith(want) for h in headings), (
        f'{where} cites {doc}, "{section}"; its headings are {headings}'
    )


def test_nothing_cites_a_design_file_outside_the_repo() -> None:
    bare = re.compile(r"(?<![\w/])DESIGN\.md")
    offenders = [
        str(p.relative_to(ROOT)) for p in _sources() if bare.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []
