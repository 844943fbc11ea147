"""The connection layer under every HTTP adapter (the MCP endpoint, the canvas), stdlib only.

Rules of this file:

* One write per response.  A handler's status line, headers and body collect in a
  `ResponseWriter` and leave in one ``sendall`` once the request is answered (an interim
  ``100 Continue`` leaves at once), and every accepted socket has ``TCP_NODELAY``.  A head
  and a body sent apart cost a kept-alive request ≈ 40 ms: Nagle's algorithm holds the body
  until the peer acknowledges the head, and the peer delays that acknowledgement.
* Every open connection holds one thread and one slot of a bounded table
  (`ConnectionTable`).  A connection is *busy* from the moment its request (head and body)
  is complete until its response is sent; otherwise it is *waiting*: *fresh* (it never sent
  a complete request), *reading* (a later request has begun) or *idle* (kept alive).  A
  handler reads a body with `read_body`, which marks the exchange busy.
* Deadlines (each receive waits only the time left, so a steady trickle cannot stretch them):
  a fresh connection's head must be complete `head_deadline_s` after it was accepted; a
  kept-alive connection may stay idle `read_deadline_s`, then its head must be complete
  `head_deadline_s` after its first byte; head and body within `read_deadline_s` of that
  byte.  A missed deadline closes the connection.
* A newcomer that finds no room takes the slot of a waiting connection: fresh and reading
  ones first (the one waiting longest), then the one idle longest.  A busy connection is
  never closed for another; when every candidate is busy the newcomer gets 503 with
  ``Retry-After`` at once.  The per-client bound picks among the client's own connections.
  Fresh connections hold at most ``max_connections - reserved`` slots (a newcomer beyond
  that replaces the oldest fresh one): the reserve is for connections that sent a request.
* The table closes another thread's connection with ``shutdown`` (the blocked receive
  returns); the connection's own thread closes the socket and frees the slot.
"""

from __future__ import annotations

import contextlib
import io
import logging
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final

# A client sends its request line and headers (a few hundred bytes) right after connecting;
# 5 s covers a loaded machine and a slow link many times over, while a connection that sends
# nothing gives its slot back within seconds.
HEAD_DEADLINE_S: Final = 5.0
# The listen backlog: the stdlib default (5) reset connections of 20 concurrent clients
# (issue #12); 128 is Linux's historical SOMAXCONN.
LISTEN_BACKLOG: Final = 128
RETRY_AFTER_S: Final = 1
# A refusal is a few hundred bytes into an empty send buffer: it never waits long.
TURN_AWAY_TIMEOUT_S: Final = 1.0

log = logging.getLogger("graphonomous.http")


@dataclass(eq=False)
class Connection:
    """One open connection's slot: its client address and where its exchange stands."""

    sock: socket.socket
    client: str
    since: float  # monotonic: accepted, last answered, or the first byte of a later request
    proven: bool = False  # it has sent a complete request
    reading: bool = False
    busy: bool = False
    closed: bool = False

    def rank(self) -> tuple[int, float]:
        """Which waiting connection goes first (smallest): slow before idle, oldest first."""
        idle = self.proven and not self.reading
        return (1 if idle else 0, self.since)


