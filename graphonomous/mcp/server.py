"""The MCP server as a pure state machine: messages in, messages out, no I/O.

:class:`McpServer` holds the state of one MCP connection (stdio) or session
(HTTP): whether ``initialize`` happened, the negotiated protocol version and
the requests in flight.  Transports parse bytes with
:func:`jsonrpc.parse_message`, call :meth:`McpServer.handle` and write what it
returns with :func:`jsonrpc.encode`.

Methods served: ``initialize``, ``ping``, ``tools/list``, ``tools/call``,
``resources/list``, ``resources/templates/list``, ``resources/read``.  Every
other method (``prompts/*``, ``logging/setLevel``, ``server/discover`` …) is
-32601 at once — clients probe with unknown methods and fall back on any
error.  Notifications are never answered; ``notifications/cancelled`` drops
the response of a request still in flight (possible when a transport runs
requests concurrently, as the HTTP one does).

Tool failures follow MCP: protocol mistakes (unknown tool, missing name,
arguments not an object) are JSON-RPC -32602; everything that goes wrong
*inside* a tool — arguments that break the input schema, ValidationError,
NotFoundError, StoreError, unexpected exceptions — is a result with
``isError: true`` and a text that names the problem, and the server keeps
serving.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

from .. import __version__
from ..contract.schema import Violation
from ..model import NotFoundError, ValidationError
from ..store import StoreError
from ..store.damage import damage_message, full_message, is_damage, is_full
from .jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
    EncodedMember,
    ErrorEvent,
    Id,
    Message,
    Notification,
    Outgoing,
    Request,
    Response,
    dumps_compact,
    error_response,
    is_valid_id,
    parse_message,
)
from .resources import ResourceContext, ResourceNotFound, ResourceSpec, ResourceTemplate
from .tools import ToolSpec

SUPPORTED_PROTOCOL_VERSIONS: Final = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_PROTOCOL_VERSION: Final = SUPPORTED_PROTOCOL_VERSIONS[0]
SERVER_NAME: Final = "graphonomous"
SERVER_TITLE: Final = "Graphonomous"
DEFAULT_PAGE_SIZE: Final = 100
# Longest exception text repeated to the client for an unexpected tool failure.
MAX_ERROR_TEXT: Final = 300

log = logging.getLogger("graphonomous.mcp")


# JSON-RPC error for a damaged database file (server-defined range): a stable message
# naming the file, `graphonomous doctor` and the backup, never "internal error".
DATABASE_DAMAGED: Final = -32010


class RpcFailure(Exception):
    """Raised inside a method handler to answer with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def negotiate_version(requested: object) -> str:
    """The client's protocol version if we support it, else our latest (never an error)."""
    if isinstance(requested, str) and requested in SUPPORTED_PROTOCOL_VERSIONS:
        return requested
    return LATEST_PROTOCOL_VERSION


# --------------------------------------------------------------------------
# Pagination with opaque cursors
# --------------------------------------------------------------------------


def _fingerprint(names: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(names).encode("utf-8")).hexdigest()[:12]


def encode_cursor(kind: str, offset: int, names: Sequence[str]) -> str:
    """An opaque cursor: where the next page of `kind` starts, tied to the listed names."""
    raw = f"{kind}:{offset}:{_fingerprint(names)}".encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(cursor: object, kind: str, names: Sequence[str]) -> int:
    """The offset a cursor from :func:`encode_cursor` points at.

    Raises RpcFailure(-32602) for anything else: not a string, not ours, for
    another list, or made for a list that has changed since.
    """
    if not isinstance(cursor, str) or len(cursor) > 200:
        raise RpcFailure(INVALID_PARAMS, "Invalid cursor")
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        text = base64.urlsafe_b64decode(padded.encode("ascii")).decode("ascii")
        cursor_kind, offset_text, fingerprint = text.split(":")
        offset = int(offset_text)
    except (ValueError, UnicodeError, binascii.Error):
        raise RpcFailure(INVALID_PARAMS, "Invalid cursor") from None
    if cursor_kind != kind or fingerprint != _fingerprint(names) or not 0 < offset < len(names):
        raise RpcFailure(INVALID_PARAMS, "Invalid cursor")
    return offset


