"""JSON-RPC 2.0 framing for MCP, sans I/O (in the spirit of h11).

Two pure functions and a handful of message types:

* :func:`parse_message` turns one wire message (bytes or text) into a
  :class:`Request`, :class:`Notification`, :class:`Response` or
  :class:`ErrorEvent`.  It never raises: hostile input (invalid UTF-8, invalid
  JSON, ``NaN``, nesting deep enough to exhaust the recursion limit, batch
  arrays, bad ids) becomes an :class:`ErrorEvent` carrying the JSON-RPC error
  to send back.
* :func:`encode` turns a message into the bytes of exactly one JSON object
  (UTF-8, no newline inside), ready to be framed by a transport.

Rules (SPEC.md, MCP section; JSON-RPC 2.0; MCP 2025-11-25):

* ids are strings or integers, ``0`` included; ``null``, booleans, floats,
  arrays and objects are invalid ids.  A valid id is echoed exactly (Python
  ints are unbounded, so huge ids survive; literals longer than Python's
  int-to-str limit of 4,300 digits are a parse error).
* ``params`` is absent, ``null`` (read as absent) or a structured value; the
  MCP layer answers -32602 for arrays.
* batch arrays were removed in MCP 2025-06-18: a top-level array is -32600.
* a message with a string ``method`` and no ``id`` is a notification and is
  never answered, even when malformed (``ErrorEvent.answer`` is False).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
RESOURCE_NOT_FOUND: Final = -32002  # MCP 2025-11-25, resources/read

JSONRPC_VERSION: Final = "2.0"

Id: TypeAlias = "str | int"
Params: TypeAlias = "dict[str, Any] | list[Any] | None"


@dataclass(frozen=True)
class RpcError:
    """The ``error`` member of a JSON-RPC response; `data` is omitted when None."""

    code: int
    message: str
    data: Any = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            out["data"] = self.data
        return out


@dataclass(frozen=True)
class Request:
    """A call that expects exactly one response with the same id."""

    id: Id
    method: str
    params: Params = None


@dataclass(frozen=True)
class Notification:
    """A one-way message; never answered."""

    method: str
    params: Params = None


@dataclass(frozen=True)
class Response:
    """A result (``error`` is None) or an error response.  `id` is None only for
    errors about messages whose id could not be read (parse errors)."""

    id: Id | None
    result: Any = None
    error: RpcError | None = None


@dataclass(frozen=True)
class ErrorEvent:
    """An incoming message that could not be understood.

    `error` is what to send back (as ``Response(id, error=error)``) unless
    `answer` is False, which marks a malformed notification: it has no id and
    must not be answered.
    """

    error: RpcError
    id: Id | None = None
    answer: bool = True

    def reply(self) -> Response:
        return Response(self.id, error=self.error)


class EncodedMember(dict[str, Any]):
    """A JSON object whose last member already has its JSON text (`member_json`).

    It is a dict with the member's value, so everything else reads it as one;
    `encode` writes the given text instead of encoding the value a second time
    (a tool reply's ``structuredContent`` is the same JSON as its text block).
    The text must be exactly what `encode` writes for the value -- compact
    separators, ``ensure_ascii=False``, ``allow_nan=False`` (`dumps_compact`) --
    so the bytes on the wire do not change; the value must not change after.
    """

    def __init__(self, members: dict[str, Any], member: str, member_json: str) -> None:
        super().__init__(members)
        self.member = member
        self.member_json = member_json


def dumps_compact(value: Any) -> str:
    """The JSON text `encode` writes for a value (the form `EncodedMember` expects)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


Message: TypeAlias = "Request | Notification | Response | ErrorEvent"
Outgoing: TypeAlias = "Request | Notification | Response"


def error_response(id: Id | None, code: int, message: str, data: Any = None) -> Response:
    """A JSON-RPC error response."""
    return Response(id, error=RpcError(code, message, data))


def is_valid_id(value: object) -> bool:
    """True for a string or an integer (``0`` included); booleans are not integers."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _decode(data: bytes | str) -> str | ErrorEvent:
    if isinstance(data, str):
        return data
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        return ErrorEvent(
            RpcError(PARSE_ERROR, f"Parse error: message is not UTF-8 ({exc.reason})")
        )
    # A UTF-8 byte-order mark is tolerated (some Windows tools write one).
    return text[1:] if text.startswith("\ufeff") else text


def _load(text: str) -> tuple[Any, ErrorEvent | None]:
    try:
        return json.loads(text, parse_constant=_reject_constant), None
    except RecursionError:
        return None, ErrorEvent(RpcError(PARSE_ERROR, "Parse error: nesting too deep"))
    except json.JSONDecodeError as exc:
        return None, ErrorEvent(RpcError(PARSE_ERROR, f"Parse error: {exc.msg} at {exc.pos}"))
    except ValueError as exc:  # NaN/Infinity, or an integer literal too long to convert
        return None, ErrorEvent(RpcError(PARSE_ERROR, f"Parse error: {exc}"))


def parse_message(data: bytes | str) -> Message:
    """Classify one JSON-RPC message.

    Input: the bytes (UTF-8) or text of one message, without framing.
    Output: a Request, Notification, Response (from the peer) or ErrorEvent.
    Never raises.  Complexity: O(size of the message).
    Reference: JSON-RPC 2.0 §4–5; MCP 2025-11-25 "Base protocol".
    """
    text = _decode(data)
    if isinstance(text, ErrorEvent):
        return text
    value, failure = _load(text)
    if failure is not None:
        return failure
    if isinstance(value, list):
        return ErrorEvent(
            RpcError(INVALID_REQUEST, "Invalid Request: batch arrays are not supported")
        )
    if not isinstance(value, dict):
        return ErrorEvent(RpcError(INVALID_REQUEST, "Invalid Request: expected a JSON object"))
    return _classify(value)


def _classify(msg: dict[str, Any]) -> Message:
    has_id = "id" in msg
    raw_id = msg.get("id")
    msg_id: Id | None = raw_id if is_valid_id(raw_id) else None
    method = msg.get("method")
    is_notification = not has_id and isinstance(method, str)

    def invalid(reason: str) -> ErrorEvent:
        return ErrorEvent(
            RpcError(INVALID_REQUEST, f"Invalid Request: {reason}"),
            msg_id,
            answer=not is_notification,
        )

    # A null id is only valid on an error response (about a message whose id was unreadable).
    null_id_error = raw_id is None and "error" in msg and "method" not in msg
    if has_id and msg_id is None and not null_id_error:
        return invalid("id must be a string or an integer")
    if msg.get("jsonrpc") != JSONRPC_VERSION:
        return invalid('jsonrpc must be "2.0"')
    if "method" in msg:
        if not isinstance(method, str):
            return invalid("method must be a string")
        params = msg.get("params")
        if params is not None and not isinstance(params, (dict, list)):
            return invalid("params must be an object")
        return Notification(method, params) if msg_id is None else Request(msg_id, method, params)
    if "result" in msg or "error" in msg:
        return _response(msg, msg_id, invalid)
    return invalid("no method")


def _response(
    msg: dict[str, Any], msg_id: Id | None, invalid: Callable[[str], ErrorEvent]
) -> Message:
    if "result" in msg and "error" in msg:
        return invalid("a response has either result or error")
    if "result" in msg:
        if msg_id is None:
            return invalid("a result needs an id")
        return Response(msg_id, result=msg["result"])
    error = msg["error"]
    code = error.get("code") if isinstance(error, dict) else None
    if (
        not isinstance(error, dict)
        or not isinstance(code, int)
        or isinstance(code, bool)
        or not isinstance(error.get("message"), str)
    ):
        return invalid("error must be an object with an integer code and a message")
    return Response(msg_id, error=RpcError(error["code"], error["message"], error.get("data")))


def to_dict(message: Outgoing) -> dict[str, Any]:
    """The JSON-RPC object of a message (``jsonrpc`` first)."""
    out: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION}
    if isinstance(message, Request):
        out["id"] = message.id
        out["method"] = message.method
        if message.params is not None:
            out["params"] = message.params
    elif isinstance(message, Notification):
        out["method"] = message.method
        if message.params is not None:
            out["params"] = message.params
    else:
        out["id"] = message.id
        if message.error is not None:
            out["error"] = message.error.to_dict()
        else:
            out["result"] = message.result
    return out


def _dumps(obj: Any, ascii_only: bool) -> bytes:
    text = json.dumps(obj, ensure_ascii=ascii_only, allow_nan=False, separators=(",", ":"))
    return text.encode("utf-8")


def _dumps_message(obj: dict[str, Any]) -> bytes:
    """`_dumps` (UTF-8) of a message; an `EncodedMember` result's last member is
    written from its text.  ``result`` is the message's last member (`to_dict`),
    so the encoded rest ends with the two braces closing the result and the message."""
    result = obj.get("result")
    if not isinstance(result, EncodedMember) or next(reversed(result), None) != result.member:
        return _dumps(obj, ascii_only=False)
    rest = {name: value for name, value in result.items() if name != result.member}
    head = _dumps({**obj, "result": rest}, ascii_only=False)
    comma = b"," if rest else b""
    member = _dumps(result.member, ascii_only=False)
    return b"".join((head[:-2], comma, member, b":", result.member_json.encode("utf-8"), b"}}"))


def encode(message: Outgoing) -> bytes:
    """One message as the UTF-8 bytes of one JSON object, with no newline inside.

    Non-ASCII text is written as is (``ensure_ascii=False``); text that cannot
    be UTF-8 (lone surrogates from ``\\ud800`` escapes) falls back to ASCII
    escapes, which is the same JSON value.  A response whose result cannot be
    serialised (NaN, non-JSON types, nesting too deep) becomes a -32603 error
    response with the same id, so this function never raises for responses.
    Complexity: O(size of the message).
    """
    obj = to_dict(message)
    try:
        try:
            return _dumps_message(obj)
        except UnicodeEncodeError:
            return _dumps(obj, ascii_only=True)
    except (TypeError, ValueError, RecursionError) as exc:
        if not isinstance(message, Response):
            raise
        fallback = error_response(
            message.id, INTERNAL_ERROR, f"Internal error: result is not JSON ({exc})"
        )
        return _dumps(to_dict(fallback), ascii_only=True)
