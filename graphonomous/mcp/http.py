"""The Streamable HTTP transport (MCP 2025-11-25), standard library only.

One endpoint (default ``/mcp``):

* ``POST`` carries one JSON-RPC message.  A request gets ``200`` with an
  ``application/json`` response; a notification or a response gets ``202``.
  ``initialize`` opens a session and returns its ``Mcp-Session-Id``; every
  later POST must carry it (missing → 400, unknown or ended → 404).
* ``DELETE`` with the session header ends the session.
* ``GET`` (a server-to-client SSE stream) is not offered: ``405``.

Safety: binds 127.0.0.1 by default; checks ``Host`` and ``Origin`` against
the loopback names (DNS-rebinding protection: a foreign Origin gets 403); bearer
tokens (a tokens file of hashes, or the single ``GRAPHONOMOUS_HTTP_TOKEN``) are
checked by ``access.AccessPolicy`` (``hmac.compare_digest``) and are mandatory on a
non-loopback address, where the single token must have at least 16 characters
(refused before binding); bodies over 16 MiB get 413.  A session is opened for one
principal in one namespace (the ``Graphonomous-Project`` header or ``?project=``)
and belongs to that principal; each call runs with the principal as the acting one
(audit entries name it).  Connections obey ``http_base`` (one write per response, TCP_NODELAY,
head and request deadlines, a bounded table where slow and idle connections
make room first).  Requests run in threads; the sessions of one namespace and mode share one
facade, whose lock serialises writes.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import secrets
import signal
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from email.message import Message as Headers
from http import HTTPStatus
from types import FrameType
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

from ..model import DEFAULT_NAMESPACE, HTTP_TOKEN_ENV_VAR, ValidationError, check_namespace
from ..store.sqlite import ACTING_PRINCIPAL
from .access import (
    PROJECT_HEADER,
    PROJECT_QUERY,
    AccessPolicy,
    Principal,
    build_policy,
    tokens_file_from_env,
)
from .http_base import (
    HEAD_DEADLINE_S,
    RETRY_AFTER_S,
    BoundedHTTPServer,
    BoundedRequestHandler,
)
from .jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    ErrorEvent,
    Message,
    Request,
    Response,
    encode,
    error_response,
    parse_message,
)
from .server import SUPPORTED_PROTOCOL_VERSIONS, McpServer

ENDPOINT: Final = "/mcp"
MAX_BODY_BYTES: Final = 16 * 1024 * 1024
MAX_SESSIONS: Final = 1024
SESSION_HEADER: Final = "Mcp-Session-Id"
VERSION_HEADER: Final = "MCP-Protocol-Version"
SESSION_NOT_FOUND: Final = -32001  # the code the official SDKs use
LOOPBACK_NAMES: Final = frozenset({"localhost", "127.0.0.1", "::1"})
REQUEST_TIMEOUT_S: Final = 60.0
# A whole request (line, headers and body) must arrive within this many seconds of its first
# byte, and a keep-alive connection idle that long is closed.  Bounds slow senders
# ("slowloris") together with http_base.HEAD_DEADLINE_S (the head alone, from accept).
READ_DEADLINE_S: Final = 30.0
# Open connections served at once, in all and per client address (each holds a thread).
# When full, a newcomer takes a waiting connection's slot (http_base); 503 only when every
# candidate is busy.
MAX_CONNECTIONS: Final = 256
MAX_CONNECTIONS_PER_CLIENT: Final = 64
# Slots that connections which never sent a complete request cannot take: however many
# sit silent, this many stay for clients being served (an eighth of the table).
RESERVED_CONNECTIONS: Final = 32
# A token guarding a non-loopback bind: at least what `secrets.token_urlsafe(12)` prints
# (16 characters, 96 random bits), beyond guessing over a network.
MIN_TOKEN_CHARS: Final = 16
# Sessions per client address (each holds its tool list, ~200 KB).
MAX_SESSIONS_PER_CLIENT: Final = 128
# A session unused this long is dropped.
SESSION_IDLE_S: Final = 3600.0
# When a table is full, only a session idle at least this long may be evicted for a new
# one; otherwise initialize gets 503 (a flood of initialize must not end active sessions).
EVICT_MIN_IDLE_S: Final = 60.0
# A refused body up to DRAIN_FACTOR × the size limit is read and dropped so the
# client can read the error (closing a socket with unread data resets it);
# larger ones are cut off.
DRAIN_FACTOR: Final = 4

log = logging.getLogger("graphonomous.mcp.http")


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback IP literals (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _is_wildcard(host: str) -> bool:
    return host in ("", "0.0.0.0", "::")


def host_name(header: str) -> str:
    """The host part of a Host header (``[::1]:4100`` → ``::1``), lower-cased."""
    value = header.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    if value.count(":") == 1:
        return value.split(":", 1)[0]
    return value


Refusal = tuple[HTTPStatus, str, dict[str, str]]
UNAUTHORIZED: Final[Refusal] = (
    HTTPStatus.UNAUTHORIZED,
    "Unauthorized: a valid bearer token is required",
    {"WWW-Authenticate": 'Bearer realm="graphonomous"'},
)


def host_refusal(
    headers: Headers[str, str], allowed_hosts: frozenset[str] | None
) -> Refusal | None:
    """The Host and Origin checks of one request (None = admitted).

    `allowed_hosts` None accepts any Host/Origin (wildcard binds only, where a token is
    mandatory).  A refusal is (status, message, extra headers)."""
    host = headers.get("Host")
    if allowed_hosts is not None and host is not None and host_name(host) not in allowed_hosts:
        return HTTPStatus.FORBIDDEN, "Forbidden: Host not allowed", {}
    origin = headers.get("Origin")
    if allowed_hosts is not None and origin is not None:
        origin_host = urlsplit(origin.strip()).hostname
        if origin_host is None or origin_host.lower() not in allowed_hosts:
            return HTTPStatus.FORBIDDEN, "Forbidden: Origin not allowed", {}
    return None


def admission(
    headers: Headers[str, str], allowed_hosts: frozenset[str] | None, policy: AccessPolicy
) -> Principal | Refusal:
    """The Host, Origin and bearer-token checks of one request: the principal it acts
    for, or the refusal.  Shared by every HTTP adapter (the MCP endpoint, the canvas of
    `graphonomous ui`); the token is checked by `policy` (mcp/access.py)."""
    refusal = host_refusal(headers, allowed_hosts)
    if refusal is not None:
        return refusal
    principal = policy.authenticate(headers.get("Authorization"))
    return UNAUTHORIZED if principal is None else principal


def requested_project(headers: Headers[str, str], path: str) -> str | None:
    """The namespace a request names (the `Graphonomous-Project` header, else the
    ``project`` query parameter), or None; a bad name is a ValidationError."""
    value = headers.get(PROJECT_HEADER)
    if value is None:
        values = parse_qs(urlsplit(path).query).get(PROJECT_QUERY)
        value = values[-1] if values else None
    return None if value is None else check_namespace(PROJECT_QUERY, value.strip())


def project_not_found(name: str) -> str:
    """The one answer for a namespace a principal may not act in (no existence oracle)."""
    return f"Project not found: {name}"


class McpHttpServer(BoundedHTTPServer):
    """A threading HTTP server holding the MCP sessions.

    `tenant_session(principal, namespace)` builds the McpServer of a new session (default:
    `new_session()`, one graph for all).  `policy` says which tokens are accepted (default:
    `token` alone, admin on `served`).  `allowed_hosts` None accepts any Host/Origin (only
    for wildcard binds, where a token is mandatory); otherwise host names (lower case)
    that Host and Origin may name.  A session belongs to the principal that opened it: any
    other principal gets "Session not found" for it.
    """

    def __init__(
        self,
        address: tuple[str, int],
        new_session: Callable[[], McpServer] | None,
        *,
        token: str | None = None,
        policy: AccessPolicy | None = None,
        tenant_session: Callable[[Principal, str], McpServer] | None = None,
        served: str = DEFAULT_NAMESPACE,
        allowed_hosts: Iterable[str] | None = LOOPBACK_NAMES,
        endpoint: str = ENDPOINT,
        max_body_bytes: int = MAX_BODY_BYTES,
        max_sessions: int = MAX_SESSIONS,
        max_sessions_per_client: int = MAX_SESSIONS_PER_CLIENT,
        session_idle_s: float = SESSION_IDLE_S,
        evict_min_idle_s: float = EVICT_MIN_IDLE_S,
        head_deadline_s: float = HEAD_DEADLINE_S,
        read_deadline_s: float = READ_DEADLINE_S,
        max_connections: int = MAX_CONNECTIONS,
        max_connections_per_client: int = MAX_CONNECTIONS_PER_CLIENT,
        reserved_connections: int = RESERVED_CONNECTIONS,
    ) -> None:
        if tenant_session is None:
            if new_session is None:
                raise ValueError("McpHttpServer needs new_session or tenant_session")
            single = new_session
            tenant_session = lambda _principal, _namespace: single()  # noqa: E731
        self.tenant_session = tenant_session
        self.token = token  # the single token, if any (`policy` holds it too)
        self.policy = policy if policy is not None else build_policy(served, token)
        self.allowed_hosts = None if allowed_hosts is None else frozenset(allowed_hosts)
        self.endpoint = endpoint
        self.max_body_bytes = max_body_bytes
        self.max_sessions = max_sessions
        self.max_sessions_per_client = max_sessions_per_client
        self.session_idle_s = session_idle_s
        self.evict_min_idle_s = evict_min_idle_s
        # session id -> (session, client address, last use (monotonic), its principal),
        # least recent first
        self._sessions: OrderedDict[str, tuple[McpServer, str, float, Principal | None]] = (
            OrderedDict()
        )
        self._sessions_lock = threading.Lock()
        super().__init__(
            address,
            McpRequestHandler,
            head_deadline_s=head_deadline_s,
            read_deadline_s=read_deadline_s,
            max_connections=max_connections,
            max_connections_per_client=max_connections_per_client,
            reserved_connections=min(reserved_connections, max_connections - 1),
        )

    def busy_body(self) -> bytes:
        return encode(error_response(None, INVALID_REQUEST, "Server busy: too many connections"))

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        text = host.decode() if isinstance(host, bytes) else str(host)
        shown = f"[{text}]" if ":" in text else text
        return f"http://{shown}:{port}{self.endpoint}"

    # -- sessions -------------------------------------------------------------

    def open_session(
        self, session: McpServer, client: str = "", principal: Principal | None = None
    ) -> str | None:
        """Register a session of `client` (its address); None when no room can be made.

        Sessions idle longer than `session_idle_s` go first.  A client at its own cap
        loses its least recently used session, a full table its least recently used
        one — but only a session idle at least `evict_min_idle_s`: active sessions
        are never evicted for a new one (initialize then gets 503).
        """
        now = time.monotonic()
        with self._sessions_lock:
            self._expire(now)
            mine = [sid for sid, (_, owner, _, _) in self._sessions.items() if owner == client]
            if len(mine) >= self.max_sessions_per_client and not self._evict(mine[0], now):
                return None
            if len(self._sessions) >= self.max_sessions and not self._evict(
                next(iter(self._sessions)), now
            ):
                return None
            session_id = secrets.token_urlsafe(24)
            self._sessions[session_id] = (session, client, now, principal)
        return session_id

    def _expire(self, now: float) -> None:
        while self._sessions:
            oldest, (_, _, used, _) = next(iter(self._sessions.items()))
            if now - used <= self.session_idle_s:
                return
            del self._sessions[oldest]

    def _evict(self, session_id: str, now: float) -> bool:
        _, _, used, _ = self._sessions[session_id]
        if now - used < self.evict_min_idle_s:
            return False
        del self._sessions[session_id]
        return True

    def session(self, session_id: str, principal: Principal | None = None) -> McpServer | None:
        """The live session `session_id` of `principal` (None: unknown, ended, or another's)."""
        with self._sessions_lock:
            found = self._sessions.get(session_id)
            if found is None or found[3] != principal:
                return None
            now = time.monotonic()
            if now - found[2] > self.session_idle_s:
                del self._sessions[session_id]
                return None
            self._sessions[session_id] = (found[0], found[1], now, found[3])
            self._sessions.move_to_end(session_id)
            return found[0]

    def close_session(self, session_id: str, principal: Principal | None = None) -> bool:
        with self._sessions_lock:
            found = self._sessions.get(session_id)
            if found is None or found[3] != principal:
                return False
            del self._sessions[session_id]
            return True

    @property
    def session_count(self) -> int:
        with self._sessions_lock:
            return len(self._sessions)


class McpRequestHandler(BoundedRequestHandler):
    """One HTTP exchange on the MCP endpoint."""

    server_version = "graphonomous-mcp"
    timeout = REQUEST_TIMEOUT_S
    server: McpHttpServer

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s - %s", self.address_string(), format % args)

    # -- replies ------------------------------------------------------------------

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        if self.close_connection:
            self.send_header("Connection", "close")
        if body:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if body:
            self.wfile.write(body)

    def _send_error(
        self,
        status: int,
        message: str,
        *,
        code: int = INVALID_REQUEST,
        request_id: Any = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        body = encode(error_response(request_id, code, message))
        self._send(status, body, headers)

    # -- checks shared by every method ---------------------------------------------

    def _admit(self) -> Principal | None:
        """Path, Host, Origin and token checks: the request's principal, or None once the
        error is sent."""
        if urlsplit(self.path).path != self.server.endpoint:
            self._refuse(HTTPStatus.NOT_FOUND, f"Not Found: the MCP endpoint is {ENDPOINT}")
            return None
        admitted = admission(self.headers, self.server.allowed_hosts, self.server.policy)
        if not isinstance(admitted, Principal):
            status, message, headers = admitted
            self._refuse(status, message, headers=headers or None)
            return None
        return admitted

    def _refuse(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        """Answer without reading the request: drop the body and close the connection,
        so unread bytes are never taken for the next request."""
        self.close_connection = True
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = 0
        if 0 < length <= DRAIN_FACTOR * self.server.max_body_bytes:
            self._discard(length)
        self._send_error(status, message, headers=headers)

    def _read_body(self) -> bytes | None:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.close_connection = True
            self._send_error(HTTPStatus.LENGTH_REQUIRED, "Chunked bodies are not supported")
            return None
        length_text = self.headers.get("Content-Length")
        try:
            length = int(length_text) if length_text is not None else -1
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            self._send_error(HTTPStatus.LENGTH_REQUIRED, "Content-Length is required")
            return None
        if length > self.server.max_body_bytes:
            self._refuse(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"Request body larger than {self.server.max_body_bytes} bytes",
            )
            return None
        body = self.read_body(length)
        if body is None:
            return None
        if len(body) != length:
            self.close_connection = True
            self._send_error(HTTPStatus.BAD_REQUEST, "Request body shorter than Content-Length")
            return None
        return body

    def _discard(self, length: int) -> None:
        while length > 0:
            chunk = self.rfile.read(min(length, 1 << 16))
            if not chunk:
                return
            length -= len(chunk)

    # -- methods --------------------------------------------------------------------

    def do_POST(self) -> None:
        principal = self._admit()
        if principal is None:
            return
        body = self._read_body()
        if body is None:
            return
        message = parse_message(body)
        if isinstance(message, Request) and message.method == "initialize":
            self._initialize(message, principal)
            return
        if isinstance(message, ErrorEvent):
            if message.answer:
                self._send(HTTPStatus.BAD_REQUEST, encode(message.reply()))
            else:
                self._send(HTTPStatus.ACCEPTED)
            return
        session = self._session(message, principal)
        if session is None:
            return
        version = self.headers.get(VERSION_HEADER)
        if version is not None and version not in SUPPORTED_PROTOCOL_VERSIONS:
            request_id = message.id if isinstance(message, Request) else None
            self._send_error(
                HTTPStatus.BAD_REQUEST,
                f"Unsupported {VERSION_HEADER}: {version}",
                request_id=request_id,
            )
            return
        acting = ACTING_PRINCIPAL.set(principal.name)  # audit entries name it
        try:
            outgoing = session.handle(message)
        finally:
            ACTING_PRINCIPAL.reset(acting)
        if not isinstance(message, Request):
            self._send(HTTPStatus.ACCEPTED)
            return
        # One JSON body answers one request; progress notifications would need SSE.
        replies = [m for m in outgoing if isinstance(m, Response) and m.id == message.id]
        if not replies:  # cancelled while running
            self._send(HTTPStatus.ACCEPTED)
            return
        self._send(HTTPStatus.OK, encode(replies[0]))

    def _project(self, message: Request, principal: Principal) -> str | None:
        """The namespace of a new session (the one named, else the principal's first);
        None once the error is sent.  A namespace the principal may not act in gets the
        same 404 whether or not it holds data (the answer never looks)."""
        try:
            named = requested_project(self.headers, self.path)
        except ValidationError as exc:
            self._send_error(
                HTTPStatus.BAD_REQUEST,
                f"Invalid {exc.field}: {exc.message}",
                code=INVALID_PARAMS,
                request_id=message.id,
            )
            return None
        namespace = named or principal.default_namespace(self.server.policy.served)
        if not principal.serves(namespace):
            self._send_error(
                HTTPStatus.NOT_FOUND, project_not_found(namespace), request_id=message.id
            )
            return None
        return namespace

    def _initialize(self, message: Request, principal: Principal) -> None:
        namespace = self._project(message, principal)
        if namespace is None:
            return
        session = self.server.tenant_session(principal, namespace)
        replies = [m for m in session.handle(message) if isinstance(m, Response)]
        reply = replies[0]
        headers = {}
        if reply.error is None:
            session_id = self.server.open_session(session, str(self.client_address[0]), principal)
            if session_id is None:
                self._send_error(
                    HTTPStatus.SERVICE_UNAVAILABLE,
                    "Too many active sessions; end one (DELETE) or retry later",
                    request_id=message.id,
                    headers={"Retry-After": str(RETRY_AFTER_S)},
                )
                return
            headers[SESSION_HEADER] = session_id
        self._send(HTTPStatus.OK, encode(reply), headers)

    def _session(self, message: Message, principal: Principal) -> McpServer | None:
        request_id = message.id if isinstance(message, Request) else None
        session_id = self.headers.get(SESSION_HEADER)
        if not session_id:
            self._send_error(
                HTTPStatus.BAD_REQUEST,
                f"Bad Request: {SESSION_HEADER} header is required (call initialize first)",
                request_id=request_id,
            )
            return None
        session = self.server.session(session_id, principal)
        if session is None:
            self._send_error(
                HTTPStatus.NOT_FOUND,
                "Session not found",
                code=SESSION_NOT_FOUND,
                request_id=request_id,
            )
        return session

    def do_DELETE(self) -> None:
        principal = self._admit()
        if principal is None:
            return
        session_id = self.headers.get(SESSION_HEADER)
        if not session_id:
            self._send_error(HTTPStatus.BAD_REQUEST, f"{SESSION_HEADER} header is required")
        elif self.server.close_session(session_id, principal):
            self._send(HTTPStatus.OK)
        else:
            self._send_error(HTTPStatus.NOT_FOUND, "Session not found", code=SESSION_NOT_FOUND)

    def _not_allowed(self) -> None:
        if self._admit() is None:
            return
        self._send_error(
            HTTPStatus.METHOD_NOT_ALLOWED,
            "Method Not Allowed: POST JSON-RPC messages to this endpoint",
            headers={"Allow": "POST, DELETE"},
        )

    do_GET = _not_allowed
    do_PUT = _not_allowed
    do_PATCH = _not_allowed


def check_bind_token(host: str, token: str | None, tokens_file: str | None = None) -> None:
    """Refuse a non-loopback `host` without a tokens file or a bearer token of
    MIN_TOKEN_CHARS or more.

    Raises ValueError naming the variable.  Loopback binds need no token (any is accepted).
    """
    if is_loopback(host):
        return
    if token is None and tokens_file is not None:
        return
    if token is None:
        raise ValueError(
            f"binding {host!r} (not loopback) needs a bearer token: set {HTTP_TOKEN_ENV_VAR} "
            "or give a tokens file (--tokens)"
        )
    if len(token) < MIN_TOKEN_CHARS:
        raise ValueError(
            f"{HTTP_TOKEN_ENV_VAR} is too short to bind {host!r} (not loopback): {len(token)} "
            f"of at least {MIN_TOKEN_CHARS} characters; make one with "
            "python -c 'import secrets; print(secrets.token_urlsafe(12))'"
        )


def make_http_server(
    new_session: Callable[[], McpServer] | None,
    host: str = "127.0.0.1",
    port: int = 4100,
    *,
    token: str | None = None,
    tokens_file: str | None = None,
    tenant_session: Callable[[Principal, str], McpServer] | None = None,
    served: str = DEFAULT_NAMESPACE,
    allowed_hosts: Iterable[str] = (),
    **limits: Any,
) -> McpHttpServer:
    """Bind the MCP HTTP endpoint (port 0 picks a free port).

    `token` defaults to ``$GRAPHONOMOUS_HTTP_TOKEN`` (empty means none), `tokens_file`
    to ``$GRAPHONOMOUS_TOKENS_FILE``; one of them is required off loopback (access
    control: mcp/access.py; `served` is the namespace the single token is admin on).
    Host/Origin may name the loopback names, the bound host and `allowed_hosts`; a
    wildcard bind (0.0.0.0, ::) accepts any.  `limits` are McpHttpServer's bounds
    (read_deadline_s, max_connections, …).  Raises ValueError, before binding, when a
    non-loopback bind lacks a long enough token, or the tokens file is unusable.
    """
    if token is None:
        token = os.environ.get(HTTP_TOKEN_ENV_VAR) or None
    if tokens_file is None:
        tokens_file = tokens_file_from_env()
    check_bind_token(host, token, tokens_file)
    policy = build_policy(served, token, tokens_file)
    names: frozenset[str] | None = LOOPBACK_NAMES | {h.lower() for h in allowed_hosts}
    if _is_wildcard(host):
        names = None
    elif names is not None:
        names = names | {host.lower().strip("[]")}
    return McpHttpServer(
        (host.strip("[]"), port),
        new_session,
        token=token,
        policy=policy,
        tenant_session=tenant_session,
        allowed_hosts=names,
        **limits,
    )


class _Terminated(BaseException):
    pass


def _on_sigterm(_signum: int, _frame: FrameType | None) -> None:
    raise _Terminated


def serve_http(server: McpHttpServer) -> int:
    """Serve until SIGTERM or Ctrl-C; returns the exit status (0)."""
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if in_main else None
    print(f"graphonomous: MCP over HTTP at {server.url}", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except (_Terminated, KeyboardInterrupt):
        pass
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous or signal.SIG_DFL)
        server.server_close()
    return 0
