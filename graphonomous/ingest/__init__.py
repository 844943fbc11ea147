"""Source-aware ingestion: `scan` a directory once, or `watch` it by polling.

Every text file becomes a file node plus chunk nodes (heading-aware for
Markdown, definition-aware for Python, paragraph-aware otherwise), linked by
`part_of` / `follows`; imports and document links between files become
`depends_on` / `derived_from` edges between file nodes.  Re-scans are
incremental and keep node ids stable.  spec/ingestion.md is normative.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from ..lazy_import import export_from

if TYPE_CHECKING:
    from .chunking import Chunk, chunk_text, file_format
    from .gitignore import IgnoreMatcher, IgnoreRule, compile_pattern, parse_gitignore
    from .options import DEFAULT_EXTENSIONS, ScanOptions, ScanSummary, normalize_extensions
    from .progress import ProgressLine, progress_for
    from .references import extract_references, resolve_reference
    from .report import format_cycle, format_scan, format_watch
    from .scan import forget_tree, scan_directory, sync_tree
    from .walk import FileEntry, resolve_root, walk_files
    from .watcher import WatchSummary, watch

# Imported on first use (PEP 562): the CLI parser reads `ScanOptions` on every
# start; the scanner, watcher and chunkers load with the scan / watch commands.
_LAZY_EXPORTS: Final = {
    "Chunk": ".chunking",
    "DEFAULT_EXTENSIONS": ".options",
    "FileEntry": ".walk",
    "IgnoreMatcher": ".gitignore",
    "IgnoreRule": ".gitignore",
    "ProgressLine": ".progress",
    "ScanOptions": ".options",
    "ScanSummary": ".options",
    "WatchSummary": ".watcher",
    "chunk_text": ".chunking",
    "compile_pattern": ".gitignore",
    "extract_references": ".references",
    "file_format": ".chunking",
    "forget_tree": ".scan",
    "format_cycle": ".report",
    "format_scan": ".report",
    "format_watch": ".report",
    "normalize_extensions": ".options",
    "parse_gitignore": ".gitignore",
    "progress_for": ".progress",
    "resolve_reference": ".references",
    "resolve_root": ".walk",
    "scan_directory": ".scan",
    "sync_tree": ".scan",
    "walk_files": ".walk",
    "watch": ".watcher",
}


def __getattr__(name: str) -> Any:
    return export_from(__name__, _LAZY_EXPORTS, globals(), name)


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "DEFAULT_EXTENSIONS",
    "Chunk",
    "FileEntry",
    "IgnoreMatcher",
    "IgnoreRule",
    "ProgressLine",
    "ScanOptions",
    "ScanSummary",
    "WatchSummary",
    "chunk_text",
    "compile_pattern",
    "extract_references",
    "file_format",
    "forget_tree",
    "format_cycle",
    "format_scan",
    "format_watch",
    "normalize_extensions",
    "parse_gitignore",
    "progress_for",
    "resolve_reference",
    "resolve_root",
    "scan_directory",
    "sync_tree",
    "walk_files",
    "watch",
]
