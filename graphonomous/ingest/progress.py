"""A single self-updating progress line on a terminal (stdlib only).

Shown only when the stream is a TTY and the user did not ask for quiet
output; redrawn at most every `min_interval` seconds, so it costs nothing
measurable per file.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from typing import TextIO

from .options import ScanSummary


def format_duration(seconds: float) -> str:
    """ "42s", "3m05s", "1h02m"."""
    whole = int(seconds + 0.5)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def progress_text(done: int, total: int, summary: ScanSummary, elapsed: float) -> str:
    """The line's text: counts, rate and ETA.  Pure (tested directly)."""
    percent = 100 * done // total if total else 100
    rate = done / elapsed if elapsed > 0 else 0.0
    eta = format_duration((total - done) / rate) if rate > 0 and done < total else "-"
    return (
        f"scanning {done:,}/{total:,} files {percent}%  "
        f"ingested {summary.ingested:,}  unchanged {summary.unchanged:,}  "
        f"skipped {summary.skipped:,}  failed {summary.failed:,}  "
        f"{rate:,.0f} files/s  ETA {eta}"
    )


class ProgressLine:
    """Callable as `progress(done, total, summary)`; call `close()` when done."""

    def __init__(
        self,
        stream: TextIO,
        *,
        min_interval: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.min_interval = min_interval
        self.clock = clock
        self.started = clock()
        self.last_draw = float("-inf")
        self.drawn = False

    def __call__(self, done: int, total: int, summary: ScanSummary) -> None:
        now = self.clock()
        if now - self.last_draw < self.min_interval and done < total:
            return
        self.last_draw = now
        width = max(shutil.get_terminal_size((100, 20)).columns - 1, 20)
        text = progress_text(done, total, summary, now - self.started)[:width]
        # \r returns to the line start, ESC[K clears what the old text left.
        self.stream.write(f"\r{text}\x1b[K")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.drawn = False


def progress_for(stream: TextIO, quiet: bool) -> ProgressLine | None:
    """A ProgressLine when `stream` is an interactive terminal and not quiet, else None."""
    isatty = getattr(stream, "isatty", None)
    if quiet or isatty is None or not isatty():
        return None
    return ProgressLine(stream)
