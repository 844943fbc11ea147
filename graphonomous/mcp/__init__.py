"""Graphonomous as an MCP server (Model Context Protocol, JSON-RPC 2.0).

Layers, each usable on its own:

* :mod:`.jsonrpc` — sans-I/O message parsing and encoding;
* :mod:`.server` — :class:`McpServer`, the protocol state machine (no I/O);
* :mod:`.tools` / :mod:`.resources` — tools and resources declared as data
  (tool sets: :mod:`.v1`, :mod:`.machines`, :mod:`.memory_compat`);
* :mod:`.docs` — the generated tool reference, docs/mcp-tools.md;
* :mod:`.stdio` / :mod:`.http` — thin transports.

:func:`serve` is the entry point behind ``graphonomous serve``.
"""

from __future__ import annotations

import importlib
import time
from typing import TYPE_CHECKING, Any, Final

from ..lazy_import import export_from
from .names import DEFAULT_PORT, DEFAULT_SURFACE, TRANSPORTS

if TYPE_CHECKING:
    from .server import McpServer

# Imported on first use (PEP 562), so the package itself stays light: the CLI
# reads `names` through it on every command, `recall` included.
_LAZY_EXPORTS: Final = {
    "McpServer": ".server",
    "SURFACES": ".surfaces",
    "encode": ".jsonrpc",
    "parse_message": ".jsonrpc",
}


def __getattr__(name: str) -> Any:
    return export_from(__name__, _LAZY_EXPORTS, globals(), name)


def build_server(
    graph: Any,
    surface: str = DEFAULT_SURFACE,
    *,
    check_output: bool = False,
    started_at: float | None = None,
) -> McpServer:
    """An McpServer over `graph` exposing the tools of `surface` (with that surface's
    instructions) and every resource."""
    from .resources import RESOURCE_TEMPLATES, RESOURCES
    from .server import McpServer
    from .surfaces import surface_instructions, surface_tools

    return McpServer(
        graph,
        surface_tools(surface),
        RESOURCES,
        RESOURCE_TEMPLATES,
        instructions=surface_instructions(surface),
        check_output=check_output,
        started_at=started_at,
    )


def serve(
    graph: Any,
    transport: str = "stdio",
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    surface: str = DEFAULT_SURFACE,
    *,
    idle_consolidation: bool = True,
) -> int:
    """Serve `graph` over MCP until EOF / SIGTERM; returns the exit status.

    stdio: one connection on stdin/stdout.  http: Streamable HTTP at
    ``http://host:port/mcp`` (one McpServer per session, one shared graph).
    While serving, a background `ConsolidationTimer` runs a consolidation
    cycle when the graph has been idle (seed 003: every 5 minutes, after 30 s
    without a tool call) unless `idle_consolidation` is False.
    Raises ValueError for an unknown transport or surface, or a non-loopback
    host without ``$GRAPHONOMOUS_HTTP_TOKEN``.
    """
    from ..learning.timer import ConsolidationTimer
    from .stdio import serve_stdio
    from .surfaces import surface_tools

    surface_tools(surface)  # fail before binding anything
    # A server answers queries: load the retrieval modules now (part of startup),
    # not inside the first retrieve (the facade loads them lazily for one-shot commands).
    importlib.import_module("graphonomous.retrieval.retriever")
    importlib.import_module("graphonomous.retrieval.lookups")
    if transport not in TRANSPORTS:
        raise ValueError(f"unknown transport {transport!r} (known: {', '.join(TRANSPORTS)})")
    if transport == "http":
        # Imported here: http.server pulls in email/ssl (~30 ms) that stdio never needs.
        from .http import make_http_server, serve_http

        started = time.monotonic()
        server = make_http_server(
            lambda: build_server(graph, surface, started_at=started), host, port
        )
    timer = ConsolidationTimer(graph.engine).start() if idle_consolidation else None
    try:
        if transport == "stdio":
            return serve_stdio(build_server(graph, surface))
        return serve_http(server)
    finally:
        if timer is not None:
            timer.stop()


__all__ = [
    "DEFAULT_PORT",
    "SURFACES",
    "TRANSPORTS",
    "McpServer",
    "build_server",
    "encode",
    "parse_message",
    "serve",
]
