"""A scripted agent session with the official MCP Python SDK as the client.

Over stdio (``graphonomous serve``) and Streamable HTTP (``graphonomous serve
--transport http`` on 127.0.0.1), surface ``all``: list every tool, call every
tool — each v1 tool, each v2 machine action, each memory-compat tool — with
valid arguments (the SDK validates every structuredContent against the
tool's outputSchema), read every resource, then run the memory loop through
the v2 machines: store a feedback loop → retrieve context (κ > 0) → route
topology → learn from outcomes → consolidate → retrieve again, where the
utility rerank must have changed the ranking.

Skipped unless the ``mcp`` package (SDK 1.x >= 1.30 or 2.x) is installed.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp_tool_calls import (
    MEMORY_CALLS,
    SEED_EDGES,
    SEED_GOAL,
    SEED_NODES,
    V1_CALLS,
    Placeholders,
    machine_calls,
)

from graphonomous.mcp.surfaces import SURFACES

mcp = pytest.importorskip("mcp")
anyio = pytest.importorskip("anyio")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SESSION_TIMEOUT_S = 300
QUERY = "how to fix a pressure loss on the valve"
# Three equally plausible fixes in a causal loop, and the symptom pointing into it.
FIXES = {
    "fix-seal": "To fix a pressure loss on the valve, replace the worn seal",
    "fix-bolts": "To fix a pressure loss on the valve, tighten the flange bolts",
    "fix-sensor": "To fix a pressure loss on the valve, recalibrate the pressure sensor",
}
LOOP = [("fix-seal", "fix-bolts"), ("fix-bolts", "fix-sensor"), ("fix-sensor", "fix-seal")]


def server_env() -> dict[str, str]:
    """The client's environment plus this checkout on PYTHONPATH (the SDK passes only a
    minimal environment to a stdio server unless told otherwise)."""
    paths = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def wire(model: Any) -> dict[str, Any]:
    """A result model as wire JSON (camelCase), for SDK 1.x and 2.x alike."""
    dumped: dict[str, Any] = model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


class Agent:
    """The scripted agent: one SDK ClientSession."""

    def __init__(self, session: Any) -> None:
        self.session = session

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Call a tool that must succeed (the SDK has validated structuredContent)."""
        result = wire(await self.session.call_tool(name, arguments))
        assert not result.get("isError"), (name, arguments, result)
        structured: dict[str, Any] = result["structuredContent"]
        return structured

    async def error(self, name: str, arguments: dict[str, Any]) -> str:
        result = wire(await self.session.call_tool(name, arguments))
        assert result.get("isError") is True, (name, result)
        text: str = result["content"][0]["text"]
        return text

    async def read(self, uri: str) -> str:
        result = wire(await self.session.read_resource(uri))
        (content,) = result["contents"]
        assert content["mimeType"] == "application/json"
        text: str = content["text"]
        return text


