"""Deliberation plans for feedback loops (κ > 0), without a language model.

κ > 0 means a region's claims depend on each other in a loop: answering in
one retrieval pass is unsafe (seed 000).  `deliberate` turns each such SCC
into a plan an agent (or a human) can work through:

- the **deliberation budget** of the SCC (`topology.deliberation_budget`);
- its **fault lines** — the κ arcs of a minimum cut (`topology.compute_kappa`
  on the SCC), each with the stored relationship(s) behind it and the
  content of both ends;
- the **competing claims** — the nodes on each side of the minimum-cut
  partition [A, B] (A reaches B only through the fault lines);
- **suggested questions** — one per fault line (for a ``contradicts`` arc:
  which of the two holds; otherwise: does the source really lead to the
  target), then one about which side to settle first.  An approximate SCC
  (too large for an exact cut) gets one question asking for its most
  central sub-question instead.

The region: ``node_ids`` (those nodes), or ``query`` (the topology window of
``retrieve_context``), or neither (the whole live graph); not both.

Callers may hand their conclusions back: ``conclusions=[{"scc_id" or
"node_ids", "content", "confidence"}]`` (``scc_id`` as numbered by this
call's analysis of the same region).  With ``write_back=True`` each is stored
as a semantic node (``metadata.deliberation``) with a ``derived_from`` edge
to every node it concludes about, and κ is reported again over the region
plus the new nodes.  A conclusion only adds arcs leaving it, so it documents
the loop without changing κ: resolving a loop is a graph edit the caller
decides (e.g. `belief_revise`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from ..model import (
    KAPPA_ARC_DIRECTION,
    ValidationError,
    check_id_list,
    check_text,
    check_unit_interval,
)
from ..records import node_from_fields
from ..retrieval.retriever import retrieve_context
from ..topology import Adjacency, analyze, build_adjacency, compute_kappa
from .writes import insert_node, link

if TYPE_CHECKING:
    from ..model import Edge, Node
    from ..retrieval.graph_view import GraphEngine

CONCLUSION_TYPE: Final = "semantic"  # a member of model.NODE_TYPES
CONCLUSION_RELATIONSHIP: Final = "derived_from"
DEFAULT_CONCLUSION_CONFIDENCE: Final = 0.7
MAX_CONCLUSIONS: Final = 100
SNIPPET_CHARS: Final = 80
# How a relationship reads in a question "does X <phrase> Y?".
RELATION_PHRASES: Final[Mapping[str, str]] = {
    "causal": "cause",
    "causes": "cause",
    "resolves": "resolve",
    "part_of": "belong to",
    "follows": "follow",
    "supersedes": "supersede",
    "superseded_by": "get superseded by",
    "depends_on": "depend on",
    "supports": "support",
    "derived_from": "follow from",
    "temporal_before": "come before",
    "temporal_after": "come after",
    "temporal": "come before",
}


def snippet(text: str, width: int = SNIPPET_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def arc_relationships(edges: Sequence[Edge], source: str, target: str) -> list[str]:
    """The stored relationships that produce the κ arc source→target (sorted)."""
    kinds = set()
    for edge in edges:
        direction = KAPPA_ARC_DIRECTION.get(edge.relationship)
        # direction -1: the kind is an inverse, its arc runs target -> source.
        arc = (
            (edge.source_id, edge.target_id) if direction == 1 else (edge.target_id, edge.source_id)
        )
        if direction is not None and arc == (source, target):
            kinds.add(edge.relationship)
    return sorted(kinds)


def fault_line_question(source: Node, target: Node, kinds: Sequence[str]) -> str:
    a, b = snippet(source.content), snippet(target.content)
    if "contradicts" in kinds:
        return f"Which holds: “{a}” or “{b}”? What evidence would settle it?"
    phrase = RELATION_PHRASES.get(kinds[0], "lead to") if kinds else "lead to"
    return f"Does “{a}” really {phrase} “{b}”? What changes if that link is cut?"


def _claims(nodes: Mapping[str, Node], ids: Sequence[str]) -> list[dict[str, Any]]:
    return [
        {"node_id": i, "content": nodes[i].content, "confidence": nodes[i].confidence} for i in ids
    ]


def plan_for_scc(
    adjacency: Adjacency,
    scc: Mapping[str, Any],
    nodes: Mapping[str, Node],
    edges: Sequence[Edge],
) -> dict[str, Any]:
    """One SCC's plan (module docstring).  Complexity: `compute_kappa` on the SCC."""
    cut = compute_kappa(adjacency, scc["nodes"])
    faults = []
    questions = []
    for fault in cut["fault_line_edges"]:
        kinds = arc_relationships(edges, fault["source"], fault["target"])
        source, target = nodes[fault["source"]], nodes[fault["target"]]
        faults.append(
            {
                "source": source.id,
                "target": target.id,
                "relationships": kinds,
                "source_content": source.content,
                "target_content": target.content,
            }
        )
        questions.append(fault_line_question(source, target, kinds))
    partition = cut["min_cut_partition"]
    claims = None
    if partition is not None:
        side_a, side_b = partition
        claims = {"side_a": _claims(nodes, side_a), "side_b": _claims(nodes, side_b)}
        questions.append(
            f"The {len(side_a)} claim(s) on side A and the {len(side_b)} on side B depend on each "
            f"other through {cut['kappa']} link(s): which side should be settled first, and "
            "would settling it change the other?"
        )
    else:
        questions.append(
            f"This loop spans {len(scc['nodes'])} nodes, too many for an exact cut: which "
            "sub-question is most central, so it can be settled first?"
        )
    return {
        "scc_id": scc["id"],
        "nodes": scc["nodes"],
        "kappa": cut["kappa"],
        "approximate": cut["approximate"],
        "deliberation_budget": scc["deliberation_budget"],
        "fault_lines": faults,
        "competing_claims": claims,
        "questions": questions,
    }


