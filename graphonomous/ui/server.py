"""`graphonomous ui`: the κ canvas served on 127.0.0.1 by the standard library.

Rules of this file:

* Binds 127.0.0.1 only.  Host and Origin are checked, and on /api/* the bearer token
  (the tokens file of ``--tokens`` / ``GRAPHONOMOUS_TOKENS_FILE``, or the single
  ``GRAPHONOMOUS_HTTP_TOKEN``), by the same code as the MCP HTTP transport
  (``mcp.http.admission`` and ``mcp.access`` — imported, not copied): an API call acts
  for the token's principal in the namespace it names (``?project=`` or the
  ``Graphonomous-Project`` header; default the principal's first), one it may not act
  in answers 404 like any project that holds nothing, a principal that may only read
  is served read-only (no bookkeeping writes) and a write route needs the ``write``
  right.  Static files are public package data, so they need no token; the
  page reads the token from its URL fragment (``#token=…``, never sent to a
  server) and sends it as ``Authorization: Bearer``.
* Static files are exactly the files of ``graphonomous/ui/static`` (HTML, CSS,
  ES modules; no CDN, no build step); ``/relationships.json`` is exported from
  ``graphonomous.model`` at serve time.  Strict CSP: everything from 'self'.
* The JSON API (views.py) is read-only unless the server was started with
  ``allow_writes``; a write otherwise gets 403 ``read_only``.  POST bodies must
  be ``application/json`` (so another origin cannot post without a CORS
  preflight, which is never granted).  Errors are JSON
  ``{"error": {"code", "message", "field"?}}``, never a traceback; a body is parsed by
  ``hygiene.loads_strict`` (a body nested too deeply is a 400 naming that, not a crash).
* Connections obey ``mcp.http_base`` like the MCP transport's: TCP_NODELAY and one write
  per response, a head deadline and a request deadline, at most `MAX_CONNECTIONS` open
  (each holds a thread), slow and idle ones closed first to make room for a newcomer.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
import webbrowser
from collections.abc import Callable
from http import HTTPStatus
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qs, urlsplit

from ..hygiene import HostileInput, loads_strict
from ..mcp.access import WRITE, AccessPolicy, Principal, Tenants, build_policy
from ..mcp.access import tokens_file_from_env as tokens_file_from_env
from ..mcp.http import (
    LOOPBACK_NAMES,
    MAX_BODY_BYTES,
    READ_DEADLINE_S,
    admission,
    host_refusal,
    project_not_found,
    requested_project,
)
from ..mcp.http_base import HEAD_DEADLINE_S, BoundedHTTPServer, BoundedRequestHandler
from ..model import HTTP_TOKEN_ENV_VAR, GraphonomousError, NotFoundError, ValidationError
from ..store import BatchError, StoreError
from ..store.sqlite import ACTING_PRINCIPAL
from . import views
from .names import DEFAULT_UI_PORT
from .relationships import STATIC_DIR, relationship_table

if TYPE_CHECKING:
    from ..api import Graphonomous

UI_HOST: Final = "127.0.0.1"
INDEX_FILE: Final = "index.html"
CONTENT_TYPES: Final = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
}
SECURITY_HEADERS: Final = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
REQUEST_TIMEOUT_S: Final = 60.0
# Open connections (each holds a thread).  A browser opens at most 6 per host; 64 serves
# several tabs and scripts, and a flood of idle sockets costs at most 64 threads.
MAX_CONNECTIONS: Final = 64
# Slots that connections which never sent a complete request cannot take.
RESERVED_CONNECTIONS: Final = 8

log = logging.getLogger("graphonomous.ui")

Query = dict[str, str]
Body = dict[str, Any]


class ApiError(GraphonomousError):
    """A refused API call: HTTP status, a stable code and a message (and the field)."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.field = field


def _static_files() -> dict[str, Path]:
    """URL path → file for every shipped static file (the only files ever served)."""
    files = {
        f"/{p.name}": p
        for p in sorted(STATIC_DIR.iterdir())
        if p.is_file() and p.suffix in CONTENT_TYPES
    }
    files["/"] = STATIC_DIR / INDEX_FILE
    return files


