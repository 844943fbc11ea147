"""Listing the candidate files of a directory tree (no file is opened here).

A depth-first walk over `os.scandir`, entries in sorted name order, so the
listing is deterministic.  Only one directory's entries are held at a time
(plus the stack of directories still to visit).  One file is listed as its
folder's walk would list it (the same rules, the folder as the root).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..hygiene import encodable
from ..model import ValidationError
from .gitignore import IgnoreMatcher, IgnoreRule, decide
from .options import ScanOptions

GIT_DIR = ".git"


@dataclass(frozen=True)
class FileEntry:
    """A candidate file: POSIX path relative to the root, and its stat facts."""

    rel_path: str
    abs_path: str
    size: int
    mtime_ns: int


@dataclass
class WalkReport:
    """What the walk left out, filled in while the generator runs."""

    excluded: int = 0
    # Directories that could not be listed: their previously ingested files
    # are kept (a permission glitch must not erase knowledge).
    unreadable_dirs: list[str] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)


def resolve_root(root: str | os.PathLike[str]) -> Path:
    """The canonical absolute root directory (symlinks resolved).  Raises ValidationError."""
    path = Path(root).expanduser()
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise ValidationError("root", f"cannot open {str(root)!r}: {exc}") from exc
    if not resolved.is_dir():
        raise ValidationError("root", f"{str(root)!r} is not a directory")
    return resolved


def resolve_target(path: str | os.PathLike[str]) -> tuple[Path, str | None]:
    """What `scan PATH` walks: (canonical root directory, None) for a directory, or
    (its canonical folder, its name) for one regular file, which is then listed
    exactly as a scan of that folder would list it.  Raises ValidationError."""
    given = Path(path).expanduser()
    try:
        resolved = given.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise ValidationError("root", f"cannot open {str(path)!r}: {exc}") from exc
    if resolved.is_file():
        return resolved.parent, resolved.name
    if not resolved.is_dir():
        raise ValidationError("root", f"{str(path)!r} is neither a directory nor a regular file")
    return resolved, None


def _join(parent: str, name: str) -> str:
    return f"{parent}/{name}" if parent else name


def _error_text(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def walk_files(
    root: Path, options: ScanOptions, report: WalkReport, only: str | None = None
) -> Iterator[FileEntry]:
    """Yield every candidate file under `root` in sorted depth-first order.

    `only`: a name in `root` (the file of `resolve_target`); the walk then looks
    at that one entry of the root, under the same rules, and at nothing else.

    Rules: `.git` is always skipped; names starting with "." are skipped
    unless include_hidden; `.gitignore` files are honoured when
    respect_gitignore (an excluded directory is not entered); symlinks are
    skipped unless follow_symlinks, and then every directory is visited at
    most once (by device and inode), so symlink loops terminate; only regular
    files whose lower-cased suffix is in `options.extensions` are yielded.
    Unlistable directories and unstat-able entries are recorded in `report`.
    Complexity: O(entries) stat calls; memory O(depth x entries per directory).
    """
    matcher = IgnoreMatcher(root) if options.respect_gitignore else None
    follow = options.follow_symlinks
    visited: set[tuple[int, int]] = set()
    try:
        root_stat = os.stat(root)
        visited.add((root_stat.st_dev, root_stat.st_ino))
    except OSError as exc:
        report.unreadable_dirs.append("")
        report.errors.append(("", _error_text(exc)))
        return
    # Stack of (relative dir, rules governing its entries); popped LIFO and
    # pushed in reverse order so children come out in sorted order.
    stack: list[tuple[str, list[IgnoreRule]]] = [("", [])]
    while stack:
        rel_dir, inherited = stack.pop()
        rules = inherited + matcher.rules_in(rel_dir) if matcher is not None else inherited
        try:
            with os.scandir(root / rel_dir if rel_dir else root) as iterator:
                entries = sorted(
                    (e for e in iterator if only is None or e.name == only), key=lambda e: e.name
                )
        except OSError as exc:
            report.unreadable_dirs.append(rel_dir)
            report.errors.append((rel_dir or ".", _error_text(exc)))
            continue
        subdirs: list[str] = []
        for entry in entries:
            rel = _join(rel_dir, entry.name)
            if not encodable(entry.name):
                # A name with bytes that are not UTF-8 (os gives lone surrogates) cannot
                # be stored as text: reported, not ingested, never a crash.
                shown = rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
                report.errors.append((shown, "file name is not valid UTF-8; skipped"))
                report.excluded += 1
                continue
            kind = _classify(entry, follow, report, rel)
            if kind is None or entry.name == GIT_DIR:
                report.excluded += 1
                continue
            if entry.name.startswith(".") and not options.include_hidden:
                report.excluded += 1
                continue
            is_dir = kind[0] == "dir"
            if rules and decide(rules, rel, is_dir):
                report.excluded += 1
                continue
            if is_dir:
                if not options.recursive:
                    report.excluded += 1
                    continue
                identity = (kind[1].st_dev, kind[1].st_ino)
                if identity in visited:  # a symlink loop or a second link to a directory
                    report.excluded += 1
                    continue
                visited.add(identity)
                subdirs.append(rel)
                continue
            if os.path.splitext(entry.name)[1].lower() not in options.extensions:
                report.excluded += 1
                continue
            info = kind[1]
            yield FileEntry(rel, entry.path, info.st_size, info.st_mtime_ns)
        for sub in reversed(subdirs):
            stack.append((sub, rules))


def _classify(
    entry: os.DirEntry[str], follow: bool, report: WalkReport, rel: str
) -> tuple[str, os.stat_result] | None:
    """("dir" | "file", stat) for directories and regular files; None for the rest.

    Without follow_symlinks a symlink is None; with it, the target's stat is
    used (a dangling or looping link is None and recorded).
    """
    try:
        if entry.is_symlink() and not follow:
            return None
        info = entry.stat(follow_symlinks=follow)
    except FileNotFoundError:
        return None  # vanished since listing, or a dangling symlink
    except OSError as exc:
        report.errors.append((rel, _error_text(exc)))
        return None
    if stat.S_ISDIR(info.st_mode):
        return ("dir", info)
    if stat.S_ISREG(info.st_mode):
        return ("file", info)
    return None  # FIFOs, sockets, devices: never opened