class ConnectionTable:
    """The open connections of one server, bounded in all, per client and when fresh."""

    def __init__(self, limit: int, per_client: int, reserved: int) -> None:
        if not 0 <= reserved < limit:
            raise ValueError(f"reserved_connections must be 0 to {limit - 1}; got {reserved}")
        self.limit = limit
        self.per_client = per_client
        self.fresh_limit = limit - reserved
        self._open: dict[socket.socket, Connection] = {}
        self._lock = threading.Lock()

    def admit(self, sock: socket.socket, client: str) -> bool:
        """Register a new connection, closing waiting ones to make room; False = no room."""
        with self._lock:
            if not self._make_room(client):
                return False
            self._open[sock] = Connection(sock, client, time.monotonic())
            return True

    def _make_room(self, client: str) -> bool:
        while True:
            pool = self._full_pool(client)
            if pool is None:
                return True
            waiting = [c for c in pool if not c.busy]
            if not waiting:
                return False
            self._close(min(waiting, key=Connection.rank))

    def _full_pool(self, client: str) -> list[Connection] | None:
        """The connections of the first bound a newcomer would break (None: room)."""
        live = [c for c in self._open.values() if not c.closed]
        mine = [c for c in live if c.client == client]
        if len(mine) >= self.per_client:
            return mine
        if len(live) >= self.limit:
            return live
        fresh = [c for c in live if not c.proven]
        return fresh if len(fresh) >= self.fresh_limit else None

    def _close(self, conn: Connection) -> None:
        conn.closed = True
        with contextlib.suppress(OSError):  # the peer may have gone already
            conn.sock.shutdown(socket.SHUT_RDWR)

    def of(self, sock: socket.socket) -> Connection:
        """The slot of an admitted socket (a closed stand-in once it was released)."""
        with self._lock:
            found = self._open.get(sock)
        return found if found is not None else Connection(sock, "", 0.0, closed=True)

    def first_byte(self, conn: Connection) -> None:
        with self._lock:
            if conn.proven:
                conn.reading = True
                conn.since = time.monotonic()

    def request_complete(self, conn: Connection) -> bool:
        """Mark the connection busy; False when the table closed it meanwhile."""
        with self._lock:
            if conn.closed:
                return False
            conn.busy = conn.proven = True
            conn.reading = False
            return True

    def answered(self, conn: Connection) -> None:
        with self._lock:
            conn.busy = conn.reading = False
            conn.since = time.monotonic()

    def release(self, sock: socket.socket) -> None:
        with self._lock:
            found = self._open.pop(sock, None)
            if found is not None:
                found.closed = True

    def __len__(self) -> int:
        with self._lock:
            return sum(1 for c in self._open.values() if not c.closed)


class DeadlineReader(io.RawIOBase):
    """The socket's read side, failing with TimeoutError once `deadline` (monotonic) passed:
    each receive waits at most the time left.  `on_first_byte` runs when bytes arrive while
    `awaiting` (the start of a request)."""

    def __init__(self, sock: socket.socket, on_first_byte: Callable[[], None]) -> None:
        super().__init__()
        self.sock = sock
        self.deadline = time.monotonic() + HEAD_DEADLINE_S
        self.awaiting = True
        self.on_first_byte = on_first_byte

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("read deadline passed")
        self.sock.settimeout(left)
        count = self.sock.recv_into(buffer)
        if count and self.awaiting:
            self.awaiting = False
            self.on_first_byte()
        return count


class ResponseWriter(io.BufferedIOBase):
    """The socket's write side: everything written until `flush` leaves in one sendall."""

    def __init__(self, sock: socket.socket, timeout: float | None) -> None:
        super().__init__()
        self.sock = sock
        self.timeout = timeout
        self._parts: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self._parts.append(chunk)
        return len(chunk)

    def flush(self) -> None:
        if not self._parts:
            return
        data = b"".join(self._parts)
        self._parts.clear()
        self.sock.settimeout(self.timeout)  # reads shortened it to a deadline's rest
        self.sock.sendall(data)

    def discard(self) -> None:
        self._parts.clear()


class BoundedHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server whose connections obey this file's bounds and deadlines.

    Subclasses give `busy_body` (the 503 body, JSON) and a `BoundedRequestHandler`.
    """

    daemon_threads = True
    block_on_close = False
    request_queue_size = LISTEN_BACKLOG

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BoundedRequestHandler],
        *,
        head_deadline_s: float,
        read_deadline_s: float,
        max_connections: int,
        max_connections_per_client: int,
        reserved_connections: int,
    ) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.head_deadline_s = head_deadline_s
        self.read_deadline_s = read_deadline_s
        self.max_connections = max_connections
        self.max_connections_per_client = max_connections_per_client
        self.connections = ConnectionTable(
            max_connections, max_connections_per_client, reserved_connections
        )
        super().__init__(address, handler)

    def busy_body(self) -> bytes:
        return b'{"error": "server busy: too many connections"}'

    def process_request(self, request: Any, client_address: Any) -> None:
        """Serve a connection in its own thread when the table has (or makes) room;
        otherwise answer 503 at once (with Retry-After) instead of queueing or resetting."""
        if not self.connections.admit(request, str(client_address[0])):
            self._turn_away(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.connections.release(request)

    def _turn_away(self, request: Any) -> None:
        body = self.busy_body()
        head = (
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nRetry-After: {RETRY_AFTER_S}\r\n"
            "Connection: close\r\n\r\n"
        ).encode("ascii")
        try:
            request.settimeout(TURN_AWAY_TIMEOUT_S)
            request.sendall(head + body)
        except OSError:
            pass
        self.shutdown_request(request)

    @property
    def connection_count(self) -> int:
        return len(self.connections)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Log a failed exchange to stderr (a peer hanging up is routine, not an error)."""
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            log.debug("connection from %s ended: %r", client_address, exc)
        else:
            log.exception("error while serving %s", client_address)


class BoundedRequestHandler(BaseHTTPRequestHandler):
    """One connection's exchanges under the server's deadlines, each answer in one write."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: BoundedHTTPServer

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # the stdlib's reader and writer; the socket stays open
        self.wfile.close()
        self._slot = self.server.connections.of(self.connection)
        self._began = time.monotonic()
        self._reader = DeadlineReader(self.connection, self._first_byte)
        self.rfile = io.BufferedReader(self._reader)
        self.writer = ResponseWriter(self.connection, self.timeout)
        self.wfile = self.writer

    def handle_one_request(self) -> None:
        server = self.server
        self._began = time.monotonic()
        head_s = min(server.head_deadline_s, server.read_deadline_s)
        self._reader.deadline = self._began + (
            server.read_deadline_s if self._slot.proven else head_s
        )
        self._reader.awaiting = True
        try:
            super().handle_one_request()
            if self._slot.closed:
                self.close_connection = True
                self.writer.discard()
            self.writer.flush()  # an error the stdlib sent without flushing
        except TimeoutError:
            self.close_connection = True
        finally:
            server.connections.answered(self._slot)

    def _first_byte(self) -> None:
        """A request starts: its head is due `head_deadline_s` from now."""
        self._began = now = time.monotonic()
        if self._slot.proven:
            head_s = min(self.server.head_deadline_s, self.server.read_deadline_s)
            self._reader.deadline = now + head_s
            self.server.connections.first_byte(self._slot)

    def parse_request(self) -> bool:
        """The head is complete: the body is due by the read deadline; a request without
        one is complete (busy) now."""
        if not super().parse_request():
            return False
        self._reader.deadline = self._began + self.server.read_deadline_s
        if self.headers.get("Content-Length", "0").strip() != "0" or self.headers.get(
            "Transfer-Encoding"
        ):
            return True  # busy once `read_body` has it
        return self._complete()

    def read_body(self, length: int) -> bytes | None:
        """The request's `length`-byte body (shorter if the peer stopped); the exchange is
        busy from here.  None when the table closed the connection meanwhile (send nothing)."""
        body = self.rfile.read(length)
        return body if self._complete() else None

    def _complete(self) -> bool:
        if self.server.connections.request_complete(self._slot):
            return True
        self.close_connection = True  # the table gave the slot to a newcomer
        return False

    def handle_expect_100(self) -> bool:
        answered = super().handle_expect_100()
        self.writer.flush()  # the client waits for this interim answer before its body
        return answered

    def finish(self) -> None:
        if self._slot.closed:
            self.writer.discard()
        super().finish()
