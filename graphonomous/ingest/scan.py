"""Incremental scan of a directory tree into the graph.

One scan: (1) list the candidate files (walk.py); (2) for each file decide
unchanged / skipped / changed — same size, mtime and ingest-options
fingerprint as recorded costs one stat, same whole-file content hash costs
one read, anything else is parsed and planned (plan.py); `force` re-ingests
every file; changed files are written in small groups, each group one
transaction through `Graphonomous.apply_batch` (nodes, edges,
embeddings and `source_files` rows together); (3) remove files that are
gone, newly ignored or no longer text; (4) re-derive the reference edges of
files whose references may now resolve differently.

A failure of one file is counted and the scan goes on; a group that fails is
retried file by file so one bad file never blocks the others.

Whole files: a text file up to `max_file_size_bytes` is read and chunked
completely.  `max_read_bytes` is only the *preview* read: the first bytes,
which decide "binary" without reading more; a file that fits in it is read
once.  Nothing is cut silently: a file not ingested whole is skipped with a
reason and named in the summary.  Chunk and file nodes of a file that still
exists but were soft-forgotten (by an older policy) are restored: the file
is the truth.
"""

from __future__ import annotations

import codecs
import os
import posixpath
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from ..api import Graphonomous
from ..model import new_id
from ..store import Store
from . import safe_read
from .backrefs import add_back_references
from .options import ScanOptions, ScanSummary, options_fingerprint
from .plan import (
    FilePlan,
    parse_file,
    plan_file,
    plan_references,
    plan_removal,
    sha256_hex,
)
from .references import resolution_changed
from .sources import SourceRow, delete_row, get_row, rows_inside, rows_under, upsert_row
from .walk import FileEntry, WalkReport, resolve_target, walk_files

# A file changed less than this long before it was read may change again
# within the file system's timestamp granularity without a visible mtime
# change; its recorded mtime is 0, so the next scan re-reads (and hashes) it.
RACY_WINDOW_NS: Final = 2_000_000_000
# A write group: at most this many files or operations per transaction.
GROUP_MAX_FILES: Final = 64
GROUP_MAX_OPERATIONS: Final = 2_000
REFERENCE_BATCH_FILES: Final = 200
# `source_files.content_hash` of a file recorded as not ingested, e.g. "skipped:binary".
SKIPPED_PREFIX: Final = "skipped:"
# `source_files.content_hash` is "<sha256 or skipped:reason>@<options fingerprint>":
# a row written under other ingest options (or before fingerprints) never
# matches, so the file is read and re-planned.
FINGERPRINT_SEPARATOR: Final = "@"
RESTORE_REASON: Final = "re-scan: the source file still exists"

Progress = Callable[[int, int, ScanSummary], None]


@dataclass
class SyncResult:
    """A scan's summary and the stat of every file it settled (`rel -> (size,
    mtime_ns)`), which the watcher uses as the next cycle's baseline."""

    summary: ScanSummary
    snapshot: dict[str, tuple[int, int]] = field(default_factory=dict)


def read_prefix(path: str, limit: int, **safety: Any) -> tuple[bytes, bool]:
    """The first `limit` bytes of a file and whether the file is longer.  Raises OSError.

    Opened by :func:`.safe_read.read_prefix` (no FIFO hang, no symlink escape,
    bounded time); `safety` is its ``root`` / ``follow_symlinks``.
    """
    return safe_read.read_prefix(path, limit, **safety)


def decode_text(data: bytes, truncated: bool) -> str | None:
    """UTF-8 text (BOM dropped), or None when the bytes are not UTF-8 text.

    A NUL byte marks a binary file.  When the read was cut at the limit, an
    incomplete trailing character and the partial last line are dropped.
    O(len(data)).
    """
    if b"\x00" in data:
        return None
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    try:
        text = decoder.decode(data, final=not truncated)
    except UnicodeDecodeError:
        return None
    text = text.removeprefix("\ufeff")
    if truncated and "\n" in text:
        text = text[: text.rindex("\n") + 1]
    return text


