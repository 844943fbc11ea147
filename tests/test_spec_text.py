"""SPEC.md is normative: the cleaned sections carry no lab-notebook markers.

A section listed in ``CLEANED`` states what an implementation must do, in the present
tense; per-round narratives ("Session 9 …", "Status after …"), issue numbers, named
branches and commit-pinned before/after runs belong in CHANGELOG.md, the git log or
``benchmarks/RESULTS.md``, not here. The check is scoped to the sections that have been
cleaned, so it passes while other sections are still being rewritten; a section joins
``CLEANED`` when its rewrite lands. A section may be listed by its parts (`### N.` and
`#### N.K` subsections), so one that another rewrite is editing can be left out.

``python tests/test_spec_text.py`` prints the line count of every top-level section
(§10 split at 10.7, where "learning from use" starts) and the total.
"""

from __future__ import annotations

import itertools
import re
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "SPEC.md"

# Top-level section → the numbered parts that are cleaned, or None for the whole section.
# A part is "N" for a `### N.` / `### M.N` subsection, "N.K" for a `#### N.K` one inside it
# (then "N" is only the text between `### N.` and its first `#### N.K`), and "0" the
# section's text before its first numbered subsection.
CLEANED: Mapping[str, frozenset[str] | None] = {
    "1": None,
    "2": None,
    "3": None,
    "4": None,
    "5": None,
    "6": None,
    "7": None,
    "8": None,
    "9": None,
    "10": None,
    "11": None,
    "11a": None,
    "12": None,
    "13": None,
    "14": None,
    "15": None,
    "16": None,
    "17": None,
    "18": None,
    "19": None,
}

# Each marker names what it catches; all are case-insensitive.
MARKERS: Mapping[str, str] = {
    "session narrative": r"\bsession \d+\b",
    "issue number": r"\bissues? #?\d+",
    "round narrative": r"\bround \d+\b",
    "named branch": (
        r"`[\w./-]+` branch\b|\bbranch `[\w./-]+`|\bbranch [\w-]*\d[\w-]*"
        r"|\b(?:the|this|that|our|a) (?:[\w-]+ )?branch\b"
    ),
    "status report": r"\bstatus after\b",
    "first-person finding": r"\bwe (?:found|tried|measured)\b",
    "tried and dropped": r"\b(?:tried|measured) and (?:dropped|rejected)\b",
    # a run pinned to commits ("main b619f48", "f1d9aa4 → final"); a vendored file's
    # upstream commit ("at commit `ba1eb16d…`") is provenance and stays.
    "commit-pinned run": r"\bmain \(?`?[0-9a-f]{7,40}\b|\b[0-9a-f]{7,40}`? ?→",
}

_TOP = re.compile(r"^## (\d+[a-z]?)\. ", re.M)
_ANY_TOP = re.compile(r"^## ", re.M)
_SUB = re.compile(r"^### (?:\d+[a-z]?\.)?(\d+)[a-z]?[. ]", re.M)
_SUBSUB = re.compile(r"^#### (\d+)\.(\d+)[a-z]?[. ]", re.M)


def sections(text: str) -> dict[str, str]:
    """Top-level numbered sections of ``text``: number → its text (heading included,
    up to the next ``## `` heading). O(len(text))."""
    starts = [m.start() for m in _ANY_TOP.finditer(text)] + [len(text)]
    out: dict[str, str] = {}
    for start, end in itertools.pairwise(starts):
        match = _TOP.match(text, start)
        if match:
            out[match.group(1)] = text[start:end]
    return out


def subsections(section: str) -> Iterator[tuple[str, str]]:
    """(key, text) of a section's parts: "0" for the text before its first `### N.`
    heading, then each numbered subsection ("N", or "N.K" for `#### N.K`; a letter
    suffix such as 3.5a stays in its number's part) up to the next numbered heading
    of either depth. Unnumbered headings stay inside the part they appear in.
    O(len(section))."""
    heads = [(str(int(m.group(1))), m.start()) for m in _SUB.finditer(section)]
    heads += [(f"{int(m[1])}.{int(m[2])}", m.start()) for m in _SUBSUB.finditer(section)]
    cuts = [("0", 0), *sorted(heads, key=lambda head: head[1])]
    ends = [start for _, start in cuts[1:]] + [len(section)]
    for (number, start), end in zip(cuts, ends, strict=True):
        yield number, section[start:end]


def cleaned_text(text: str, cleaned: Mapping[str, frozenset[str] | None]) -> dict[str, str]:
    """The cleaned parts of ``text``, keyed `§N` or `§N.M`; parts sharing a key (3.5 and
    3.5a) are joined. A listed section or part that does not exist is a KeyError naming it
    (so renumbering cannot silently skip a check)."""
    found = sections(text)
    out: dict[str, str] = {}
    for number, parts in cleaned.items():
        if number not in found:
            raise KeyError(f"§{number} is listed as cleaned but SPEC.md has no such section")
        if parts is None:
            out[f"§{number}"] = found[number]
            continue
        seen: set[str] = set()
        for sub, part in subsections(found[number]):
            seen.add(sub)
            if sub in parts:
                key = f"§{number}.{sub}"
                out[key] = out.get(key, "") + part
        if missing := sorted(parts - seen):
            raise KeyError(
                f"§{number}.{missing[0]} is listed as cleaned but SPEC.md has no such part"
            )
    return out


def marker_problems(text: str, cleaned: Mapping[str, frozenset[str] | None]) -> list[str]:
    """One line per narrative marker in the cleaned parts: `§N: marker: "matched text"`,
    in document order per part. O(len(text) × markers)."""
    problems: list[str] = []
    for where, part in cleaned_text(text, cleaned).items():
        hits = [
            (m.start(), name, m.group(0))
            for name, pattern in MARKERS.items()
            for m in re.finditer(pattern, part, re.I)
        ]
        problems.extend(f'{where}: {name}: "{found}"' for _, name, found in sorted(hits))
    return problems


