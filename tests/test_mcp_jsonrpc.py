"""JSON-RPC 2.0 framing (graphonomous.mcp.jsonrpc): parse_message and encode."""

from __future__ import annotations

import json

import pytest

from graphonomous.mcp.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    EncodedMember,
    ErrorEvent,
    Notification,
    Request,
    Response,
    RpcError,
    dumps_compact,
    encode,
    error_response,
    parse_message,
)


def wire(obj: object) -> bytes:
    return json.dumps(obj).encode()


@pytest.mark.parametrize("msg_id", [0, 1, -5, "", "0", "str-id-é", 10**40])
def test_valid_ids_give_requests_and_echo_exactly(msg_id: object) -> None:
    message = parse_message(wire({"jsonrpc": "2.0", "id": msg_id, "method": "ping"}))
    assert message == Request(msg_id, "ping", None)  # type: ignore[arg-type]
    assert isinstance(message, Request)
    echoed = json.loads(encode(Response(message.id, {})))
    assert echoed == {"jsonrpc": "2.0", "id": msg_id, "result": {}}


def test_huge_integer_id_is_echoed_digit_for_digit() -> None:
    digits = "9" * 4000
    message = parse_message('{"jsonrpc":"2.0","id":' + digits + ',"method":"ping"}')
    assert isinstance(message, Request)
    assert b'"id":' + digits.encode() + b"," in encode(Response(message.id, {}))


@pytest.mark.parametrize("bad_id", [None, True, False, 1.5, 1.0, [1], {"a": 1}])
def test_invalid_ids_are_invalid_requests_with_null_id(bad_id: object) -> None:
    message = parse_message(wire({"jsonrpc": "2.0", "id": bad_id, "method": "ping"}))
    assert isinstance(message, ErrorEvent)
    assert message.error.code == INVALID_REQUEST
    assert message.id is None and message.answer


def test_notification_has_no_id_and_params_may_be_absent_or_null() -> None:
    assert parse_message(wire({"jsonrpc": "2.0", "method": "x"})) == Notification("x")
    assert parse_message(wire({"jsonrpc": "2.0", "method": "x", "params": None})) == Notification(
        "x"
    )
    note = parse_message(wire({"jsonrpc": "2.0", "method": "x", "params": {"a": 1}}))
    assert note == Notification("x", {"a": 1})


def test_array_params_pass_the_framing_layer() -> None:
    # JSON-RPC allows by-position params; MCP answers them with -32602 (server test).
    message = parse_message(wire({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1]}))
    assert message == Request(1, "ping", [1])


@pytest.mark.parametrize(
    "obj",
    [
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        {"id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1},
        {"jsonrpc": "2.0", "id": 1, "method": 5},
        {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": "x"},
        {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": 3},
        {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": "1", "message": "m"}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": True, "message": "m"}},
        {"jsonrpc": "2.0", "id": 1, "error": "boom"},
    ],
)
def test_malformed_requests_are_invalid_request_echoing_a_valid_id(obj: dict[str, object]) -> None:
    message = parse_message(wire(obj))
    assert isinstance(message, ErrorEvent)
    assert message.error.code == INVALID_REQUEST
    assert message.id == 1 and message.answer


@pytest.mark.parametrize(
    "obj",
    [
        {"jsonrpc": "1.0", "method": "notifications/x"},
        {"jsonrpc": "2.0", "method": "notifications/x", "params": "x"},
    ],
)
def test_malformed_notifications_are_never_answered(obj: dict[str, object]) -> None:
    message = parse_message(wire(obj))
    assert isinstance(message, ErrorEvent) and not message.answer


@pytest.mark.parametrize("batch", ["[]", '[{"jsonrpc":"2.0","id":1,"method":"ping"}]'])
def test_batches_are_rejected(batch: str) -> None:
    message = parse_message(batch)
    assert isinstance(message, ErrorEvent)
    assert message.error.code == INVALID_REQUEST and message.id is None


@pytest.mark.parametrize("scalar", ["1", '"x"', "null", "true"])
def test_non_object_json_is_invalid_request(scalar: str) -> None:
    message = parse_message(scalar)
    assert isinstance(message, ErrorEvent) and message.error.code == INVALID_REQUEST


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"{",
        b'{"jsonrpc":"2.0","id":4,"method":"ping"',
        b"\xff\xfe\x00garbage",
        b'{"jsonrpc":"2.0","id":1,"method":"\xc3\x28"}',
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}',
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":-Infinity}}',
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
        b'{"jsonrpc":"2.0","id":' + b"1" * 5000 + b',"method":"ping"}',
    ],
)
def test_unparsable_input_is_parse_error_with_null_id(raw: bytes) -> None:
    message = parse_message(raw)
    assert isinstance(message, ErrorEvent)
    assert message.error.code == PARSE_ERROR
    assert message.id is None and message.answer
    assert json.loads(encode(message.reply()))["id"] is None