def stamped(content_hash: str, fingerprint: str) -> str:
    """The `source_files.content_hash` value: hash (or skip mark) plus options fingerprint."""
    return f"{content_hash}{FINGERPRINT_SEPARATOR}{fingerprint}"


def fingerprint_of(row: SourceRow) -> str | None:
    """The options fingerprint a row was written under (None: before fingerprints)."""
    _, sep, fingerprint = row.content_hash.rpartition(FINGERPRINT_SEPARATOR)
    return fingerprint if sep else None


def skip_reason(row: SourceRow) -> str | None:
    """Why a recorded file was skipped ("binary", "too_large", ...), or None."""
    mark = row.content_hash.rpartition(FINGERPRINT_SEPARATOR)[0] or row.content_hash
    if row.file_node_id is None and mark.startswith(SKIPPED_PREFIX):
        return mark[len(SKIPPED_PREFIX) :]
    return None


def _under(rel_path: str, directories: Sequence[str]) -> bool:
    return any(d == "" or rel_path == d or rel_path.startswith(d + "/") for d in directories)


class _Sync:
    """State of one scan run (see the module docstring)."""

    def __init__(
        self,
        graph: Graphonomous,
        root: Path,
        options: ScanOptions,
        baseline: dict[str, tuple[int, int]] | None,
        force: bool = False,
    ) -> None:
        self.graph = graph
        self.store = graph.store
        self.root = root.as_posix()
        self.options = options
        self.fingerprint = options_fingerprint(options)
        self.force = force
        self.kept_ids: list[str] = []  # nodes of unchanged files (restored if forgotten)
        self.baseline = baseline
        self.summary = ScanSummary(root=self.root)
        self.snapshot: dict[str, tuple[int, int]] = {}
        self.present: set[str] = set()  # source keys whose rows must survive
        self.added: set[str] = set()  # rel paths that joined the tree's file set
        self.modified: set[str] = set()
        self.removed: set[str] = set()
        self.pending: list[FilePlan] = []
        self.pending_ops = 0
        self.rows: dict[str, SourceRow] = {}
        self.now = graph.now()

    def key(self, rel_path: str) -> str:
        return posixpath.join(self.root, rel_path)

    # -- per file ---------------------------------------------------------------

    def visit(self, entry: FileEntry) -> None:
        """Classify one listed file and queue its writes.  Never raises for file problems."""
        summary = self.summary
        summary.files_seen += 1
        key = self.key(entry.rel_path)
        stat_pair = (entry.size, entry.mtime_ns)
        if (
            not self.force
            and self.baseline is not None
            and self.baseline.get(entry.rel_path) == stat_pair
        ):
            summary.unchanged += 1
            self.settle(entry, key)
            return
        # A row may exist under another root when nested roots were scanned.
        row = self.rows.get(key) or get_row(self.store, key)
        ours = row if row is not None and row.root == self.root else None
        # Written under other ingest options (or none recorded): read and re-plan.
        fresh = ours is not None and fingerprint_of(ours) == self.fingerprint
        if (
            not self.force
            and fresh
            and ours is not None
            and (ours.size, ours.mtime_ns) == stat_pair
        ):
            reason = skip_reason(ours)
            if ours.file_node_id is not None:
                summary.unchanged += 1
                self.keep(ours)
                self.settle(entry, key)
                return
            if reason is not None:
                summary.skip(reason, entry.rel_path)
                self.settle(entry, key)
                return
        racy = time.time_ns() - entry.mtime_ns < RACY_WINDOW_NS
        if entry.size > self.options.max_file_size_bytes:
            self.skip_file(entry, key, row, "too_large", racy)
            return
        try:
            safety = {"root": self.root, "follow_symlinks": self.options.follow_symlinks}
            data, truncated = read_prefix(entry.abs_path, self.options.max_read_bytes, **safety)
            if truncated and b"\x00" not in data:
                # The preview looks like text: read the whole file.
                data, truncated = read_prefix(
                    entry.abs_path, self.options.max_file_size_bytes, **safety
                )
        except FileNotFoundError:
            summary.error(entry.rel_path, "vanished before it could be read")
            return  # gone: a recorded row is removed with the deleted files
        except OSError as exc:
            summary.error(entry.rel_path, exc.strerror or type(exc).__name__)
            self.present.add(key)  # keep what we knew; retried next time
            return
        if truncated and b"\x00" not in data:
            # It grew past max_file_size_bytes after the stat: never cut it.
            self.skip_file(entry, key, row, "too_large", racy)
            return
        text = decode_text(data, truncated)
        if text is None:
            self.skip_file(entry, key, row, "binary" if b"\x00" in data else "not_utf8", racy)
            return
        recorded_mtime = 0 if racy else entry.mtime_ns
        if not racy:
            self.settle(entry, key)
        self.present.add(key)
        content_hash = stamped(sha256_hex(data), self.fingerprint)
        settled = ours is not None and ours.file_node_id is not None
        if not self.force and settled and ours is not None and content_hash == ours.content_hash:
            summary.unchanged += 1
            self.keep(ours)
            self.queue(
                FilePlan(
                    entry.rel_path,
                    "stat",
                    row=replace(ours, size=entry.size, mtime_ns=recorded_mtime),
                )
            )
            return
        parsed = parse_file(entry.rel_path, text, data, truncated)
        plan = plan_file(
            self.store,
            parsed,
            root=self.root,
            key=key,
            previous=row,
            size=entry.size,
            mtime_ns=recorded_mtime,
            now=self.now,
            new_id=new_id,
        )
        assert plan.row is not None
        plan.row = replace(plan.row, content_hash=content_hash)
        (self.modified if settled else self.added).add(entry.rel_path)
        self.queue(plan)

    def keep(self, row: SourceRow) -> None:
        """Remember an unchanged file's nodes: any soft-forgotten one is restored."""
        if row.file_node_id is not None:
            self.kept_ids.append(row.file_node_id)
        self.kept_ids.extend(row.chunk_node_ids)

    def restore_kept(self) -> None:
        """Bring back forgotten nodes of unchanged files (the file is the truth)."""
        if self.kept_ids:
            restored = self.graph.restore_nodes(self.kept_ids, RESTORE_REASON)
            self.summary.nodes_restored += len(restored)

    def settle(self, entry: FileEntry, key: str) -> None:
        """The file needs nothing more: keep its row, skip it next watch cycle."""
        self.present.add(key)
        self.snapshot[entry.rel_path] = (entry.size, entry.mtime_ns)

    def skip_file(
        self, entry: FileEntry, key: str, row: SourceRow | None, reason: str, racy: bool
    ) -> None:
        """Record why a file is not ingested (so an unchanged one costs a stat
        next time); nodes it had while it was text are removed."""
        self.summary.skip(reason, entry.rel_path)
        self.present.add(key)
        if not racy:
            self.snapshot[entry.rel_path] = (entry.size, entry.mtime_ns)
        plan = (
            plan_removal(self.store, row, entry.rel_path)
            if row is not None
            else FilePlan(entry.rel_path, "skip")
        )
        if plan.kind == "remove":
            self.removed.add(entry.rel_path)
        plan.delete_row = None
        plan.row = SourceRow(
            key,
            self.root,
            stamped(SKIPPED_PREFIX + reason, self.fingerprint),
            entry.size,
            0 if racy else entry.mtime_ns,
            None,
            (),
            self.now,
        )
        self.queue(plan)

    # -- writing ------------------------------------------------------------------

    def queue(self, plan: FilePlan) -> None:
        self.pending.append(plan)
        self.pending_ops += len(plan.operations)
        if len(self.pending) >= GROUP_MAX_FILES or self.pending_ops >= GROUP_MAX_OPERATIONS:
            self.flush()

    def flush(self) -> None:
        """Write the queued plans in one transaction; on failure, one by one."""
        plans, self.pending, self.pending_ops = self.pending, [], 0
        if not plans:
            return
        try:
            self.write(plans)
        except Exception:
            for plan in plans:
                try:
                    self.write([plan])
                except Exception as exc:
                    self.failed_write(plan, exc)

    def write(self, plans: Sequence[FilePlan]) -> None:
        operations = [op for plan in plans for op in plan.operations]
        rows = [plan.row for plan in plans if plan.row is not None]
        deletions = [plan.delete_row for plan in plans if plan.delete_row is not None]

        def bookkeeping(store: Store) -> None:
            for row in rows:
                upsert_row(store, row)
            for path in deletions:
                delete_row(store, path)

        self.graph.apply_batch(operations, bookkeeping)
        for plan in plans:
            self.count(plan)

    def count(self, plan: FilePlan) -> None:
        summary = self.summary
        if plan.kind == "ingest":
            summary.ingested += 1
        elif plan.kind == "remove":
            summary.removed += 1
        summary.nodes_added += plan.nodes_added
        summary.nodes_updated += plan.nodes_updated
        summary.nodes_removed += plan.nodes_removed
        summary.edges_added += plan.edges_added
        summary.edges_removed += plan.edges_removed

    def failed_write(self, plan: FilePlan, exc: Exception) -> None:
        # The file stays as it was in the graph; the next scan tries again.
        message = f"could not be written: {exc}"
        if plan.kind in ("ingest", "stat"):
            if plan.kind == "stat":
                self.summary.unchanged -= 1  # it is counted as failed instead
            self.summary.error(plan.rel_path, message)
        else:  # a skip, removal or re-link: the file was already counted
            self.summary.error(plan.rel_path, message, counts_as_file=False)
        self.snapshot.pop(plan.rel_path, None)
        for changed in (self.added, self.modified, self.removed):
            changed.discard(plan.rel_path)

    # -- whole-tree steps -----------------------------------------------------------

    def remove_missing(self, unreadable_dirs: Sequence[str]) -> None:
        """Remove recorded files of this root that this scan did not keep."""
        for key, row in sorted(self.rows.items()):
            if key in self.present:
                continue
            rel_path = posixpath.relpath(key, self.root)
            if _under(rel_path, unreadable_dirs):
                continue  # could not look: keep
            plan = plan_removal(self.store, row, rel_path)
            if plan.kind == "remove":
                self.removed.add(rel_path)
            self.queue(plan)
        self.flush()

    def relink_references(self) -> None:
        """Re-derive reference edges where resolution may have changed.

        Always for files whose text changed.  When files appeared or
        disappeared, every other file's stored references are resolved
        against the file set before and after; only files for which some
        reference now resolves differently are re-linked (so a new file in a
        large tree costs one pass over the file nodes, not one query each).
        """
        if not (self.added or self.modified or self.removed):
            return
        rows = rows_under(self.store, self.root)
        file_ids = {
            posixpath.relpath(key, self.root): row.file_node_id
            for key, row in rows.items()
            if row.file_node_id is not None
        }
        after = set(file_ids)
        before = (after - self.added) | self.removed
        # The root is a package: `import <its name>.x` resolves inside the tree.
        package = posixpath.basename(self.root) if "__init__.py" in after else None
        rewritten = (self.added | self.modified) & after
        targets = sorted(after if (self.added or self.removed) else rewritten)
        for start in range(0, len(targets), REFERENCE_BATCH_FILES):
            batch = targets[start : start + REFERENCE_BATCH_FILES]
            nodes = self.store.get_nodes([file_ids[rel] for rel in batch])
            for rel_path in batch:
                node = nodes.get(file_ids[rel_path])
                if node is None:
                    continue
                references = node.metadata.get("references") or []
                if rel_path not in rewritten and not resolution_changed(
                    references, rel_path, before, after, package
                ):
                    continue
                plan = plan_references(self.store, node, rel_path, file_ids, after, package)
                add_back_references(self.graph, plan)
                if plan.operations:
                    self.queue(plan)
        self.flush()


