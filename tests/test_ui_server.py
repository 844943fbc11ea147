"""`graphonomous ui` without a browser: static files, the JSON API, read-only mode, safety."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ui_tools import seed, seed_folders

from graphonomous.api import Graphonomous
from graphonomous.cli import main
from graphonomous.ui import CanvasServer, make_ui_server, views
from graphonomous.ui.relationships import TABLE_FILE, relationship_table, table_text
from graphonomous.ui.views import MAX_VIEW_NODES, NO_FILE_GROUP


class Client:
    def __init__(self, server: CanvasServer) -> None:
        self.port = server.server_address[1]

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        data = None if body is None else json.dumps(body).encode()
        sent = {"Content-Type": "application/json"} if body is not None else {}
        sent.update(headers or {})
        conn.request(method, path, body=data, headers=sent)
        response = conn.getresponse()
        payload = response.read()
        conn.close()
        return response.status, dict(response.getheaders()), payload

    def json(self, method: str, path: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
        status, _, payload = self.request(method, path, body, **kw)
        return status, json.loads(payload)


def _serve(graph: Graphonomous, **options: Any) -> Iterator[Client]:
    server = make_ui_server(graph, 0, **options)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Client(server)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[Graphonomous]:
    with Graphonomous(tmp_path / "k.db") as g:
        seed(g)
        yield g


@pytest.fixture
def client(graph: Graphonomous, monkeypatch: pytest.MonkeyPatch) -> Iterator[Client]:
    monkeypatch.delenv("GRAPHONOMOUS_HTTP_TOKEN", raising=False)
    yield from _serve(graph)


@pytest.fixture
def writer(graph: Graphonomous, monkeypatch: pytest.MonkeyPatch) -> Iterator[Client]:
    monkeypatch.delenv("GRAPHONOMOUS_HTTP_TOKEN", raising=False)
    yield from _serve(graph, allow_writes=True)


def test_shipped_relationship_table_is_the_export() -> None:
    assert TABLE_FILE.read_text(encoding="utf-8") == table_text()


def test_static_files_are_served_with_a_strict_policy(client: Client) -> None:
    status, headers, body = client.request("GET", "/")
    assert status == 200 and b'<canvas id="canvas">' in body
    assert headers["Content-Type"].startswith("text/html")
    assert "default-src 'self'" in headers["Content-Security-Policy"]
    status, headers, body = client.request("GET", "/topology.js")
    assert status == 200 and headers["Content-Type"].startswith("text/javascript")
    assert b"export function analyzeTopology" in body
    assert client.request("GET", "/../server.py")[0] == 404
    assert client.request("GET", "/nothing.js")[0] == 404


def test_relationships_are_exported_at_serve_time(client: Client) -> None:
    status, table = client.json("GET", "/relationships.json")
    assert status == 200 and table == relationship_table()


def test_opening_view_and_config(client: Client) -> None:
    status, config = client.json("GET", "/api/config")
    assert status == 200 and config["allow_writes"] is False
    assert config["max_view_nodes"] == MAX_VIEW_NODES
    status, view = client.json("GET", "/api/graph")
    assert status == 200
    assert {n["id"] for n in view["nodes"]} >= {"market-share", "notes"}
    assert len(view["edges"]) == 5 and view["truncated"] is False and view["message"] is None


def test_search_returns_the_region_with_its_topology(client: Client, graph: Graphonomous) -> None:
    status, result = client.json("GET", "/api/search?q=market+share+revenue")
    assert status == 200
    expected = graph.retrieve_context("market share revenue", limit=12)
    assert [r["node_id"] for r in result["results"]] == [r["node_id"] for r in expected["results"]]
    assert result["topology"] == expected["topology"]
    ids = {n["id"] for n in result["nodes"]}
    assert all(e["source_id"] in ids and e["target_id"] in ids for e in result["edges"])


def test_node_panel_and_expand(client: Client) -> None:
    status, found = client.json("GET", "/api/node?id=notes")
    assert status == 200 and found["node"]["metadata"]["path"] == "docs/notes.md"
    assert [n["id"] for n in found["neighbours"]] == ["revenue"]
    status, walk = client.json("GET", "/api/expand?id=revenue&depth=1")
    assert status == 200 and {n["id"] for n in walk["nodes"]} == {
        "revenue",
        "market-share",
        "r-and-d",
        "notes",
    }


def test_bad_input_names_the_field(client: Client) -> None:
    assert client.json("GET", "/api/node") == (
        400,
        {"error": {"code": "invalid", "message": "is required", "field": "id"}},
    )
    status, body = client.json("GET", "/api/expand?id=revenue&depth=x")
    assert status == 400 and body["error"]["field"] == "depth"
    status, body = client.json("GET", "/api/node?id=missing")
    assert status == 404 and body["error"]["code"] == "not_found"
    status, body = client.json("POST", "/api/topology", {"edges": [["a"]]})
    assert status == 400 and body["error"]["field"] == "edges[0]"
    assert client.json("GET", "/api/unknown")[0] == 404


def test_topology_endpoint_is_the_python_engine(client: Client) -> None:
    doc = {"edges": [["a", "b"], ["b", "a"]]}
    status, result = client.json("POST", "/api/topology", doc)
    assert status == 200 and result["max_kappa"] == 1 and result["sccs"][0]["nodes"] == ["a", "b"]


def test_read_only_refuses_every_write(client: Client, graph: Graphonomous) -> None:
    for path, body in [
        ("/api/edges", {"source_id": "revenue", "target_id": "market-share"}),
        ("/api/edges/delete", {"edge_ids": ["x"]}),
        ("/api/consolidation", {}),
    ]:
        status, answer = client.json("POST", path, body)
        assert status == 403 and answer["error"]["code"] == "read_only", path
    assert graph.graph_stats()["edge_count"] == 5


def test_writes_store_and_delete_edges(writer: Client, graph: Graphonomous) -> None:
    status, made = writer.json(
        "POST", "/api/edges", {"source_id": "revenue", "target_id": "market-share"}
    )
    assert status == 200 and made["edge"]["relationship"] == "causal"
    status, gone = writer.json("POST", "/api/edges/delete", {"edge_ids": [made["edge"]["id"]]})
    assert status == 200 and gone["count"] == 1
    status, failed = writer.json("POST", "/api/edges/delete", {"edge_ids": ["nope"]})
    assert status == 400 and failed["error"]["code"] == "batch_failed"
    status, run = writer.json("POST", "/api/consolidation", {})
    assert status == 200 and run["trigger"] == "manual"
    status, stats = writer.json("GET", "/api/stats")
    assert status == 200 and stats["last_consolidation"]["id"] == run["id"]
    assert stats["stats"]["nodes_by_type"]["semantic"] == 6


def test_posts_must_be_json(writer: Client) -> None:
    status, _, body = writer.request(
        "POST", "/api/consolidation", headers={"Content-Type": "text/plain", "Content-Length": "0"}
    )
    assert status == 415 and b"application/json" in body


def test_host_origin_and_token_rules_of_the_mcp_transport(
    graph: Graphonomous, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRAPHONOMOUS_HTTP_TOKEN", "s3cret")
    for client in _serve(graph):
        assert client.request("GET", "/")[0] == 200  # static files are public package data
        assert client.request("GET", "/api/config")[0] == 401
        auth = {"Authorization": "Bearer s3cret"}
        assert client.request("GET", "/api/config", headers=auth)[0] == 200
        evil = {**auth, "Origin": "http://evil.example"}
        assert client.request("GET", "/api/config", headers=evil)[0] == 403
        assert client.request("GET", "/", headers={"Host": "evil.example:4200"})[0] == 403


def test_each_response_is_one_send_on_a_nodelay_socket(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    sends: list[int] = []  # TCP_NODELAY of each server-side sendall
    original = socket.socket.sendall

    def counted(sock: socket.socket, data: Any, *args: Any) -> None:
        if sock.getsockname()[1] == client.port:
            sends.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        original(sock, data, *args)

    monkeypatch.setattr(socket.socket, "sendall", counted)
    conn = http.client.HTTPConnection("127.0.0.1", client.port, timeout=30)  # kept alive
    json_body = {"Content-Type": "application/json"}
    requests = [
        ("GET", "/", None, {}),
        ("GET", "/api/config", None, {}),
        ("GET", "/api/node", None, {}),  # 400
        ("POST", "/api/topology", b'{"edges": [["a", "b"]]}', json_body),
        ("GET", "/relationships.json", None, {}),
    ]
    for method, path, body, headers in requests:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        response.read()
        assert response.status in (200, 400)
    conn.close()
    assert len(sends) == len(requests) and all(sends)


def test_idle_sockets_hold_bounded_threads(client: Client) -> None:
    from graphonomous.ui.server import MAX_CONNECTIONS

    before = threading.active_count()
    idle = [socket.create_connection(("127.0.0.1", client.port), timeout=5) for _ in range(300)]
    try:
        deadline = time.monotonic() + 10
        while threading.active_count() - before > MAX_CONNECTIONS and time.monotonic() < deadline:
            time.sleep(0.1)
        assert threading.active_count() - before <= MAX_CONNECTIONS
        started = time.monotonic()
        assert client.json("GET", "/api/config")[0] == 200
        assert time.monotonic() - started < 1.0
    finally:
        for sock in idle:
            sock.close()


def test_a_deeply_nested_body_is_a_400_naming_the_nesting(client: Client) -> None:
    for depth, message in [(100_000, "nested too deeply"), (100, "nested deeper than 64")]:
        conn = http.client.HTTPConnection("127.0.0.1", client.port, timeout=30)
        body = ("[" * depth + "]" * depth).encode()
        conn.request("POST", "/api/topology", body, {"Content-Type": "application/json"})
        response = conn.getresponse()
        answer = json.loads(response.read())
        conn.close()
        assert response.status == 400 and answer["error"]["code"] == "bad_body"
        assert message in answer["error"]["message"]


def test_large_graphs_are_capped_with_a_message(tmp_path: Path) -> None:
    with Graphonomous(tmp_path / "big.db") as graph:
        ops = [
            {"op": "add_node", "node": {"id": f"n{i:04d}", "content": f"node {i}"}}
            for i in range(MAX_VIEW_NODES + 25)
        ]
        graph.apply_batch(ops, defer_embeddings=True)
        for client in _serve(graph):
            status, view = client.json("GET", "/api/graph")
            assert status == 200 and len(view["nodes"]) == MAX_VIEW_NODES
            assert view["truncated"] is True
            assert view["message"].startswith(f"showing {MAX_VIEW_NODES} of 425 nodes")


def test_cli_reports_a_busy_port(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code = main(["--db", str(tmp_path / "k.db"), "ui", "--port", str(port)])
    assert code == 1
    assert f"cannot serve the canvas on port {port}" in capsys.readouterr().err


def test_overview_groups_by_folder_largest_first_with_kappa(tmp_path: Path) -> None:
    with Graphonomous(tmp_path / "folders.db") as graph:
        seed_folders(graph)
        for client in _serve(graph):
            status, top = client.json("GET", "/api/overview")
            assert status == 200
            status, deep = client.json("GET", "/api/overview?depth=2")
            status_bad, bad = client.json("GET", "/api/overview?depth=0")
    assert [(g["folder"], g["node_count"]) for g in top["groups"]] == [
        ("src", 7),
        (NO_FILE_GROUP, 1),
        ("docs", 1),
    ]
    src = top["groups"][0]
    # The loop zircon-a → gneiss-0…4 → zircon-b → zircon-a lies inside src: κ 1 there.
    assert (src["max_kappa"], src["scc_count"], src["routing"]) == (1, 1, "deliberate")
    assert (src["edge_count"], src["crossing_edge_count"]) == (7, 1)
    docs = top["groups"][2]
    assert (docs["max_kappa"], docs["edge_count"], docs["crossing_edge_count"]) == (0, 0, 1)
    assert top["total"] == 9 and top["group_count"] == 3 and top["truncated"] is False
    # Two folders deep the loop crosses src/geo and src/rock: neither holds it alone.
    assert [(g["folder"], g["node_count"], g["max_kappa"]) for g in deep["groups"][:2]] == [
        ("src/rock", 5, 0),
        ("src/geo", 2, 0),
    ]
    assert status_bad == 400 and bad["error"]["field"] == "depth"


def test_overview_lists_the_largest_folders_and_counts_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(views, "MAX_OVERVIEW_GROUPS", 2)
    monkeypatch.setattr(views, "OVERVIEW_PAGE", 2)  # several pages of nodes
    with Graphonomous(tmp_path / "many.db") as graph:
        seed_folders(graph)
        found = views.overview_view(graph)
    assert [g["folder"] for g in found["groups"]] == ["src", NO_FILE_GROUP]
    assert found["truncated"] is True and found["group_count"] == 3
    assert found["message"] == "showing the 2 largest of 3 folders; the others hold 1 node"
