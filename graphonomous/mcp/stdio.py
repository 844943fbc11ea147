"""The stdio transport: one JSON-RPC message per line on stdin/stdout.

Framing (MCP stdio): UTF-8, exactly one JSON object per line, flushed after
each message; nothing but protocol messages on stdout.  Lines may be many MB
long; a line over `max_line_bytes` is skipped and answered with -32600.
Blank lines are ignored.  Messages are handled in order, one at a time, so a
pipelined burst of writes is applied in the order sent.  The loop ends on EOF
(clients close stdin, then SIGTERM after ~2 s) and on SIGTERM.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType
from typing import BinaryIO, Final

from .jsonrpc import INVALID_REQUEST, Outgoing, encode, error_response
from .server import McpServer

MAX_LINE_BYTES: Final = 64 * 1024 * 1024
_SKIP_CHUNK: Final = 1 << 16


def read_lines(stream: BinaryIO, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[bytes | None]:
    """Lines of `stream` without their newline; None stands for a line longer
    than `max_line_bytes` (its bytes are read and dropped).  A last line
    without a newline is still yielded.  Memory: O(max_line_bytes)."""
    while True:
        line = stream.readline(max_line_bytes + 1)
        if not line:
            return
        if line.endswith(b"\n"):
            yield line[:-1]
        elif len(line) <= max_line_bytes:
            yield line  # the last line, without a newline
        else:
            while line and not line.endswith(b"\n"):
                line = stream.readline(_SKIP_CHUNK)
            yield None


def run_stdio(
    server: McpServer,
    stdin: BinaryIO,
    stdout: BinaryIO,
    *,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> None:
    """Serve one connection until EOF on `stdin`.

    Input: binary streams.  Each line is parsed, handled and every reply is
    written as one line and flushed.  Returns quietly if the peer closes
    `stdout` (BrokenPipeError).  Complexity: O(total bytes).
    """
    for line in read_lines(stdin, max_line_bytes):
        outgoing: list[Outgoing]
        if line is None:
            too_long = f"Invalid Request: message longer than {max_line_bytes} bytes"
            outgoing = [error_response(None, INVALID_REQUEST, too_long)]
        else:
            if not line.strip():
                continue
            outgoing = server.receive(line.rstrip(b"\r"))
        try:
            for message in outgoing:
                stdout.write(encode(message) + b"\n")
                stdout.flush()
        except BrokenPipeError:
            return
        # Free a large response now, not when the next line arrives.
        del outgoing


class _Terminated(BaseException):
    """Raised by the SIGTERM handler; a BaseException so that no tool guard catches it
    (an open SQLite transaction rolls back on the way out)."""


def _on_sigterm(_signum: int, _frame: FrameType | None) -> None:
    raise _Terminated


def serve_stdio(server: McpServer) -> int:
    """Run `server` on the process's stdin/stdout; returns the exit status (0).

    While serving, file descriptor 1 and ``sys.stdout`` point at stderr, so a
    stray ``print`` or a C library writing to fd 1 cannot corrupt the
    protocol stream; protocol messages go to a private duplicate of the
    original stdout.  Both are restored afterwards.
    """
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    saved_stdout = sys.stdout
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if in_main else None
    out = open(protocol_fd, "wb", closefd=False)  # noqa: SIM115 - closed below, errors ignored
    status = 0
    try:
        run_stdio(server, sys.stdin.buffer, out)
    except _Terminated:
        pass
    except KeyboardInterrupt:
        status = 130
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous or signal.SIG_DFL)
        with contextlib.suppress(OSError):  # the client may be gone (broken pipe)
            out.close()
        os.dup2(protocol_fd, 1)
        os.close(protocol_fd)
        sys.stdout = saved_stdout
    return status
