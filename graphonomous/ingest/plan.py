"""Turning one file into graph changes: batch operations for `apply_batch`.

A file becomes a *file node* plus *chunk nodes* (all `semantic`, told apart
by `metadata.kind` = "file" / "chunk"), `part_of` edges chunk → file and
`follows` edges chunk_i → chunk_i+1.  Re-ingesting a changed file keeps the
file node's id and reuses chunk node ids (same text first, then same
heading/definition, then the remaining ones in order), so edges that other
knowledge attached to them survive; surplus chunks are removed.

Edges written by ingestion carry `metadata.origin = "ingest"` and a `role`
("structure" or "reference"); only those are ever removed by ingestion.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ..model import CREATION_SOURCES, NODE_TYPES, RELATIONSHIPS, Edge, Node, check_choice
from ..store import Store
from .chunking import Chunk, chunk_python, chunk_text, file_format, parse_python
from .references import Reference, extract_references, reference_is_code, resolve_reference
from .sources import SourceRow


def _relationship(name: str) -> str:
    return check_choice("relationship", name, RELATIONSHIPS)


FILE_NODE_TYPE: Final = check_choice("node_type", "semantic", NODE_TYPES)
CHUNK_NODE_TYPE: Final = FILE_NODE_TYPE
# Ingestion is a deliberate import by the user, not model inference.
INGEST_CREATION_SOURCE: Final = check_choice("creation_source", "manual", CREATION_SOURCES)
CHUNK_OF: Final = _relationship("part_of")
NEXT_CHUNK: Final = _relationship("follows")
CODE_REFERENCE: Final = _relationship("depends_on")
DOCUMENT_REFERENCE: Final = _relationship("derived_from")
# Structure is certain (the file says so); a reference is a strong hint.
STRENGTH: Final = {CHUNK_OF: 0.8, NEXT_CHUNK: 0.5, CODE_REFERENCE: 0.6, DOCUMENT_REFERENCE: 0.6}
ORIGIN: Final = "ingest"
ROLE_STRUCTURE: Final = "structure"
ROLE_REFERENCE: Final = "reference"
SUMMARY_SECTION_LIMIT: Final = 12
SUMMARY_MAX_CHARS: Final = 600

Operation = dict[str, Any]


@dataclass(frozen=True)
class ParsedFile:
    """What ingestion derives from one file's text (no database access)."""

    rel_path: str
    fmt: str
    content_hash: str
    bytes_read: int
    truncated: bool
    line_count: int
    chunks: list[Chunk]
    references: list[Reference]
    summary: str


PLAN_KINDS: Final = ("ingest", "stat", "skip", "remove", "references")


@dataclass
class FilePlan:
    """Operations for one file plus its new `source_files` row and change counts.

    `kind`: "ingest" (file written), "stat" (content unchanged, only the
    recorded stat is refreshed), "skip" (recorded as not ingested), "remove"
    (the file's nodes are deleted), "references" (its reference edges
    re-derived).
    """

    rel_path: str
    kind: str = "ingest"
    operations: list[Operation] = field(default_factory=list)
    row: SourceRow | None = None
    delete_row: str | None = None
    nodes_added: int = 0
    nodes_updated: int = 0
    nodes_removed: int = 0
    edges_added: int = 0
    edges_removed: int = 0


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _summary(rel_path: str, fmt: str, line_count: int, chunks: Sequence[Chunk]) -> str:
    """The file node's text: path, format, size and the section/definition names,
    so a question naming a file or one of its parts finds the file node."""
    keys = [c.key for c in chunks if c.key and "#" not in c.key and c.key != "(preamble)"]
    head = f"{rel_path} ({fmt}, {line_count} lines)"
    if keys:
        shown = keys[:SUMMARY_SECTION_LIMIT]
        more = f" and {len(keys) - len(shown)} more" if len(keys) > len(shown) else ""
        text = f"{head}: {'; '.join(shown)}{more}"
    else:
        first = next((line.strip() for c in chunks for line in c.text.splitlines() if line), "")
        text = f"{head}: {first}" if first else head
    return text if len(text) <= SUMMARY_MAX_CHARS else text[: SUMMARY_MAX_CHARS - 1] + "…"


def parse_file(rel_path: str, text: str, data: bytes, truncated: bool) -> ParsedFile:
    """Chunks, references and summary of one file.  O(len(text)) plus a parse."""
    fmt = file_format(rel_path)
    tree = parse_python(text) if fmt == "python" else None  # parsed once, used twice
    chunks = chunk_python(text, tree) if fmt == "python" else chunk_text(text, fmt)
    line_count = text.count("\n") + 1 if text else 0
    return ParsedFile(
        rel_path=rel_path,
        fmt=fmt,
        content_hash=sha256_hex(data),
        bytes_read=len(data),
        truncated=truncated,
        line_count=line_count,
        chunks=chunks,
        references=extract_references(text, fmt, tree),
        summary=_summary(rel_path, fmt, line_count, chunks),
    )


