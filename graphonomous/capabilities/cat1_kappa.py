"""Category 1 — κ activation (seed 004, GraphMemBench Phase 1): 8 scenarios.

Feedback loops must be *seen*: mutual references, contradictions and import
cycles become strongly connected components with κ > 0 in the topology that
retrieval returns, so the agent is routed to deliberation; acyclic knowledge
stays on the fast path.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..ingest import scan_directory
from ..topology import analyze, build_adjacency, reference_kappa
from .registry import scenario

if TYPE_CHECKING:
    from ..api import Graphonomous

CATEGORY = 1


def _topology_of(graph: Graphonomous, node_ids: list[str]) -> dict[str, Any]:
    """Canonical topology of exactly these nodes (the stored edges between them)."""
    edges = graph.store.list_edges_between(node_ids)
    return analyze(build_adjacency(node_ids, edges), emit_telemetry=False)


def _window(result: dict[str, Any]) -> set[str]:
    topology = result["topology"]
    return set(topology["dag_nodes"]) | {n for scc in topology["sccs"] for n in scc["nodes"]}


@scenario(CATEGORY, "Store nodes with mutual references: retrieval reports kappa >= 1")
def mutual_references(graph: Graphonomous) -> tuple[bool, str]:
    a = graph.store_node("The billing service depends on the ledger service for balances")
    b = graph.store_node("The ledger service depends on the billing service for invoices")
    a_id, b_id = a["node"]["id"], b["node"]["id"]
    graph.store_edge(a_id, b_id, "depends_on")
    graph.store_edge(b_id, a_id, "depends_on")
    result = graph.retrieve_context("billing service and ledger service dependencies")
    topology = result["topology"]
    together = any({a_id, b_id} <= set(scc["nodes"]) for scc in topology["sccs"])
    ok = topology["max_kappa"] >= 1 and topology["routing"] == "deliberate" and together
    return ok, f"max_kappa={topology['max_kappa']}, routing={topology['routing']}"


@scenario(CATEGORY, "Store contradicting facts: contradicts edges form an SCC")
def contradictions_form_scc(graph: Graphonomous) -> tuple[bool, str]:
    first = graph.store_node("Valve V2 is open during the night shift")["node"]["id"]
    result = graph.belief_revise("expand", content="Valve V2 is closed during the night shift")
    second = result["node"]["id"]
    kinds = sorted(
        (e["source_id"] == first, e["relationship"])
        for e in graph.get_node(first)["edges"]
        if second in (e["source_id"], e["target_id"])
    )
    topology = _topology_of(graph, [first, second])
    scc = topology["sccs"][0] if topology["sccs"] else None
    ok = (
        kinds == [(False, "contradicts"), (True, "contradicts")]
        and scc is not None
        and set(scc["nodes"]) == {first, second}
        and scc["kappa"] == 1
    )
    return ok, f"edges={kinds}, sccs={topology['scc_count']}, max_kappa={topology['max_kappa']}"


@scenario(CATEGORY, "Retrieve with expanded topology window: neighbours are included")
def expanded_window(graph: Graphonomous) -> tuple[bool, str]:
    hit = graph.store_node("Pump P1 vibration alarm procedure: reduce the load first")["node"]["id"]
    neighbour = graph.store_node("Night crew rota for building 7")["node"]["id"]
    graph.store_edge(hit, neighbour, "related", strength=0.9)
    for i in range(5):
        graph.store_node(f"Unrelated note {i} about the cafeteria menu")
    result = graph.retrieve_context("pump vibration alarm procedure", limit=1, expansion_hops=0)
    returned = [r["node_id"] for r in result["results"]]
    window = _window(result)
    ok = returned == [hit] and neighbour in window and neighbour not in returned
    return (
        ok,
        f"results={len(returned)}, window={len(window)}, neighbour in window={neighbour in window}",
    )


@scenario(CATEGORY, "Semantic back-references create reverse edges")
def back_references(graph: Graphonomous) -> tuple[bool, str]:
    # A document that links back to the document linking it gets the reverse
    # edge, so the pair is a 2-cycle.
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "design.md").write_text(
            "# Design\nThe rollout plan is in [rollout](rollout.md).\n", encoding="utf-8"
        )
        Path(folder, "rollout.md").write_text(
            "# Rollout\nEach step follows the [design](design.md).\n", encoding="utf-8"
        )
        scan_directory(graph, folder)
    files = {
        str(node.metadata.get("path")): node.id
        for node in graph.store.list_nodes()
        if node.metadata.get("kind") == "file"
    }
    design, rollout = files.get("design.md"), files.get("rollout.md")
    if design is None or rollout is None:
        return False, f"file nodes not found: {sorted(files)}"
    forward = graph.store.edges_of(design, "out")
    backward = graph.store.edges_of(rollout, "out")
    has_forward = any(e.target_id == rollout for e in forward)
    has_backward = any(e.target_id == design for e in backward)
    topology = _topology_of(graph, [design, rollout])
    ok = has_forward and has_backward and topology["max_kappa"] == 1
    return ok, f"forward={has_forward}, reverse={has_backward}, kappa={topology['max_kappa']}"


@scenario(CATEGORY, "Kappa on 2-node, 3-node and N-node SCCs matches the brute-force reference")
def kappa_sizes(graph: Graphonomous) -> tuple[bool, str]:
    def ring(size: int, both_ways: bool) -> list[str]:
        ids = [
            graph.store_node(f"Loop {size} member {i} of the cycle")["node"]["id"]
            for i in range(size)
        ]
        for i in range(size):
            for j in range(size):
                if i != j and (both_ways or j == (i + 1) % size):
                    graph.store_edge(ids[i], ids[j], "causes")
        return ids

    cases = {"2-node": ring(2, False), "3-node": ring(3, False), "5-node complete": ring(5, True)}
    expected = {"2-node": 1, "3-node": 1, "5-node complete": 4}  # complete digraph: n − 1
    found = {}
    for name, ids in cases.items():
        topology = _topology_of(graph, ids)
        adjacency = build_adjacency(ids, graph.store.list_edges_between(ids))
        reference = reference_kappa(adjacency, ids)["kappa"]
        found[name] = (topology["max_kappa"], reference)
    ok = all(found[name] == (expected[name], expected[name]) for name in cases)
    return ok, ", ".join(f"{name}: κ={k} (reference {r})" for name, (k, r) in found.items())


@scenario(CATEGORY, "Kappa = 0 fast path for acyclic subgraphs")
def acyclic_fast_path(graph: Graphonomous) -> tuple[bool, str]:
    ids = [
        graph.store_node(text)["node"]["id"]
        for text in (
            "Low oil pressure causes bearing wear in turbine T1",
            "Bearing wear in turbine T1 causes vibration",
            "Vibration in turbine T1 causes an emergency shutdown",
        )
    ]
    graph.store_edge(ids[0], ids[1], "causes")
    graph.store_edge(ids[1], ids[2], "causes")
    result = graph.retrieve_context("turbine T1 bearing wear vibration shutdown")
    topology = result["topology"]
    ok = topology["max_kappa"] == 0 and topology["routing"] == "fast" and not topology["sccs"]
    return ok, f"max_kappa={topology['max_kappa']}, routing={topology['routing']}"


@scenario(CATEGORY, "Deliberation triggers when kappa > 0")
def deliberation_triggers(graph: Graphonomous) -> tuple[bool, str]:
    loop = [
        graph.store_node(text)["node"]["id"]
        for text in (
            "Market share drives revenue",
            "Revenue funds research and development",
            "Research and development improves product quality",
            "Product quality drives market share",
        )
    ]
    for i, node in enumerate(loop):
        graph.store_edge(node, loop[(i + 1) % len(loop)], "causes")
    chain = [graph.store_node(t)["node"]["id"] for t in ("Founding year 1998", "CEO since 2015")]
    graph.store_edge(chain[0], chain[1], "follows")
    routed = graph.retrieve_context("market share revenue research quality")["topology"]["routing"]
    cyclic = graph.deliberate(node_ids=loop)
    acyclic = graph.deliberate(node_ids=chain)
    plan = cyclic["plans"][0] if cyclic["plans"] else None
    ok = (
        routed == "deliberate"
        and plan is not None
        and plan["kappa"] == 1
        and len(plan["fault_lines"]) == 1
        and plan["deliberation_budget"]["max_iterations"] == 2
        and bool(plan["questions"])
        and acyclic["plans"] == []
        and acyclic["routing"] == "fast"
    )
    detail = (
        f"routing={routed}, plans={len(cyclic['plans'])}, acyclic plans={len(acyclic['plans'])}"
    )
    return ok, detail


@scenario(CATEGORY, "End-to-end: ingest a file pair with mutual imports, retrieve, kappa > 0")
def mutual_imports(graph: Graphonomous) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "billing.py").write_text(
            "import ledger\n\n\ndef charge(amount):\n    return ledger.record(amount)\n",
            encoding="utf-8",
        )
        Path(folder, "ledger.py").write_text(
            "import billing\n\n\ndef record(amount):\n    return billing.charge(-amount)\n",
            encoding="utf-8",
        )
        summary = scan_directory(graph, folder)
    result = graph.retrieve_context("billing charge and ledger record")
    topology = result["topology"]
    ok = summary.ingested == 2 and topology["max_kappa"] > 0 and topology["routing"] == "deliberate"
    return ok, f"ingested={summary.ingested}, max_kappa={topology['max_kappa']}"
