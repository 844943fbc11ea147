"""A small `.gitignore` matcher (stdlib only).

Covers what people write in practice (gitignore(5)): `*`, `?`, `[abc]`,
`[!a-z]`, `**` (leading, middle, trailing), negation `!`, directory-only
`dir/`, anchoring by a leading or middle slash, comments, `\\#` / `\\!`
escapes, trailing-space trimming, and nested `.gitignore` files whose rules
are relative to their own directory.  The last matching rule wins; rules of
deeper files come after (so override) rules of their parents.  As in git, a
path below an excluded directory cannot be re-included.

Not covered: `.git/info/exclude`, `core.excludesFile` and POSIX character
classes such as `[[:alpha:]]`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class IgnoreRule:
    """One compiled pattern.  `base` is the POSIX directory (relative to the
    scan root, "" for the root) of the `.gitignore` that holds it."""

    base: str
    pattern: str
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool

    def matches(self, rel_path: str, is_dir: bool) -> bool:
        """Does this rule match `rel_path` (POSIX, relative to the scan root)?"""
        if self.dir_only and not is_dir:
            return False
        if self.base:
            prefix = self.base + "/"
            if not rel_path.startswith(prefix):
                return False
            rel_path = rel_path[len(prefix) :]
        return self.regex.fullmatch(rel_path) is not None


def _strip_trailing_spaces(line: str) -> str:
    # Trailing spaces are ignored unless escaped with a backslash.
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]
    return line


def _translate_class(segment: str, start: int) -> tuple[str, int] | None:
    """Translate `[...]` at `segment[start]`; None when there is no closing `]`."""
    i = start + 1
    negate = i < len(segment) and segment[i] in "!^"
    if negate:
        i += 1
    items: list[str] = []
    first = True
    while i < len(segment):
        char = segment[i]
        if char == "]" and not first:
            body = "".join(items)
            return (f"[^/{body}]" if negate else f"[{body}]"), i + 1
        if char == "\\" and i + 1 < len(segment):
            i += 1
            char = segment[i]
            items.append(re.escape(char))
        elif char == "-" and items and i + 1 < len(segment) and segment[i + 1] != "]":
            items.append("-")
        else:
            items.append(re.escape(char) if char in "\\^[]-" else char)
        first = False
        i += 1
    return None


def _translate_segment(segment: str) -> str:
    """One path segment (no `/`) to a regex: `*` and `?` never cross a slash."""
    out: list[str] = []
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            translated = _translate_class(segment, i)
            if translated is None:
                out.append(re.escape(char))
            else:
                out.append(translated[0])
                i = translated[1]
                continue
        elif char == "\\" and i + 1 < len(segment):
            i += 1
            out.append(re.escape(segment[i]))
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def compile_pattern(line: str, base: str = "") -> IgnoreRule | None:
    """Compile one `.gitignore` line; None for blank lines and comments.

    Input: the raw line and the POSIX directory of its file relative to the
    scan root.  Output: an IgnoreRule whose regex is matched against the path
    relative to `base`.  Complexity: O(len(line)).  Reference: gitignore(5).
    """
    line = line.rstrip("\r\n")
    if not line or line.startswith("#"):
        return None
    line = _strip_trailing_spaces(line)
    negated = line.startswith("!")
    if negated or line.startswith(("\\!", "\\#")):
        line = line[1:]  # drop the negation mark or the escaping backslash
    dir_only = line.endswith("/") and not line.endswith("\\/")
    body = line.rstrip("/") if dir_only else line
    if not body:
        return None
    # A slash at the start or in the middle anchors the pattern to `base`;
    # otherwise it matches a name at any depth below `base`.
    anchored = "/" in body
    body = body.removeprefix("/")
    segments = body.split("/")
    parts: list[str] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            # Trailing `/**`: everything inside; leading or middle `**/`: zero
            # or more directories (consumes its own slash).
            parts.append(".*" if last else "(?:.*/)?")
        else:
            parts.append(_translate_segment(segment) + ("" if last else "/"))
    regex = "".join(parts)
    if not anchored:
        regex = "(?:.*/)?" + regex
    return IgnoreRule(base, line, re.compile(regex, re.DOTALL), negated, dir_only)


def parse_gitignore(text: str, base: str = "") -> list[IgnoreRule]:
    """Every rule of one `.gitignore` file, in file order.  O(len(text))."""
    rules: list[IgnoreRule] = []
    for line in text.splitlines():
        rule = compile_pattern(line, base)
        if rule is not None:
            rules.append(rule)
    return rules


def decide(rules: Sequence[IgnoreRule], rel_path: str, is_dir: bool) -> bool | None:
    """The verdict of the last matching rule: True = ignored, False = re-included
    by a negation, None = no rule matches.  Rules are in precedence order
    (parents' files first); they are tried from the last one backwards.
    O(number of rules)."""
    for rule in reversed(rules):
        if rule.matches(rel_path, is_dir):
            return not rule.negated
    return None


class IgnoreMatcher:
    """All `.gitignore` files of a tree, loaded lazily per directory.

    `is_ignored(rel_path, is_dir)` answers like `git check-ignore`: a path is
    ignored when it, or any of its parent directories, is excluded.  The
    scanner instead checks each entry once as it descends (it never enters an
    excluded directory), which gives the same answers.
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._by_dir: dict[str, list[IgnoreRule]] = {}

    def rules_in(self, rel_dir: str) -> list[IgnoreRule]:
        """The rules of `rel_dir/.gitignore` (empty when absent or unreadable)."""
        if rel_dir not in self._by_dir:
            path = self.root / rel_dir / ".gitignore" if rel_dir else self.root / ".gitignore"
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            self._by_dir[rel_dir] = parse_gitignore(text, rel_dir)
        return self._by_dir[rel_dir]

    def applicable(self, rel_dir: str) -> list[IgnoreRule]:
        """Rules that govern entries of `rel_dir`: the root's first, its own last."""
        rules = list(self.rules_in(""))
        if rel_dir:
            parts = rel_dir.split("/")
            for depth in range(1, len(parts) + 1):
                rules.extend(self.rules_in("/".join(parts[:depth])))
        return rules

    def is_ignored(self, rel_path: str, is_dir: bool = False) -> bool:
        """Is `rel_path` (POSIX, relative to the root) ignored?  `.git` always is."""
        parts = rel_path.split("/")
        for depth in range(1, len(parts) + 1):
            if parts[depth - 1] == ".git":
                return True
            entry_is_dir = is_dir if depth == len(parts) else True
            parent = "/".join(parts[: depth - 1])
            if decide(self.applicable(parent), "/".join(parts[:depth]), entry_is_dir):
                return True
        return False
