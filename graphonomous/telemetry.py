"""A tiny, thread-safe event-hook registry (the stdlib cousin of Erlang's :telemetry).

Code that wants to be observable calls :func:`emit` with an event name, a dict
of numeric *measurements* and a dict of descriptive *metadata*.  Anyone may
:func:`attach` a handler to an event name; handlers run synchronously in the
emitting thread.  A handler that raises is logged (``logging``, logger
``graphonomous.telemetry``) and otherwise ignored: observing must never break
the observed code.

The registry also keeps a few counters (events seen per name, routing
decisions per trigger) so operators and tests can read totals without
attaching a handler.  :func:`reset_counters` clears them.

Events emitted by graphonomous (SPEC.md, topology section):

* ``graphonomous.topology.analyze`` — measurements ``duration_ms``,
  ``node_count``, ``edge_count``; metadata ``scc_count``, ``max_kappa``,
  ``routing``.
* ``graphonomous.topology.route`` — no measurements; metadata ``decision``
  (``"fast"``/``"deliberate"``), ``max_kappa``, ``trigger``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import count
from typing import Any, Final

TOPOLOGY_ANALYZE: Final = "graphonomous.topology.analyze"
TOPOLOGY_ROUTE: Final = "graphonomous.topology.route"

Handler = Callable[[str, Mapping[str, Any], Mapping[str, Any]], None]
"""A handler receives ``(event, measurements, metadata)``; its return value is ignored."""

# `logging` is imported when a handler fails, not at import (≈ 7 ms a cold command
# spends for nothing, SPEC issue #20 figures).
LOGGER_NAME: Final = "graphonomous.telemetry"


@dataclass(frozen=True)
class Handle:
    """What :func:`attach` returns; pass it to :func:`detach`."""

    event: str
    ident: int


_lock = threading.Lock()
_next_ident = count(1)
# event name -> {handle ident -> handler}; dicts keep attach order.
_handlers: dict[str, dict[int, Handler]] = {}
_event_counts: dict[str, int] = {}
# trigger -> decision -> count, fed by TOPOLOGY_ROUTE events.
_route_counts: dict[str, dict[str, int]] = {}


def attach(event: str, handler: Handler) -> Handle:
    """Register `handler` for `event`; returns a handle for :func:`detach`.

    Handlers for one event run in attach order.  O(1).
    """
    with _lock:
        ident = next(_next_ident)
        _handlers.setdefault(event, {})[ident] = handler
    return Handle(event, ident)


def detach(handle: Handle) -> bool:
    """Unregister a handler.  Returns False if it was not (or no longer) attached.  O(1)."""
    with _lock:
        handlers = _handlers.get(handle.event)
        if handlers is None or handle.ident not in handlers:
            return False
        del handlers[handle.ident]
        if not handlers:
            del _handlers[handle.event]
        return True


def emit(event: str, measurements: Mapping[str, Any], metadata: Mapping[str, Any]) -> None:
    """Count the event and call every handler attached to `event`.

    A handler that raises is logged at ERROR level with its traceback; the
    remaining handlers still run and the exception never reaches the caller.
    O(number of handlers).
    """
    with _lock:
        _event_counts[event] = _event_counts.get(event, 0) + 1
        if event == TOPOLOGY_ROUTE:
            trigger = str(metadata.get("trigger", ""))
            decision = str(metadata.get("decision", ""))
            per_trigger = _route_counts.setdefault(trigger, {})
            per_trigger[decision] = per_trigger.get(decision, 0) + 1
        # Snapshot so handlers may attach/detach (even themselves) while running.
        handlers = list(_handlers.get(event, {}).values())
    for handler in handlers:
        try:
            handler(event, measurements, metadata)
        except Exception:
            import logging

            logging.getLogger(LOGGER_NAME).exception(
                "telemetry handler %r failed on %s", handler, event
            )


def counters() -> dict[str, Any]:
    """A copy of the counters.

    Shape: ``{"events": {event: n}, "routing": {trigger: {"fast": n, "deliberate": n}}}``.
    """
    with _lock:
        return {
            "events": dict(_event_counts),
            "routing": {trigger: dict(c) for trigger, c in _route_counts.items()},
        }


def reset_counters() -> None:
    """Zero all counters (handlers stay attached)."""
    with _lock:
        _event_counts.clear()
        _route_counts.clear()