def _file_metadata(parsed: ParsedFile, root: str) -> dict[str, Any]:
    return {
        "kind": "file",
        "path": parsed.rel_path,
        "root": root,
        "name": os.path.basename(parsed.rel_path),
        "format": parsed.fmt,
        "content_hash": parsed.content_hash,
        "bytes_read": parsed.bytes_read,
        "truncated": parsed.truncated,
        "line_count": parsed.line_count,
        "chunk_count": len(parsed.chunks),
        "references": parsed.references,
    }


def _chunk_metadata(parsed: ParsedFile, index: int, chunk: Chunk, root: str) -> dict[str, Any]:
    return {
        "kind": "chunk",
        "path": parsed.rel_path,
        "root": root,
        "chunk_index": index,
        "line_start": chunk.line_start,
        "line_end": chunk.line_end,
        "section": chunk.key,
        "headings": list(chunk.headings),
        "content_hash": sha256_hex(chunk.text.encode("utf-8")),
    }


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def pair_chunks(old: Sequence[Node], new: Sequence[Chunk]) -> tuple[list[str | None], list[str]]:
    """Which existing chunk node each new chunk reuses.

    Output: (for each new chunk an old node id or None, old ids left over).
    Passes, each taking old nodes in order: identical text, then the same key
    (`metadata.section`), then the remaining new and old chunks paired in
    order.  Deterministic.  O(old + new) with dictionaries.
    """
    assigned: list[str | None] = [None] * len(new)
    free = {node.id for node in old}

    def match(
        key_of_old: Callable[[Node], str | None], key_of_new: Callable[[Chunk], str | None]
    ) -> None:
        buckets: dict[str, list[str]] = {}
        for node in old:
            if node.id in free:
                key = key_of_old(node)
                if key is not None:
                    buckets.setdefault(key, []).append(node.id)
        for i, chunk in enumerate(new):
            key = key_of_new(chunk)
            if assigned[i] is None and key is not None and buckets.get(key):
                node_id = buckets[key].pop(0)
                assigned[i] = node_id
                free.discard(node_id)

    match(lambda n: n.content, lambda c: c.text)
    match(lambda n: _text_or_none(n.metadata.get("section")), lambda c: c.key)
    leftovers = [node.id for node in old if node.id in free]
    for i in range(len(new)):
        if assigned[i] is None and leftovers:
            node_id = leftovers.pop(0)
            assigned[i] = node_id
            free.discard(node_id)
    return assigned, [node.id for node in old if node.id in free]


def _is_ours(edge: Edge, role: str) -> bool:
    return edge.metadata.get("origin") == ORIGIN and edge.metadata.get("role") == role


def _edge_op(source: str, target: str, relationship: str, metadata: dict[str, Any]) -> Operation:
    return {
        "op": "add_edge",
        "edge": {
            "source_id": source,
            "target_id": target,
            "relationship": relationship,
            "strength": STRENGTH[relationship],
            "metadata": {"origin": ORIGIN, **metadata},
        },
    }


def _node_fields(
    node_id: str, content: str, metadata: dict[str, Any], rel_path: str
) -> dict[str, Any]:
    return {
        "id": node_id,
        "node_type": FILE_NODE_TYPE,
        "content": content,
        "metadata": metadata,
        "source": rel_path,
        "creation_source": INGEST_CREATION_SOURCE,
    }


def _update_op(node: Node, content: str, metadata: dict[str, Any], rel_path: str) -> Operation:
    fields: dict[str, Any] = {}
    if node.content != content:
        fields["content"] = content
    if node.metadata != metadata:
        fields["metadata"] = metadata
    if node.source != rel_path:
        fields["source"] = rel_path
    return {"op": "update_node", "id": node.id, "fields": fields} if fields else {}