def line_counts(text: str) -> dict[str, int]:
    """Lines per top-level section (§10 split into "10" and "10.7+"), the preamble as
    "preamble" and the unnumbered sections after §19 (the appendix, which names the
    generated tool reference docs/mcp-tools.md) as "appendix"; the values sum to the
    file's line count."""
    lines = text.split("\n")
    counts: dict[str, int] = {}
    current = "preamble"
    for line in lines:
        top = _TOP.match(line)
        if top:
            current = top.group(1)
        elif line.startswith("## "):
            current = "appendix"
        elif current == "10" and re.match(r"### 7\. ", line):
            current = "10.7+"
        counts[current] = counts.get(current, 0) + 1
    return counts


# -- the tests ------------------------------------------------------------------------


def test_cleaned_sections_carry_no_narrative_markers() -> None:
    text = SPEC.read_text(encoding="utf-8")
    problems = marker_problems(text, CLEANED)
    assert not problems, "narrative in a cleaned section of SPEC.md:\n" + "\n".join(problems)


def test_the_subsystem_pages_carry_no_narrative_markers() -> None:
    """The pages under spec/ are normative like SPEC.md, each cleaned as a whole."""
    pages = sorted((ROOT / "spec").glob("*.md"))
    assert pages, "spec/ holds the subsystem pages"
    problems = [
        f'spec/{page.name}: {name}: "{found.group(0)}"'
        for page in pages
        for name, pattern in MARKERS.items()
        for found in re.finditer(pattern, page.read_text(encoding="utf-8"), re.I)
    ]
    assert not problems, "narrative in a page under spec/:\n" + "\n".join(problems)


def test_every_marker_is_caught_and_scoping_holds() -> None:
    text = (
        "# T\n\n## 1. One\n\nSession 9 went well. Status after session 10: fine.\n"
        "See issue #20 and issue 17; round 2 of the `coldpath` branch, main b619f48.\n"
        "We found it; a MaxScore rewrite was measured and dropped.\n\n"
        "## 2. Two\n\n### 1. Clean\n\nThe session date is metadata.\n\n"
        "### 2. Dirty\n\nOn this branch it is faster.\n\n"
        "## 3. Not cleaned\n\nSession 4 narrative stays until its rewrite.\n"
    )
    problems = marker_problems(text, {"1": None, "2": frozenset({"0", "1", "2"})})
    names = [p.split(": ")[1] for p in problems]
    assert set(names) == set(MARKERS), set(MARKERS) - set(names)
    assert all(p.startswith(("§1:", "§2.2:")) for p in problems), problems
    assert marker_problems(text, {"2": frozenset({"0", "1"})}) == []


def test_a_deeper_subsection_can_be_left_out() -> None:
    text = (
        "## 9. Nine\n\n### 3. Three\n\nClean.\n\n#### 3.5 Five\n\nClean.\n\n"
        "#### 3.6 Six\n\nSession 9 narrative.\n\n#### 3.7 Seven\n\nClean.\n\n"
        "### 4. Four\n\nClean.\n"
    )
    keys = [key for key, _ in subsections(sections(text)["9"])]
    assert keys == ["0", "3", "3.5", "3.6", "3.7", "4"], keys
    without = frozenset({"0", "3", "3.5", "3.7", "4"})
    assert marker_problems(text, {"9": without}) == []
    assert marker_problems(text, {"9": without | {"3.6"}}) == [
        '§9.3.6: session narrative: "Session 9"'
    ]


def test_parts_of_one_number_are_checked_together() -> None:
    text = "## 8. Eight\n\n### 5. A\n\nSession 3 here.\n\n### 5a. B\n\nClean.\n"
    assert marker_problems(text, {"8": frozenset({"5"})}) == [
        '§8.5: session narrative: "Session 3"'
    ]


def test_a_listed_section_that_does_not_exist_fails_loudly() -> None:
    try:
        marker_problems("## 1. One\n\ntext\n", {"99": None})
    except KeyError as error:
        assert "§99" in str(error)
    else:
        raise AssertionError("a missing cleaned section must not pass silently")
    try:
        marker_problems("## 1. One\n\n### 1. A\n\ntext\n", {"1": frozenset({"1", "2"})})
    except KeyError as error:
        assert "§1.2" in str(error)
    else:
        raise AssertionError("a missing cleaned part must not pass silently")


def test_line_counts_cover_the_whole_file() -> None:
    text = SPEC.read_text(encoding="utf-8")
    counts = line_counts(text)
    assert sum(counts.values()) == len(text.split("\n"))
    assert set(CLEANED) <= set(counts)
    assert "10.7+" in counts and "appendix" in counts


# The specification states the core contract; a subsystem's rules past this size belong on
# its own normative page under spec/ (each linked from SPEC, tests/test_spec_pages.py).
SPEC_MAX_LINES = 4000


def test_spec_stays_within_its_size() -> None:
    lines = SPEC.read_text(encoding="utf-8").count("\n")
    assert lines <= SPEC_MAX_LINES, f"SPEC.md has {lines} lines; move a subsystem to spec/"


def main() -> int:
    text = SPEC.read_text(encoding="utf-8")
    counts = line_counts(text)
    for name, count in counts.items():
        whole = name.split(".")[0]  # "10.7+" is part of §10
        key = name if name in CLEANED else whole
        listed, parts = key in CLEANED, CLEANED.get(key)
        mark = ("  cleaned" if parts is None else "  cleaned in part") if listed else ""
        print(f"{name:>9} {count:6d}{mark}")
    print(f"{'total':>9} {sum(counts.values()):6d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
