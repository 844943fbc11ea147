"""Scan/watch options (seed 003's `filesystem_*` defaults) and the scan summary."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from ..model import ValidationError, check_int
from .chunking import CHUNKER_VERSION

# Seed 003 config: filesystem_default_recursive, _include_hidden,
# _follow_symlinks, filesystem_respect_gitignore, _watch_poll_interval_ms,
# _watch_ingest_on_start, _max_file_size_bytes, _max_read_bytes.
DEFAULT_RECURSIVE: Final = True
DEFAULT_INCLUDE_HIDDEN: Final = False
DEFAULT_FOLLOW_SYMLINKS: Final = False
DEFAULT_RESPECT_GITIGNORE: Final = True
DEFAULT_POLL_INTERVAL_MS: Final = 1_000
DEFAULT_INGEST_ON_START: Final = False
DEFAULT_MAX_FILE_SIZE_BYTES: Final = 1_000_000
# The preview read (binary sniff), not a cut: a text file up to
# max_file_size_bytes is always ingested whole (spec/ingestion.md).
DEFAULT_MAX_READ_BYTES: Final = 16_384
# Hex digits of the options fingerprint kept per file (64 bits: a collision
# between two option sets of one user is not a practical concern).
FINGERPRINT_DIGITS: Final = 16

# Text-like files people keep knowledge in: prose, code, configuration.
DEFAULT_EXTENSIONS: Final = (
    ".adoc",
    ".c",
    ".cfg",
    ".cjs",
    ".cpp",
    ".cs",
    ".css",
    ".erl",
    ".ex",
    ".exs",
    ".go",
    ".h",
    ".hpp",
    ".html",
    ".ini",
    ".java",
    ".js",
    ".json",
    ".jsx",
    ".kt",
    ".lua",
    ".markdown",
    ".md",
    ".mjs",
    ".org",
    ".py",
    ".pyi",
    ".rb",
    ".rs",
    ".rst",
    ".sh",
    ".sql",
    ".svelte",
    ".swift",
    ".tex",
    ".toml",
    ".ts",
    ".tsx",
    ".txt",
    ".vue",
    ".yaml",
    ".yml",
)

# How many errors a summary lists by name (the count is always complete).
MAX_LISTED_ERRORS: Final = 20
# How many skipped files a summary names (the counts are always complete).
MAX_LISTED_SKIPPED: Final = 200


def normalize_extensions(extensions: Iterable[str] | str) -> tuple[str, ...]:
    """ ".MD, py" -> (".md", ".py"): lower case, leading dot added, sorted, unique."""
    items = extensions.split(",") if isinstance(extensions, str) else list(extensions)
    out: set[str] = set()
    for raw in items:
        if not isinstance(raw, str):
            raise ValidationError("extensions", f"must be strings; got {raw!r}")
        item = raw.strip().lower()
        if not item:
            continue
        if not item.startswith("."):
            item = "." + item
        if "/" in item or len(item) < 2:
            raise ValidationError("extensions", f"not a file extension: {raw!r}")
        out.add(item)
    if not out:
        raise ValidationError("extensions", "must name at least one extension")
    return tuple(sorted(out))


@dataclass(frozen=True)
class ScanOptions:
    """What a scan or watch looks at.  Defaults are seed 003's `filesystem_*` config."""

    extensions: tuple[str, ...] = DEFAULT_EXTENSIONS
    recursive: bool = DEFAULT_RECURSIVE
    include_hidden: bool = DEFAULT_INCLUDE_HIDDEN
    follow_symlinks: bool = DEFAULT_FOLLOW_SYMLINKS
    respect_gitignore: bool = DEFAULT_RESPECT_GITIGNORE
    max_file_size_bytes: int = DEFAULT_MAX_FILE_SIZE_BYTES
    max_read_bytes: int = DEFAULT_MAX_READ_BYTES
    poll_interval_ms: int = DEFAULT_POLL_INTERVAL_MS
    ingest_on_start: bool = DEFAULT_INGEST_ON_START

    def __post_init__(self) -> None:
        object.__setattr__(self, "extensions", normalize_extensions(self.extensions))
        check_int("max_file_size_bytes", self.max_file_size_bytes, 1)
        check_int("max_read_bytes", self.max_read_bytes, 1)
        check_int("poll_interval_ms", self.poll_interval_ms, 1)


