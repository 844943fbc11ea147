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
from typing import Any, Final

from .safe_read import read_prefix

# A .gitignore is read up to this size (real ones are a few KiB; git itself reads the
# whole file, so a larger one would lose its tail rules: far beyond any real file).
MAX_GITIGNORE_BYTES: Final = 16 << 20


# -- the glob program --------------------------------------------------------------
#
# A pattern compiles to a list of tokens matched by simulating a non-deterministic
# automaton over *sets of token positions* (each position is visited at most once per
# character), so matching costs O(len(path) x len(tokens)) whatever the pattern:
# `*a*a*a*a*a*a*a*a*a*a*b` or fifteen `**/` cannot backtrack exponentially, as a
# backtracking regex does (issue #12: > 20 s for one 40-character name).  Patterns with
# at most one unbounded token also get an equivalent compiled regex, which cannot
# backtrack more than linearly and runs in C (the common `*.log`, `build/`, `/dist`).

LIT: Final = "lit"  # one given character
ONE: Final = "one"  # `?`: any character but "/"
CLASS: Final = "class"  # `[...]`: a character in (or, negated, not in) the set; never "/"
STAR: Final = "star"  # `*`: any run of characters without "/"
ANY: Final = "any"  # trailing `**` and the inside of `**/`: any run of characters
SKIP: Final = "skip"  # start of an optional `**/` group: may jump to `arg` (its end)
UNBOUNDED: Final = frozenset({STAR, ANY})


@dataclass(frozen=True)
class Token:
    """One step of a glob program; `arg` is the character (LIT), the class
    (CLASS: (negated, ranges)) or the jump target (SKIP)."""

    kind: str
    arg: Any = None

    def accepts(self, char: str) -> bool:
        """Does this token consume `char` (LIT/ONE/CLASS advance, STAR/ANY stay)?"""
        if self.kind == LIT:
            return bool(char == self.arg)
        if self.kind == ANY:
            return True
        if char == "/":
            return False
        if self.kind == CLASS:
            negated, ranges = self.arg
            inside = any(low <= char <= high for low, high in ranges)
            return bool(inside != negated)
        return self.kind in (ONE, STAR)


def _closure(program: Sequence[Token], positions: set[int]) -> set[int]:
    """`positions` plus every position reachable without consuming a character."""
    todo = list(positions)
    out = set(positions)
    while todo:
        i = todo.pop()
        if i >= len(program):
            continue
        token = program[i]
        nexts = [i + 1] if token.kind in UNBOUNDED else []
        if token.kind == SKIP:
            nexts = [i + 1, token.arg]
        for j in nexts:
            if j not in out:
                out.add(j)
                todo.append(j)
    return out


def run_program(program: Sequence[Token], text: str) -> bool:
    """Does `program` match all of `text`?  O(len(text) x len(program)), no backtracking."""
    current = _closure(program, {0})
    for char in text:
        following: set[int] = set()
        for i in current:
            if i >= len(program):
                continue
            token = program[i]
            if token.kind == SKIP or not token.accepts(char):
                continue
            following.add(i if token.kind in UNBOUNDED else i + 1)
        if not following:
            return False
        current = _closure(program, following)
    return len(program) in current


@dataclass(frozen=True)
class IgnoreRule:
    """One compiled pattern.  `base` is the POSIX directory (relative to the
    scan root, "" for the root) of the `.gitignore` that holds it.  An unanchored
    pattern (no slash) is matched against the last path component only, which is
    what `(.*/)?pattern` would match since `*` never crosses a slash."""

    base: str
    pattern: str
    program: tuple[Token, ...]
    regex: re.Pattern[str] | None
    negated: bool
    dir_only: bool
    anchored: bool = True

    def matches(self, rel_path: str, is_dir: bool) -> bool:
        """Does this rule match `rel_path` (POSIX, relative to the scan root)?"""
        if self.dir_only and not is_dir:
            return False
        if self.base:
            prefix = self.base + "/"
            if not rel_path.startswith(prefix):
                return False
            rel_path = rel_path[len(prefix) :]
        if not self.anchored:
            rel_path = rel_path.rpartition("/")[2]
        if self.regex is not None:
            return self.regex.fullmatch(rel_path) is not None
        return run_program(self.program, rel_path)


