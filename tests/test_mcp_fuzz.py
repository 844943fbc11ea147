"""Hostile input through parse_message + McpServer.handle: the right error every time.

A seeded generator sends 10,000+ malformed messages, each with the answer it
must get; Hypothesis adds arbitrary bytes and arbitrary JSON-RPC-shaped
objects checked against invariants.  Afterwards the server must still
answer ping.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphonomous import Graphonomous
from graphonomous.mcp import build_server
from graphonomous.mcp.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND,
    Response,
    encode,
    is_valid_id,
    parse_message,
)
from graphonomous.mcp.server import McpServer

SEED = 20260321
MESSAGES = 10_000
KNOWN_METHODS = (
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
)


@dataclass(frozen=True)
class Expect:
    """What one message must produce: an error code, a result, a tool error, or silence."""

    kind: str  # "error" | "result" | "tool_error" | "silent"
    code: int | None = None
    id: Any = None


@pytest.fixture(scope="module")
def server() -> Iterator[McpServer]:
    with Graphonomous(":memory:") as graph:
        yield build_server(graph, "all")  # every tool: v2 machines, v1, memory-compat


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode("utf-8", "surrogatepass")


def any_id(rng: random.Random) -> Any:
    return rng.choice(
        [
            rng.randint(-(10**6), 10**6),
            0,
            int("9" * rng.randint(20, 4000)),
            -int("1" * rng.randint(20, 400)),
            "",
            "".join(rng.choice(string.printable) for _ in range(rng.randint(1, 30))),
            "é✓\u2028\x00",
        ]
    )


def junk_value(rng: random.Random) -> Any:
    return rng.choice([None, True, 0, -1.5, "x", [], [1, "a"], {}, {"k": [None]}])


def request(msg_id: Any, method: Any, params: Any = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        out["params"] = params
    out.update(extra)
    return out


def generate(rng: random.Random) -> tuple[bytes, Expect]:
    """One hostile message and its expected answer."""
    case = rng.randrange(20)
    msg_id = any_id(rng)
    if case == 0:  # binary garbage (never valid UTF-8: starts with 0xFF)
        return b"\xff" + rng.randbytes(rng.randint(0, 200)), Expect("error", PARSE_ERROR)
    if case == 1:  # a valid request cut short
        full = dumps(request(msg_id, "ping"))
        return full[: rng.randrange(len(full) - 1)], Expect("error", PARSE_ERROR)
    if case == 2:  # NaN / Infinity literals
        literal = rng.choice(["NaN", "Infinity", "-Infinity"])
        return (
            b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":' + literal.encode() + b"}}",
            Expect("error", PARSE_ERROR),
        )
    if case == 3:  # nesting deeper than any recursion limit
        depth = rng.choice([20_000, 100_000])
        opener, closer = rng.choice([(b"[", b"]"), (b'{"a":', b"}")])
        body = opener * depth + b"1" + closer * depth
        return b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"p":' + body + b"}}", Expect(
            "error", PARSE_ERROR
        )
    if case == 4:  # batches
        batch = [request(i, "ping") for i in range(rng.randint(0, 4))]
        return dumps(batch), Expect("error", INVALID_REQUEST)
    if case == 5:  # top-level scalars
        return dumps(rng.choice([1, "x", None, True, 2.5])), Expect("error", INVALID_REQUEST)
    if case == 6:  # invalid ids
        bad = rng.choice([None, True, False, 1.5, 2.0, [1], {"id": 1}])
        return dumps(request(bad, "ping")), Expect("error", INVALID_REQUEST)
    if case == 7:  # wrong jsonrpc version
        version = rng.choice(["1.0", "2", 2.0, None, ""])
        return dumps(request(msg_id, "ping", jsonrpc=version)), Expect(
            "error", INVALID_REQUEST, msg_id
        )
    if case == 8:  # method not a string, or params not structured
        if rng.random() < 0.5:
            raw = dumps(request(msg_id, rng.choice([1, None, [], {}, True])))
        else:
            raw = dumps(request(msg_id, "ping", rng.choice(["p", 3, True, 1.5])))
        return raw, Expect("error", INVALID_REQUEST, msg_id)
    if case == 9:  # unknown methods (including MCP ones we do not serve)
        method = rng.choice(
            [
                "prompts/list",
                "prompts/get",
                "logging/setLevel",
                "server/discover",
                "completion/complete",
                "".join(rng.choice(string.ascii_letters + "/_") for _ in range(rng.randint(0, 20))),
            ]
        )
        if method in KNOWN_METHODS:
            method += "!"
        return dumps(request(msg_id, method, {"a": junk_value(rng)})), Expect(
            "error", METHOD_NOT_FOUND, msg_id
        )
    if case == 10:  # known methods with by-position params
        method = rng.choice(KNOWN_METHODS)
        return dumps(request(msg_id, method, [junk_value(rng)])), Expect(
            "error", INVALID_PARAMS, msg_id
        )
    if case == 11:  # tools/call protocol mistakes
        params = rng.choice(
            [
                {},
                {"name": junk_value(rng)},
                {"name": "no_such_tool_" + str(rng.random())},
                {"name": "store_node", "arguments": rng.choice([[1], "x", 3, True])},
            ]
        )
        if params.get("name") in (None,) and "name" in params:
            params = {"name": 7}
        return dumps(request(msg_id, "tools/call", params)), Expect("error", INVALID_PARAMS, msg_id)
    if case == 12:  # arguments that break a tool's input schema
        cases: list[tuple[str, dict[str, Any]]] = [
            ("store_node", {"content": junk_value(rng) if rng.random() < 0.5 else 5}),
            ("store_node", {"content": "x", "confidence": rng.choice([-1, 2, "high"])}),
            ("store_node", {"content": "x", "node_type": "opinion"}),
            ("store_edge", {"source_id": 1, "target_id": "b"}),
            ("query_graph", {"operation": "drop_table"}),
            ("topology_analyze", {"node_ids": "all"}),
            ("graph_stats", {"x": 1}),
            ("delete_node", {}),
            ("act", {"action": "explode"}),
            ("act", {"action": "store_node"}),
            ("retrieve", {"action": "context", "content": "x"}),
            ("learn", {"action": "from_outcome", "status": "meh"}),
            ("consolidate", {}),
        ]
        name, arguments = rng.choice(cases)
        if name == "store_node" and isinstance(arguments.get("content"), str):
            arguments = {"content": 5}
        return dumps(request(msg_id, "tools/call", {"name": name, "arguments": arguments})), Expect(
            "tool_error", None, msg_id
        )
    if case == 13:  # notifications, known or not, well-formed or not: never answered
        note: dict[str, Any] = {
            "jsonrpc": rng.choice(["2.0", "2.0", "1.0"]),
            "method": rng.choice(["notifications/initialized", "ping", "tools/call", "x/y", ""]),
        }
        if rng.random() < 0.7:
            note["params"] = junk_value(rng)
        return dumps(note), Expect("silent")
    if case == 14:  # huge and odd ids on a valid ping
        return dumps(request(msg_id, "ping")), Expect("result", None, msg_id)
    if case == 15:  # lone surrogates in ids (valid JSON escapes, not UTF-8)
        return b'{"jsonrpc":"2.0","id":"\\ud800x","method":"ping"}', Expect(
            "result", None, "\ud800x"
        )
    if case == 16:  # unknown resources
        uri = rng.choice(
            ["nosuch://x", "graphonomous://graph/node/", "graphonomous://graph/node/zz"]
        )
        return dumps(request(msg_id, "resources/read", {"uri": uri})), Expect(
            "error", RESOURCE_NOT_FOUND, msg_id
        )
    if case == 17:  # invalid cursors
        cursor = rng.choice(["bogus", "", "=", "dG9vbHM6MTpiYWQ", 5, []])
        method = rng.choice(["tools/list", "resources/list", "resources/templates/list"])
        return dumps(request(msg_id, method, {"cursor": cursor})), Expect(
            "error", INVALID_PARAMS, msg_id
        )
    if case == 18:  # responses from the client (we never asked): ignored
        return dumps({"jsonrpc": "2.0", "id": msg_id, "result": junk_value(rng)}), Expect("silent")
    # case 19: messages that are neither request, notification nor response
    return dumps({"jsonrpc": "2.0", "id": msg_id, "params": {}}), Expect(
        "error", INVALID_REQUEST, msg_id
    )


def check(server: McpServer, raw: bytes, expect: Expect) -> None:
    message = parse_message(raw)
    out = server.handle(message)
    for item in out:
        encoded = encode(item)
        assert b"\n" not in encoded
        json.loads(encoded)
    if expect.kind == "silent":
        assert out == [], (raw[:200], out)
        return
    assert len(out) == 1, (raw[:200], out)
    (reply,) = out
    assert isinstance(reply, Response)
    assert reply.id == expect.id, (raw[:200], reply)
    if expect.kind == "error":
        assert reply.error is not None and reply.error.code == expect.code, (raw[:200], reply)
    elif expect.kind == "tool_error":
        assert reply.error is None and reply.result["isError"] is True, (raw[:200], reply)
    else:
        assert reply.error is None, (raw[:200], reply)


def test_seeded_hostile_messages(server: McpServer) -> None:
    rng = random.Random(SEED)
    seen: dict[str, int] = {}
    for _ in range(MESSAGES):
        raw, expect = generate(rng)
        check(server, raw, expect)
        seen[expect.kind] = seen.get(expect.kind, 0) + 1
    assert set(seen) == {"error", "result", "tool_error", "silent"}
    # A few 10 MB strings, where the transports would see them.
    big = "x" * 10_000_000
    check(server, dumps(request(1, "ping", {"_meta": {"pad": big}})), Expect("result", None, 1))
    check(server, dumps(request(2, "nope", {"pad": big})), Expect("error", METHOD_NOT_FOUND, 2))
    check(
        server,
        dumps(request(3, "tools/call", {"name": "store_node", "arguments": {"content": big}})),
        Expect("tool_error", None, 3),  # longer than model.MAX_CONTENT_CHARS
    )
    check(server, dumps(request(0, "ping")), Expect("result", None, 0))


@settings(
    max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_escape(server: McpServer, raw: bytes) -> None:
    out = server.handle(parse_message(raw))
    for item in out:
        assert isinstance(item, Response) and item.error is not None
        assert item.error.code in (PARSE_ERROR, INVALID_REQUEST)
        encode(item)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)  # JSON has neither
    | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)
rpc_shaped = st.dictionaries(
    st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"]),
    st.one_of(
        json_values,
        st.sampled_from(["2.0", *KNOWN_METHODS, "tools/call", "notifications/cancelled"]),
        st.fixed_dictionaries({"name": st.sampled_from(["store_node", "graph_stats", "x"])}),
    ),
)


@settings(
    max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rpc_shaped)
def test_arbitrary_rpc_objects_follow_the_invariants(
    server: McpServer, obj: dict[str, Any]
) -> None:
    out = server.handle(parse_message(json.dumps(obj)))
    for item in out:
        json.loads(encode(item))
    has_valid_id = is_valid_id(obj.get("id"))
    if "id" not in obj and isinstance(obj.get("method"), str):
        assert out == []  # a notification, well-formed or not
    elif has_valid_id and obj.get("jsonrpc") == "2.0" and isinstance(obj.get("method"), str):
        responses = [m for m in out if isinstance(m, Response)]
        assert len(responses) == 1 and responses[0].id == obj["id"]
    assert len([m for m in out if isinstance(m, Response)]) <= 1


def test_server_still_answers_ping_afterwards(server: McpServer) -> None:
    assert server.receive(b'{"jsonrpc":"2.0","id":0,"method":"ping"}') == [Response(0, {})]