def test_ten_megabyte_string_parses() -> None:
    big = "x" * 10_000_000
    message = parse_message(
        wire({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"p": big}})
    )
    assert isinstance(message, Request) and message.params == {"p": big}


def test_utf8_bom_is_tolerated() -> None:
    raw = b"\xef\xbb\xbf" + wire({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert parse_message(raw) == Request(1, "ping")


def test_responses_from_the_peer() -> None:
    assert parse_message(wire({"jsonrpc": "2.0", "id": 3, "result": {"a": 1}})) == Response(
        3, {"a": 1}
    )
    error = parse_message(
        wire({"jsonrpc": "2.0", "id": None, "error": {"code": -1, "message": "m"}})
    )
    assert error == Response(None, error=RpcError(-1, "m"))


def test_encode_is_one_line_of_utf8_without_ascii_escapes() -> None:
    data = encode(Response(1, {"text": "line1\nline2 é ✓ \u2028"}))
    assert b"\n" not in data
    assert "é ✓".encode() in data
    assert json.loads(data)["result"]["text"] == "line1\nline2 é ✓ \u2028"


@pytest.mark.parametrize(
    "members",
    [
        {"content": [{"type": "text", "text": 'a"b é'}], "value": {"x": [1, 2.5, None, "✓\u2028"]}},
        {"value": {}},
        {"content": [], "value": "only \\ text"},
    ],
)
def test_an_encoded_member_is_written_from_its_text_with_the_same_bytes(
    members: dict[str, object],
) -> None:
    reply = EncodedMember(members, "value", dumps_compact(members["value"]))
    assert encode(Response(7, reply)) == encode(Response(7, dict(members)))
    # the text is what goes out: a text that differs from the value shows
    reply = EncodedMember(members, "value", '{"marker":1}')
    assert json.loads(encode(Response(7, reply)))["result"]["value"] == {"marker": 1}


def test_an_encoded_member_that_is_not_last_is_encoded_from_its_value() -> None:
    reply = EncodedMember({"value": [1], "later": 2}, "value", '{"marker":1}')
    assert json.loads(encode(Response(1, reply)))["result"] == {"value": [1], "later": 2}


def test_an_encoded_member_with_lone_surrogates_falls_back_to_ascii() -> None:
    members = {"content": [], "value": {"t": "\ud800"}}
    reply = EncodedMember(members, "value", dumps_compact(members["value"]))
    assert json.loads(encode(Response(1, reply)))["result"] == members


def test_encode_falls_back_to_ascii_for_lone_surrogates() -> None:
    message = parse_message('{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}')
    assert isinstance(message, Request)
    data = encode(Response(message.id, {}))
    assert json.loads(data)["id"] == "\ud800"


def test_encode_turns_unserialisable_results_into_internal_errors() -> None:
    for result in ({"x": float("nan")}, {"x": object()}):
        decoded = json.loads(encode(Response(7, result)))
        assert decoded["id"] == 7 and decoded["error"]["code"] == INTERNAL_ERROR


def test_encode_shapes() -> None:
    assert json.loads(encode(Notification("n"))) == {"jsonrpc": "2.0", "method": "n"}
    assert json.loads(encode(Request(0, "m", {"a": 1}))) == {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "m",
        "params": {"a": 1},
    }
    assert json.loads(encode(error_response(None, -32700, "Parse error", {"k": 1}))) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error", "data": {"k": 1}},
    }