def _int_arg(query: Query, name: str, default: int) -> int:
    text = query.get(name)
    if text is None:
        return default
    try:
        return int(text)
    except ValueError:
        raise ValidationError(name, f"must be an integer; got {text!r}") from None


def _str_arg(query: Query, name: str) -> str:
    value = query.get(name)
    if value is None:
        raise ValidationError(name, "is required")
    return value


class CanvasServer(BoundedHTTPServer):
    """The canvas server: one graph shared by every request (its lock serialises writes).

    Every client is local, so the connection bound is one for all (no per-client share).
    """

    def __init__(
        self,
        address: tuple[str, int],
        graph: Graphonomous,
        *,
        allow_writes: bool = False,
        token: str | None = None,
        policy: AccessPolicy | None = None,
        tenants: Tenants | None = None,
        head_deadline_s: float = HEAD_DEADLINE_S,
        read_deadline_s: float = READ_DEADLINE_S,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self.graph = graph
        self.allow_writes = allow_writes
        self.token = token
        self.policy = policy if policy is not None else build_policy(graph.namespace, token)
        self.tenants = tenants if tenants is not None else Tenants(graph)
        self.allowed_hosts = frozenset(LOOPBACK_NAMES)
        self.static_files = _static_files()
        super().__init__(
            address,
            CanvasRequestHandler,
            head_deadline_s=head_deadline_s,
            read_deadline_s=read_deadline_s,
            max_connections=max_connections,
            max_connections_per_client=max_connections,
            reserved_connections=min(RESERVED_CONNECTIONS, max_connections - 1),
        )

    def busy_body(self) -> bytes:
        error = {"code": "busy", "message": "server busy: too many connections"}
        return json.dumps({"error": error}).encode("utf-8")

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        text = host.decode() if isinstance(host, bytes) else str(host)
        return f"http://{text}:{port}/"


class CanvasRequestHandler(BoundedRequestHandler):
    """One HTTP exchange: a static file or one JSON API call."""

    server_version = "graphonomous-ui"
    timeout = REQUEST_TIMEOUT_S
    server: CanvasServer

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s - %s", self.address_string(), format % args)

    # -- replies ----------------------------------------------------------------

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in SECURITY_HEADERS.items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _send_json(self, status: int, payload: Any) -> None:
        text = json.dumps(payload, ensure_ascii=False, allow_nan=False)
        self._send(status, text.encode("utf-8"), CONTENT_TYPES[".json"])

    def _send_error_json(self, error: ApiError) -> None:
        detail: dict[str, Any] = {"code": error.code, "message": str(error)}
        if error.field is not None:
            detail["field"] = error.field
        self._send_json(error.status, {"error": detail})

    def _admitted(self, api: bool) -> Principal | bool:
        """The Host/Origin checks, and on the API the token: the principal (API), True
        (a static file), or False once the refusal is sent."""
        admitted: Principal | bool | tuple[int, str, dict[str, str]]
        if api:
            admitted = admission(self.headers, self.server.allowed_hosts, self.server.policy)
        else:
            admitted = host_refusal(self.headers, self.server.allowed_hosts) or True
        if isinstance(admitted, (Principal, bool)):
            return admitted
        status, message, _ = admitted
        self.close_connection = True
        self._send_error_json(ApiError(status, "forbidden", message))
        return False

    # -- methods ----------------------------------------------------------------

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        api = path.startswith("/api/")
        admitted = self._admitted(api)
        if admitted is False:
            return
        if isinstance(admitted, Principal):
            self._api("GET", path, admitted)
        elif path == "/relationships.json":
            self._send_json(HTTPStatus.OK, relationship_table())
        else:
            self._static(path)

    do_HEAD = do_GET

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        admitted = self._admitted(True)
        if isinstance(admitted, Principal):
            self._api("POST", path, admitted)

    def _not_allowed(self) -> None:
        if self._admitted(False) is False:
            return
        self.close_connection = True
        self._send_error_json(
            ApiError(HTTPStatus.METHOD_NOT_ALLOWED, "method_not_allowed", "use GET or POST")
        )

    do_PUT = _not_allowed
    do_DELETE = _not_allowed
    do_PATCH = _not_allowed
    do_OPTIONS = _not_allowed

    def _static(self, path: str) -> None:
        file = self.server.static_files.get(path)
        if file is None:
            self._send_error_json(ApiError(HTTPStatus.NOT_FOUND, "not_found", f"no file {path}"))
            return
        self._send(HTTPStatus.OK, file.read_bytes(), CONTENT_TYPES[file.suffix])

    # -- the JSON API -------------------------------------------------------------

    def _graph(self, principal: Principal) -> Graphonomous:
        """The facade of the namespace this call names, as `principal` may use it."""
        named = requested_project(self.headers, self.path)
        namespace = named or principal.default_namespace(self.server.policy.served)
        if not principal.serves(namespace):
            raise ApiError(HTTPStatus.NOT_FOUND, "not_found", project_not_found(namespace))
        return self.server.tenants.facade(namespace, principal.read_only)

    def _api(self, method: str, path: str, principal: Principal) -> None:
        acting = ACTING_PRINCIPAL.set(principal.name)  # audit entries name it
        try:
            self._api_call(method, path, principal)
        finally:
            ACTING_PRINCIPAL.reset(acting)

    def _api_call(self, method: str, path: str, principal: Principal) -> None:
        try:
            route = ROUTES.get((method, path))
            if route is None:
                known = ", ".join(f"{m} {p}" for m, p in ROUTES)
                raise ApiError(
                    HTTPStatus.NOT_FOUND,
                    "not_found",
                    f"no endpoint {method} {path}; known: {known}",
                )
            handler, writes = route
            if writes and not self.server.allow_writes:
                raise ApiError(
                    HTTPStatus.FORBIDDEN,
                    "read_only",
                    "the canvas is read-only: start `graphonomous ui --allow-writes` "
                    "to change the graph",
                )
            graph = self._graph(principal)
            if writes and not principal.may(WRITE):
                raise ApiError(
                    HTTPStatus.FORBIDDEN, "forbidden", principal.refusal(f"{method} {path}", WRITE)
                )
            query = {k: v[-1] for k, v in parse_qs(urlsplit(self.path).query).items()}
            body = self._json_body() if method == "POST" else {}
            result = handler(self.server, graph, query, body)
        except ApiError as exc:
            self._send_error_json(exc)
        except ValidationError as exc:
            self._send_error_json(
                ApiError(HTTPStatus.BAD_REQUEST, "invalid", exc.message, exc.field)
            )
        except NotFoundError as exc:
            self._send_error_json(ApiError(HTTPStatus.NOT_FOUND, "not_found", str(exc)))
        except BatchError as exc:
            self._send_error_json(ApiError(HTTPStatus.BAD_REQUEST, "batch_failed", str(exc)))
        except StoreError as exc:
            self._send_error_json(ApiError(HTTPStatus.INTERNAL_SERVER_ERROR, "store", str(exc)))
        else:
            self._send_json(HTTPStatus.OK, result)

    def _json_body(self) -> Body:
        content_type = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if content_type != "application/json":
            self.close_connection = True
            raise ApiError(
                HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                "bad_body",
                "POST bodies must be application/json",
            )
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self.close_connection = True
            raise ApiError(
                HTTPStatus.LENGTH_REQUIRED, "bad_body", "Content-Length is required"
            ) from None
        if length < 0 or length > MAX_BODY_BYTES:
            self.close_connection = True
            raise ApiError(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "bad_body", f"body over {MAX_BODY_BYTES} bytes"
            )
        raw = self.read_body(length)
        if raw is None:  # closed for a newcomer: nothing is sent
            raise ApiError(HTTPStatus.SERVICE_UNAVAILABLE, "busy", "connection closed")
        try:
            value = loads_strict(raw.decode("utf-8"), "body")
        except UnicodeDecodeError as exc:
            raise ApiError(
                HTTPStatus.BAD_REQUEST, "bad_body", f"body is not UTF-8: {exc}"
            ) from None
        except HostileInput as exc:
            raise ApiError(HTTPStatus.BAD_REQUEST, "bad_body", str(exc)) from None
        if not isinstance(value, dict):
            raise ApiError(HTTPStatus.BAD_REQUEST, "bad_body", "body must be a JSON object")
        return value


# -- routes: (method, path) → (handler, writes?) ----------------------------------

Handler = Callable[[CanvasServer, "Graphonomous", Query, Body], Any]


def _config(server: CanvasServer, graph: Graphonomous, query: Query, body: Body) -> Any:
    from .. import __version__

    return {
        "version": __version__,
        "allow_writes": server.allow_writes,
        "token_required": server.policy.requires_token,
        "max_view_nodes": views.MAX_VIEW_NODES,
        "db_path": graph.db_path,
        "project": graph.namespace,
    }


ROUTES: Final[dict[tuple[str, str], tuple[Handler, bool]]] = {
    ("GET", "/api/config"): (_config, False),
    ("GET", "/api/graph"): (
        lambda s, g, q, b: views.graph_view(g, _int_arg(q, "limit", views.MAX_VIEW_NODES)),
        False,
    ),
    ("GET", "/api/search"): (
        lambda s, g, q, b: views.search_view(
            g, _str_arg(q, "q"), _int_arg(q, "limit", views.DEFAULT_SEARCH_LIMIT)
        ),
        False,
    ),
    ("GET", "/api/node"): (lambda s, g, q, b: views.node_view(g, _str_arg(q, "id")), False),
    ("GET", "/api/expand"): (
        lambda s, g, q, b: views.expand_view(
            g, _str_arg(q, "id"), _int_arg(q, "depth", views.DEFAULT_EXPAND_DEPTH)
        ),
        False,
    ),
    ("GET", "/api/stats"): (lambda s, g, q, b: views.stats_view(g), False),
    ("GET", "/api/overview"): (
        lambda s, g, q, b: views.overview_view(
            g, _int_arg(q, "depth", views.DEFAULT_OVERVIEW_DEPTH)
        ),
        False,
    ),
    ("POST", "/api/topology"): (lambda s, g, q, b: views.topology_view(b), False),
    ("POST", "/api/edges"): (lambda s, g, q, b: views.add_edge(g, b), True),
    ("POST", "/api/edges/delete"): (lambda s, g, q, b: views.delete_edges(g, b), True),
    ("POST", "/api/consolidation"): (lambda s, g, q, b: views.run_consolidation(g), True),
}


def make_ui_server(
    graph: Graphonomous,
    port: int = DEFAULT_UI_PORT,
    *,
    allow_writes: bool = False,
    token: str | None = None,
    tokens_file: str | None = None,
) -> CanvasServer:
    """Bind the canvas on 127.0.0.1:`port` (0 picks a free port).

    `token` defaults to ``$GRAPHONOMOUS_HTTP_TOKEN`` (empty means none), `tokens_file`
    to ``$GRAPHONOMOUS_TOKENS_FILE`` (mcp/access.py).  Raises OSError when the port is
    taken, ValueError for an unusable tokens file.
    """
    if token is None:
        token = os.environ.get(HTTP_TOKEN_ENV_VAR) or None
    if tokens_file is None:
        tokens_file = tokens_file_from_env()
    policy = build_policy(graph.namespace, token, tokens_file)
    return CanvasServer(
        (UI_HOST, port), graph, allow_writes=allow_writes, token=token, policy=policy
    )


class _Terminated(BaseException):
    pass


def _on_sigterm(_signum: int, _frame: FrameType | None) -> None:
    raise _Terminated


def serve_ui(server: CanvasServer, *, open_browser: bool = False) -> int:
    """Serve until SIGTERM or Ctrl-C (exit status 0); `open_browser` opens the page."""
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if in_main else None
    mode = "read-write" if server.allow_writes else "read-only"
    print(f"graphonomous: the κ canvas at {server.url} ({mode})", file=sys.stderr, flush=True)
    if server.token is not None:
        print(
            f"graphonomous: the API needs the token: open {server.url}#token=${HTTP_TOKEN_ENV_VAR}",
            file=sys.stderr,
            flush=True,
        )
    elif server.policy.requires_token:
        print(
            f"graphonomous: the API needs a token of the tokens file: open {server.url}#token=…",
            file=sys.stderr,
            flush=True,
        )
    if open_browser:
        fragment = f"#token={server.token}" if server.token is not None else ""
        webbrowser.open(server.url + fragment)
    try:
        server.serve_forever()
    except (_Terminated, KeyboardInterrupt):
        pass
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous or signal.SIG_DFL)
        server.server_close()
        server.tenants.close()
    return 0