def sync_tree(
    graph: Graphonomous,
    root: Path,
    options: ScanOptions,
    *,
    baseline: dict[str, tuple[int, int]] | None = None,
    progress: Progress | None = None,
    force: bool = False,
    only: str | None = None,
) -> SyncResult:
    """One incremental pass over `root` (already resolved); see the module docstring.

    `baseline` (rel path -> (size, mtime_ns)) marks files known unchanged
    without consulting the database (the watcher's previous cycle); `force`
    re-reads and re-plans every file.  `only` (a file name in `root`): the pass
    covers that one file, as the pass over `root` would; no other file of the
    root is read or removed.
    """
    started = time.perf_counter()
    state = _Sync(graph, root, options, baseline, force)
    report = WalkReport()
    entries = list(walk_files(root, options, report, only))
    if only is None:
        state.rows = rows_under(graph.store, state.root)
    else:  # only this file's row of the root: nothing else can be removed
        row = get_row(graph.store, state.key(only))
        state.rows = {row.path: row} if row is not None and row.root == state.root else {}
    total = len(entries)
    for done, entry in enumerate(entries, 1):
        state.visit(entry)
        if progress is not None:
            progress(done, total, state.summary)
    state.flush()
    summary = state.summary
    summary.excluded = report.excluded
    for path, message in report.errors:
        summary.error(path, message, counts_as_file=False)
    state.remove_missing(report.unreadable_dirs)
    state.restore_kept()
    state.relink_references()
    summary.seconds = time.perf_counter() - started
    return SyncResult(summary, state.snapshot)


