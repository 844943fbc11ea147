"""Competitor adapters behind one interface: ingest, retrieve, forget, stats (category 14).

Rules of this file: every adapter is a real implementation — no stubs.
`GraphonomousAdapter` drives the facade; `Bm25Adapter` is a BM25-only
baseline (this package's `Bm25Index`, no graph, no embeddings);
`ServerMemoryAdapter` talks to `@modelcontextprotocol/server-memory` over MCP
stdio (newline-delimited JSON-RPC, stdlib only) when ``node`` and the package
are found (`find_server_memory`), and raises `AdapterUnavailable` with the
reason otherwise.  Items are ``(item_id, text)``; links ``(source_id,
target_id)`` (adapters without a graph ignore them, and say so in `stats`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

from ..model import GraphonomousError
from ..retrieval.bm25 import Bm25Index

if TYPE_CHECKING:
    from ..api import Graphonomous

SERVER_MEMORY_ENV: Final = "GRAPHONOMOUS_SERVER_MEMORY"
"""Path of server-memory's ``dist/index.js``; else searched under `SERVER_MEMORY_ROOTS`."""
SERVER_MEMORY_ROOTS: Final = ("/tmp/graphonomous-mcp-tools", "/tmp/mcp-test-tools", "/tmp/fid-npm")
SERVER_MEMORY_SCRIPT: Final = "node_modules/@modelcontextprotocol/server-memory/dist/index.js"
RPC_TIMEOUT_S: Final = 20.0


class AdapterUnavailable(GraphonomousError, RuntimeError):
    """The competitor cannot run here (the message says why)."""


class Adapter(Protocol):
    name: str

    def ingest(
        self, items: Sequence[tuple[str, str]], links: Sequence[tuple[str, str]] = ()
    ) -> None: ...

    def retrieve(self, query: str, k: int) -> list[str]: ...

    def forget(self, item_id: str) -> None: ...

    def stats(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


class GraphonomousAdapter:
    """The product: items are semantic nodes, links `supports` edges; retrieval is
    `retrieve_context` (default effort), forgetting `forget_node(mode="hard")`."""

    name = "graphonomous"

    def __init__(self, graph: Graphonomous) -> None:
        self.graph = graph

    def ingest(
        self, items: Sequence[tuple[str, str]], links: Sequence[tuple[str, str]] = ()
    ) -> None:
        for item_id, text in items:
            self.graph.store_node(text, node_id=item_id)
        for source, target in links:
            self.graph.store_edge(source, target, "supports", strength=0.9)

    def retrieve(self, query: str, k: int) -> list[str]:
        results = self.graph.retrieve_context(query, limit=k)["results"]
        return [r["node_id"] for r in results]

    def forget(self, item_id: str) -> None:
        self.graph.forget_node(item_id, mode="hard")

    def stats(self) -> dict[str, Any]:
        stats = self.graph.graph_stats()
        return {"items": stats["node_count"], "links": stats["edge_count"], "graph": True}

    def close(self) -> None:
        """The graph belongs to the caller."""


class Bm25Adapter:
    """BM25 over the item texts only; links are not used (``graph: False``)."""

    name = "bm25"

    def __init__(self) -> None:
        self.index = Bm25Index()
        self.links_ignored = 0

    def ingest(
        self, items: Sequence[tuple[str, str]], links: Sequence[tuple[str, str]] = ()
    ) -> None:
        self.index.add_many(items)
        self.links_ignored += len(links)

    def retrieve(self, query: str, k: int) -> list[str]:
        return [doc_id for doc_id, _ in self.index.search(query, k)]

    def forget(self, item_id: str) -> None:
        self.index.remove(item_id)

    def stats(self) -> dict[str, Any]:
        return {
            "items": len(self.index),
            "links": 0,
            "graph": False,
            "links_ignored": self.links_ignored,
        }

    def close(self) -> None:
        """Nothing to release."""


def find_server_memory() -> tuple[str, str]:
    """``(node, script)`` for server-memory, or AdapterUnavailable naming what is missing."""
    node = shutil.which("node")
    if node is None:
        raise AdapterUnavailable("node is not installed")
    candidates = [os.environ.get(SERVER_MEMORY_ENV, "")]
    candidates += [str(Path(root) / SERVER_MEMORY_SCRIPT) for root in SERVER_MEMORY_ROOTS]
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return node, candidate
    raise AdapterUnavailable(
        "@modelcontextprotocol/server-memory is not installed "
        f"(set {SERVER_MEMORY_ENV} to its dist/index.js)"
    )


class ServerMemoryAdapter:
    """`@modelcontextprotocol/server-memory` over MCP stdio: items are entities (type
    "fact", the text as the observation), links relations "supports"; retrieval is
    `search_nodes` (its substring match) in the order the server returns."""

    name = "server-memory"

    def __init__(self) -> None:
        node, script = find_server_memory()
        self._dir = tempfile.TemporaryDirectory(prefix="gx-server-memory-")
        env = {**os.environ, "MEMORY_FILE_PATH": str(Path(self._dir.name) / "memory.jsonl")}
        self._process = subprocess.Popen(
            [node, script],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        self._next_id = 0
        self._rpc(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "graphonomous-bench", "version": "1"},
            },
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: dict[str, Any]) -> None:
        assert self._process.stdin is not None
        self._process.stdin.write(json.dumps(message) + "\n")
        self._process.stdin.flush()

    def _rpc(self, method: str, params: dict[str, Any]) -> Any:
        self._next_id += 1
        wanted = self._next_id
        self._send({"jsonrpc": "2.0", "id": wanted, "method": method, "params": params})
        assert self._process.stdout is not None
        while True:
            line = self._process.stdout.readline()
            if not line:
                raise AdapterUnavailable("server-memory exited")
            reply = json.loads(line)
            if reply.get("id") == wanted:
                if "error" in reply:
                    raise RuntimeError(f"server-memory {method}: {reply['error']}")
                return reply["result"]

    def _tool(self, name: str, arguments: dict[str, Any]) -> Any:
        result = self._rpc("tools/call", {"name": name, "arguments": arguments})
        if result.get("isError"):
            raise RuntimeError(f"server-memory {name}: {result['content'][0]['text']}")
        structured = result.get("structuredContent")
        return structured if structured is not None else json.loads(result["content"][0]["text"])

    def ingest(
        self, items: Sequence[tuple[str, str]], links: Sequence[tuple[str, str]] = ()
    ) -> None:
        entities = [{"name": i, "entityType": "fact", "observations": [t]} for i, t in items]
        self._tool("create_entities", {"entities": entities})
        if links:
            relations = [{"from": s, "to": t, "relationType": "supports"} for s, t in links]
            self._tool("create_relations", {"relations": relations})

    def retrieve(self, query: str, k: int) -> list[str]:
        found = self._tool("search_nodes", {"query": query})
        return [entity["name"] for entity in found.get("entities", [])][:k]

    def forget(self, item_id: str) -> None:
        self._tool("delete_entities", {"entityNames": [item_id]})

    def stats(self) -> dict[str, Any]:
        graph = self._tool("read_graph", {})
        return {
            "items": len(graph.get("entities", [])),
            "links": len(graph.get("relations", [])),
            "graph": True,
        }

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=RPC_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()
        self._dir.cleanup()
