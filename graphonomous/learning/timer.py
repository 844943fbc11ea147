"""The idle-time consolidation timer (seed 003: "Consolidator — GenServer + :timer").

`ConsolidationTimer(graph, interval_s=300, idle_s=30)` is a daemon thread
that, every `interval_s` seconds, runs one consolidation cycle as soon as the
graph has been idle for `idle_s` seconds (``graph.last_activity``, set by
``graph.touch()``).  It is polite to requests: it takes the facade lock only
with a short timeout and gives up (retrying at the next poll) when a request
holds it, re-checks idleness once it has the lock, and a request arriving
during a cycle simply waits for that cycle (one transaction, typically well
under a second).  `stop()` sets an event the thread waits on and joins it.
A failing cycle is logged and counted, never fatal to the thread.

Time is the graph's clock (`graph.clock`, graphonomous.clock): the interval
and the idle threshold are clock seconds, and the thread sleeps real seconds
(clock seconds / `clock.rate`), so a simulated clock at 600× runs a 5-minute
cadence every half second.  `tick()` is one poll step: a benchmark or a test
with a `ManualClock` advances the clock and calls it, deterministically,
with no thread at all.
"""

from __future__ import annotations

import logging
import math
import threading
from typing import TYPE_CHECKING, Any, Final

from ..model import check_non_negative
from .consolidation_config import ConsolidationConfig
from .consolidator import run_consolidation
from .forgetting import MEMORY_PRESSURE_RATIO

if TYPE_CHECKING:
    from ..retrieval.graph_view import GraphEngine

DEFAULT_INTERVAL_S: Final = 300.0  # seed 003 consolidation_interval: 5 minutes
DEFAULT_IDLE_S: Final = 30.0  # seed 003 idle_threshold: 30 seconds
# How long the timer waits for the facade lock before backing off.
LOCK_TIMEOUT_S: Final = 0.05
MAX_POLL_S: Final = 1.0
MIN_POLL_S: Final = 0.005
ERRORS_KEPT: Final = 20
# Ids named in the log line of an idle run that forgot something.
REPORTED_IDS: Final = 10
PRESSURE: Final = MEMORY_PRESSURE_RATIO

_log = logging.getLogger("graphonomous.consolidation")


class ConsolidationTimer:
    """Runs `run_consolidation(trigger="idle")` on an idle graph, periodically.

    Use ``timer.start()`` / ``timer.stop()`` or ``with ConsolidationTimer(g):``.
    Attributes readable at any time: ``runs`` (completed cycles), ``errors``
    (the last few failure messages), ``last_result`` (the last log entry).
    """

    def __init__(
        self,
        graph: GraphEngine,
        interval_s: float = DEFAULT_INTERVAL_S,
        idle_s: float = DEFAULT_IDLE_S,
        *,
        config: ConsolidationConfig | None = None,
    ) -> None:
        self.graph = graph
        self.interval_s = check_non_negative("interval_s", interval_s)
        self.idle_s = check_non_negative("idle_s", idle_s)
        self.config = config
        # Poll often enough to notice the due time and the idle moment promptly
        # (real seconds: clock seconds over the clock's rate).
        rate = graph.clock.rate if math.isfinite(graph.clock.rate) else 1.0
        wanted = min(interval_s / 4, idle_s / 4 or MAX_POLL_S) / rate
        self.poll_s = max(MIN_POLL_S, min(MAX_POLL_S, wanted))
        self._due = graph.clock.monotonic() + self.interval_s
        self.runs = 0
        self.errors: list[str] = []
        self.last_result: dict[str, Any] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> ConsolidationTimer:
        """Start the thread (once); returns self."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._loop, name="graphonomous-consolidation", daemon=True
            )
            self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the thread to finish and wait for it (at most `timeout` seconds)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def __enter__(self) -> ConsolidationTimer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _idle(self) -> bool:
        return self.graph.clock.monotonic() - self.graph.last_activity >= self.idle_s

    def _loop(self) -> None:
        while not self._stop.wait(self.poll_s):
            self.tick()

    def tick(self) -> bool:
        """One poll: run a cycle if one is due and the graph is idle.  Returns whether
        a cycle ran.  The thread calls it every `poll_s`; a simulation calls it after
        advancing a `ManualClock`."""
        if self.graph.clock.monotonic() < self._due or not self._idle():
            return False
        if not self.graph.lock.acquire(timeout=LOCK_TIMEOUT_S):
            return False  # a request is running: try again at the next poll
        try:
            if not self._idle() or self._stop.is_set():
                return False
            self._cycle()
            self._due = self.graph.clock.monotonic() + self.interval_s
            return True
        finally:
            self.graph.lock.release()

    def _cycle(self) -> None:
        try:
            self.last_result = run_consolidation(self.graph, trigger="idle", config=self.config)
            self.runs += 1
            _report(self.last_result)
        except Exception as exc:  # the timer must survive a failing cycle
            _log.exception("consolidation cycle failed")
            self.errors = [*self.errors, f"{type(exc).__name__}: {exc}"][-ERRORS_KEPT:]


def _report(entry: dict[str, Any]) -> None:
    """Log (WARNING: the server's stderr) what an idle run forgot, budget pressure, and
    the pending erase scrub it completed or could not complete."""
    scrub = entry["totals"].get("file_scrub")
    if scrub is not None:
        if scrub["status"] == "scrubbed":
            _log.warning("idle consolidation completed the pending erase scrub (file scrubbed)")
        else:
            _log.warning("erase scrub still pending after idle consolidation: %s", scrub["advice"])
    for stage in entry["stages"]:
        forgotten = stage.get("forgotten") if stage["name"] == "prune_nodes" else None
        if forgotten:
            _log.warning(
                "idle consolidation soft-forgot %d learned node(s) (%s, max_nodes %s; "
                "graphonomous restore ID brings one back): %s",
                len(forgotten),
                "faded by decay" if stage.get("policy") == "threshold" else "over budget",
                stage.get("max_nodes"),
                ", ".join(forgotten[:REPORTED_IDS])
                + (" …" if len(forgotten) > REPORTED_IDS else ""),
            )
        budget = stage.get("budget_nodes") if stage["name"] == "prune_nodes" else None
        limit = stage.get("max_nodes")
        if isinstance(budget, int) and isinstance(limit, int) and budget > PRESSURE * limit:
            _log.warning(
                "%d of %d budgeted nodes before this run (%.0f%%)",
                budget,
                limit,
                100.0 * budget / limit,
            )
