"""Scan/watch options (seed 003's `filesystem_*` defaults) and the scan summary."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from ..model import ValidationError, check_int

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
DEFAULT_MAX_READ_BYTES: Final = 16_384

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


@dataclass
class ScanSummary:
    """Counts of one scan (or of a whole watch session, summed over cycles).

    files_seen = ingested + unchanged + skipped + failed.  `excluded` counts
    directory entries left out by the rules (hidden, .gitignore, extension,
    symlink when not following, special files) — they are not "seen".
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

    def skip(self, reason: str) -> None:
        self.skipped += 1
        self.skipped_by_reason[reason] = self.skipped_by_reason.get(reason, 0) + 1

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
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for reason, count in other.skipped_by_reason.items():
            self.skipped_by_reason[reason] = self.skipped_by_reason.get(reason, 0) + count
        room = MAX_LISTED_ERRORS - len(self.errors)
        self.errors.extend(other.errors[: max(room, 0)])
        self.seconds += other.seconds

    @property
    def changed(self) -> bool:
        return bool(self.ingested or self.removed or self.edges_added or self.edges_removed)

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
            "nodes_added": self.nodes_added,
            "nodes_updated": self.nodes_updated,
            "nodes_removed": self.nodes_removed,
            "edges_added": self.edges_added,
            "edges_removed": self.edges_removed,
            "seconds": round(self.seconds, 3),
            "error_count": self.error_count,
            "errors": list(self.errors),
        }
