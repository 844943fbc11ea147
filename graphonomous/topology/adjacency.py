"""Turning stored edges, JSON documents and edge lists into the directed graph κ sees.

Which relationship kinds become arcs, and in which direction, is decided only
by :data:`graphonomous.model.KAPPA_ARC_DIRECTION` (+1: source→target, −1: the
kind is an inverse, so the arc is target→source, absent: a symmetric kind,
excluded).  Self-loops never become arcs, and parallel edges collapse into one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Final

from ..model import (
    BENDSCRIPT_EXCLUDED_KINDS,
    EDGE_FIELD_ALIASES,
    KAPPA_ARC_DIRECTION,
    RELATIONSHIPS,
    Edge,
    ValidationError,
    check_id,
)
from .types import Adjacency

# BendScript edges spell the endpoints a/b and the kind `kind` (top level or in props).
_BENDSCRIPT_ALIASES: Final[Mapping[str, str]] = {
    "a": "source_id",
    "b": "target_id",
    "kind": "relationship",
}

EdgeLike = Edge | Mapping[str, Any] | tuple[str, str] | list[str]
"""A model.Edge, an edge dict (ours, seed 000's or BendScript's), or a (source, target) pair."""

Arc = tuple[str, str]


def known_kinds() -> frozenset[str]:
    """Every relationship string accepted on edges given to the topology engine."""
    return (
        frozenset(RELATIONSHIPS) | frozenset(KAPPA_ARC_DIRECTION) | set(BENDSCRIPT_EXCLUDED_KINDS)
    )


_KNOWN_KINDS: Final = known_kinds()


def _canonical_key(key: str) -> str:
    return EDGE_FIELD_ALIASES.get(key, _BENDSCRIPT_ALIASES.get(key, key))


def _mapping_parts(position: int, edge: Mapping[str, Any]) -> tuple[str, str, str | None, str]:
    """(source, target, relationship, name of the relationship field) of an edge dict."""
    fields: dict[str, Any] = {}
    spelled: dict[str, str] = {}  # canonical name -> the key the caller used
    props = edge.get("props")
    items = list(edge.items())
    if isinstance(props, Mapping) and "kind" in props:
        items.append(("props.kind", props["kind"]))
    for key, value in items:
        canonical = "relationship" if key == "props.kind" else _canonical_key(str(key))
        if canonical in fields and fields[canonical] != value:
            raise ValidationError(
                f"edges[{position}].{key}", f"conflicts with {spelled[canonical]!r}"
            )
        fields[canonical] = value
        spelled.setdefault(canonical, str(key))
    ends = []
    for canonical, plain in (("source_id", "source"), ("target_id", "target")):
        if canonical not in fields:
            raise ValidationError(f"edges[{position}].{plain}", "is missing")
        ends.append(check_id(f"edges[{position}].{spelled[canonical]}", fields[canonical]))
    relationship = fields.get("relationship")
    rel_field = f"edges[{position}].{spelled.get('relationship', 'relationship')}"
    if relationship is not None and not isinstance(relationship, str):
        raise ValidationError(rel_field, f"must be a string; got {type(relationship).__name__}")
    return ends[0], ends[1], relationship, rel_field


def edge_parts(position: int, edge: object) -> tuple[str, str, str | None, str]:
    """Split one EdgeLike into (source, target, relationship or None, relationship field name).

    `position` is the edge's index, used in error messages ("edges[3].source").
    Raises ValidationError for anything that is not an edge.
    """
    if isinstance(edge, Edge):
        return edge.source_id, edge.target_id, edge.relationship, f"edges[{position}].relationship"
    if isinstance(edge, Mapping):
        return _mapping_parts(position, edge)
    if isinstance(edge, (tuple, list)) and len(edge) == 2:
        source = check_id(f"edges[{position}][0]", edge[0])
        target = check_id(f"edges[{position}][1]", edge[1])
        return source, target, None, f"edges[{position}]"
    raise ValidationError(
        f"edges[{position}]",
        "must be an edge object with source/target (or a/b) or a [source, target] pair",
    )


def orient(source: str, target: str, relationship: str | None, field: str) -> Arc | None:
    """The κ arc an edge contributes, or None when its kind is excluded.

    No relationship means a plain directed arc.  An unknown kind raises
    ValidationError naming `field`.
    """
    if relationship is None:
        return (source, target)
    direction = KAPPA_ARC_DIRECTION.get(relationship)
    if direction is None:
        if relationship not in _KNOWN_KINDS:
            allowed = ", ".join(sorted(_KNOWN_KINDS))
            raise ValidationError(field, f"unknown relationship {relationship!r}; known: {allowed}")
        return None
    return (source, target) if direction > 0 else (target, source)


def normalize_edges(edges: Iterable[object]) -> tuple[list[str], list[Arc]]:
    """Validate edges once: (every endpoint, in input order, with repeats; the κ arcs).

    Arcs keep input order and may repeat or be self-loops; callers filter.  O(E).
    """
    endpoints: list[str] = []
    arcs: list[Arc] = []
    for position, edge in enumerate(edges):
        source, target, relationship, field = edge_parts(position, edge)
        endpoints.append(source)
        endpoints.append(target)
        arc = orient(source, target, relationship, field)
        if arc is not None:
            arcs.append(arc)
    return endpoints, arcs


def adjacency_over(universe: Iterable[str], arcs: Iterable[Arc]) -> Adjacency:
    """Adjacency keyed by the sorted universe; self-loops and arcs leaving it dropped.

    O(V log V + E).
    """
    adjacency: Adjacency = {node: set() for node in sorted(set(universe))}
    for source, target in arcs:
        if source != target and source in adjacency and target in adjacency:
            adjacency[source].add(target)
    return adjacency


def build_adjacency(node_ids: Iterable[str], edges: Iterable[object]) -> Adjacency:
    """The κ digraph over an explicit node universe.

    Input: node ids (the universe) and EdgeLike edges (model.Edge, edge dicts
    with source/target or source_id/target_id or BendScript a/b, optional
    relationship / edge_type / kind / props.kind; or (source, target) pairs,
    always directed).  Output: ``{node: set(targets)}`` with one key per
    universe node, keys in sorted order; isolated and sink nodes keep an empty
    set.  Dropped: self-loops, edges with an endpoint outside the universe,
    duplicate arcs, and edges of a kind absent from KAPPA_ARC_DIRECTION.
    Raises ValidationError (naming the field) on malformed edges or unknown
    kinds.  Complexity: O(V log V + E).  Reference: seed 000 Task 1.1
    ``build_adjacency/2``.
    """
    universe: list[str] = []
    for position, node in enumerate(node_ids):
        if not isinstance(node, str):
            raise ValidationError(f"node_ids[{position}]", "must be a string")
        universe.append(node)
    _, arcs = normalize_edges(edges)
    return adjacency_over(universe, arcs)


def normalize_adjacency(adjacency: Mapping[str, Iterable[str]]) -> Adjacency:
    """A caller's adjacency mapping as a fresh Adjacency.

    Input: ``{node: iterable of targets}``.  Output: new dict whose keys are all
    nodes (keys ∪ targets, sorted) with fresh sets; self-loops dropped.  The
    input is never mutated.  Raises ValidationError for non-string ids.  O(V log V + E).
    """
    universe: set[str] = set()
    arcs: list[Arc] = []
    for source, targets in adjacency.items():
        if not isinstance(source, str):
            raise ValidationError("adjacency", f"node ids must be strings; got {source!r}")
        if isinstance(targets, (str, bytes)) or not isinstance(targets, Iterable):
            raise ValidationError(f"adjacency[{source!r}]", "must be a set or list of node ids")
        universe.add(source)
        for target in targets:
            if not isinstance(target, str):
                raise ValidationError(
                    f"adjacency[{source!r}]", f"node ids must be strings; got {target!r}"
                )
            universe.add(target)
            arcs.append((source, target))
    return adjacency_over(universe, arcs)


def adjacency_from_json(doc: object) -> Adjacency:
    """The κ digraph of a ``{"nodes": [...], "edges": [...]}`` document.

    Input: a mapping (or a JSON string holding one).  `nodes` lists ids or
    objects with an ``id`` (BendScript planes work as-is); `edges` lists
    EdgeLike objects.  Both keys are optional.  The universe is the nodes plus
    every edge endpoint (also endpoints of excluded kinds and self-loops).
    Output: as :func:`build_adjacency`.  Raises ValidationError naming the
    field.  Complexity: O(V log V + E).
    """
    if isinstance(doc, (str, bytes)):
        try:
            doc = json.loads(doc)
        except json.JSONDecodeError as exc:
            raise ValidationError("doc", f"is not valid JSON ({exc.msg})") from exc
    if not isinstance(doc, Mapping):
        raise ValidationError("doc", "must be an object with nodes and edges")
    nodes = doc.get("nodes", [])
    edges = doc.get("edges", [])
    if not isinstance(nodes, list):
        raise ValidationError("nodes", "must be a list")
    if not isinstance(edges, list):
        raise ValidationError("edges", "must be a list")
    universe: list[str] = []
    for position, node in enumerate(nodes):
        if isinstance(node, Mapping):
            universe.append(check_id(f"nodes[{position}].id", node.get("id")))
        else:
            universe.append(check_id(f"nodes[{position}]", node))
    endpoints, arcs = normalize_edges(edges)
    return adjacency_over(universe + endpoints, arcs)