def paginate(
    items: Sequence[dict[str, Any]], key: str, params: dict[str, Any], page_size: int
) -> dict[str, Any]:
    """``{key: page, nextCursor?}`` for a list request with an optional ``cursor``."""
    names = [str(item.get("name", item.get("uri", ""))) for item in items]
    offset = 0 if params.get("cursor") is None else decode_cursor(params["cursor"], key, names)
    out: dict[str, Any] = {key: list(items[offset : offset + page_size])}
    if offset + page_size < len(items):
        out["nextCursor"] = encode_cursor(key, offset + page_size, names)
    return out


# --------------------------------------------------------------------------
# Tool results
# --------------------------------------------------------------------------


def tool_error(text: str) -> dict[str, Any]:
    """A ``tools/call`` result reporting a failure inside the tool."""
    return {"content": [{"type": "text", "text": text}], "isError": True}


def tool_result(result: dict[str, Any], text: str | None = None) -> dict[str, Any]:
    """A successful ``tools/call`` result: the text (by default the result's compact
    JSON, for older clients) and ``structuredContent`` (validated by clients against
    the outputSchema).  With the default text the result is encoded once: the reply
    writes that text as its ``structuredContent`` (`EncodedMember`, same bytes)."""
    if text is None:
        text = dumps_compact(result)
        content = {"content": [{"type": "text", "text": text}], "structuredContent": result}
        return EncodedMember(content, "structuredContent", text)
    return {"content": [{"type": "text", "text": text}], "structuredContent": result}


def _field_of(path: str) -> str:
    """``$.a.b[0]`` → ``a.b[0]``: the argument a violation is about."""
    return path[2:] if path.startswith("$.") else path.lstrip("$") or "arguments"


def describe_violations(name: str, violations: Sequence[Violation]) -> str:
    """The isError text for arguments that break a tool's schema (at most 20 lines)."""
    lines = [f"Invalid arguments for tool {name}:"]
    lines += [f"- {_field_of(v.path)}: {v.message}" for v in violations[:20]]
    if len(violations) > 20:
        lines.append(f"- … and {len(violations) - 20} more")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------

MethodHandler = Callable[[Request, dict[str, Any]], dict[str, Any]]