def _strip_trailing_spaces(line: str) -> str:
    # Trailing spaces are ignored unless escaped with a backslash.
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]
    return line


def _parse_class(segment: str, start: int) -> tuple[Token, int] | None:
    """The `[...]` at `segment[start]` as a CLASS token and the index after it;
    None when there is no closing `]` (the `[` is then a literal)."""
    i = start + 1
    negated = i < len(segment) and segment[i] in "!^"
    if negated:
        i += 1
    ranges: list[tuple[str, str]] = []
    first = True
    while i < len(segment):
        char = segment[i]
        if char == "]" and not first:
            return Token(CLASS, (negated, tuple(ranges))), i + 1
        if char == "\\" and i + 1 < len(segment):
            i += 1
            char = segment[i]
        if char != "-" and i + 2 < len(segment) and segment[i + 1] == "-" and segment[i + 2] != "]":
            ranges.append((char, segment[i + 2]))
            i += 3
        else:
            ranges.append((char, char))
            i += 1
        first = False
    return None


def _segment_tokens(segment: str) -> list[Token]:
    """One path segment (no `/`): `*` and `?` never cross a slash."""
    out: list[Token] = []
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == "*":
            if not out or out[-1].kind != STAR:  # a run of `*` inside a segment is one `*`
                out.append(Token(STAR))
        elif char == "?":
            out.append(Token(ONE))
        elif char == "[":
            parsed = _parse_class(segment, i)
            if parsed is not None:
                out.append(parsed[0])
                i = parsed[1]
                continue
            out.append(Token(LIT, char))
        elif char == "\\" and i + 1 < len(segment):
            i += 1
            out.append(Token(LIT, segment[i]))
        else:
            out.append(Token(LIT, char))
        i += 1
    return out


def _program(segments: Sequence[str]) -> list[Token]:
    program: list[Token] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**" and last:
            program.append(Token(ANY))  # trailing `/**`: everything inside
        elif segment == "**":
            # Leading or middle `**/`: zero or more whole directories, i.e. `(.*/)?`.
            skip_at = len(program)
            program += [Token(SKIP), Token(ANY), Token(LIT, "/")]
            program[skip_at] = Token(SKIP, len(program))
        else:
            program += _segment_tokens(segment)
            if not last:
                program.append(Token(LIT, "/"))
    return program


def _class_regex(arg: tuple[bool, tuple[tuple[str, str], ...]]) -> str:
    negated, ranges = arg
    body = "".join(
        re.escape(low) if low == high else f"{re.escape(low)}-{re.escape(high)}"
        for low, high in ranges
    )
    return f"[^/{body}]" if negated else f"(?!/)[{body}]"


def _as_regex(program: Sequence[Token]) -> re.Pattern[str] | None:
    """An equivalent regex when the program has at most one unbounded token (a
    backtracking engine then stays linear); else None."""
    if sum(token.kind in UNBOUNDED for token in program) > 1:
        return None
    parts: list[str] = []
    i = 0
    while i < len(program):
        token = program[i]
        if token.kind == SKIP:
            return None  # `**/` groups always go to the automaton
        if token.kind == LIT:
            parts.append(re.escape(token.arg))
        elif token.kind == ONE:
            parts.append("[^/]")
        elif token.kind == STAR:
            parts.append("[^/]*")
        elif token.kind == ANY:
            parts.append(".*")
        else:
            parts.append(_class_regex(token.arg))
        i += 1
    return re.compile("".join(parts), re.DOTALL)


def compile_pattern(line: str, base: str = "") -> IgnoreRule | None:
    """Compile one `.gitignore` line; None for blank lines and comments.

    Input: the raw line and the POSIX directory of its file relative to the
    scan root.  Output: an IgnoreRule matched against the path relative to
    `base` in O(len(path) x len(line)).  Complexity: O(len(line)).
    Reference: gitignore(5).
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
    program = tuple(_program(body.split("/")))
    return IgnoreRule(base, line, program, _as_regex(program), negated, dir_only, anchored)


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
                # Opened like every scanned file (no FIFO hang, no symlink escape).
                data, _ = read_prefix(str(path), MAX_GITIGNORE_BYTES, root=str(self.root))
                text = data.decode("utf-8", errors="replace")
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
