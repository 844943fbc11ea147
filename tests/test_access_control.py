"""Access control in server mode (SPEC "Access control"): tokens → namespaces and rights.

Every test here tries to break it over real HTTP with real tokens: two tenants on one
SQLite file, each tool and resource tried with the other tenant's ids, names and queries;
a read-only token through a full session of reads (retrieve included, which normally
writes access bookkeeping) must change 0 bytes of the database; a token for A must not
learn whether an id or a project exists in B (the same answer as for nothing at all);
the canvas API under the same tokens; concurrent writers of both tenants.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pg_support
import pytest
from mcp_tool_calls import MEMORY_CALLS, V1_CALLS, Session

from graphonomous import Graphonomous
from graphonomous.clock import ManualClock
from graphonomous.mcp import build_server, tenant_sessions
from graphonomous.mcp.access import (
    TOOL_RIGHTS,
    Tenants,
    build_policy,
    load_tokens,
    required_right,
)
from graphonomous.mcp.http import SESSION_HEADER, McpHttpServer, make_http_server
from graphonomous.mcp.machines import MACHINES
from graphonomous.mcp.surfaces import SURFACES
from graphonomous.portable import export_lines
from graphonomous.store import is_postgres_url
from graphonomous.ui.server import CanvasServer

# Each `team` test runs on SQLite and on PostgreSQL (tests/pg_support.py; skipped without
# its test packages, required with GRAPHONOMOUS_REQUIRE_POSTGRES=1).
globals().update(backend_db=pg_support.backend_db, pg_cluster=pg_support.pg_cluster)
START = "2026-03-01T09:00:00Z"
B_IDS = ("valve", "seal", "pump", "proc", "episode", "fact")
MISSING = "nosuch"
A_NODES = (
    ("a-0", "The release train leaves every second Tuesday"),
    ("a-1", "Pressure tests of the release pipeline run nightly"),
    ("a-2", "The seal of approval comes from the release manager"),
    ("a-3", "Valve names in the docs follow the V-number scheme"),
)
TOKENS = {
    "alice": ("alice-token-0123456789", ["alpha"], ["read", "write", "erase"]),
    "reader": ("reader-token-0123456789", ["alpha"], ["read"]),
    "writer": ("writer-token-0123456789", ["alpha"], ["write"]),
    "bob": ("bob-token-0123456789abc", ["beta"], ["admin"]),
    "root": ("root-token-0123456789ab", ["*"], ["admin"]),
}
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "test", "version": "0"},
}


def _sha(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def write_tokens(path: Path) -> Path:
    entries = [
        {"principal": name, "token_sha256": _sha(token), "namespaces": spaces, "rights": rights}
        for name, (token, spaces, rights) in TOKENS.items()
    ]
    path.write_text(json.dumps({"tokens": entries}), encoding="utf-8")
    return path


def seed_alpha(graph: Graphonomous) -> None:
    for node_id, content in A_NODES:
        graph.store_node(content, node_id=node_id)
    graph.store_edge("a-0", "a-1", "related")


class Team:
    """One shared database (`db`: a SQLite file or a PostgreSQL URL; alpha seeded with
    A_NODES, beta with the plant graph unless `with_beta` is False) served over HTTP under
    the tokens of TOKENS."""

    def __init__(self, tmp: Path, db: str, *, with_beta: bool = True) -> None:
        self.db = db
        clock = ManualClock(START)
        with Graphonomous(self.db, namespace="alpha", clock=clock) as alpha:
            seed_alpha(alpha)
        self.b_edge = MISSING
        if with_beta:
            with Graphonomous(self.db, namespace="beta", clock=clock) as beta:
                Session(beta, "v1")
                self.b_edge = beta.manage_edge("list", node_id="valve")["edges"][0]["id"]
        self.graph = Graphonomous(self.db, clock=clock)
        self.tenants = Tenants(self.graph)
        self.tokens_file = write_tokens(tmp / "tokens.json")
        self.server = make_http_server(
            None,
            "127.0.0.1",
            0,
            tokens_file=str(self.tokens_file),
            tenant_session=tenant_sessions(self.tenants, "all", time.monotonic()),
        )
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def client(self, name: str | None, project: str | None = None) -> Client:
        token = None if name is None else TOKENS[name][0]
        return Client(self.server, token, project)

    @property
    def file(self) -> Path:
        """The SQLite file (the tests about file bytes run on SQLite only)."""
        if is_postgres_url(self.db):
            pytest.skip("about the bytes of a SQLite file")
        return Path(self.db)

    def facade(self, namespace: str) -> Graphonomous:
        return Graphonomous(self.db, namespace=namespace, read_only=True)

    def ids(self, namespace: str) -> set[str]:
        with self.facade(namespace) as graph:
            return {n["id"] for n in graph.list_nodes(limit=500)["nodes"]}

    def beta_records(self) -> list[str]:
        with Graphonomous(self.db, namespace="beta", read_only=True) as beta:
            return list(export_lines(beta))[1:]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.tenants.close()
        self.graph.close()


class Client:
    """One keep-alive HTTP connection speaking MCP with a bearer token."""

    def __init__(self, server: McpHttpServer, token: str | None, project: str | None) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=60)
        self.token = token
        self.project = project
        self.session: str | None = None
        self.ids = iter(range(1, 10**9))

    def post(self, message: dict[str, Any], path: str = "/mcp") -> tuple[int, dict[str, Any]]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.token is not None:
            headers["Authorization"] = f"Bearer {self.token}"
        if self.session is not None:
            headers[SESSION_HEADER] = self.session
        if self.project is not None:
            headers["Graphonomous-Project"] = self.project
        self.conn.request("POST", path, json.dumps(message).encode(), headers)
        response = self.conn.getresponse()
        body = response.read()
        if message.get("method") == "initialize" and response.status == 200:
            self.session = response.getheader(SESSION_HEADER)
        return response.status, (json.loads(body) if body else {})

    def rpc(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return self.post(
            {"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params}
        )

    def init(self) -> Client:
        status, reply = self.rpc("initialize", INIT)
        assert status == 200 and "result" in reply, reply
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        status, reply = self.rpc("tools/call", {"name": tool, "arguments": arguments})
        assert status == 200, reply
        assert "result" in reply, reply
        result: dict[str, Any] = reply["result"]
        return result

    def ok(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        out = self.call(tool, arguments)
        assert not out.get("isError"), (tool, out)
        structured: dict[str, Any] = out["structuredContent"]
        return structured

    def read(self, uri: str) -> dict[str, Any]:
        status, reply = self.rpc("resources/read", {"uri": uri})
        assert status == 200
        return reply


@pytest.fixture
def team(tmp_path: Path, backend_db: str) -> Iterator[Team]:
    """The team server on each backend (PostgreSQL when its test packages are installed)."""
    running = Team(tmp_path, backend_db)
    yield running
    running.close()


@pytest.fixture
def file_team(tmp_path: Path) -> Iterator[Team]:
    """The team server on a SQLite file (tests about the file's bytes)."""
    running = Team(tmp_path, str(tmp_path / "team.db"))
    yield running
    running.close()


def _normalised(value: Any, node_id: str) -> str:
    return json.dumps(value, sort_keys=True).replace(node_id, "<ID>")


def _filled(arguments: dict[str, Any], node_id: str) -> dict[str, Any]:
    return json.loads(json.dumps(arguments).replace("{id}", node_id))


# -- the tokens file ------------------------------------------------------------------


def test_every_tool_of_every_surface_needs_a_classified_right() -> None:
    every = {spec.name for specs in SURFACES.values() for spec in specs}
    machines = {m.name for m in MACHINES}
    assert every - machines <= set(TOOL_RIGHTS), sorted(every - machines - set(TOOL_RIGHTS))
    for machine in MACHINES:
        for action in machine.actions:
            assert action.tool.name in TOOL_RIGHTS, (machine.name, action.name)
    assert required_right("act", {"action": "gdpr_erase", "node_id": "x"}) == "erase"
    assert required_right("act", {"action": "manage_edge", "edge_operation": "list"}) == "read"
    assert required_right("act", {"action": "store_node", "content": "x"}) == "write"
    assert required_right("route", {"action": "review_goal", "apply": True}) == "write"
    assert required_right("retrieve", {"action": "context", "query": "q"}) == "read"
    assert required_right("forget_by_policy", {}) == "admin"
    assert required_right("a_tool_nobody_classified", {}) == "admin"


@pytest.mark.parametrize(
    ("document", "named"),
    [
        ("not json", "not JSON"),
        ({"tokens": []}, "tokens must be a non-empty list"),
        ({"tokens": [{"principal": "a"}]}, "tokens[0].token_sha256"),
        (
            {"tokens": [{"principal": "a", "token_sha256": "ab" * 32, "namespaces": ["Bad!"]}]},
            "tokens[0].namespaces",
        ),
        (
            {
                "tokens": [
                    {
                        "principal": "a",
                        "token_sha256": "ab" * 32,
                        "namespaces": ["x"],
                        "rights": ["root"],
                    }
                ]
            },
            "tokens[0].rights",
        ),
        (
            {
                "tokens": [
                    {"principal": "a", "token": "plain", "namespaces": ["x"], "rights": ["read"]}
                ]
            },
            "tokens[0].token is not a field",
        ),
        (
            {
                "tokens": [
                    {"principal": "a", "token_sha256": h, "namespaces": ["x"], "rights": ["read"]}
                    for h in ("ab" * 32, "cd" * 32)
                ]
            },
            "tokens[1].principal is repeated",
        ),
    ],
)
def test_a_bad_tokens_file_is_refused_naming_the_field(
    tmp_path: Path, document: Any, named: str
) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    with pytest.raises(ValueError) as caught:
        load_tokens(path)
    assert named in str(caught.value) and str(path) in str(caught.value)


def test_tokens_are_checked_by_hash(tmp_path: Path) -> None:
    policy = build_policy("default", None, write_tokens(tmp_path / "t.json"))
    alice = policy.authenticate(f"Bearer {TOKENS['alice'][0]}")
    assert alice is not None and alice.name == "alice" and alice.namespaces == ("alpha",)
    assert policy.authenticate(f"Bearer {TOKENS['alice'][0]}x") is None
    assert policy.authenticate(f"Bearer {_sha(TOKENS['alice'][0])}") is None  # the hash is no token
    assert policy.authenticate(None) is None
    reader = policy.authenticate(f"bearer {TOKENS['reader'][0]}")
    assert reader is not None and reader.read_only and not alice.read_only


# -- who may open what ----------------------------------------------------------------


def test_no_token_or_a_wrong_one_gets_401(team: Team) -> None:
    for client in (team.client(None), Client(team.server, "wrong-token-000000000", None)):
        status, reply = client.rpc("initialize", INIT)
        assert status == 401 and "bearer token" in reply["error"]["message"]


def test_another_tenants_project_answers_as_one_that_does_not_exist(team: Team) -> None:
    answers = []
    for project in ("beta", "ghost"):
        client = team.client("alice", project)
        answers.append(client.rpc("initialize", INIT))
        assert client.session is None
        # the query-parameter form too
        plain = team.client("alice")
        answers.append(
            plain.post(
                {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT},
                f"/mcp?project={project}",
            )
        )
    beta_header, beta_query, ghost_header, ghost_query = answers
    assert beta_header[0] == 404
    assert _normalised(beta_header, "beta") == _normalised(ghost_header, "ghost")
    assert _normalised(beta_query, "beta") == _normalised(ghost_query, "ghost")
    status, reply = team.client("alice", "Not A Name").rpc("initialize", INIT)
    assert status == 400 and "Invalid project" in reply["error"]["message"]
    # bob may open beta, and the root token any project
    assert team.client("bob", "beta").init().ok("graph_stats", {})["node_count"] > 20
    assert team.client("root", "ghost").init().ok("graph_stats", {})["node_count"] == 0


def test_a_session_belongs_to_the_principal_that_opened_it(team: Team) -> None:
    alice = team.client("alice").init()
    bob = team.client("bob")
    bob.session = alice.session
    stolen = bob.rpc("tools/call", {"name": "graph_stats", "arguments": {}})
    bob.session = "made-up-session-id"
    unknown = bob.rpc("tools/call", {"name": "graph_stats", "arguments": {}})
    stolen[1].pop("id"), unknown[1].pop("id")
    assert stolen[0] == unknown[0] == 404 and stolen[1] == unknown[1]
    assert alice.ok("graph_stats", {})["node_count"] == len(A_NODES)


# -- the other tenant's ids, names and queries over every surface ---------------------

# (surface label, tool, arguments) with the probed id as "{id}".
ID_PROBES: list[tuple[str, str, dict[str, Any]]] = [
    ("v1", "query_graph", {"operation": "get_node", "node_id": "{id}"}),
    ("v1", "query_graph", {"operation": "get_edges", "node_id": "{id}"}),
    ("v1", "graph_traverse", {"node_id": "{id}", "depth": 2}),
    ("v1", "manage_edge", {"action": "list", "node_id": "{id}", "direction": "both"}),
    ("v1", "store_edge", {"source_id": "a-0", "target_id": "{id}"}),
    ("v1", "trace_evidence_path", {"from_id": "a-0", "to_id": "{id}"}),
    ("v1", "topology_analyze", {"node_ids": ["{id}"]}),
    ("v1", "learn_from_feedback", {"node_id": "{id}", "feedback": "positive"}),
    (
        "v1",
        "learn_from_outcome",
        {"action_id": "x", "status": "success", "confidence": 0.9, "causal_node_ids": ["{id}"]},
    ),
    ("v1", "deliberate", {"node_ids": ["{id}"]}),
    ("v1", "forget_node", {"node_id": "{id}", "mode": "soft", "reason": "probe"}),
    ("v1", "restore_node", {"node_id": "{id}", "reason": "probe"}),
    ("v1", "forget_node", {"node_id": "{id}", "mode": "hard", "reason": "probe"}),
    ("v1", "delete_node", {"node_id": "{id}"}),
    ("v1", "gdpr_erase", {"node_id": "{id}", "reason": "probe"}),
    ("v1", "belief_revise", {"action": "contract", "node_id": "{id}", "reason": "probe"}),
    ("v1", "belief_revise", {"action": "revise", "node_id": "{id}", "new_id": "a-1"}),
    ("v1", "belief_contradictions", {"node_id": "{id}"}),
    ("v2", "retrieve", {"action": "query", "operation": "get_node", "node_id": "{id}"}),
    ("v2", "retrieve", {"action": "traverse", "node_id": "{id}"}),
    ("v2", "retrieve", {"action": "trace_evidence", "from_id": "a-0", "to_id": "{id}"}),
    ("v2", "act", {"action": "store_edge", "source_id": "a-0", "target_id": "{id}"}),
    ("v2", "act", {"action": "forget_node", "node_id": "{id}", "mode": "soft", "reason": "p"}),
    ("v2", "act", {"action": "delete_node", "node_id": "{id}"}),
    ("v2", "act", {"action": "gdpr_erase", "node_id": "{id}", "reason": "p"}),
    ("v2", "learn", {"action": "from_feedback", "node_id": "{id}", "feedback": "negative"}),
    ("v2", "consolidate", {"action": "traverse", "node_id": "{id}"}),
]


# Every surface the probes below reach, named.
SURFACES_TRIED = {
    *(f"{surface}:{tool}" for surface, tool, _ in ID_PROBES),
    "v1:manage_edge(edge_id)",
    "resource:graphonomous://graph/node/{id}",
}


def _b_rows(team: Team) -> list[Any]:
    """B's seeded nodes (every field, access counters too) and the edges among them."""
    with team.facade("beta") as beta:
        nodes = [beta.get_node(node_id)["node"] for node_id in B_IDS]
        edges = [
            e
            for node_id in B_IDS
            for e in beta.manage_edge("list", node_id=node_id, direction="out")["edges"]
            if e["target_id"] in B_IDS
        ]
    return [nodes, edges]


class Writers:
    """Background writers while the probes run: bob in beta, root in gamma."""

    def __init__(self, team: Team) -> None:
        self.stop = threading.Event()
        self.written: dict[str, int] = {"beta": 0, "gamma": 0}
        self.threads = [
            threading.Thread(target=self._write, args=(team.client("bob", "beta"), "beta")),
            threading.Thread(target=self._write, args=(team.client("root", "gamma"), "gamma")),
        ]
        for thread in self.threads:
            thread.start()

    def _write(self, client: Client, project: str) -> None:
        client.init()
        while not self.stop.is_set():
            client.ok("store_node", {"content": f"{project} churn {self.written[project]}"})
            self.written[project] += 1

    def join(self) -> dict[str, int]:
        self.stop.set()
        for thread in self.threads:
            thread.join()
        return self.written


def test_every_id_taking_tool_answers_for_b_s_id_as_for_none_over_http(team: Team) -> None:
    before = _b_rows(team)
    writers = Writers(team)
    alice = team.client("alice").init()
    tried = set()
    try:
        for surface, tool, arguments in ID_PROBES:
            for node_id in B_IDS:
                probe = alice.call(tool, _filled(arguments, node_id))
                missing = alice.call(tool, _filled(arguments, MISSING))
                assert _normalised(probe, node_id) == _normalised(missing, MISSING), (tool, node_id)
            tried.add(f"{surface}:{tool}")
        for action in ("get", "delete"):  # an edge id of B
            probe = alice.call("manage_edge", {"action": action, "edge_id": team.b_edge})
            missing = alice.call("manage_edge", {"action": action, "edge_id": MISSING})
            assert _normalised(probe, team.b_edge) == _normalised(missing, MISSING)
        tried.add("v1:manage_edge(edge_id)")
        for node_id in B_IDS:  # the node resource
            probe = alice.read(f"graphonomous://graph/node/{node_id}")
            missing = alice.read(f"graphonomous://graph/node/{MISSING}")
            probe.pop("id"), missing.pop("id")
            assert _normalised(probe, node_id) == _normalised(missing, MISSING)
        tried.add("resource:graphonomous://graph/node/{id}")
    finally:
        written = writers.join()
    assert tried == SURFACES_TRIED
    assert min(written.values()) > 0, written  # the writers did run alongside
    assert _b_rows(team) == before, "alice's calls changed beta"
    assert alice.ok("graph_stats", {})["node_count"] == len(A_NODES)


_ID_KEYS = frozenset({"id", "node_id", "node_ids", "source_id", "target_id", "subject_ids"})


def _b_ids_in(value: Any) -> set[str]:
    """B's ids named anywhere in `value` under an id key (a topic word "pump" is no id)."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            named = item if isinstance(item, list) else [item]
            if key in _ID_KEYS:
                found |= {x for x in named if isinstance(x, str) and x in B_IDS}
            found |= _b_ids_in(item)
    elif isinstance(value, list):
        for item in value:
            found |= _b_ids_in(item)
    return found


def test_reads_queries_and_resources_find_nothing_of_b_over_http(team: Team) -> None:
    alice = team.client("alice").init()
    query = "pressure loss of valve V-12 seal pump"
    reads = {
        "retrieve_context": {"query": query, "limit": 20},
        "query_graph": {"operation": "similarity_search", "query": query, "limit": 20},
        "retrieve_episodic": {"limit": 20},
        "retrieve_procedural": {"task": "restart pump P-3"},
        "epistemic_frontier": {"min_gap": 0.0},
        "learn_detect_novelty": {"text": "Valve V-12 loses pressure when its seal wears out"},
        "coverage_query": {"task_description": "restart pump P-3 after a pressure loss"},
        "attention_survey": {},
        "analyze_topology": {},
        "graph_stats": {},
        "manage_goal": {"action": "list"},
        "belief_contradictions": {"content": "The plant runs four shifts a day"},
        "read_graph": {},
        "search_nodes": {"query": "valve"},
        "open_nodes": {"names": ["Valve V-12 loses pressure when its seal wears out", "valve"]},
    }
    found = {tool: alice.ok(tool, arguments) for tool, arguments in reads.items()}
    assert _b_ids_in(found) == set()
    assert found["graph_stats"]["node_count"] == len(A_NODES)
    assert found["read_graph"]["entities"] == [] or all(
        "V-12" not in json.dumps(e) for e in found["read_graph"]["entities"]
    )
    for uri in (
        "graphonomous://runtime/health",
        "graphonomous://goals/snapshot",
        "graphonomous://graph/recent",
        "graphonomous://consolidation/log",
        "graphonomous://graph/metrics",
    ):
        text = alice.read(uri)["result"]["contents"][0]["text"]
        assert _b_ids_in(json.loads(text)) == set() and "V-12" not in text, uri


def test_memory_surface_names_of_b_are_unknown_to_a(team: Team) -> None:
    bob = team.client("bob", "beta").init()
    for tool, arguments in MEMORY_CALLS[:3]:  # Alice and Acme exist in beta
        bob.ok(tool, arguments)
    alice = team.client("alice").init()
    assert alice.ok("open_nodes", {"names": ["Alice", "Acme"]})["entities"] == []
    assert alice.ok("search_nodes", {"query": "tea"})["entities"] == []
    deleted = alice.call("delete_entities", {"entityNames": ["Acme"]})
    nothing = alice.call("delete_entities", {"entityNames": ["Nobody"]})
    assert _normalised(deleted, "Acme") == _normalised(nothing, "Nobody")
    assert [e["name"] for e in bob.ok("open_nodes", {"names": ["Acme"]})["entities"]] == ["Acme"]


# -- rights ---------------------------------------------------------------------------


def test_each_tool_needs_its_right(team: Team) -> None:
    reader = team.client("reader").init()
    writer = team.client("writer").init()
    alice = team.client("alice").init()
    refused = reader.call("store_node", {"content": "a reader may not write"})
    assert refused["isError"] and "needs the right 'write'" in refused["content"][0]["text"]
    assert "reader" in refused["content"][0]["text"]
    assert reader.call("act", {"action": "store_node", "content": "nor here"})["isError"]
    assert reader.call("gdpr_erase", {"node_id": "a-3", "reason": "x"})["isError"]
    assert not reader.call("manage_edge", {"action": "list", "node_id": "a-0"}).get("isError")
    assert not reader.call("retrieve", {"action": "context", "query": "release"}).get("isError")
    stored = writer.ok("store_node", {"content": "a writer writes", "node_id": "alpha:w-1"})
    assert stored["node"]["id"] == "alpha:w-1"
    erase = writer.call("act", {"action": "gdpr_erase", "node_id": "alpha:w-1", "reason": "x"})
    assert erase["isError"] and "'erase'" in erase["content"][0]["text"]
    policy = alice.call("forget_by_policy", {"dry_run": True})
    assert policy["isError"] and "'admin'" in policy["content"][0]["text"]
    assert alice.ok("gdpr_erase", {"node_id": "alpha:w-1", "reason": "test"})["erased"] is True
    assert (
        not team.client("bob", "beta")
        .init()
        .call("forget_by_policy", {"dry_run": True})
        .get("isError")
    )


def test_a_chosen_id_cannot_tell_whether_b_holds_it(team: Team) -> None:
    alice = team.client("alice").init()
    for tool, extra in (("store_node", {}), ("act", {"action": "store_node"})):
        taken = alice.call(tool, {**extra, "content": "probe", "node_id": "valve"})
        free = alice.call(tool, {**extra, "content": "probe", "node_id": MISSING})
        assert taken["isError"] and "'alpha:…'" in taken["content"][0]["text"]
        assert _normalised(taken, "valve") == _normalised(free, MISSING), tool
    beta_side = alice.call("store_node", {"content": "probe", "node_id": "beta:valve"})
    assert _normalised(beta_side, "beta:valve") == _normalised(free, MISSING)
    assert alice.ok("store_node", {"content": "mine", "node_id": "alpha:valve"})["node"]["id"] == (
        "alpha:valve"
    )
    assert "id" in alice.ok("store_node", {"content": "an id of the server's choice"})["node"]


def test_audit_entries_name_the_principal(team: Team) -> None:
    alice = team.client("alice").init()
    alice.ok("forget_node", {"node_id": "a-3", "mode": "soft", "reason": "stale"})
    with team.facade("alpha") as alpha:
        rows = alpha.store.audit_entries("a-3")
    assert rows and all(r["details"]["principal"] == "alice" for r in rows)
    local = Graphonomous(team.db, namespace="alpha")  # a local call names none
    try:
        local.restore_node("a-3", "back")
        entries = local.store.audit_entries()
    finally:
        local.close()
    assert "principal" not in entries[-1]["details"]


def test_the_single_token_is_admin_on_the_served_namespace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GRAPHONOMOUS_TOKENS_FILE", raising=False)
    with Graphonomous(tmp_path / "one.db") as graph:
        tenants = Tenants(graph)
        server = make_http_server(
            None,
            "127.0.0.1",
            0,
            token="single-token-0123456789",
            tenant_session=tenant_sessions(tenants, "v1", time.monotonic()),
        )
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        try:
            client = Client(server, "single-token-0123456789", None).init()
            node = client.ok("store_node", {"content": "kept in default"})["node"]["id"]
            client.ok("gdpr_erase", {"node_id": node, "reason": "test"})
            other = Client(server, "single-token-0123456789", "other")
            assert other.rpc("initialize", INIT)[0] == 404
        finally:
            server.shutdown()
            server.server_close()
        (entry,) = [e for e in graph.store.audit_entries(node) if e["action"] == "gdpr_erase"]
        assert entry["details"]["principal"] == "GRAPHONOMOUS_HTTP_TOKEN"


# -- a read-only token writes nothing -------------------------------------------------


def _file_digest(db: Path) -> dict[str, str]:
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in (db, db.with_name(db.name + "-wal"))
        if path.exists()
    }


READ_CALLS = {
    name: arguments
    for name, arguments in V1_CALLS.items()
    if TOOL_RIGHTS[name] == "read" and "$goal" not in json.dumps(arguments)
}


def test_a_read_only_token_changes_no_byte_of_the_database(file_team: Team) -> None:
    team = file_team
    reader = team.client("reader", "alpha").init()
    before = _file_digest(team.file)
    assert "retrieve_context" in READ_CALLS and len(READ_CALLS) >= 12
    for _ in range(3):
        for tool, arguments in READ_CALLS.items():
            reader.call(tool, arguments)
        for query in ("release pipeline", "what happened last week at the release"):
            assert reader.ok("retrieve_context", {"query": query, "limit": 5})["results"]
        reader.ok("retrieve", {"action": "context", "query": "release train"})
        reader.ok("query_graph", {"operation": "similarity_search", "query": "seal"})
        for uri in ("graphonomous://runtime/health", "graphonomous://graph/recent"):
            reader.read(uri)
        reader.call("store_node", {"content": "refused"})
        reader.call("run_consolidation", {})
    assert _file_digest(team.file) == before
    # The same retrieve under a writing token does write (access bookkeeping): the check
    # above can fail.
    team.client("alice").init().ok("retrieve_context", {"query": "release pipeline"})
    assert _file_digest(team.file) != before


# -- concurrent writers, rankings --------------------------------------------------------


def test_two_tenants_write_at_once_and_see_only_their_own(team: Team) -> None:
    per_writer = 15
    errors: list[str] = []

    alpha_ids = {node_id for node_id, _ in A_NODES}
    beta_ids = team.ids("beta")
    theirs = {"alice": ("beta:", beta_ids), "bob": ("alpha:", alpha_ids)}

    def write(name: str, project: str) -> None:
        prefix, seeded = theirs[name]
        try:
            client = team.client(name, project).init()
            for i in range(per_writer):
                client.ok(
                    "store_node",
                    {"content": f"{name} note {i}", "node_id": f"{project}:{name}-{i}"},
                )
                found = client.ok("retrieve_context", {"query": "note", "limit": 50})
                ids = {r["node_id"] for r in found["results"]}
                if any(x.startswith(prefix) or x in seeded for x in ids):
                    errors.append(f"{name} saw {sorted(ids)}")
        except AssertionError as exc:
            errors.append(f"{name}: {exc}")

    threads = [
        threading.Thread(target=write, args=("alice", "alpha")),
        threading.Thread(target=write, args=("bob", "beta")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for namespace, prefix, other in (
        ("alpha", "alpha:alice-", "beta:"),
        ("beta", "beta:bob-", "alpha:"),
    ):
        ids = team.ids(namespace)
        assert len({i for i in ids if i.startswith(prefix)}) == per_writer, namespace
        assert not any(i.startswith(other) for i in ids), namespace


QUERIES = ("release pipeline pressure", "seal of approval", "valve names", "every Tuesday")


def test_rankings_in_a_are_the_same_whether_or_not_b_exists(
    file_team: Team, tmp_path: Path
) -> None:
    team = file_team
    alone = tmp_path / "alone"
    alone.mkdir()
    solo = Team(alone, str(alone / "team.db"), with_beta=False)
    try:
        results = []
        for running in (team, solo):
            reader = running.client("reader").init()
            results.append(
                [
                    reader.ok("retrieve_context", {"query": q, "limit": 4})["results"]
                    for q in QUERIES
                ]
            )
        shared, single = results
        assert [[(r["node_id"], r["score"]) for r in q] for q in shared] == [
            [(r["node_id"], r["score"]) for r in q] for q in single
        ]
        assert all(shared)
    finally:
        solo.close()


# -- the canvas -----------------------------------------------------------------------


def _canvas_get(port: int, path: str, token: str | None) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    conn.request("GET", path, headers=headers)
    response = conn.getresponse()
    return response.status, json.loads(response.read())


def _canvas_post(port: int, path: str, token: str, body: dict[str, Any]) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    conn.request("POST", path, json.dumps(body).encode(), headers)
    response = conn.getresponse()
    return response.status, json.loads(response.read())


def test_the_canvas_honours_the_same_tokens(team: Team) -> None:
    canvas = CanvasServer(
        ("127.0.0.1", 0),
        team.graph,
        allow_writes=True,
        policy=build_policy("default", None, team.tokens_file),
        tenants=team.tenants,
    )
    threading.Thread(target=canvas.serve_forever, args=(0.05,), daemon=True).start()
    port = canvas.server_address[1]
    alice, reader, bob = (TOKENS[n][0] for n in ("alice", "reader", "bob"))
    before = _b_rows(team)
    writers = Writers(team)  # bob in beta, root in gamma, while alice probes
    try:
        assert _canvas_get(port, "/api/graph", None)[0] == 401
        for node_id in B_IDS:
            for route in ("/api/node?id={}", "/api/expand?id={}"):
                probe = _canvas_get(port, route.format(node_id), alice)
                missing = _canvas_get(port, route.format(MISSING), alice)
                assert _normalised(probe, node_id) == _normalised(missing, MISSING), route
        views = [
            _canvas_get(port, "/api/graph", alice)[1],
            _canvas_get(port, "/api/search?q=valve%20V-12%20seal%20pump", alice)[1],
            _canvas_get(port, "/api/stats", alice)[1],
        ]
        assert _b_ids_in(views) == set() and views[0]["total"] == len(A_NODES)
        beta = _canvas_get(port, "/api/graph?project=beta", alice)
        ghost = _canvas_get(port, "/api/graph?project=ghost", alice)
        assert beta[0] == 404 and _normalised(beta, "beta") == _normalised(ghost, "ghost")
        edge = {"source_id": "a-0", "target_id": "valve", "relationship": "related"}
        probe = _canvas_post(port, "/api/edges", alice, edge)
        missing = _canvas_post(port, "/api/edges", alice, {**edge, "target_id": MISSING})
        assert _normalised(probe, "valve") == _normalised(missing, MISSING)
        probe = _canvas_post(port, "/api/edges/delete", alice, {"edge_ids": [team.b_edge]})
        missing = _canvas_post(port, "/api/edges/delete", alice, {"edge_ids": [MISSING]})
        assert _normalised(probe, team.b_edge) == _normalised(missing, MISSING)
        assert min(writers.join().values()) > 0
        assert _b_rows(team) == before
        # a read-only token: reads write nothing, writes are refused
        digest = None if is_postgres_url(team.db) else _file_digest(team.file)
        for path in ("/api/graph", "/api/search?q=release", "/api/node?id=a-0", "/api/stats"):
            assert _canvas_get(port, path, reader)[0] == 200
        refused = _canvas_post(port, "/api/edges", reader, {**edge, "target_id": "a-2"})
        assert refused[0] == 403 and refused[1]["error"]["code"] == "forbidden"
        assert _canvas_post(port, "/api/consolidation", reader, {})[0] == 403
        assert digest is None or _file_digest(team.file) == digest
        # bob sees beta
        assert _canvas_get(port, "/api/graph?project=beta", bob)[1]["total"] > 20
    finally:
        writers.join()
        canvas.shutdown()
        canvas.server_close()


def test_build_server_without_access_is_unchanged(tmp_path: Path) -> None:
    with Graphonomous(tmp_path / "plain.db") as graph:
        server = build_server(graph, "v1")
        assert server.authorize is None


# -- the command line -----------------------------------------------------------------


def test_serve_with_a_bad_tokens_file_exits_2_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "tokens.json"
    bad.write_text(json.dumps({"tokens": [{"principal": "x"}]}))
    for command in (["serve", "--transport", "http", "--port", "0"], ["ui", "--port", "0"]):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "graphonomous",
                "--db",
                str(tmp_path / "g.db"),
                *command,
                "--tokens",
                str(bad),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 2, done.stderr
        assert "tokens[0].token_sha256" in done.stderr and str(bad) in done.stderr
        assert "Traceback" not in done.stderr


def test_serve_over_http_with_a_tokens_file(tmp_path: Path) -> None:
    db = tmp_path / "served.db"
    with Graphonomous(db, namespace="alpha") as alpha:
        seed_alpha(alpha)
    tokens = write_tokens(tmp_path / "tokens.json")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "graphonomous",
            "--db",
            str(db),
            "serve",
            "--transport",
            "http",
            "--host",
            "0.0.0.0",
            "--port",
            "0",
            "--surface",
            "all",
            "--no-idle-consolidation",
            "--tokens",
            str(tokens),
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        port = int(line.rsplit(":", 1)[1].split("/")[0])
        server = type("Bound", (), {"server_address": ("127.0.0.1", port)})()
        bob = Client(server, TOKENS["bob"][0], "beta").init()  # type: ignore[arg-type]
        bob.ok("store_node", {"content": "bob's note", "node_id": "beta:note"})
        reader = Client(server, TOKENS["reader"][0], None).init()  # type: ignore[arg-type]
        assert reader.ok("graph_stats", {})["node_count"] == len(A_NODES)
        assert reader.call("store_node", {"content": "no"})["isError"]
        assert Client(server, None, None).rpc("initialize", INIT)[0] == 401  # type: ignore[arg-type]
    finally:
        process.terminate()
        process.wait(timeout=60)
    with Graphonomous(db, namespace="beta") as beta, Graphonomous(db, namespace="alpha") as alpha:
        assert beta.get_node("beta:note")["node"]["content"] == "bob's note"
        assert alpha.graph_stats()["node_count"] == len(A_NODES)