def _region(
    graph: GraphEngine, query: str | None, node_ids: Sequence[str] | None
) -> tuple[list[str], dict[str, Any]]:
    if query is not None and node_ids is not None:
        raise ValidationError("query", "give query or node_ids, not both")
    if node_ids is not None:
        ids = sorted(set(check_id_list("node_ids", node_ids)))
        found = graph.store.get_nodes(ids)
        missing = [i for i in ids if i not in found or found[i].forgotten_at is not None]
        if missing:
            raise ValidationError("node_ids", f"unknown node ids: {', '.join(missing)}")
        return ids, {"source": "node_ids"}
    if query is not None:
        check_text("query", query)
        topology = retrieve_context(graph, query)["topology"]
        members = {n for scc in topology["sccs"] for n in scc["nodes"]} | set(topology["dag_nodes"])
        return sorted(members), {"source": "query", "query": query}
    return sorted(graph.graph_snapshot().live), {"source": "graph"}


def _conclusion_targets(
    raw: object, plans: Mapping[str, Mapping[str, Any]], live: Mapping[str, Node]
) -> list[dict[str, Any]]:
    """Validated conclusions: ``[{"scc_id", "node_ids", "content", "confidence"}]``."""
    if not isinstance(raw, Sequence) or isinstance(raw, (str, bytes)):
        raise ValidationError("conclusions", "must be a list of objects")
    if len(raw) > MAX_CONCLUSIONS:
        raise ValidationError("conclusions", f"at most {MAX_CONCLUSIONS}")
    out = []
    for position, item in enumerate(raw):
        where = f"conclusions[{position}]"
        if not isinstance(item, Mapping):
            raise ValidationError(where, "must be an object")
        unknown = sorted(set(item) - {"scc_id", "node_ids", "content", "confidence"})
        if unknown:
            raise ValidationError(f"{where}.{unknown[0]}", "is not a conclusion field")
        scc_id = item.get("scc_id")
        if (scc_id is None) == (item.get("node_ids") is None):
            raise ValidationError(where, "give exactly one of scc_id or node_ids")
        if scc_id is not None:
            if scc_id not in plans:
                raise ValidationError(f"{where}.scc_id", f"no SCC {scc_id!r} in this region")
            targets = list(plans[scc_id]["nodes"])
        else:
            targets = sorted(set(check_id_list(f"{where}.node_ids", item["node_ids"])))
            missing = [i for i in targets if i not in live]
            if missing:
                raise ValidationError(f"{where}.node_ids", f"unknown node ids: {missing}")
        out.append(
            {
                "scc_id": scc_id,
                "node_ids": targets,
                "content": check_text(f"{where}.content", item.get("content")),
                "confidence": check_unit_interval(
                    f"{where}.confidence", item.get("confidence", DEFAULT_CONCLUSION_CONFIDENCE)
                ),
            }
        )
    return out


