"""The MCP protocol core (McpServer) against fake tools and resources: no graph, no I/O."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any

import pytest

from graphonomous.mcp.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND,
    Notification,
    Outgoing,
    Request,
    Response,
    encode,
)
from graphonomous.mcp.resources import (
    ResourceContext,
    ResourceNotFound,
    ResourceSpec,
    ResourceTemplate,
)
from graphonomous.mcp.server import (
    LATEST_PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS,
    McpServer,
    encode_cursor,
)
from graphonomous.mcp.tools import ToolAnnotations, ToolSpec
from graphonomous.model import NotFoundError, ValidationError
from graphonomous.store import StoreError

READ = ToolAnnotations(read_only=True, destructive=False, idempotent=True)


def spec(name: str, handler: Any, **props: Any) -> ToolSpec:
    return ToolSpec(
        name=name,
        title=name.title(),
        description=f"test tool {name}",
        input_schema={
            "type": "object",
            "properties": props or {"text": {"type": "string", "minLength": 1}},
            "additionalProperties": False,
        },
        output_schema={
            "type": "object",
            "properties": {"echo": {"type": "object"}},
            "required": ["echo"],
        },
        annotations=READ,
        handler=handler,
    )


def echo(graph: Any, args: dict[str, Any]) -> dict[str, Any]:
    return {"echo": args, "graph": graph}


def raiser(exc: BaseException) -> Any:
    def handler(graph: Any, args: dict[str, Any]) -> dict[str, Any]:
        raise exc

    return handler


TOOLS = (
    spec("echo", echo),
    spec("bad_value", raiser(ValidationError("content", "must not be empty"))),
    spec("missing", raiser(NotFoundError("node", "n-1"))),
    spec("storage", raiser(StoreError("disk full"))),
    spec("crash", raiser(RuntimeError("kaboom"))),
    spec("not_a_dict", lambda graph, args: ["no"]),
    spec("nan", lambda graph, args: {"echo": {}, "x": float("nan")}),
    spec("wrong_output", lambda graph, args: {"other": 1}),
)


def read_static(ctx: ResourceContext) -> dict[str, Any]:
    return {"name": ctx.server_name, "graph": ctx.graph}


def read_item(ctx: ResourceContext, variables: Mapping[str, str]) -> dict[str, Any]:
    if variables["id"] == "missing":
        raise ResourceNotFound("no item missing")
    if variables["id"] == "gone":
        raise NotFoundError("node", "gone")
    if variables["id"] == "boom":
        raise RuntimeError("reader bug")
    return {"id": variables["id"]}


RESOURCES = (ResourceSpec("test://static", "static", "Static", "a static resource", read_static),)
TEMPLATES = (ResourceTemplate("test://item/{id}", "item", "Item", "items", read_item),)


@pytest.fixture
def server() -> McpServer:
    return McpServer("GRAPH", TOOLS, RESOURCES, TEMPLATES, instructions="hi", check_output=True)


def call(server: McpServer, method: str, params: Any = None, msg_id: Any = 1) -> Any:
    """The single response to a request, as a wire dict."""
    out = server.handle(Request(msg_id, method, params))
    responses = [m for m in out if isinstance(m, Response)]
    assert len(responses) == 1
    decoded = json.loads(encode(responses[0]))
    assert decoded["id"] == msg_id
    return decoded


def result(server: McpServer, method: str, params: Any = None) -> Any:
    reply = call(server, method, params)
    assert "error" not in reply, reply
    return reply["result"]


def error_code(server: McpServer, method: str, params: Any = None) -> int:
    reply = call(server, method, params)
    assert "result" not in reply, reply
    code: int = reply["error"]["code"]
    return code


# -- lifecycle ------------------------------------------------------------------


@pytest.mark.parametrize("version", SUPPORTED_PROTOCOL_VERSIONS)
def test_initialize_echoes_supported_versions(server: McpServer, version: str) -> None:
    init = result(server, "initialize", {"protocolVersion": version, "capabilities": {}})
    assert init["protocolVersion"] == version
    assert server.protocol_version == version


@pytest.mark.parametrize("version", ["1999-01-01", "2026-07-28", 20251125, None])
def test_initialize_answers_latest_for_unsupported_versions(
    server: McpServer, version: Any
) -> None:
    init = result(server, "initialize", {"protocolVersion": version})
    assert init["protocolVersion"] == LATEST_PROTOCOL_VERSION == "2025-11-25"


def test_initialize_result_shape(server: McpServer) -> None:
    init = result(
        server,
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {"extensions": {}, "sampling": {}, "elicitation": {}, "roots": {}},
            "clientInfo": {"name": "t", "version": "1"},
        },
    )
    assert init["capabilities"] == {
        "tools": {"listChanged": False},
        "resources": {"subscribe": False, "listChanged": False},
    }
    assert init["serverInfo"]["name"] == "graphonomous"
    assert isinstance(init["serverInfo"]["version"], str)
    assert init["instructions"] == "hi"
    assert result(server, "initialize")["protocolVersion"] == LATEST_PROTOCOL_VERSION


def test_no_resources_capability_without_resources() -> None:
    bare = McpServer(None, TOOLS)
    assert result(bare, "initialize")["capabilities"] == {"tools": {"listChanged": False}}
    assert error_code(bare, "resources/list") == METHOD_NOT_FOUND


def test_initialized_notification_is_not_answered(server: McpServer) -> None:
    assert server.handle(Notification("notifications/initialized")) == []
    assert server.initialized


def test_requests_before_initialize_are_served(server: McpServer) -> None:
    assert result(server, "ping") == {}
    assert len(result(server, "tools/list")["tools"]) == len(TOOLS)


@pytest.mark.parametrize("msg_id", [0, "0", "", -1, 2**80])
def test_ping_echoes_any_valid_id(server: McpServer, msg_id: Any) -> None:
    assert call(server, "ping", None, msg_id)["result"] == {}


@pytest.mark.parametrize(
    "method",
    [
        "prompts/list",
        "prompts/get",
        "logging/setLevel",
        "completion/complete",
        "server/discover",
        "resources/subscribe",
        "sampling/createMessage",
        "no/such/method",
        "",
    ],
)
def test_unknown_methods_are_method_not_found(server: McpServer, method: str) -> None:
    assert error_code(server, method, {}) == METHOD_NOT_FOUND


@pytest.mark.parametrize("method", ["ping", "tools/list", "tools/call", "initialize"])
def test_array_params_are_invalid_params(server: McpServer, method: str) -> None:
    assert error_code(server, method, [1, 2]) == INVALID_PARAMS


@pytest.mark.parametrize(
    "method", ["ping", "tools/list", "notifications/initialized", "notifications/nope", "x"]
)
def test_notifications_are_never_answered(server: McpServer, method: str) -> None:
    assert server.handle(Notification(method, {"a": 1})) == []
    assert server.handle(Notification(method, [1])) == []


def test_responses_from_the_client_are_ignored(server: McpServer) -> None:
    assert server.handle(Response(5, {})) == []


def test_receive_parses_raw_messages(server: McpServer) -> None:
    assert server.receive(b'{"jsonrpc":"2.0","id":0,"method":"ping"}') == [Response(0, {})]
    (parse,) = server.receive(b"{oops")
    assert isinstance(parse, Response) and parse.error and parse.error.code == PARSE_ERROR
    assert parse.id is None
    (batch,) = server.receive(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]')
    assert isinstance(batch, Response) and batch.error and batch.error.code == INVALID_REQUEST
    assert server.receive(b'{"jsonrpc":"2.0","method":"ping","params":7}') == []


# -- tools/list and pagination ------------------------------------------------------


def test_tools_list_entries(server: McpServer) -> None:
    tools = result(server, "tools/list")["tools"]
    assert [t["name"] for t in tools] == [t.name for t in TOOLS]
    first = tools[0]
    assert set(first) == {
        "name",
        "title",
        "description",
        "inputSchema",
        "outputSchema",
        "annotations",
    }
    assert first["inputSchema"]["type"] == "object"
    assert first["annotations"] == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }


def test_tools_list_pages_with_opaque_cursors() -> None:
    paged = McpServer(None, TOOLS, page_size=3)
    names: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = result(paged, "tools/list", {} if cursor is None else {"cursor": cursor})
        names += [t["name"] for t in page["tools"]]
        pages += 1
        cursor = page.get("nextCursor")
        if cursor is None:
            break
        assert isinstance(cursor, str) and "echo" not in cursor
    assert names == [t.name for t in TOOLS] and pages == 3
    # Deterministic: the same request gives the same page and cursor.
    assert result(paged, "tools/list") == result(paged, "tools/list")


@pytest.mark.parametrize("cursor", ["bogus-cursor", "", "=", 5, None, "x" * 500])
def test_invalid_cursors_are_invalid_params(cursor: Any) -> None:
    paged = McpServer(None, TOOLS, page_size=3)
    if cursor is None:  # explicit null means "first page"
        assert result(paged, "tools/list", {"cursor": None})["tools"]
        return
    assert error_code(paged, "tools/list", {"cursor": cursor}) == INVALID_PARAMS


def test_cursors_are_bound_to_their_list() -> None:
    paged = McpServer(None, TOOLS, RESOURCES, TEMPLATES, page_size=3)
    cursor = result(paged, "tools/list")["nextCursor"]
    assert error_code(paged, "resources/list", {"cursor": cursor}) == INVALID_PARAMS
    other = McpServer(None, TOOLS[:-1], page_size=3)  # a changed tool list
    assert error_code(other, "tools/list", {"cursor": cursor}) == INVALID_PARAMS
    past_end = encode_cursor("tools", 99, [t.name for t in TOOLS])
    assert error_code(paged, "tools/list", {"cursor": past_end}) == INVALID_PARAMS


# -- tools/call -------------------------------------------------------------------


def test_call_returns_text_and_structured_content(server: McpServer) -> None:
    out = result(server, "tools/call", {"name": "echo", "arguments": {"text": "é ✓"}})
    assert out["structuredContent"] == {"echo": {"text": "é ✓"}, "graph": "GRAPH"}
    compact = json.dumps(out["structuredContent"], ensure_ascii=False, separators=(",", ":"))
    assert out["content"] == [{"type": "text", "text": compact}]
    assert "isError" not in out


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"arguments": {}},
        {"name": 5},
        {"name": None},
        {"name": "no_such_tool"},
        {"name": "echo", "arguments": [1]},
        {"name": "echo", "arguments": "text"},
        {"name": "echo", "arguments": 3},
    ],
)
def test_protocol_mistakes_in_tools_call_are_invalid_params(
    server: McpServer, params: dict[str, Any]
) -> None:
    assert error_code(server, "tools/call", params) == INVALID_PARAMS


def test_tools_call_without_params_is_invalid_params(server: McpServer) -> None:
    assert error_code(server, "tools/call") == INVALID_PARAMS


def test_missing_or_null_arguments_mean_empty(server: McpServer) -> None:
    # echo's schema requires nothing, so {} is valid input.
    assert result(server, "tools/call", {"name": "echo"})["structuredContent"]["echo"] == {}
    assert result(server, "tools/call", {"name": "echo", "arguments": None})["structuredContent"]


def tool_error_text(server: McpServer, name: str, arguments: Any = None) -> str:
    out = result(server, "tools/call", {"name": name, "arguments": arguments or {}})
    assert out["isError"] is True
    assert "structuredContent" not in out
    (item,) = out["content"]
    assert item["type"] == "text"
    text: str = item["text"]
    return text


def test_schema_violations_are_error_results_naming_the_field(server: McpServer) -> None:
    text = tool_error_text(server, "echo", {"text": 5})
    assert "text" in text and "must be" in text
    text = tool_error_text(server, "echo", {"text": "ok", "extra": 1})
    assert "extra" in text
    assert "text" in tool_error_text(server, "echo", {"text": ""})


def test_tool_failures_are_error_results(
    server: McpServer, caplog: pytest.LogCaptureFixture
) -> None:
    assert tool_error_text(server, "bad_value") == "Invalid argument 'content': must not be empty"
    assert "node not found: n-1" in tool_error_text(server, "missing")
    assert "disk full" in tool_error_text(server, "storage")
    crash = tool_error_text(server, "crash")
    assert "crash" in crash and "kaboom" in crash and "Traceback" not in crash
    assert "not an object" in tool_error_text(server, "not_a_dict")
    assert "Internal error" in tool_error_text(server, "nan")
    assert "output" in tool_error_text(server, "wrong_output")
    assert "kaboom" in caplog.text  # logged with its traceback
    assert result(server, "ping") == {}  # still serving


def test_output_is_not_checked_unless_asked() -> None:
    lax = McpServer(None, TOOLS)
    out = result(lax, "tools/call", {"name": "wrong_output"})
    assert out["structuredContent"] == {"other": 1}


def test_progress_token_gets_a_progress_notification(server: McpServer) -> None:
    params = {"name": "echo", "arguments": {}, "_meta": {"progressToken": "tok"}}
    out = server.handle(Request(3, "tools/call", params))
    assert isinstance(out[0], Notification) and out[0].method == "notifications/progress"
    assert out[0].params == {"progressToken": "tok", "progress": 1, "total": 1}
    assert isinstance(out[-1], Response) and out[-1].id == 3


def test_duplicate_tool_names_are_refused() -> None:
    with pytest.raises(ValueError):
        McpServer(None, (TOOLS[0], TOOLS[0]))


def test_bad_tool_schemas_are_refused_when_declared() -> None:
    with pytest.raises(ValueError):
        ToolSpec("t", "T", "d", {"type": "array"}, None, READ, echo)


# -- cancellation -------------------------------------------------------------------


def test_cancelling_an_in_flight_request_drops_its_response() -> None:
    started, release = threading.Event(), threading.Event()

    def slow(graph: Any, args: dict[str, Any]) -> dict[str, Any]:
        started.set()
        release.wait(10)
        return {"echo": {}}

    server = McpServer(None, (spec("slow", slow),))
    outputs: list[list[Outgoing]] = []
    worker = threading.Thread(
        target=lambda: outputs.append(server.handle(Request(9, "tools/call", {"name": "slow"})))
    )
    worker.start()
    assert started.wait(10)
    cancel = Notification("notifications/cancelled", {"requestId": 9, "reason": "user"})
    assert server.handle(cancel) == []
    release.set()
    worker.join(10)
    assert outputs == [[]]
    # The id is forgotten afterwards: a new request with id 9 is answered.
    started.clear()
    release.set()
    assert server.handle(Request(9, "tools/call", {"name": "slow"}))[-1] == Response(
        9,
        {"content": [{"type": "text", "text": '{"echo":{}}'}], "structuredContent": {"echo": {}}},
    )


@pytest.mark.parametrize("params", [{"requestId": 1}, {"requestId": None}, {}, [1], None])
def test_cancelling_unknown_or_finished_requests_is_ignored(server: McpServer, params: Any) -> None:
    assert server.handle(Notification("notifications/cancelled", params)) == []
    assert result(server, "ping") == {}


# -- resources -------------------------------------------------------------------


def test_resource_lists(server: McpServer) -> None:
    assert result(server, "resources/list") == {
        "resources": [
            {
                "uri": "test://static",
                "name": "static",
                "title": "Static",
                "description": "a static resource",
                "mimeType": "application/json",
            }
        ]
    }
    templates = result(server, "resources/templates/list")["resourceTemplates"]
    assert templates[0]["uriTemplate"] == "test://item/{id}"


def test_resource_read(server: McpServer) -> None:
    (content,) = result(server, "resources/read", {"uri": "test://static"})["contents"]
    assert content["uri"] == "test://static" and content["mimeType"] == "application/json"
    assert json.loads(content["text"]) == {"name": "graphonomous", "graph": "GRAPH"}
    (item,) = result(server, "resources/read", {"uri": "test://item/a%2Fb%20c"})["contents"]
    assert json.loads(item["text"]) == {"id": "a/b c"}


@pytest.mark.parametrize(
    "uri",
    ["nosuch://x", "test://item/", "test://item/a/b", "test://item/missing", "test://item/gone"],
)
def test_unknown_resources_are_resource_not_found(server: McpServer, uri: str) -> None:
    reply = call(server, "resources/read", {"uri": uri})
    assert reply["error"]["code"] == RESOURCE_NOT_FOUND
    assert reply["error"]["data"] == {"uri": uri}


def test_resource_read_protocol_errors(server: McpServer) -> None:
    assert error_code(server, "resources/read", {}) == INVALID_PARAMS
    assert error_code(server, "resources/read", {"uri": 5}) == INVALID_PARAMS
    assert error_code(server, "resources/read", {"uri": "test://item/boom"}) == INTERNAL_ERROR
    assert result(server, "ping") == {}