def plan_file(
    store: Store,
    parsed: ParsedFile,
    *,
    root: str,
    key: str,
    previous: SourceRow | None,
    size: int,
    mtime_ns: int,
    now: str,
    new_id: Callable[[], str],
) -> FilePlan:
    """Operations that make the graph hold `parsed`, reusing `previous`'s nodes.

    Reads the old file node, chunk nodes and the edges touching them; writes
    nothing.  Reference edges are not planned here (see `plan_references`).
    Complexity: O(chunks + edges touching the file's nodes).
    """
    plan = FilePlan(parsed.rel_path)
    old_ids = list(previous.chunk_node_ids) if previous else []
    file_id = previous.file_node_id if previous else None
    known_file = [file_id] if file_id else []
    existing = store.get_nodes([*old_ids, *known_file])
    file_node = existing.get(file_id) if file_id else None
    old_chunks = [existing[i] for i in dict.fromkeys(old_ids) if i in existing and i != file_id]
    touching = store.edges_touching([n.id for n in old_chunks] + known_file)

    file_meta = _file_metadata(parsed, root)
    if file_node is None:
        file_id = new_id()
        plan.operations.append(
            {
                "op": "add_node",
                "node": _node_fields(file_id, parsed.summary, file_meta, parsed.rel_path),
            }
        )
        plan.nodes_added += 1
    else:
        update = _update_op(file_node, parsed.summary, file_meta, parsed.rel_path)
        if update:
            plan.operations.append(update)
            plan.nodes_updated += 1
    assert file_id is not None

    assigned, surplus = pair_chunks(old_chunks, parsed.chunks)
    by_id = {n.id: n for n in old_chunks}
    chunk_ids: list[str] = []
    for index, (chunk, reuse) in enumerate(zip(parsed.chunks, assigned, strict=True)):
        meta = _chunk_metadata(parsed, index, chunk, root)
        if reuse is None:
            chunk_id = new_id()
            plan.operations.append(
                {
                    "op": "add_node",
                    "node": _node_fields(chunk_id, chunk.text, meta, parsed.rel_path),
                }
            )
            plan.nodes_added += 1
        else:
            chunk_id = reuse
            update = _update_op(by_id[reuse], chunk.text, meta, parsed.rel_path)
            if update:
                plan.operations.append(update)
                plan.nodes_updated += 1
        chunk_ids.append(chunk_id)

    removed = set(surplus)
    desired = {(c, file_id, CHUNK_OF) for c in chunk_ids}
    desired |= {(a, b, NEXT_CHUNK) for a, b in itertools.pairwise(chunk_ids)}
    present = {(e.source_id, e.target_id, e.relationship) for e in touching}
    for edge in touching:
        if edge.source_id in removed or edge.target_id in removed:
            plan.edges_removed += 1  # goes with its node (ON DELETE CASCADE)
        elif _is_ours(edge, ROLE_STRUCTURE) and (
            (edge.source_id, edge.target_id, edge.relationship) not in desired
        ):
            plan.operations.append({"op": "remove_edge", "id": edge.id})
            plan.edges_removed += 1
    for node_id in surplus:
        plan.operations.append({"op": "remove_node", "id": node_id})
        plan.nodes_removed += 1
    for source, target, relationship in sorted(desired - present):
        plan.operations.append(_edge_op(source, target, relationship, {"role": ROLE_STRUCTURE}))
        plan.edges_added += 1

    plan.row = SourceRow(
        path=key,
        root=root,
        content_hash=parsed.content_hash,
        size=size,
        mtime_ns=mtime_ns,
        file_node_id=file_id,
        chunk_node_ids=tuple(chunk_ids),
        ingested_at=now,
    )
    return plan


def plan_removal(store: Store, row: SourceRow, rel_path: str) -> FilePlan:
    """Operations that remove a file's nodes (and so all their edges) and its row."""
    plan = FilePlan(rel_path, "remove", delete_row=row.path)
    ids = list(
        dict.fromkeys([*([row.file_node_id] if row.file_node_id else []), *row.chunk_node_ids])
    )
    live = store.get_nodes(ids)
    plan.edges_removed = len(store.edges_touching(list(live)))
    for node_id in ids:
        if node_id in live:
            plan.operations.append({"op": "remove_node", "id": node_id})
            plan.nodes_removed += 1
    return plan


def plan_references(
    store: Store,
    file_node: Node,
    rel_path: str,
    file_ids: Mapping[str, str],
    files: Collection[str],
    root_package: str | None = None,
) -> FilePlan:
    """Re-derive the reference edges leaving one file node.

    Input: the file node (its `metadata.references`), its path, and the map
    path -> file node id of every ingested file of the tree (`files` = its
    keys, as a set), and the root's package name when the root is a package.
    Existing edges of the same (source, target, kind) made
    by anyone are kept; ingestion's own reference edges that no longer
    resolve are removed.  Complexity: O(references x candidates + out-edges).
    """
    plan = FilePlan(rel_path, "references")
    desired: dict[tuple[str, str], str] = {}
    for reference in file_node.metadata.get("references") or []:
        if not isinstance(reference, list) or not all(isinstance(p, str) for p in reference):
            continue
        target = resolve_reference(reference, rel_path, files, root_package)
        if target is None or file_ids[target] == file_node.id:
            continue
        kind = CODE_REFERENCE if reference_is_code(reference) else DOCUMENT_REFERENCE
        desired.setdefault((file_ids[target], kind), reference[0])
    existing = store.edges_of(file_node.id, "out")
    present = {(e.target_id, e.relationship) for e in existing}
    for edge in existing:
        if _is_ours(edge, ROLE_REFERENCE) and (edge.target_id, edge.relationship) not in desired:
            plan.operations.append({"op": "remove_edge", "id": edge.id})
            plan.edges_removed += 1
    for (target_id, relationship), kind in sorted(desired.items()):
        if (target_id, relationship) not in present:
            plan.operations.append(
                _edge_op(
                    file_node.id, target_id, relationship, {"role": ROLE_REFERENCE, "kind": kind}
                )
            )
            plan.edges_added += 1
    return plan
