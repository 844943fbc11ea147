"""Atomic batch apply: validate a list of operations, then apply all or none.

Idea from seed 001's update-plan executor.  Operations (JSON objects):

    {"op": "add_node",    "node": {...node fields...}}
    {"op": "update_node", "id": ID, "fields": {content?, metadata?, confidence?, ...}}
    {"op": "remove_node", "id": ID}
    {"op": "add_edge",    "edge": {...edge fields...}}
    {"op": "remove_edge", "id": ID}
    {"op": "remove_edge", "source_id": ID, "target_id": ID, "relationship": KIND}
    {"op": "merge_nodes", "keep": ID, "merge": [ID, ...]}

Every operation is checked before anything is written; node additions are
applied before everything else (so edges may reference nodes added by the
same batch), then the rest in the given order.  Any failure rolls the whole
batch back and raises BatchError naming the operation's index.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ..model import (
    NODE_TYPES,
    TIMESCALES,
    Edge,
    GraphonomousError,
    Node,
    NotFoundError,
    ValidationError,
    check_choice,
    check_id,
    check_id_list,
    check_metadata,
    check_text,
    check_unit_interval,
    new_id,
)
from ..records import edge_from_fields, node_from_fields
from .sqlite import Store

OPERATIONS: Final = (
    "add_node",
    "update_node",
    "remove_node",
    "add_edge",
    "remove_edge",
    "merge_nodes",
)
UPDATABLE_NODE_FIELDS: Final = frozenset(
    {"content", "metadata", "confidence", "node_type", "timescale", "source", "pinned"}
)


class BatchError(GraphonomousError, ValueError):
    """Operation `index` of a batch failed; nothing of the batch was applied."""

    def __init__(self, index: int, op: str, reason: str) -> None:
        super().__init__(f"operation {index} ({op}) failed: {reason}")
        self.index = index
        self.op = op
        self.reason = reason


@dataclass
class BatchResult:
    applied: int = 0
    added_node_ids: list[str] = field(default_factory=list)
    added_edge_ids: list[str] = field(default_factory=list)
    removed_node_ids: list[str] = field(default_factory=list)
    updated_node_ids: list[str] = field(default_factory=list)
    # Nodes whose content changed or that were added: the caller re-embeds them.
    changed_content: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "applied": self.applied,
            "added_node_ids": self.added_node_ids,
            "added_edge_ids": self.added_edge_ids,
            "removed_node_ids": self.removed_node_ids,
            "updated_node_ids": self.updated_node_ids,
        }


@dataclass
class _Prepared:
    index: int
    op: str
    payload: Any


def _check_update_fields(fields: object) -> dict[str, Any]:
    if not isinstance(fields, Mapping):
        raise ValidationError("fields", "must be an object")
    unknown = sorted(set(fields) - UPDATABLE_NODE_FIELDS)
    if unknown:
        raise ValidationError(
            f"fields.{unknown[0]}",
            f"cannot be updated (updatable: {', '.join(sorted(UPDATABLE_NODE_FIELDS))})",
        )
    checked: dict[str, Any] = {}
    for name, value in fields.items():
        path = f"fields.{name}"
        if name == "content":
            checked[name] = check_text(path, value)
        elif name == "metadata":
            checked[name] = check_metadata(path, value)
        elif name == "confidence":
            checked[name] = check_unit_interval(path, value)
        elif name == "node_type":
            checked[name] = check_choice(path, value, NODE_TYPES)
        elif name == "timescale":
            checked[name] = check_choice(path, value, TIMESCALES)
        elif name == "pinned":
            if not isinstance(value, bool):
                raise ValidationError(path, "must be true or false")
            checked[name] = value
        elif name == "source":
            if value is not None and not isinstance(value, str):
                raise ValidationError(path, "must be a string or null")
            checked[name] = value
    return checked


def _prepare(index: int, operation: object, now: str) -> _Prepared:
    if not isinstance(operation, Mapping):
        raise BatchError(index, "?", "an operation must be an object")
    op = operation.get("op")
    if op not in OPERATIONS:
        raise BatchError(index, str(op), f"op must be one of {', '.join(OPERATIONS)}")
    try:
        if op == "add_node":
            node_fields = operation.get("node")
            if not isinstance(node_fields, Mapping):
                raise ValidationError("node", "must be an object of node fields")
            return _Prepared(index, op, node_from_fields(node_fields, now=now))
        if op == "add_edge":
            edge_fields = operation.get("edge")
            if not isinstance(edge_fields, Mapping):
                raise ValidationError("edge", "must be an object of edge fields")
            return _Prepared(index, op, edge_from_fields(edge_fields, now=now))
        if op == "update_node":
            return _Prepared(
                index,
                op,
                (
                    check_id("id", operation.get("id")),
                    _check_update_fields(operation.get("fields")),
                ),
            )
        if op == "remove_node":
            return _Prepared(index, op, check_id("id", operation.get("id")))
        if op == "remove_edge":
            if operation.get("id") is not None:
                return _Prepared(index, op, check_id("id", operation.get("id")))
            return _Prepared(
                index,
                op,
                (
                    check_id("source_id", operation.get("source_id")),
                    check_id("target_id", operation.get("target_id")),
                    check_id("relationship", operation.get("relationship")),
                ),
            )
        keep = check_id("keep", operation.get("keep"))
        merge = check_id_list("merge", operation.get("merge"))
        if not merge or keep in merge:
            raise ValidationError("merge", "must list at least one id other than 'keep'")
        return _Prepared(index, op, (keep, merge))
    except ValidationError as exc:
        raise BatchError(index, str(op), str(exc)) from exc


def merge_into(store: Store, keep_id: str, merge_ids: Sequence[str], now: str) -> int:
    """Fold nodes into `keep_id`: edges re-pointed, provenance kept, merged nodes deleted.

    The survivor keeps the higher confidence, the summed access and evidence
    counts, the union of causal parents, and `metadata.merged_from` (ids).
    Edges that would become self-loops or duplicates are dropped (the
    survivor's existing edge keeps the larger strength).  Returns edges moved.
    Must run inside a transaction.
    """
    keep = store.require_node(keep_id, include_forgotten=True)
    moved = 0
    merged_from = list(keep.metadata.get("merged_from", []))
    parents = list(keep.causal_parent_ids)
    confidence, access, evidence = keep.confidence, keep.access_count, keep.evidence_count
    for merge_id in merge_ids:
        other = store.require_node(merge_id, include_forgotten=True)
        confidence = max(confidence, other.confidence)
        access += other.access_count
        evidence += other.evidence_count
        merged_from.append(other.id)
        parents.extend(p for p in other.causal_parent_ids if p not in parents and p != keep_id)
        for edge in store.edges_of(other.id, "both"):
            source = keep_id if edge.source_id == other.id else edge.source_id
            target = keep_id if edge.target_id == other.id else edge.target_id
            if source == target:
                continue
            moved_edge = Edge(
                id=new_id(),
                source_id=source,
                target_id=target,
                relationship=edge.relationship,
                strength=edge.strength,
                co_activation_count=edge.co_activation_count,
                decay_rate=edge.decay_rate,
                metadata=edge.metadata,
                agent_id=edge.agent_id,
                created_at=edge.created_at,
                updated_at=now,
            )
            # A duplicate keeps the survivor's edge, with the larger strength (the upsert rule).
            _, created = store.upsert_edge(moved_edge, ["strength"])
            moved += created
        store.delete_node(other.id)
    metadata = dict(keep.metadata)
    metadata["merged_from"] = merged_from
    store.update_node(
        keep_id,
        confidence=confidence,
        access_count=access,
        evidence_count=evidence,
        causal_parent_ids=parents,
        metadata=metadata,
        updated_at=now,
    )
    return moved


def apply_batch(store: Store, operations: Sequence[object], now: str) -> BatchResult:
    """Validate every operation, then apply them in one transaction (all or nothing).

    Input: a list of operation objects (module docstring).  Output: BatchResult.
    Raises BatchError(index, op, reason); the database is then unchanged.
    Complexity: O(number of operations) statements.
    """
    if not isinstance(operations, Sequence) or isinstance(operations, (str, bytes)):
        raise BatchError(0, "?", "operations must be a list")
    prepared = [_prepare(i, op, now) for i, op in enumerate(operations)]
    ordered = [p for p in prepared if p.op == "add_node"] + [
        p for p in prepared if p.op != "add_node"
    ]
    result = BatchResult()
    with store.transaction():
        for item in ordered:
            try:
                _apply_one(store, item, now, result)
            except (ValidationError, NotFoundError) as exc:
                raise BatchError(item.index, item.op, str(exc)) from exc
            result.applied += 1
    return result


def _apply_one(store: Store, item: _Prepared, now: str, result: BatchResult) -> None:
    if item.op == "add_node":
        node: Node = item.payload
        missing = set(node.causal_parent_ids) - set(store.get_nodes(node.causal_parent_ids))
        if missing:
            raise ValidationError("causal_parent_ids", f"unknown node ids: {sorted(missing)}")
        store.insert_node(node)
        result.added_node_ids.append(node.id)
        result.changed_content[node.id] = node.content
    elif item.op == "add_edge":
        edge: Edge = item.payload
        store.insert_edge(edge)
        result.added_edge_ids.append(edge.id)
    elif item.op == "update_node":
        node_id, fields = item.payload
        store.require_node(node_id, include_forgotten=True)
        store.update_node(node_id, **fields, updated_at=now)
        result.updated_node_ids.append(node_id)
        if "content" in fields:
            result.changed_content[node_id] = fields["content"]
    elif item.op == "remove_node":
        store.delete_node(item.payload)
        result.removed_node_ids.append(item.payload)
        result.changed_content.pop(item.payload, None)
    elif item.op == "remove_edge":
        if isinstance(item.payload, str):
            store.delete_edge(item.payload)
        else:
            source_id, target_id, relationship = item.payload
            found = store.find_edge(source_id, target_id, relationship)
            if found is None:
                raise NotFoundError("edge", f"{source_id} -[{relationship}]-> {target_id}")
            store.delete_edge(found.id)
    else:
        keep_id, merge_ids = item.payload
        merge_into(store, keep_id, merge_ids, now)
        result.removed_node_ids.extend(merge_ids)
        result.updated_node_ids.append(keep_id)
        for merged in merge_ids:
            result.changed_content.pop(merged, None)
