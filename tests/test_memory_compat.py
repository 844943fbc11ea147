"""The memory-compat surface: @modelcontextprotocol/server-memory's tool API over our graph."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphonomous import Graphonomous
from graphonomous.cli import main
from graphonomous.mcp import build_server
from graphonomous.mcp.jsonrpc import Request, Response, encode
from graphonomous.mcp.memory_compat import (
    MEMORY_TOOLS,
    entities_text,
    graph_text,
    observations_text,
    relations_text,
)
from graphonomous.mcp.server import McpServer
from graphonomous.mcp.surfaces import CORE_TOOLS, SURFACES
from graphonomous.model import MAX_CONTENT_CHARS, RELATIONSHIPS
from graphonomous.server_memory import (
    MemoryFileError,
    memory_view,
    parse_memory_jsonl,
    relationship_for,
)

ROOT = Path(__file__).resolve().parents[1]

# server-memory 2026.8.31's tools/list, reduced to what a prompt depends on:
# tool → (argument, required item fields or None for a string/array of strings),
# and its annotations (readOnly, destructive, idempotent, openWorld).
SERVER_MEMORY_TOOLS: dict[str, tuple[dict[str, list[str] | None], tuple[bool, ...]]] = {
    "create_entities": (
        {"entities": ["name", "entityType", "observations"]},
        (False, False, False, False),
    ),
    "create_relations": (
        {"relations": ["from", "to", "relationType"]},
        (False, False, False, False),
    ),
    "add_observations": (
        {"observations": ["entityName", "contents"]},
        (False, False, False, False),
    ),
    "delete_entities": ({"entityNames": None}, (False, True, True, False)),
    "delete_observations": (
        {"deletions": ["entityName", "observations"]},
        (False, True, True, False),
    ),
    "delete_relations": (
        {"relations": ["from", "to", "relationType"]},
        (False, True, True, False),
    ),
    "read_graph": ({}, (True, False, True, False)),
    "search_nodes": ({"query": None}, (True, False, True, False)),
    "open_nodes": ({"names": None}, (True, False, True, False)),
}


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[Graphonomous]:
    with Graphonomous(tmp_path / "g.db") as opened:
        yield opened


@pytest.fixture
def server(graph: Graphonomous) -> McpServer:
    return build_server(graph, "memory", check_output=True)


def reply(server: McpServer, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    (response,) = [
        m for m in server.handle(Request(7, "tools/call", params)) if isinstance(m, Response)
    ]
    result: dict[str, Any] = json.loads(encode(response))["result"]
    return result


def call(server: McpServer, name: str, **arguments: Any) -> tuple[Any, str]:
    """A tool call that must succeed: (structuredContent, text).  The structured result
    is validated against the advertised outputSchema with the jsonschema library."""
    result = reply(server, name, arguments)
    assert not result.get("isError"), result
    schema = next(t.output_schema for t in MEMORY_TOOLS if t.name == name)
    jsonschema.Draft202012Validator(schema).validate(result["structuredContent"])
    return result["structuredContent"], result["content"][0]["text"]


def failure(server: McpServer, name: str, **arguments: Any) -> str:
    result = reply(server, name, arguments)
    assert result["isError"] is True, result
    text: str = result["content"][0]["text"]
    return text


def entity(name: str, entity_type: str = "thing", *observations: str) -> dict[str, Any]:
    return {"name": name, "entityType": entity_type, "observations": list(observations)}


def relation(source: str, target: str, kind: str) -> dict[str, str]:
    return {"from": source, "to": target, "relationType": kind}


def pretty(value: Any) -> str:
    """JSON.stringify(value, null, 2) — the text server-memory answers with."""
    return json.dumps(value, indent=2, ensure_ascii=False)


def names(structured: dict[str, Any]) -> list[str]:
    return [e["name"] for e in structured["entities"]]


# -- the registry --------------------------------------------------------------


def test_memory_surface_and_all() -> None:
    assert [t.name for t in SURFACES["memory"]] == list(SERVER_MEMORY_TOOLS)
    everything = [t.name for t in SURFACES["all"]]
    assert everything == [t.name for t in (*CORE_TOOLS, *MEMORY_TOOLS)]
    assert len(set(everything)) == len(everything)


@pytest.mark.parametrize("tool", MEMORY_TOOLS, ids=lambda t: t.name)
def test_schemas_match_server_memory(tool: Any) -> None:
    fields, hints = SERVER_MEMORY_TOOLS[tool.name]
    schema = tool.input_schema
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator.check_schema(tool.output_schema)
    assert list(schema["properties"]) == list(fields)
    assert schema.get("required", []) == list(fields)
    for name, item_fields in fields.items():
        items = schema["properties"][name].get("items", {})
        if item_fields is not None:
            assert items["required"] == item_fields
            assert list(items["properties"]) == item_fields
    assert tuple(tool.annotations.to_dict().values()) == hints


# -- every tool, end to end ------------------------------------------------------


def test_every_tool_answers_like_server_memory(server: McpServer) -> None:
    alice = entity("Alice", "person", "likes tea", "works at ACME")
    acme = entity("ACME", "organization")
    created, text = call(server, "create_entities", entities=[alice, acme])
    assert created == {"entities": [alice, acme]} and text == pretty([alice, acme])
    works = relation("Alice", "ACME", "works_at")
    created, text = call(server, "create_relations", relations=[works])
    assert created == {"relations": [works]} and text == pretty([works])
    added, text = call(
        server,
        "add_observations",
        observations=[{"entityName": "Alice", "contents": ["likes tea", "plays go", "plays go"]}],
    )
    expected = [{"entityName": "Alice", "addedObservations": ["plays go"]}]
    assert added == {"results": expected} and text == pretty(expected)
    graph, text = call(server, "read_graph")
    alice["observations"].append("plays go")
    assert graph == {"entities": [alice, acme], "relations": [works]} and text == pretty(graph)
    found, text = call(server, "search_nodes", query="GO")
    assert found == {"entities": [alice], "relations": [works]} and text == pretty(found)
    opened, text = call(server, "open_nodes", names=["ACME", "nobody"])
    assert opened == {"entities": [acme], "relations": [works]} and text == pretty(opened)
    for tool, arguments, message in [
        (
            "delete_observations",
            {"deletions": [{"entityName": "Alice", "observations": ["likes tea"]}]},
            "Observations deleted successfully",
        ),
        ("delete_relations", {"relations": [works]}, "Relations deleted successfully"),
        ("delete_entities", {"entityNames": ["ACME"]}, "Entities deleted successfully"),
    ]:
        status, text = call(server, tool, **arguments)
        assert status == {"success": True, "message": message} and text == message
    graph, _ = call(server, "read_graph")
    assert graph == {
        "entities": [entity("Alice", "person", "works at ACME", "plays go")],
        "relations": [],
    }


def test_empty_results_and_existing_names(server: McpServer) -> None:
    assert call(server, "read_graph") == (
        {"entities": [], "relations": []},
        pretty({"entities": [], "relations": []}),
    )
    call(server, "create_entities", entities=[entity("A")])
    again, text = call(server, "create_entities", entities=[entity("A", "other", "x")])
    assert again == {"entities": []} and text == "[]"
    call(server, "create_entities", entities=[entity("B")])
    call(server, "create_relations", relations=[relation("A", "B", "knows")])
    repeat, text = call(server, "create_relations", relations=[relation("A", "B", "knows")])
    assert repeat == {"relations": []} and text == "[]"


def test_bad_arguments_are_tool_errors(server: McpServer) -> None:
    text = failure(server, "create_entities", entities=[{"name": "X"}])
    assert "entityType" in text and "observations" in text
    assert "query" in failure(server, "search_nodes")
    assert "extra" in failure(server, "open_nodes", names=[], extra=1)


# -- stricter than server-memory ---------------------------------------------------


def test_a_name_repeated_in_one_call_is_created_once(
    server: McpServer, graph: Graphonomous
) -> None:
    first = entity("Bob", "person", "first")
    created, _ = call(server, "create_entities", entities=[first, entity("Bob", "robot", "second")])
    assert created == {"entities": [first]}
    assert graph.graph_stats()["node_count"] == 1
    assert call(server, "open_nodes", names=["Bob"])[0]["entities"] == [first]


def test_repeated_observations_are_kept_once(server: McpServer) -> None:
    created, _ = call(server, "create_entities", entities=[entity("C", "t", "x", "y", "x")])
    assert created["entities"][0]["observations"] == ["x", "y"]


def test_relations_to_missing_entities_are_kept_dangling(
    server: McpServer, graph: Graphonomous
) -> None:
    call(server, "create_entities", entities=[entity("A"), entity("B")])
    batch = [relation("A", "B", "knows"), relation("A", "Ghost", "x"), relation("Void", "A", "y")]
    created, _ = call(server, "create_relations", relations=batch)
    assert created == {"relations": batch}
    assert call(server, "read_graph")[0]["relations"] == batch
    assert graph.graph_stats()["edge_count"] == 1
    again, _ = call(server, "create_relations", relations=[relation("A", "Ghost", "x")])
    assert again == {"relations": []}
    assert call(server, "open_nodes", names=["B"])[0]["relations"] == batch[:1]
    assert call(server, "search_nodes", query="a")[0]["relations"] == batch


def test_a_dangling_relation_becomes_an_edge_in_its_place(
    server: McpServer, graph: Graphonomous
) -> None:
    call(server, "create_entities", entities=[entity("A")])
    first, self_loop = relation("A", "Ghost", "part of"), relation("Ghost", "Ghost", "is")
    call(server, "create_relations", relations=[first, self_loop, relation("A", "A", "me")])
    call(server, "create_entities", entities=[entity("Ghost")])
    listing = call(server, "read_graph")[0]["relations"]
    assert listing == [first, self_loop, relation("A", "A", "me")]
    (edge,) = graph.manage_edge("list")["edges"]
    assert edge["relationship"] == "part_of"
    assert graph.store.dangling_relations("default") == []
    call(server, "delete_relations", relations=[first])
    assert graph.manage_edge("list")["edges"] == []


def test_erasing_an_entity_erases_the_dangling_relations_naming_it(
    server: McpServer, graph: Graphonomous
) -> None:
    call(server, "create_entities", entities=[entity("Alice"), entity("Bob")])
    other = relation("Bob", "Carol", "knows")
    batch = [relation("Alice", "Ghost", "x"), relation("Void", "Alice", "y"), other]
    call(server, "create_relations", relations=batch)
    (node,) = [n for n in graph.list_nodes()["nodes"] if n["metadata"]["entity_name"] == "Alice"]
    report = graph.gdpr_erase(node["id"])
    assert report["scrubbed"]["memory_relations_deleted"] == 2
    assert [row[1:] for row in graph.store.dangling_relations("default")] == [
        ("Bob", "Carol", "knows")
    ]
    assert call(server, "read_graph")[0]["relations"] == [other]


def test_deleting_a_name_drops_its_dangling_relations(server: McpServer) -> None:
    call(server, "create_entities", entities=[entity("A")])
    kept = relation("A", "Elsewhere", "x")
    call(server, "create_relations", relations=[relation("Eve", "A", "y"), kept])
    call(server, "delete_entities", entityNames=["Eve"])
    assert call(server, "read_graph")[0]["relations"] == [kept]
    call(server, "delete_relations", relations=[kept])
    assert call(server, "read_graph")[0]["relations"] == []


def test_add_observations_to_a_missing_entity_changes_nothing(server: McpServer) -> None:
    call(server, "create_entities", entities=[entity("A")])
    text = failure(
        server,
        "add_observations",
        observations=[
            {"entityName": "A", "contents": ["new"]},
            {"entityName": "Nobody", "contents": ["x"]},
        ],
    )
    assert text == "Entity with name Nobody not found"  # server-memory's text, bare
    assert call(server, "open_nodes", names=["A"])[0]["entities"] == [entity("A")]


def test_deletes_ignore_unknown_names(server: McpServer) -> None:
    call(server, "create_entities", entities=[entity("A", "t", "keep")])
    call(server, "delete_entities", entityNames=["nobody"])
    call(server, "delete_observations", deletions=[{"entityName": "nobody", "observations": ["x"]}])
    call(server, "delete_relations", relations=[relation("A", "nobody", "knows")])
    assert call(server, "read_graph")[0] == {
        "entities": [entity("A", "t", "keep")],
        "relations": [],
    }


def test_oversized_entities_are_rejected(server: McpServer) -> None:
    text = failure(
        server, "create_entities", entities=[entity("Big", "t", "x" * MAX_CONTENT_CHARS)]
    )
    assert '"Big"' in text and str(MAX_CONTENT_CHARS) in text


# -- mapping onto the graph ---------------------------------------------------------


def test_entities_are_nodes_and_relations_are_edges(server: McpServer, graph: Graphonomous) -> None:
    call(
        server,
        "create_entities",
        entities=[entity("Valve", "part", "leaks at 3 bar"), entity("Pump")],
    )
    call(server, "create_relations", relations=[relation("Valve", "Pump", "part of")])
    (node,) = [n for n in graph.list_nodes()["nodes"] if n["metadata"]["entity_name"] == "Valve"]
    assert node["content"] == "Valve (part): leaks at 3 bar"
    assert node["node_type"] == "semantic" and node["source"] == "create_entities"
    assert node["metadata"]["entity_type"] == "part"
    assert node["metadata"]["observations"] == ["leaks at 3 bar"]
    (edge,) = graph.manage_edge("list")["edges"]
    assert edge["source_id"] == node["id"] and edge["relationship"] == "part_of"
    assert list(edge["metadata"]["relation_types"]) == ["part of"]
    hits = graph.similarity_search("valve leaks", 1)["results"]
    assert hits[0]["id"] == node["id"]


@pytest.mark.parametrize(
    ("relation_type", "kind"),
    [
        ("causes", "causes"),
        ("Depends On", "depends_on"),
        ("part-of", "part_of"),
        ("is part of", "part_of"),
        ("supersedes", "supersedes"),
        ("works_at", "related_to"),
        ("", "related_to"),
    ],
)
def test_relationship_mapping(relation_type: str, kind: str) -> None:
    assert relationship_for(relation_type) == kind and kind in RELATIONSHIPS


def test_relation_types_sharing_one_edge_both_survive(
    server: McpServer, graph: Graphonomous
) -> None:
    call(server, "create_entities", entities=[entity("A"), entity("B"), entity("C")])
    first, second = relation("A", "B", "knows"), relation("A", "B", "works with")
    other = relation("B", "C", "knows")
    call(server, "create_relations", relations=[first])
    call(server, "create_relations", relations=[other, second])
    (shared,) = [
        e
        for e in graph.manage_edge("list")["edges"]
        if e["relationship"] == "related_to" and len(e["metadata"]["relation_types"]) == 2
    ]
    assert list(shared["metadata"]["relation_types"]) == ["knows", "works with"]
    assert call(server, "read_graph")[0]["relations"] == [first, other, second]  # creation order
    call(server, "delete_relations", relations=[first])
    assert call(server, "read_graph")[0]["relations"] == [other, second]
    assert graph.graph_stats()["edge_count"] == 2
    call(server, "delete_relations", relations=[second])
    assert call(server, "read_graph")[0]["relations"] == [other]
    assert graph.graph_stats()["edge_count"] == 1


def test_self_relations_are_kept_on_the_entity(server: McpServer, graph: Graphonomous) -> None:
    call(server, "create_entities", entities=[entity("Narcissus"), entity("Echo")])
    loop, other = (
        relation("Narcissus", "Narcissus", "admires"),
        relation("Echo", "Narcissus", "loves"),
    )
    call(server, "create_relations", relations=[loop, other])
    assert call(server, "open_nodes", names=["Narcissus"])[0]["relations"] == [loop, other]
    assert graph.graph_stats()["edge_count"] == 1
    node = next(
        n for n in graph.list_nodes()["nodes"] if n["metadata"]["entity_name"] == "Narcissus"
    )
    assert list(node["metadata"]["self_relations"]) == ["admires"]
    call(server, "delete_relations", relations=[loop])
    assert call(server, "read_graph")[0]["relations"] == [other]


def test_delete_entities_cascades(server: McpServer, graph: Graphonomous) -> None:
    call(server, "create_entities", entities=[entity("A"), entity("B"), entity("C")])
    call(
        server,
        "create_relations",
        relations=[
            relation("A", "B", "x"),
            relation("B", "C", "y"),
            relation("C", "A", "z"),
            relation("B", "B", "w"),
        ],
    )
    call(server, "delete_entities", entityNames=["B"])
    assert call(server, "read_graph")[0] == {
        "entities": [entity("A"), entity("C")],
        "relations": [relation("C", "A", "z")],
    }
    assert graph.graph_stats()["edge_count"] == 1


# -- search semantics ---------------------------------------------------------------

SEARCH_ENTITIES = [
    entity("Alice", "person", "Likes TEA", "works at ACME"),
    entity("ACME Corp", "organization", "Founded 1999"),
    entity("straße", "Street", "in Köln"),
    entity("İstanbul", "city", "ΟΔΟΣ is Greek"),
    entity("ab", "cd"),
    entity("x\ny", "weird", "tab\there"),
]
SEARCH_RELATIONS = [
    relation("Alice", "ACME Corp", "works at"),
    relation("ab", "Alice", "knows"),
    relation("straße", "İstanbul", "leads to"),
]
# (query, matching entities, number of relations returned), as server-memory
# 2026.8.31 answers on SEARCH_ENTITIES / SEARCH_RELATIONS (recorded by running it).
SEARCH_CASES = [
    ("", ["Alice", "ACME Corp", "straße", "İstanbul", "ab", "x\ny"], 3),
    ("alice", ["Alice"], 2),
    ("ACME", ["Alice", "ACME Corp"], 2),
    ("tea", ["Alice"], 2),
    ("ORGANIZATION", ["ACME Corp"], 1),
    ("bc", [], 0),  # never across the name/type boundary
    ("b\x00c", [], 0),
    ("ab\x00cd", [], 0),
    ("STRASSE", [], 0),  # lower case, not case folding
    ("Straße", ["straße"], 1),
    ("STRAẞE", ["straße"], 1),
    ("istanbul", [], 0),  # "İ" lowers to "i" + combining dot
    ("i\u0307stanbul", ["İstanbul"], 1),
    ("İSTANBUL", ["İstanbul"], 1),
    ("ΟΔΟΣ", ["İstanbul"], 1),  # final sigma
    ("οδοσ", [], 0),
    ("οδος", ["İstanbul"], 1),
    ("KÖLN", ["straße"], 1),
    ("\n", ["x\ny"], 0),
    ("TAB\tHERE", ["x\ny"], 0),
    ("1999", ["ACME Corp"], 1),
    (" ", ["Alice", "ACME Corp", "straße", "İstanbul"], 3),
    ("zzz", [], 0),
]


@pytest.fixture
def search_server(server: McpServer) -> McpServer:
    call(server, "create_entities", entities=SEARCH_ENTITIES)
    call(server, "create_relations", relations=SEARCH_RELATIONS)
    return server


@pytest.mark.parametrize(("query", "expected", "relation_count"), SEARCH_CASES)
def test_search_matches_server_memory(
    search_server: McpServer, query: str, expected: list[str], relation_count: int
) -> None:
    found, text = call(search_server, "search_nodes", query=query)
    assert names(found) == expected
    assert len(found["relations"]) == relation_count
    assert text == pretty(found)
    hit = set(expected)
    assert all(r["from"] in hit or r["to"] in hit for r in found["relations"])


def test_open_nodes_keeps_graph_order(search_server: McpServer) -> None:
    opened, _ = call(search_server, "open_nodes", names=["ab", "Alice", "ab", "nobody"])
    assert names(opened) == ["Alice", "ab"]
    assert opened["relations"] == SEARCH_RELATIONS[:2]


# -- the in-memory view stays true to the database ------------------------------------


def test_view_follows_other_writers(server: McpServer, graph: Graphonomous, tmp_path: Path) -> None:
    call(server, "create_entities", entities=[entity("A"), entity("B")])
    assert names(call(server, "read_graph")[0]) == ["A", "B"]
    node_a = next(n for n in graph.list_nodes()["nodes"] if n["metadata"]["entity_name"] == "A")
    graph.delete_node(node_a["id"])
    graph.store_node("C (t)", metadata={"entity_name": "C", "entity_type": "t", "observations": []})
    graph.store_node("a plain node, not an entity")
    assert names(call(server, "read_graph")[0]) == ["B", "C"]
    with Graphonomous(tmp_path / "g.db") as other:  # a second connection (another process)
        memory_view(other).create_entities([entity("D")])
    assert names(call(server, "search_nodes", query="")[0]) == ["B", "C", "D"]
    assert names(call(server, "read_graph")[0]) == ["B", "C", "D"]


def test_read_graph_is_reused_until_the_graph_changes(server: McpServer) -> None:
    call(server, "create_entities", entities=[entity("A"), entity("B")])
    first, first_text = call(server, "read_graph")
    assert call(server, "read_graph") == (first, first_text)
    call(server, "add_observations", observations=[{"entityName": "A", "contents": ["new"]}])
    changed, changed_text = call(server, "read_graph")
    assert changed["entities"][0]["observations"][-1] == "new" and "new" in changed_text
    call(server, "create_relations", relations=[{"from": "A", "to": "B", "relationType": "x"}])
    assert call(server, "read_graph")[0]["relations"] == [
        {"from": "A", "to": "B", "relationType": "x"}
    ]


def test_memory_writes_defer_vectors_until_a_similarity_search(
    server: McpServer, graph: Graphonomous
) -> None:
    call(
        server, "create_entities", entities=[entity("Pump", "device", "pressure loss at the inlet")]
    )
    assert graph.store.iter_embeddings(graph.embedding_model) == []
    hits = graph.similarity_search("inlet pressure loss", limit=1)["results"]
    assert hits[0]["metadata"]["entity_name"] == "Pump"


def test_a_reloaded_view_lists_the_same_graph(
    server: McpServer, graph: Graphonomous, tmp_path: Path
) -> None:
    call(server, "create_entities", entities=[entity("A"), entity("B"), entity("C")])
    call(
        server,
        "create_relations",
        relations=[relation("A", "B", "knows"), relation("C", "A", "knows")],
    )
    call(
        server,
        "create_relations",
        relations=[relation("A", "B", "likes"), relation("B", "B", "self")],
    )
    call(server, "add_observations", observations=[{"entityName": "B", "contents": ["o"]}])
    before = call(server, "read_graph")[0]
    with Graphonomous(tmp_path / "g.db") as fresh:
        assert memory_view(fresh).read_graph() == before
    assert memory_view(graph) is memory_view(graph)


# -- result texts -------------------------------------------------------------------

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
_entities = st.lists(
    st.tuples(_text, _text, st.lists(_text, max_size=3)).map(lambda t: entity(t[0], t[1], *t[2])),
    max_size=4,
)
_relations = st.lists(st.tuples(_text, _text, _text).map(lambda t: relation(*t)), max_size=4)


@settings(max_examples=200, deadline=None)
@given(_entities, _relations, st.lists(st.tuples(_text, st.lists(_text, max_size=3)), max_size=3))
def test_texts_are_json_stringify_with_two_spaces(
    entities: list[dict[str, Any]], relations: list[dict[str, str]], results: list[Any]
) -> None:
    graph = {"entities": entities, "relations": relations}
    assert graph_text(graph) == pretty(graph)
    assert entities_text(graph) == pretty(entities)
    assert relations_text(graph) == pretty(relations)
    added = [{"entityName": n, "addedObservations": o} for n, o in results]
    assert observations_text({"results": added}) == pretty(added)


# -- import-memory ----------------------------------------------------------------------


def memory_file(path: Path, lines: list[Any]) -> str:
    path.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in lines), "utf-8")
    return str(path)


def generated_lines(count: int) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    for i in range(count):
        lines.append(
            {"type": "entity", **entity(f"E{i}", ["person", "project"][i % 2], f"fact {i}")}
        )
    for i in range(count):
        lines.append({"type": "relation", **relation(f"E{i}", f"E{(i * 7 + 1) % count}", "knows")})
    return lines


def run_cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out), out.getvalue()


def test_import_memory_file(tmp_path: Path) -> None:
    lines = generated_lines(50)
    lines.insert(10, {"type": "entity", **entity("E3", "other", "fact 3", "more on E3")})
    lines.append({"type": "relation", **relation("E1", "Ghost", "haunts")})
    lines.append({"type": "relation", **relation("E2", "E2", "self")})
    path = memory_file(tmp_path / "memory.jsonl", lines)
    db = str(tmp_path / "g.db")
    code, text = run_cli("--db", db, "--json", "import-memory", path)
    assert code == 0, text
    report = json.loads(text)
    assert report == {
        "entities_created": 50,
        "entities_existing": 0,
        "observations_added": 1,
        "relations_created": 52,
        "relations_existing": 0,
        "relations_dangling": [{"line": len(lines) - 1, "missing": ["Ghost"]}],
    }
    with Graphonomous(db) as graph:
        before = memory_view(graph).read_graph()
    assert len(before["entities"]) == 50 and len(before["relations"]) == 52
    assert relation("E1", "Ghost", "haunts") in before["relations"]
    assert before["entities"][3] == entity("E3", "project", "fact 3", "more on E3")
    code, text = run_cli("--db", db, "import-memory", path)
    assert code == 0 and "0 entities created (50 already present, 0 observations added)" in text
    assert "52 already present, 1 dangling" in text
    assert f'line {len(lines) - 1}: kept dangling, no entity "Ghost"' in text
    with Graphonomous(db) as graph:
        assert memory_view(graph).read_graph() == before


def test_import_matches_the_tools(tmp_path: Path, server: McpServer) -> None:
    lines = generated_lines(12)
    call(
        server,
        "create_entities",
        entities=[{k: v for k, v in line.items() if k != "type"} for line in lines[:12]],
    )
    call(
        server,
        "create_relations",
        relations=[{k: v for k, v in line.items() if k != "type"} for line in lines[12:]],
    )
    with Graphonomous(tmp_path / "imported.db") as graph:
        memory_view(graph).import_records(
            parse_memory_jsonl("\n".join(json.dumps(x) for x in lines))
        )
        assert memory_view(graph).read_graph() == call(server, "read_graph")[0]


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"type": "node", "name": "x"}', '"type" must be "entity" or "relation"'),
        ('{"type": "entity", "name": "x", "entityType": "t"}', "entity without 'observations'"),
        (
            '{"type": "entity", "name": 1, "entityType": "t", "observations": []}',
            "'name' must be a string",
        ),
        (
            '{"type": "entity", "name": "x", "entityType": "t", "observations": [1]}',
            "list of strings",
        ),
        ('{"type": "relation", "from": "a", "to": "b"}', "relation without 'relationType'"),
    ],
)
def test_malformed_memory_files_import_nothing(tmp_path: Path, bad_line: str, message: str) -> None:
    good = json.dumps({"type": "entity", **entity("A")})
    text = f"{good}\n\n{bad_line}\n{good}\n"
    with pytest.raises(MemoryFileError, match=message) as caught:
        parse_memory_jsonl(text)
    assert caught.value.line == 3
    path = tmp_path / "bad.jsonl"
    path.write_text(text, "utf-8")
    db = str(tmp_path / "g.db")
    code, out = run_cli("--db", db, "import-memory", str(path))
    assert code == 2 and out == ""
    with Graphonomous(db) as graph:
        assert graph.graph_stats()["node_count"] == 0


def test_import_error_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"type": "entity"}\n', "utf-8")
    assert run_cli("--db", str(tmp_path / "g.db"), "import-memory", str(path))[0] == 2
    err = capsys.readouterr().err
    assert "bad.jsonl line 1: entity without 'name'; nothing was imported" in err
    assert err.count("\n") == 1


# -- over stdio -----------------------------------------------------------------------------


def test_twenty_pipelined_creates_all_persist(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    ]
    messages += [
        {
            "jsonrpc": "2.0",
            "id": 10 + i,
            "method": "tools/call",
            "params": {
                "name": "create_entities",
                "arguments": {"entities": [entity(f"E{i}", "t", f"o{i}")]},
            },
        }
        for i in range(20)
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "graphonomous", "serve", "--surface", "memory", "--db", str(db)],
        input="".join(json.dumps(m) + "\n" for m in messages).encode(),
        capture_output=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    replies = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert [r["id"] for r in replies] == [0, 1, *range(10, 30)]
    assert [t["name"] for t in replies[1]["result"]["tools"]] == list(SERVER_MEMORY_TOOLS)
    for i, r in enumerate(replies[2:]):
        assert r["result"]["structuredContent"] == {"entities": [entity(f"E{i}", "t", f"o{i}")]}
    with Graphonomous(db) as graph:
        assert names(memory_view(graph).read_graph()) == [f"E{i}" for i in range(20)]
