"""The specification's pages: SPEC.md and the subsystem pages under spec/ link up, and
every section reference resolves.

SPEC.md keeps the core contract and, for each subsystem with a page of its own, a short
summary that links it. A reference names its home: ``SPEC §N``, ``SPEC §N.M`` or
``SPEC §N.M.K`` (also ``SPEC.md §…``) a numbered heading of SPEC.md, ``spec/NAME.md §N``
a numbered heading of that page, and a bare ``§N`` inside a page a heading of the page
itself. The checks read every text file of the repository that may cite the
specification (Markdown, Python, JavaScript, shell, YAML, TOML); CHANGELOG.md is history
and may cite sections that have since moved.

The checkers are plain functions so that they are tested to fail on bad text too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "SPEC.md"
PAGES_DIR = ROOT / "spec"
PAGES = sorted(PAGES_DIR.glob("*.md"))
# Files whose text may cite the specification, by suffix.
SUFFIXES = frozenset({".md", ".py", ".js", ".mjs", ".sh", ".yaml", ".yml", ".toml"})
# Not read: history (cites sections as they were), this checker's and the docs
# checker's own bad examples, and trees that are not the project's text.
SKIP_FILES = frozenset({"CHANGELOG.md", "tests/test_spec_pages.py", "tests/test_docs.py"})
SKIP_DIRS = frozenset({".git", ".venv", "node_modules", "__pycache__", ".mypy_cache"})

_NUMBER = r"\d+[a-z]?(?:\.\d+[a-z]?)*"
_SPEC_REF = re.compile(rf"\bSPEC(?:\.md)?\)? §({_NUMBER})")
_PAGE_REF = re.compile(rf"\bspec/([\w-]+\.md)\)? §({_NUMBER})")
_BARE_REF = re.compile(rf"(?<!SPEC )(?<!SPEC\.md )(?<!\.md\) )(?<!\.md )§({_NUMBER})")


def has_section(document: str, ref: str) -> bool:
    """Whether ``ref`` ("N", "N.M" or "N.M.K", each part maybe with a letter) names a
    heading of ``document``: `## N.` (or `# N.`) at the top; then, inside it, `### M.` or
    `### N.M`; then, inside that, `#### M.K`. O(len(document))."""
    parts = ref.split(".")
    top = re.search(
        rf"^#{{1,2}} {re.escape(parts[0])}\. .*?(?=^#{{1,2}} |\Z)", document, re.M | re.S
    )
    if top is None:
        return False
    section = top.group(0)
    if len(parts) == 1:
        return True
    sub = parts[1]
    head = re.search(
        rf"^### (?:{re.escape(parts[0])}\.)?{re.escape(sub)}[. ].*?(?=^### |\Z)",
        section,
        re.M | re.S,
    )
    if head is None:
        return False
    if len(parts) == 2:
        return True
    deeper = ".".join(parts[1:])
    return re.search(rf"^#### {re.escape(deeper)}[. ]", head.group(0), re.M) is not None


def reference_problems(label: str, text: str, spec: str, pages: dict[str, str]) -> list[str]:
    """One line per reference in ``text`` that names no heading: `SPEC §…` against
    ``spec``, `spec/NAME.md §…` against ``pages[NAME.md]``. O(len(text))."""
    problems: list[str] = []
    for match in _SPEC_REF.finditer(text):
        if not has_section(spec, match.group(1)):
            problems.append(f"{label}: SPEC §{match.group(1)} names no heading of SPEC.md")
    for match in _PAGE_REF.finditer(text):
        name, ref = match.groups()
        if name not in pages:
            problems.append(f"{label}: spec/{name} does not exist")
        elif not has_section(pages[name], ref):
            problems.append(f"{label}: spec/{name} §{ref} names no heading of that page")
    return problems


def bare_reference_problems(name: str, text: str) -> list[str]:
    """A bare `§N` in a page names a heading of that page. O(len(text))."""
    return [
        f"spec/{name}: §{match.group(1)} names no heading of this page"
        for match in _BARE_REF.finditer(text)
        if not has_section(text, match.group(1))
    ]


def link_problems(spec: str, names: list[str]) -> list[str]:
    """Every page is linked from SPEC.md and links back to it."""
    problems = [
        f"SPEC.md does not link spec/{name}" for name in names if f"](spec/{name})" not in spec
    ]
    for name in names:
        if "](../SPEC.md)" not in (PAGES_DIR / name).read_text(encoding="utf-8"):
            problems.append(f"spec/{name} does not link ../SPEC.md")
    return problems


def repository_texts() -> Iterator[tuple[str, str]]:
    """(relative path, text) of every file that may cite the specification, in path order."""
    for path in sorted(ROOT.rglob("*")):
        relative = path.relative_to(ROOT)
        if SKIP_DIRS & set(relative.parts) or relative.as_posix() in SKIP_FILES:
            continue
        if path.is_file() and path.suffix in SUFFIXES:
            yield relative.as_posix(), path.read_text(encoding="utf-8", errors="replace")


def _pages() -> dict[str, str]:
    return {page.name: page.read_text(encoding="utf-8") for page in PAGES}


# -- the tests ------------------------------------------------------------------------


def test_the_subsystem_pages_exist() -> None:
    names = {page.name for page in PAGES}
    expected = {"memory-compat.md", "pulse.md", "canvas.md", "contract-ci.md", "ingestion.md"}
    assert expected | {"postgresql.md"} <= names, names


def test_every_page_is_linked_from_spec_and_back() -> None:
    spec = SPEC.read_text(encoding="utf-8")
    assert link_problems(spec, [page.name for page in PAGES]) == []


def test_every_section_reference_in_the_repository_resolves() -> None:
    spec, pages = SPEC.read_text(encoding="utf-8"), _pages()
    problems = [
        problem
        for label, text in repository_texts()
        for problem in reference_problems(label, text, spec, pages)
    ]
    assert not problems, "\n".join(problems)


def test_bare_references_in_a_page_name_its_own_headings() -> None:
    problems = [p for name, text in _pages().items() for p in bare_reference_problems(name, text)]
    assert not problems, "\n".join(problems)


def test_the_moved_sections_are_summaries_that_link_their_page() -> None:
    """SPEC §13, §16, §17 and §19 have no subsections left, so `§16.N` cannot resolve;
    each names its page, and so do §3.3 and §6.10."""
    spec = SPEC.read_text(encoding="utf-8")
    moved = (
        ("13", "ingestion.md"),
        ("16", "memory-compat.md"),
        ("17", "pulse.md"),
        ("19", "canvas.md"),
    )
    for number, page in moved:
        section = re.search(rf"^## {number}\. .*?(?=^## |\Z)", spec, re.M | re.S)
        assert section is not None, number
        assert f"](spec/{page})" in section.group(0), number
        assert not re.search(r"^###", section.group(0), re.M), number
        assert not has_section(spec, f"{number}.1"), number
    for ref, page in (("3.3", "postgresql.md"), ("6.10", "contract-ci.md")):
        head = re.search(rf"^### {re.escape(ref)}[. ].*?(?=^##|\Z)", spec, re.M | re.S)
        if head is None:  # `### 10.` inside `## 6.`
            section = re.search(r"^## 6\. .*?(?=^## |\Z)", spec, re.M | re.S)
            assert section is not None
            head = re.search(r"^### 10\. .*?(?=^##|\Z)", section.group(0), re.M | re.S)
        assert head is not None and f"](spec/{page})" in head.group(0), ref


def test_the_checkers_catch_bad_references() -> None:
    spec = "# S\n\n## 5. Five\n\n### 3. Three\n\n#### 3.1 One\n\n### 5a. Spectral\n\n## 11a. Time\n"
    pages = {"p.md": "# P\n\n## 1. One\n\nSee §1 and §2.\n"}
    assert has_section(spec, "5") and has_section(spec, "5.3") and has_section(spec, "5.3.1")
    assert has_section(spec, "5.5a") and has_section(spec, "11a")
    assert not has_section(spec, "5.4") and not has_section(spec, "5.3.2")
    assert not has_section(spec, "16") and not has_section(spec, "11")
    text = "SPEC §5.3, SPEC.md §16, SPEC §5.8; spec/p.md §1, spec/p.md §3, spec/q.md §1."
    assert reference_problems("t", text, spec, pages) == [
        "t: SPEC §16 names no heading of SPEC.md",
        "t: SPEC §5.8 names no heading of SPEC.md",
        "t: spec/p.md §3 names no heading of that page",
        "t: spec/q.md does not exist",
    ]
    assert bare_reference_problems("p.md", pages["p.md"]) == [
        "spec/p.md: §2 names no heading of this page"
    ]
    assert bare_reference_problems("p.md", "## 1. One\n\nSPEC §9 and spec/x.md §4.\n") == []
