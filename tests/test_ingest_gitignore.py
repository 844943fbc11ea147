"""The .gitignore matcher: a table of cases, nested files, and `git check-ignore` parity."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from graphonomous.ingest.gitignore import IgnoreMatcher, compile_pattern, decide, parse_gitignore

# (gitignore text, path, is_dir, ignored?)
CASES: list[tuple[str, str, bool, bool]] = [
    # plain names match at any depth, files and directories alike
    ("foo", "foo", False, True),
    ("foo", "a/b/foo", False, True),
    ("foo", "a/foo", True, True),
    ("foo", "foobar", False, False),
    ("foo", "a/foo/bar", False, True),  # inside an ignored directory
    # * and ? never cross a slash
    ("*.log", "x.log", False, True),
    ("*.log", "deep/dir/x.log", False, True),
    ("*.log", "x.log.txt", False, False),
    ("a*c", "abc", False, True),
    ("a*c", "a/c", False, False),
    ("?.txt", "a.txt", False, True),
    ("?.txt", "ab.txt", False, False),
    # character classes, ranges and negated classes
    ("[abc].md", "b.md", False, True),
    ("[abc].md", "d.md", False, False),
    ("file[0-9].txt", "file7.txt", False, True),
    ("file[0-9].txt", "filex.txt", False, False),
    ("file[!0-9].txt", "filex.txt", False, True),
    ("file[!0-9].txt", "file1.txt", False, False),
    ("file[^0-9].txt", "filex.txt", False, True),
    ("[]x].c", "].c", False, True),
    ("unclosed[", "unclosed[", False, True),
    # directory-only patterns
    ("build/", "build", True, True),
    ("build/", "build", False, False),
    ("build/", "src/build", True, True),
    ("build/", "build/out.o", False, True),
    # anchoring: leading slash, or a slash in the middle
    ("/top.txt", "top.txt", False, True),
    ("/top.txt", "sub/top.txt", False, False),
    ("doc/frotz", "doc/frotz", False, True),
    ("doc/frotz", "a/doc/frotz", False, False),
    ("doc/*.txt", "doc/x.txt", False, True),
    ("doc/*.txt", "doc/sub/x.txt", False, False),
    # ** forms
    ("**/foo", "foo", False, True),
    ("**/foo", "a/b/foo", False, True),
    ("**/foo/bar", "x/foo/bar", False, True),
    ("abc/**", "abc/x", False, True),
    ("abc/**", "abc/x/y/z", False, True),
    ("abc/**", "abc", True, False),
    ("a/**/b", "a/b", False, True),
    ("a/**/b", "a/x/y/b", False, True),
    ("a/**/b", "a/x/y/c", False, False),
    ("x**y", "xaay", False, True),  # other consecutive asterisks are plain *
    ("x**y", "xa/ay", False, False),
    # negation and rule order (last match wins)
    ("*.txt\n!keep.txt", "keep.txt", False, False),
    ("*.txt\n!keep.txt", "drop.txt", False, True),
    ("!keep.txt\n*.txt", "keep.txt", False, True),
    ("build/\n!build/keep.txt", "build/keep.txt", False, True),  # parent excluded: no re-include
    ("build/*\n!build/keep.txt", "build/keep.txt", False, False),
    ("build/*\n!build/keep.txt", "build/drop.txt", False, True),
    # comments, escapes and whitespace
    ("# comment", "# comment", False, False),
    ("\\#hash", "#hash", False, True),
    ("\\!bang", "!bang", False, True),
    ("trailing   ", "trailing", False, True),
    ("space\\ ", "space ", False, True),
    ("\n\n   \n", "anything", False, False),
    ("lit\\*eral", "lit*eral", False, True),
    ("lit\\*eral", "litXeral", False, False),
    ("crlf.txt\r", "crlf.txt", False, True),
    # a lone slash or a bare "!" match nothing
    ("/", "x", False, False),
    ("!", "x", False, False),
]


@pytest.mark.parametrize(("text", "path", "is_dir", "ignored"), CASES)
def test_pattern_table(tmp_path: Path, text: str, path: str, is_dir: bool, ignored: bool) -> None:
    (tmp_path / ".gitignore").write_text(text, encoding="utf-8")
    assert IgnoreMatcher(tmp_path).is_ignored(path, is_dir) is ignored


def test_comment_and_blank_lines_compile_to_nothing() -> None:
    assert compile_pattern("# just a comment") is None
    assert compile_pattern("") is None
    assert parse_gitignore("# a\n\n*.o\n") == [compile_pattern("*.o")]


def test_decide_reports_the_last_match() -> None:
    rules = parse_gitignore("*.txt\n!a.txt\n")
    assert decide(rules, "a.txt", False) is False
    assert decide(rules, "b.txt", False) is True
    assert decide(rules, "c.md", False) is None


def test_nested_gitignore_rules_are_relative_to_their_directory(tmp_path: Path) -> None:
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / ".gitignore").write_text("*.tmp\n", encoding="utf-8")
    (tmp_path / "sub" / ".gitignore").write_text("/local.txt\n!keep.tmp\n", encoding="utf-8")
    matcher = IgnoreMatcher(tmp_path)
    assert matcher.is_ignored("sub/local.txt")
    assert not matcher.is_ignored("local.txt")  # anchored to sub/, not the root
    assert not matcher.is_ignored("sub/deeper/local.txt")
    assert matcher.is_ignored("x.tmp")
    assert matcher.is_ignored("sub/deeper/x.tmp")
    assert not matcher.is_ignored("sub/keep.tmp")  # deeper file overrides the root's rule
    assert not matcher.is_ignored("sub/deeper/keep.tmp")


def test_git_directory_is_always_ignored(tmp_path: Path) -> None:
    matcher = IgnoreMatcher(tmp_path)
    assert matcher.is_ignored(".git", True)
    assert matcher.is_ignored("sub/.git/config")
    assert not matcher.is_ignored("src/main.py")


# -- parity with git itself ----------------------------------------------------------

PARITY_PATTERNS = [
    "*.log",
    "!important.log",
    "build/",
    "/root-only.txt",
    "docs/**/draft*",
    "**/cache",
    "a/**",
    "!a/keep.md",
    "tmp[0-9]",
    "*.py[cod]",
    "\\#literal",
    "nested/*.md",
    "!nested/ok.md",
    "x?z.txt",
]


def _random_tree(root: Path, rng: random.Random) -> list[tuple[str, bool]]:
    names = [
        "a",
        "b",
        "docs",
        "build",
        "cache",
        "nested",
        "sub",
        "x.log",
        "important.log",
        "root-only.txt",
        "draft1.md",
        "keep.md",
        "ok.md",
        "tmp1",
        "m.pyc",
        "m.py",
        "#literal",
        "xyz.txt",
        "notes.txt",
    ]
    paths: list[tuple[str, bool]] = []

    def grow(rel: str, depth: int) -> None:
        for name in rng.sample(names, k=6):
            child = f"{rel}/{name}" if rel else name
            target = root / child
            if target.exists():
                continue
            if depth < 3 and "." not in name and rng.random() < 0.6:
                target.mkdir()
                paths.append((child, True))
                if rng.random() < 0.3:
                    rules = rng.sample(PARITY_PATTERNS, k=3)
                    (target / ".gitignore").write_text("\n".join(rules) + "\n", encoding="utf-8")
                grow(child, depth + 1)
            else:
                target.write_text("x", encoding="utf-8")
                paths.append((child, False))

    grow("", 0)
    return paths


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("seed", range(6))
def test_matches_git_check_ignore(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text(
        "\n".join(rng.sample(PARITY_PATTERNS, k=8)) + "\n", encoding="utf-8"
    )
    paths = _random_tree(tmp_path, rng)
    listing = "".join(f"{path}\0" for path, _ in paths)
    done = subprocess.run(
        ["git", "-C", str(tmp_path), "check-ignore", "--stdin", "-z"],
        input=listing.encode(),
        capture_output=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    by_git = {p for p in done.stdout.decode().split("\0") if p}
    matcher = IgnoreMatcher(tmp_path)
    ours = {path for path, is_dir in paths if matcher.is_ignored(path, is_dir)}
    assert ours == by_git


def test_a_run_of_stars_is_one_star() -> None:
    """A 200,000-`*` line once made a 100-file scan take 88 s (the automaton walked every
    star for every character); inside a segment a run of `*` means one `*`."""
    rule = compile_pattern("*" * 200_000 + "zz")
    assert rule is not None and len(rule.program) == 3
    assert rule.matches("buzz", False) and not rule.matches("buzzer", False)
    assert compile_pattern("a**b") is not None and compile_pattern("a**b").matches("axyb", False)
