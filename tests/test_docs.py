"""The documents hold together: a README a user reads in ten minutes, links that lead somewhere,
and code that cites only sections that exist (issue 27).

README.md stays under 300 lines (everything else lives in `docs/`); every relative link in
README.md and `docs/*.md` names an existing file and, with a `#fragment`, a heading of it (the
anchors GitHub derives from headings), and so does every repository path they name; every document of `docs/` named in the code exists, and a section
the code cites by title (after the README or a docs file, in double quotes) is a heading of that file (or the bold words that lead one of its paragraphs).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README_LINE_LIMIT = 300
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
CODE_DIRS = ("py_engine", "webhook", "tests", "benchmarks", "tools", "manifests")
CODE_SUFFIXES = {".py", ".yaml", ".rego"}

_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
_CITED_DOC = re.compile(r"docs/([\w.-]+\.md)")
_CITED_SECTION = re.compile(r"""(README(?:\.md)?|docs/[\w.-]+\.md),?\s+(?:section\s+)?"([^"]+)\"""")
_COMMENT_BREAK = re.compile(r"\s*\n\s*(?:#\s*)?")
_REPO_PATH = re.compile(r"`((?:py_engine|webhook|tests|benchmarks|tools|manifests|policies)/[^`\s:]*)")
_BOLD_LEAD = re.compile(r"\*\*([^*]+?)\.?\*\*")


def anchor(heading: str) -> str:
    """The fragment GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def headings(path: Path) -> list[str]:
    """The headings of a Markdown file, outside fenced code blocks."""
    return _HEADING.findall(_FENCE.sub("", path.read_text(encoding="utf-8")))


def citable_titles(path: Path) -> list[str]:
    """What the code may cite a document by: its headings, and the bold words leading a paragraph."""
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    return headings(path) + _BOLD_LEAD.findall(text)


def relative_links(path: Path) -> list[str]:
    """Every link target of a Markdown file that is not a URL, outside fenced code blocks."""
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    return [t for t in _LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def broken_links(path: Path) -> list[str]:
    """The relative links of `path` whose file, or whose heading, does not exist."""
    broken = []
    for target in relative_links(path):
        file_part, _, fragment = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif fragment and linked.suffix == ".md" and fragment not in {anchor(h) for h in headings(linked)}:
            broken.append(f"{target}: no such heading")
    return broken


def code_files() -> list[Path]:
    return [
        p
        for d in CODE_DIRS
        for p in sorted((REPO / d).rglob("*"))
        if p.suffix in CODE_SUFFIXES and p.is_file() and "vectors" not in p.parts
    ]


def test_the_readme_stays_under_the_line_limit() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines < README_LINE_LIMIT, f"README.md has {lines} lines; move detail to docs/"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_leads_to_a_file_and_heading(document: Path) -> None:
    assert broken_links(document) == []


def test_the_link_check_sees_a_missing_file_and_a_missing_heading(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other\n\n## A section: with `code`\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#a-section-with-code) [gone](missing.md) [bad](other.md#nope)\n"
        "[web](https://example.com/x.md)\n```\n[in code](ignored.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(page) == ["missing.md: no such file", "other.md#nope: no such heading"]


def test_every_repository_path_a_document_names_exists() -> None:
    """Paths in backquotes (`py_engine/...`, `tests/...`) survive package moves only if kept up to date."""
    missing = []
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for path in _REPO_PATH.findall(text):
            if not any(c in path for c in "{*<") and not (REPO / path).exists():
                missing.append(f"{document.relative_to(REPO)}: {path}")
    assert missing == []


def test_code_cites_only_documents_that_exist() -> None:
    missing = sorted(
        {
            f"{p.relative_to(REPO)}: docs/{name}"
            for p in code_files()
            for name in _CITED_DOC.findall(p.read_text(encoding="utf-8"))
            if not (REPO / "docs" / name).exists()
        }
    )
    assert missing == []


def test_sections_cited_by_title_are_headings_of_the_cited_document() -> None:
    known: dict[str, set[str]] = {}
    stale = []
    for path in code_files():
        text = _COMMENT_BREAK.sub(" ", path.read_text(encoding="utf-8"))
        for document, title in _CITED_SECTION.findall(text):
            name = "README.md" if document.startswith("README") else document
            if name not in known:
                target = REPO / name
                known[name] = set(citable_titles(target)) if target.exists() else set()
            if not any(h == title or h.startswith(title) for h in known[name]):
                stale.append(f'{path.relative_to(REPO)}: {document}, "{title}"')
    assert stale == []