class McpServer:
    """One MCP connection's protocol state over a shared graph and tool registry.

    Thread-safe: a transport may call :meth:`handle` from several threads
    (the graph serialises its own writes).  `authorize(tool, arguments)` (the HTTP
    servers' access control) runs after validation; a text it returns is the isError
    result and the tool does not run.  Build one per stdio connection or
    per HTTP session; `started_at` (``time.monotonic()``) lets several
    sessions report the same uptime.
    """

    def __init__(
        self,
        graph: Any,
        tools: Sequence[ToolSpec],
        resources: Sequence[ResourceSpec] = (),
        templates: Sequence[ResourceTemplate] = (),
        *,
        name: str = SERVER_NAME,
        version: str = __version__,
        instructions: str | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
        check_output: bool = False,
        started_at: float | None = None,
        authorize: Callable[[str, dict[str, Any]], str | None] | None = None,
    ) -> None:
        names = [spec.name for spec in tools]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate tool names in {names}")
        if page_size < 1:
            raise ValueError("page_size must be >= 1")
        self.graph = graph
        self.name = name
        self.version = version
        self.instructions = instructions
        self.page_size = page_size
        self.check_output = check_output
        # (tool, validated arguments) -> None (allowed) or the refusal text (isError).
        self.authorize = authorize
        self._tools = {spec.name: spec for spec in tools}
        self._tool_list = [spec.to_mcp() for spec in tools]
        self._resources = {spec.uri: spec for spec in resources}
        self._resource_list = [spec.to_mcp() for spec in resources]
        self._templates = tuple(templates)
        self._template_list = [t.to_mcp() for t in templates]
        self._context = ResourceContext(
            graph, name, version, time.monotonic() if started_at is None else started_at
        )
        self._lock = threading.Lock()
        self._in_flight: set[Id] = set()
        self._cancelled: set[Id] = set()
        self.initialized = False
        self.protocol_version: str | None = None
        self.client_info: Any = None
        self._methods: dict[str, MethodHandler] = {
            "initialize": self._initialize,
            "ping": self._ping,
            "tools/list": self._list_tools,
            "tools/call": self._call_tool,
        }
        if resources or templates:
            self._methods["resources/list"] = self._list_resources
            self._methods["resources/templates/list"] = self._list_templates
            self._methods["resources/read"] = self._read_resource

    # -- entry points ---------------------------------------------------------

    def receive(self, data: bytes | str) -> list[Outgoing]:
        """Parse one wire message and handle it."""
        return self.handle(parse_message(data))

    def handle(self, message: Message) -> list[Outgoing]:
        """The messages to send in reply to one incoming message (often one, maybe none).

        Input: a parsed message (:func:`jsonrpc.parse_message`).  Output: a
        Response for a request (preceded by a progress notification when asked),
        the error reply for an ErrorEvent that must be answered, else nothing.
        Never raises for bad input: protocol errors become JSON-RPC error
        responses, tool failures become isError results.  Complexity: that of
        the method served.  Reference: MCP 2025-11-25 (basic protocol,
        lifecycle, server/tools, server/resources).
        """
        if isinstance(message, Request):
            return self._handle_request(message)
        if isinstance(message, Notification):
            self._handle_notification(message)
            return []
        if isinstance(message, ErrorEvent):
            if not message.answer:
                log.debug("dropped a malformed notification: %s", message.error.message)
                return []
            return [message.reply()]
        return []  # a response from the client: we never send requests

    @property
    def capabilities(self) -> dict[str, Any]:
        """What ``initialize`` advertises: only what is implemented."""
        caps: dict[str, Any] = {"tools": {"listChanged": False}}
        if "resources/read" in self._methods:
            caps["resources"] = {"subscribe": False, "listChanged": False}
        return caps

    # -- requests ---------------------------------------------------------------

    def _handle_request(self, request: Request) -> list[Outgoing]:
        handler = self._methods.get(request.method)
        if handler is None:
            return [
                error_response(request.id, METHOD_NOT_FOUND, f"Method not found: {request.method}")
            ]
        params = request.params
        if params is None:
            params = {}
        elif not isinstance(params, dict):
            return [error_response(request.id, INVALID_PARAMS, "params must be an object")]
        with self._lock:
            self._in_flight.add(request.id)
        try:
            outgoing = [*self._progress(params), Response(request.id, handler(request, params))]
        except RpcFailure as failure:
            outgoing = [error_response(request.id, failure.code, failure.message, failure.data)]
        except sqlite3.DatabaseError as exc:
            if not is_damage(exc):
                raise
            damaged = self._damaged(exc)
            outgoing = [error_response(request.id, damaged.code, damaged.message, damaged.data)]
        except Exception as exc:  # a bug in a method handler must not stop the server
            log.exception("internal error in %s", request.method)
            outgoing = [
                error_response(request.id, INTERNAL_ERROR, f"Internal error: {exc!r}"[:200])
            ]
        with self._lock:
            self._in_flight.discard(request.id)
            if request.id in self._cancelled:
                self._cancelled.discard(request.id)
                return []
        return outgoing

    def _progress(self, params: dict[str, Any]) -> list[Outgoing]:
        """A final progress notification when the client asked for progress."""
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if not is_valid_id(token):
            return []
        return [
            Notification(
                "notifications/progress", {"progressToken": token, "progress": 1, "total": 1}
            )
        ]

    def _initialize(self, _request: Request, params: dict[str, Any]) -> dict[str, Any]:
        version = negotiate_version(params.get("protocolVersion"))
        with self._lock:
            self.protocol_version = version
            self.client_info = params.get("clientInfo")
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": self.capabilities,
            "serverInfo": {"name": self.name, "title": SERVER_TITLE, "version": self.version},
        }
        if self.instructions:
            result["instructions"] = self.instructions
        return result

    def _ping(self, _request: Request, _params: dict[str, Any]) -> dict[str, Any]:
        return {}

    def _list_tools(self, _request: Request, params: dict[str, Any]) -> dict[str, Any]:
        return paginate(self._tool_list, "tools", params, self.page_size)

    def _list_resources(self, _request: Request, params: dict[str, Any]) -> dict[str, Any]:
        return paginate(self._resource_list, "resources", params, self.page_size)

    def _list_templates(self, _request: Request, params: dict[str, Any]) -> dict[str, Any]:
        return paginate(self._template_list, "resourceTemplates", params, self.page_size)

    def _call_tool(self, _request: Request, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise RpcFailure(INVALID_PARAMS, "tools/call needs params.name (a string)")
        spec = self._tools.get(name)
        if spec is None:
            raise RpcFailure(INVALID_PARAMS, f"Unknown tool: {name}")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise RpcFailure(INVALID_PARAMS, "tools/call arguments must be an object")
        if spec.prepare is not None:
            try:
                arguments = spec.prepare(arguments)
            except ValidationError as exc:
                return tool_error(f"Invalid argument '{exc.field}': {exc.message}")
        violations = spec.check_arguments(arguments)
        if violations:
            text = None
            if spec.violation_text is not None:
                text = spec.violation_text(spec, arguments, violations)
            return tool_error(text or describe_violations(name, violations))
        refusal = None if self.authorize is None else self.authorize(name, arguments)
        if refusal is not None:
            return tool_error(refusal)
        return self._run_tool(spec, arguments)

    def _run_tool(self, spec: ToolSpec, arguments: dict[str, Any]) -> dict[str, Any]:
        touch = getattr(self.graph, "touch", None)
        if touch is not None:
            touch()  # the idle consolidation timer waits for quiet
        try:
            result = spec.handler(self.graph, arguments)
            if not isinstance(result, dict):
                raise TypeError(f"tool returned {type(result).__name__}, not an object")
            content = tool_result(
                result, None if spec.render_text is None else spec.render_text(result)
            )
            meta = None if spec.meta is None else spec.meta(self.graph, result)
            if meta:
                content["_meta"] = meta
        except ValidationError as exc:
            text = None if spec.error_text is None else spec.error_text(exc)
            return tool_error(text or f"Invalid argument '{exc.field}': {exc.message}")
        except NotFoundError as exc:
            return tool_error(f"Not found: {exc}")
        except StoreError as exc:
            log.error("storage error in tool %s: %s", spec.name, exc)
            return tool_error(f"Storage error: {exc}")
        except sqlite3.DatabaseError as exc:
            if is_damage(exc):
                raise self._damaged(exc) from None
            if is_full(exc):
                log.error("tool %s: %s", spec.name, exc)
                return tool_error(full_message(None))
            log.exception("tool %s failed", spec.name)
            return tool_error(f"Database error in tool {spec.name}: {exc}; see the server log.")
        except Exception as exc:
            log.exception("tool %s failed", spec.name)
            detail = f"{type(exc).__name__}: {exc}"[:MAX_ERROR_TEXT]
            return tool_error(f"Internal error in tool {spec.name} ({detail}); see the server log.")
        if self.check_output:
            problems = spec.check_output(result)
            if problems:
                log.error("tool %s broke its outputSchema: %s", spec.name, problems)
                return tool_error(describe_violations(f"{spec.name} (output)", problems))
        return content

    def _damaged(self, exc: sqlite3.DatabaseError) -> RpcFailure:
        """The JSON-RPC error for a damaged file (logged once per occurrence)."""
        store = getattr(self.graph, "store", None)
        path = getattr(store, "path", None)
        message = damage_message(path if isinstance(path, str) else None, str(exc))
        log.error("%s", message)
        data = {"problem": str(exc), "path": path, "fix": "graphonomous doctor"}
        return RpcFailure(DATABASE_DAMAGED, message, data)

    def _read_resource(self, _request: Request, params: dict[str, Any]) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise RpcFailure(INVALID_PARAMS, "resources/read needs params.uri (a string)")
        try:
            spec = self._resources.get(uri)
            if spec is not None:
                value, mime = spec.reader(self._context), spec.mime_type
            else:
                value, mime = self._read_template(uri)
        except (ResourceNotFound, NotFoundError) as exc:
            raise RpcFailure(
                RESOURCE_NOT_FOUND, f"Resource not found: {exc}", {"uri": uri}
            ) from None
        # A str is the finished text; anything else is sent as JSON.
        text = (
            value
            if isinstance(value, str)
            else json.dumps(value, ensure_ascii=False, allow_nan=False)
        )
        return {"contents": [{"uri": uri, "mimeType": mime, "text": text}]}

    def _read_template(self, uri: str) -> tuple[Any, str]:
        for template in self._templates:
            variables = template.match(uri)
            if variables is not None:
                return template.reader(self._context, variables), template.mime_type
        raise ResourceNotFound(uri)

    # -- notifications ----------------------------------------------------------

    def _handle_notification(self, note: Notification) -> None:
        params = note.params if isinstance(note.params, dict) else {}
        if note.method == "notifications/initialized":
            with self._lock:
                self.initialized = True
        elif note.method == "notifications/cancelled":
            request_id = params.get("requestId")
            with self._lock:
                # Only requests still running can be dropped; the rest is ignored.
                if is_valid_id(request_id) and request_id in self._in_flight:
                    self._cancelled.add(request_id)
