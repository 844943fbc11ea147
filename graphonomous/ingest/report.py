"""Human-readable summaries of scans and watch sessions (the CLI prints these)."""

from __future__ import annotations

import time

from .options import ScanSummary
from .watcher import WatchSummary


def _changes(summary: ScanSummary) -> str:
    return (
        f"nodes +{summary.nodes_added:,} ~{summary.nodes_updated:,} -{summary.nodes_removed:,}, "
        f"edges +{summary.edges_added:,} -{summary.edges_removed:,}"
    )


def _skipped(summary: ScanSummary) -> str:
    if not summary.skipped_by_reason:
        return f"{summary.skipped:,} skipped"
    reasons = ", ".join(f"{k} {v:,}" for k, v in sorted(summary.skipped_by_reason.items()))
    return f"{summary.skipped:,} skipped ({reasons})"


def _skipped_files(summary: ScanSummary) -> list[str]:
    """One line per named skipped file: it is not in the graph, or not whole."""
    lines = [
        f"  - {item['path']}: not ingested ({item['reason']})" for item in summary.skipped_files
    ]
    hidden = summary.skipped - len(summary.skipped_files)
    if hidden > 0 and summary.skipped_files:
        lines.append(f"  - ... and {hidden:,} more skipped")
    return lines


def _errors(summary: ScanSummary) -> list[str]:
    lines = [f"  ! {item['path']}: {item['error']}" for item in summary.errors]
    hidden = summary.error_count - len(summary.errors)
    if hidden > 0:
        lines.append(f"  ! ... and {hidden:,} more")
    return lines


def format_scan(summary: ScanSummary) -> str:
    """Multi-line summary of one scan: files, graph changes, time, errors."""
    rate = summary.files_seen / summary.seconds if summary.seconds > 0 else 0.0
    lines = [
        f"scanned {summary.root}",
        f"  files   {summary.files_seen:,} seen: {summary.ingested:,} ingested, "
        f"{summary.unchanged:,} unchanged, {_skipped(summary)}, {summary.failed:,} failed; "
        f"{summary.removed:,} removed, {summary.excluded:,} excluded by rules",
        f"  graph   {_changes(summary)}"
        + (f", {summary.nodes_restored:,} restored" if summary.nodes_restored else ""),
        f"  time    {summary.seconds:.2f} s ({rate:,.0f} files/s)",
        *_skipped_files(summary),
        *_errors(summary),
    ]
    return "\n".join(lines) + "\n"


def format_cycle(cycle: int, summary: ScanSummary) -> str:
    """One line for a watch cycle that changed something."""
    stamp = time.strftime("%H:%M:%S")
    return (
        f"{stamp}  cycle {cycle}: {summary.ingested:,} ingested, {summary.removed:,} removed, "
        f"{summary.failed:,} failed ({_changes(summary)})\n"
    )


def format_watch(result: WatchSummary) -> str:
    """Multi-line summary of a watch session."""
    totals = result.totals
    how = "interrupted" if result.interrupted else "finished"
    lines = [
        f"watch {how} after {result.cycles:,} cycles ({result.seconds:.1f} s): {result.root}",
        f"  files   {result.files_watched:,} watched: {totals.ingested:,} ingested, "
        f"{totals.removed:,} removed, {_skipped(totals)}, {totals.failed:,} failed",
        f"  graph   {_changes(totals)}",
        *_errors(totals),
    ]
    return "\n".join(lines) + "\n"