def _analyse(
    graph: GraphEngine, ids: Sequence[str]
) -> tuple[Adjacency, dict[str, Any], list[Edge]]:
    edges = graph.store.list_edges_between(ids)
    adjacency = build_adjacency(ids, edges)
    return adjacency, analyze(adjacency, trigger="deliberate"), edges


def deliberate(
    graph: GraphEngine,
    query: str | None = None,
    node_ids: Sequence[str] | None = None,
    conclusions: Sequence[Mapping[str, Any]] | None = None,
    write_back: bool = False,
) -> dict[str, Any]:
    """Plans for every κ > 0 SCC of a region, and optional write-back of conclusions.

    Output: ``{"region": {"source", "node_count", "query"?}, "routing",
    "max_kappa", "scc_count", "plans": [plan_for_scc ...], "conclusions":
    [{"scc_id", "node_ids", "content", "confidence", "node_id"?}],
    "written", "kappa_after": {"max_kappa", "sccs": [{"scc_id",
    "kappa_before", "kappa_after"}]} | None}``.
    Complexity: a topology analysis of the region (plus one retrieval for a
    query) and one κ computation per κ > 0 SCC; write-back is one transaction.
    """
    if not isinstance(write_back, bool):
        raise ValidationError("write_back", "must be true or false")
    with graph.lock:
        ids, region = _region(graph, query, node_ids)
        adjacency, analysis, edges = _analyse(graph, ids)
        nodes = graph.store.get_nodes(ids)
        plans = [
            plan_for_scc(adjacency, scc, nodes, edges)
            for scc in analysis["sccs"]
            if scc["kappa"] > 0
        ]
        by_id = {scc["id"]: scc for scc in analysis["sccs"]}
        live = {i: n for i, n in nodes.items() if n.forgotten_at is None}
        if conclusions is not None and node_ids is None:
            live.update(
                (k, v)
                for k, v in graph.store.get_nodes(_mentioned(conclusions)).items()
                if v.forgotten_at is None
            )
        accepted = _conclusion_targets(conclusions or [], by_id, live)
        kappa_after = None
        if write_back and accepted:
            texts = graph.embed_texts([c["content"] for c in accepted])
            now = graph.now()
            with graph.store.transaction():
                for conclusion, vector in zip(accepted, texts, strict=True):
                    before = by_id[conclusion["scc_id"]]["kappa"] if conclusion["scc_id"] else None
                    node = node_from_fields(
                        {
                            "node_type": CONCLUSION_TYPE,
                            "content": conclusion["content"],
                            "confidence": conclusion["confidence"],
                            "metadata": {
                                "deliberation": {
                                    "scc_id": conclusion["scc_id"],
                                    "kappa_before": before,
                                    "node_ids": conclusion["node_ids"],
                                }
                            },
                        },
                        now=now,
                    )
                    insert_node(graph, node, vector)
                    for target in conclusion["node_ids"]:
                        link(graph.store, node.id, target, CONCLUSION_RELATIONSHIP, now)
                    conclusion["node_id"] = node.id
            written = sorted({*ids, *(c["node_id"] for c in accepted)})
            kappa_after = _kappa_after(graph, written, analysis)
    return {
        "region": {**region, "node_count": len(ids)},
        "routing": analysis["routing"],
        "max_kappa": analysis["max_kappa"],
        "scc_count": analysis["scc_count"],
        "plans": plans,
        "conclusions": accepted,
        "written": bool(write_back and accepted),
        "kappa_after": kappa_after,
    }


def _mentioned(conclusions: object) -> list[str]:
    if not isinstance(conclusions, Sequence):
        return []
    found: list[str] = []
    for item in conclusions:
        if isinstance(item, Mapping) and isinstance(item.get("node_ids"), list):
            found.extend(i for i in item["node_ids"] if isinstance(i, str))
    return found


def _kappa_after(
    graph: GraphEngine, ids: Sequence[str], before: Mapping[str, Any]
) -> dict[str, Any]:
    """κ over the region plus the conclusions; each old SCC matched by its first member."""
    _, after, _ = _analyse(graph, ids)
    kappa_of = {node: scc["kappa"] for scc in after["sccs"] for node in scc["nodes"]}
    return {
        "max_kappa": after["max_kappa"],
        "sccs": [
            {
                "scc_id": scc["id"],
                "kappa_before": scc["kappa"],
                "kappa_after": kappa_of.get(scc["nodes"][0], 0),
            }
            for scc in before["sccs"]
        ],
    }
