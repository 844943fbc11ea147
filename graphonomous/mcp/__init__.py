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
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from ..lazy_import import export_from
from .names import DEFAULT_PORT, DEFAULT_SURFACE, TRANSPORTS

if TYPE_CHECKING:
    from .access import Principal, Tenants
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
    authorize: Callable[[str, dict[str, Any]], str | None] | None = None,
) -> McpServer:
    """An McpServer over `graph` exposing the tools of `surface` (with that surface's
    instructions) and every resource; `authorize` as in McpServer."""
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
        authorize=authorize,
    )


def tenant_sessions(
    tenants: Tenants, surface: str, started_at: float
) -> Callable[[Principal, str], McpServer]:
    """The HTTP server's session factory over `tenants` (`access.Tenants`): a session of
    `principal` in `namespace` is served by that namespace's facade (read-only when the
    principal may only read), and each tool call needs its right (`access.required_right`);
    a tenant's chosen node ids are scoped to its namespace (`access.id_scope_refusal`)."""
    from .access import id_scope_refusal, required_right

    def new_session(principal: Principal, namespace: str) -> McpServer:
        def authorize(tool: str, arguments: dict[str, Any]) -> str | None:
            right = required_right(tool, arguments)
            if not principal.may(right):
                return principal.refusal(tool, right)
            return id_scope_refusal(tool, arguments, namespace) if principal.tenant else None

        facade = tenants.facade(namespace, principal.read_only)
        return build_server(facade, surface, started_at=started_at, authorize=authorize)

    return new_session


def serve(
    graph: Any,
    transport: str = "stdio",
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    surface: str = DEFAULT_SURFACE,
    *,
    idle_consolidation: bool = True,
    tokens_file: str | None = None,
) -> int:
    """Serve `graph` over MCP until EOF / SIGTERM; returns the exit status.

    stdio: one connection on stdin/stdout.  http: Streamable HTTP at
    ``http://host:port/mcp`` (one McpServer per session, one shared graph).
    While serving, a background `ConsolidationTimer` runs a consolidation
    cycle when the graph has been idle (seed 003: every 5 minutes, after 30 s
    without a tool call) unless `idle_consolidation` is False.
    Over HTTP, `tokens_file` (default ``$GRAPHONOMOUS_TOKENS_FILE``) maps tokens to
    namespaces and rights (`access.py`): each session is served by the facade of its
    namespace, read-only for a principal that may only read, and every tool call is
    checked against the right it needs.
    Raises ValueError for an unknown transport or surface, an unusable tokens file, or a
    non-loopback host without a token.
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
        from .access import Tenants, tokens_file_from_env
        from .http import make_http_server, serve_http

        started = time.monotonic()

        def idle_timer(opened: Any) -> None:
            if idle_consolidation:
                timers.append(ConsolidationTimer(opened.engine).start())

        tokens_file = tokens_file or tokens_file_from_env()
        if tokens_file is not None and graph.db_path == ":memory:":
            raise ValueError("a tokens file needs a database file, not :memory:")
        tenants = Tenants(graph, idle_timer)
        server = make_http_server(
            None,
            host,
            port,
            tokens_file=tokens_file,
            tenant_session=tenant_sessions(tenants, surface, started),
            served=graph.namespace,
        )
    else:
        tenants = None
    timers = [ConsolidationTimer(graph.engine).start()] if idle_consolidation else []
    try:
        if transport == "stdio":
            return serve_stdio(build_server(graph, surface))
        return serve_http(server)
    finally:
        for timer in timers:
            timer.stop()
        if tenants is not None:
            tenants.close()


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