def scan_directory(
    graph: Graphonomous,
    root: str | os.PathLike[str],
    options: ScanOptions | None = None,
    progress: Progress | None = None,
    *,
    force: bool = False,
) -> ScanSummary:
    """Ingest every text file under `root` into `graph`, incrementally.

    Input: the facade, a directory or one file (ingested exactly as the scan
    of its folder would ingest it: same root, chunks and provenance; nothing
    else of the folder is touched), ScanOptions (seed 003 defaults when
    None), and an optional `progress(done, total, summary)` callback called
    after each listed file; `force` re-ingests every file even when it is
    unchanged.  Output: ScanSummary.  Re-running on an unchanged
    tree writes nothing and reads no file (one stat per file).  Raises
    ValidationError when `root` is neither a directory nor a regular file;
    every per-file problem is counted in the summary instead.  Complexity:
    O(files) stats plus O(bytes read) for new or changed files.
    """
    directory, only = resolve_target(root)
    return sync_tree(
        graph, directory, options or ScanOptions(), progress=progress, force=force, only=only
    ).summary


def forget_tree(graph: Graphonomous, root: str | os.PathLike[str]) -> dict[str, object]:
    """Remove everything scans brought in from files inside `root`: their file
    and chunk nodes (with every edge touching them) and their `source_files`
    rows, skipped files' rows included.  The folder itself is not read, so it
    may be gone already.  Output: ``{"root", "files", "nodes_removed",
    "edges_removed"}``.  Writes in groups, each one transaction.
    Complexity: O(rows + nodes and edges removed).
    """
    directory = Path(root).expanduser().resolve().as_posix()
    state = _Sync(graph, Path(directory), ScanOptions(), None)
    rows = rows_inside(graph.store, directory)
    for key, row in rows.items():
        plan = plan_removal(graph.store, row, posixpath.relpath(key, directory))
        state.queue(plan)
    state.flush()
    summary = state.summary
    return {
        "root": directory,
        "files": len(rows),
        "nodes_removed": summary.nodes_removed,
        "edges_removed": summary.edges_removed,
    }
