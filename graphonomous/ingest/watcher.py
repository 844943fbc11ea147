"""Keeping the graph in step with a directory by polling (stdlib only, no threads).

Each cycle lists the tree and compares every file's (size, mtime_ns) with the
previous cycle; only files that differ are examined further (see scan.py),
files that disappeared — or became ignored — are removed.  With
`ingest_on_start` false (seed 003's default) the first cycle only records
the baseline: files already there are not ingested, changes after it are.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..api import Graphonomous
from .options import ScanOptions, ScanSummary
from .scan import SyncResult, sync_tree
from .sources import rows_under
from .walk import WalkReport, resolve_root, walk_files


@dataclass
class WatchSummary:
    """A watch session: cycles run, and the changes summed over them."""

    root: str
    cycles: int = 0
    interrupted: bool = False
    seconds: float = 0.0
    files_watched: int = 0  # files seen by the last cycle
    totals: ScanSummary = field(default_factory=ScanSummary)
    ingested_on_start: bool = False  # the first cycle ingested the existing files

    def to_dict(self) -> dict[str, Any]:
        totals = self.totals.to_dict()
        return {
            "root": self.root,
            "cycles": self.cycles,
            "interrupted": self.interrupted,
            "seconds": round(self.seconds, 3),
            "files_watched": self.files_watched,
            "ingested_on_start": self.ingested_on_start,
            **{
                name: totals[name]
                for name in (
                    "ingested",
                    "removed",
                    "skipped",
                    "failed",
                    "skipped_by_reason",
                    "nodes_added",
                    "nodes_updated",
                    "nodes_removed",
                    "edges_added",
                    "edges_removed",
                    "error_count",
                    "errors",
                )
            },
        }


def _baseline_only(root: Path, options: ScanOptions) -> SyncResult:
    """List the tree and record every file's stat; write nothing."""
    started = time.perf_counter()
    report = WalkReport()
    summary = ScanSummary(root=root.as_posix())
    snapshot: dict[str, tuple[int, int]] = {}
    for entry in walk_files(root, options, report):
        snapshot[entry.rel_path] = (entry.size, entry.mtime_ns)
    summary.files_seen = summary.unchanged = len(snapshot)
    summary.excluded = report.excluded
    summary.seconds = time.perf_counter() - started
    return SyncResult(summary, snapshot)


def watch(
    graph: Graphonomous,
    root: str | os.PathLike[str],
    options: ScanOptions | None = None,
    *,
    iterations: int | None = None,
    sleep: Callable[[float], None] = time.sleep,
    on_cycle: Callable[[int, ScanSummary], None] | None = None,
) -> WatchSummary:
    """Poll `root` every `options.poll_interval_ms` and mirror changes into `graph`.

    Input: the facade, a directory, options, `iterations` (cycles to run;
    None = until interrupted), `sleep` (called between cycles, never before
    the first or after the last) and `on_cycle(cycle_number, summary)`.
    Without `ingest_on_start` the first cycle only records the tree's stats —
    unless this database never scanned `root`, then it ingests the existing
    files (`ingested_on_start` in the result says which happened).
    Output: WatchSummary.  Ctrl-C (KeyboardInterrupt) ends the loop cleanly
    with `interrupted` set; a cycle's committed groups stay committed.
    Complexity per cycle: O(files) stats plus the work for changed files.
    """
    options = options or ScanOptions()
    resolved = resolve_root(root)
    result = WatchSummary(root=resolved.as_posix(), totals=ScanSummary(root=resolved.as_posix()))
    started = time.perf_counter()
    baseline: dict[str, tuple[int, int]] | None = None
    # A folder this database never scanned is ingested in the first cycle:
    # watching it must not leave its existing files silently absent.
    scanned_before = bool(rows_under(graph.store, resolved.as_posix()))
    result.ingested_on_start = options.ingest_on_start or not scanned_before
    try:
        while iterations is None or result.cycles < iterations:
            if result.cycles:
                sleep(options.poll_interval_ms / 1000.0)
            if result.cycles == 0 and not options.ingest_on_start and scanned_before:
                cycle = _baseline_only(resolved, options)
            else:
                cycle = sync_tree(graph, resolved, options, baseline=baseline)
            baseline = cycle.snapshot
            result.cycles += 1
            result.files_watched = cycle.summary.files_seen
            result.totals.add(cycle.summary)
            if on_cycle is not None:
                on_cycle(result.cycles, cycle.summary)
    except KeyboardInterrupt:
        result.interrupted = True
    result.seconds = time.perf_counter() - started
    return result
