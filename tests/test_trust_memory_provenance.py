"""Provenance on the memory surface (issue #19 h).

server-memory's result shapes stay byte for byte (structuredContent and text);
where each entity came from travels in the result's ``_meta`` under
``graphonomous/provenance``: node id, ``source`` (the import file's path for
``import-memory``, the memory tool that wrote it otherwise), times.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from graphonomous import Graphonomous
from graphonomous.cli import main
from graphonomous.mcp import build_server
from graphonomous.mcp.jsonrpc import Request, Response
from graphonomous.mcp.memory_compat import MAX_PROVENANCE_ENTITIES, PROVENANCE_META_KEY


def call(graph: Graphonomous, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    server = build_server(graph, "memory")
    request = Request(1, "tools/call", {"name": name, "arguments": arguments})
    (reply,) = [m for m in server.handle(request) if isinstance(m, Response)]
    result: dict[str, Any] = reply.result
    return result


def test_search_results_name_the_import_file(tmp_path: Path) -> None:
    memory = tmp_path / "memory.jsonl"
    lines = [
        {"type": "entity", "name": "Pump P-3", "entityType": "device", "observations": ["hot"]},
        {"type": "entity", "name": "Valve V-12", "entityType": "device", "observations": []},
        {"type": "relation", "from": "Pump P-3", "to": "Valve V-12", "relationType": "needs"},
    ]
    memory.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    db = tmp_path / "g.db"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["--db", str(db), "import-memory", str(memory)], io.StringIO()) == 0
    with Graphonomous(db, embedder="hashing") as graph:
        call(
            graph,
            "create_entities",
            {
                "entities": [
                    {
                        "name": "Shift log",
                        "entityType": "note",
                        "observations": ["pump hot at night"],
                    }
                ]
            },
        )
        result = call(graph, "search_nodes", {"query": "hot"})
        assert set(result["structuredContent"]) == {"entities", "relations"}
        assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
        meta = result["_meta"][PROVENANCE_META_KEY]
        by_name = {item["name"]: item for item in meta["entities"]}
        assert by_name["Pump P-3"]["source"] == str(memory.resolve())
        assert by_name["Shift log"]["source"] == "create_entities"  # the tool that wrote it
        node = graph.store.get_node(by_name["Pump P-3"]["node_id"])
        assert node is not None and node.metadata["entity_name"] == "Pump P-3"
        assert meta["omitted"] == 0
        opened = call(graph, "open_nodes", {"names": ["Valve V-12"]})
        assert [e["name"] for e in opened["_meta"][PROVENANCE_META_KEY]["entities"]] == [
            "Valve V-12"
        ]
        assert "_meta" not in call(graph, "search_nodes", {"query": "no such text"})


def test_read_graph_caps_the_provenance(tmp_path: Path) -> None:
    with Graphonomous(tmp_path / "g.db", embedder="hashing") as graph:
        count = MAX_PROVENANCE_ENTITIES + 5
        entities = [{"name": f"e{i}", "entityType": "t", "observations": []} for i in range(count)]
        call(graph, "create_entities", {"entities": entities})
        meta = call(graph, "read_graph", {})["_meta"][PROVENANCE_META_KEY]
        assert len(meta["entities"]) == MAX_PROVENANCE_ENTITIES and meta["omitted"] == 5