def options_fingerprint(options: ScanOptions) -> str:
    """What decides how a listed file becomes nodes: chunker version and size limit.

    Stored with every file's row; a file recorded under another fingerprint
    is re-read and re-planned by the next scan.  The walk options
    (extensions, hidden, gitignore, ...) decide which files are listed, not
    how one is ingested, so they are not part of it; neither is the
    preview size.
    """
    facts = {"chunker": CHUNKER_VERSION, "max_file_size_bytes": options.max_file_size_bytes}
    digest = hashlib.sha256(json.dumps(facts, sort_keys=True).encode("utf-8")).hexdigest()
    return digest[:FINGERPRINT_DIGITS]


@dataclass
class ScanSummary:
    """Counts of one scan (or of a whole watch session, summed over cycles).

    files_seen = ingested + unchanged + skipped + failed.  `excluded` counts
    directory entries left out by the rules (hidden, .gitignore, extension,
    symlink when not following, special files) — they are not "seen".
    `skipped_files` names skipped files with their reason (the first
    MAX_LISTED_SKIPPED); `nodes_restored` counts forgotten nodes of unchanged
    files brought back.
    """

    root: str = ""
    files_seen: int = 0
    ingested: int = 0
    unchanged: int = 0
    skipped: int = 0
    failed: int = 0
    removed: int = 0
    excluded: int = 0
    skipped_by_reason: dict[str, int] = field(default_factory=dict)
    nodes_added: int = 0
    nodes_updated: int = 0
    nodes_removed: int = 0
    edges_added: int = 0
    edges_removed: int = 0
    seconds: float = 0.0
    errors: list[dict[str, str]] = field(default_factory=list)
    error_count: int = 0
    skipped_files: list[dict[str, str]] = field(default_factory=list)
    nodes_restored: int = 0

    def skip(self, reason: str, rel_path: str | None = None) -> None:
        self.skipped += 1
        self.skipped_by_reason[reason] = self.skipped_by_reason.get(reason, 0) + 1
        if rel_path is not None and len(self.skipped_files) < MAX_LISTED_SKIPPED:
            self.skipped_files.append({"path": rel_path, "reason": reason})

    def error(self, rel_path: str, message: str, *, counts_as_file: bool = True) -> None:
        """Record a per-file (or per-directory) failure; the scan goes on."""
        if counts_as_file:
            self.failed += 1
        self.error_count += 1
        if len(self.errors) < MAX_LISTED_ERRORS:
            self.errors.append({"path": rel_path, "error": message})

    def add(self, other: ScanSummary) -> None:
        """Add another summary's counts into this one (watch totals)."""
        for name in (
            "files_seen",
            "ingested",
            "unchanged",
            "skipped",
            "failed",
            "removed",
            "excluded",
            "nodes_added",
            "nodes_updated",
            "nodes_removed",
            "edges_added",
            "edges_removed",
            "error_count",
            "nodes_restored",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for reason, count in other.skipped_by_reason.items():
            self.skipped_by_reason[reason] = self.skipped_by_reason.get(reason, 0) + count
        room = MAX_LISTED_ERRORS - len(self.errors)
        self.errors.extend(other.errors[: max(room, 0)])
        room = MAX_LISTED_SKIPPED - len(self.skipped_files)
        self.skipped_files.extend(other.skipped_files[: max(room, 0)])
        self.seconds += other.seconds

    @property
    def changed(self) -> bool:
        return bool(
            self.ingested
            or self.removed
            or self.edges_added
            or self.edges_removed
            or self.nodes_restored
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "files_seen": self.files_seen,
            "ingested": self.ingested,
            "unchanged": self.unchanged,
            "skipped": self.skipped,
            "failed": self.failed,
            "removed": self.removed,
            "excluded": self.excluded,
            "skipped_by_reason": dict(sorted(self.skipped_by_reason.items())),
            "skipped_files": list(self.skipped_files),
            "nodes_added": self.nodes_added,
            "nodes_updated": self.nodes_updated,
            "nodes_removed": self.nodes_removed,
            "edges_added": self.edges_added,
            "edges_removed": self.edges_removed,
            "nodes_restored": self.nodes_restored,
            "seconds": round(self.seconds, 3),
            "error_count": self.error_count,
            "errors": list(self.errors),
        }