async def every_tool(agent: Agent) -> None:
    """Seed the graph, then call every tool of the `all` surface once, validly."""
    listed = wire(await agent.session.list_tools())
    assert "nextCursor" not in listed
    assert [t["name"] for t in listed["tools"]] == [t.name for t in SURFACES["all"]]
    for node in SEED_NODES:
        await agent.call("store_node", node)
    for edge in SEED_EDGES:
        await agent.call("store_edge", edge)
    goal = await agent.call("manage_goal", SEED_GOAL)
    placeholders = Placeholders(goal["goal"]["id"])
    called = set()
    for name, arguments in V1_CALLS.items():
        await agent.call(name, placeholders.resolve(arguments))
        called.add(name)
    for machine, _, arguments in machine_calls():
        await agent.call(machine, placeholders.resolve(arguments))
        called.add(machine)
    for name, arguments in MEMORY_CALLS:
        await agent.call(name, arguments)
        called.add(name)
    assert called == {t.name for t in SURFACES["all"]}
    assert "explode" in await agent.error("act", {"action": "explode"})
    assert "goal_id" in await agent.error(
        "act", {"action": "store_node", "content": "x", "goal_id": "g"}
    )
    resources = wire(await agent.session.list_resources())["resources"]
    for resource in resources:
        assert await agent.read(resource["uri"])
    templates = wire(await agent.session.list_resource_templates())["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["graphonomous://graph/node/{id}"]
    assert '"valve"' in await agent.read("graphonomous://graph/node/valve")


def ranking(context: dict[str, Any]) -> list[str]:
    return [r["node_id"] for r in context["results"] if r["node_id"] in FIXES]


async def memory_loop(agent: Agent) -> None:
    """retrieve → route → act → learn → consolidate → retrieve, through the v2 machines."""
    for node_id, content in FIXES.items():
        await agent.call(
            "act",
            {
                "action": "store_node",
                "content": content,
                "node_type": "procedural",
                "node_id": node_id,
            },
        )
    for source, target in LOOP:
        await agent.call(
            "act",
            {
                "action": "store_edge",
                "source_id": source,
                "target_id": target,
                "relationship": "causes",
            },
        )
    before = await agent.call("retrieve", {"action": "context", "query": QUERY, "limit": 10})
    assert before["topology"]["max_kappa"] > 0 and before["topology"]["routing"] == "deliberate"
    order = ranking(before)
    assert sorted(order) == sorted(FIXES)
    route = await agent.call("route", {"action": "topology", "node_ids": order})
    assert route["routing"] == "deliberate" and route["sccs"][0]["nodes"] == sorted(FIXES)
    plan = await agent.call("route", {"action": "deliberate", "node_ids": order})
    assert plan["plans"] and plan["plans"][0]["questions"]
    best, worst = order[0], order[-1]
    for attempt in range(3):  # the favourite keeps failing, the outsider keeps working
        for node_id, status in ((best, "failure"), (worst, "success")):
            learned = await agent.call(
                "learn",
                {
                    "action": "from_outcome",
                    "action_id": f"{node_id}-{attempt}",
                    "status": status,
                    "confidence": 0.9,
                    "causal_node_ids": [node_id],
                    "trace_id": "sdk-session",
                },
            )
            assert learned["status"] == status
    run = await agent.call("consolidate", {"action": "run"})
    assert run["dry_run"] is False and run["totals"]["nodes_after"] >= len(FIXES)
    after = await agent.call("retrieve", {"action": "context", "query": QUERY, "limit": 10})
    assert after["stats"]["utility_rerank"] is True
    new_order = ranking(after)
    # The outsider now leads; the favourite fell behind it (or out of the results).
    assert new_order != order and new_order[0] == worst


async def scripted_session(session: Any) -> None:
    with anyio.fail_after(SESSION_TIMEOUT_S):
        init = wire(await session.initialize())
        assert init["serverInfo"]["name"] == "graphonomous"
        assert "retrieve" in init["instructions"]
        agent = Agent(session)
        await every_tool(agent)
        await memory_loop(agent)


@asynccontextmanager
async def stdio_session(db: Path) -> AsyncIterator[Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "graphonomous", "serve", "--surface", "all", "--db", str(db)],
        env=server_env(),
        cwd=str(ROOT),
    )
    async with AsyncExitStack() as stack:
        read, write = await stack.enter_async_context(stdio_client(params))
        yield await stack.enter_async_context(ClientSession(read, write))


@asynccontextmanager
async def http_session(url: str) -> AsyncIterator[Any]:
    async with AsyncExitStack() as stack:
        # SDK 1.x yields (read, write, get_session_id), 2.x (read, write).
        streams = await stack.enter_async_context(streamable_http_client(url))
        yield await stack.enter_async_context(ClientSession(streams[0], streams[1]))


def test_agent_session_over_stdio(tmp_path: Path) -> None:
    async def main() -> None:
        async with stdio_session(tmp_path / "stdio.db") as session:
            await scripted_session(session)

    anyio.run(main)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def http_url(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "graphonomous",
        "serve",
        "--transport",
        "http",
        "--port",
        str(port),
        "--surface",
        "all",
        "--db",
        str(tmp_path / "http.db"),
    ]
    log = (tmp_path / "server.log").open("wb")
    proc = subprocess.Popen(command, env=server_env(), cwd=ROOT, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "server did not start"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        assert proc.wait(30) == 0  # SIGTERM is a clean stop
        log.close()


def test_agent_session_over_http(http_url: str) -> None:
    async def main() -> None:
        async with http_session(http_url) as session:
            await scripted_session(session)

    anyio.run(main)
