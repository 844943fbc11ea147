"""Render a retrieved subgraph as a Mermaid flowchart (seed 002's ``--mermaid``).

The output is meant to be pasted into Markdown or fed to a Mermaid renderer:

* node ids are replaced by ``n0, n1, …`` (in result order, then window
  order) so no user text ever reaches an identifier;
* labels are always quoted (``n0["…"]``) and every character that Mermaid
  or HTML could read as syntax is written as an entity code (``#quot;``,
  ``#91;``, ``#60;`` …; Mermaid's ``#name;`` / ``#code;`` form), newlines as
  spaces; labels are cut to `LABEL_CHARS` characters;
* each strongly connected component of the topology is a ``subgraph`` block
  titled with its κ; fault-line edges (the minimum cut) are drawn thick and
  red with ``linkStyle``; symmetric kinds are drawn as undirected links.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from ..engine import Engine
from ..model import KAPPA_ARC_DIRECTION

LABEL_CHARS: Final = 60
FAULT_LINE_STYLE: Final = "stroke:#d62728,stroke-width:3px"
# Characters written as Mermaid entity codes inside a quoted label.
_ENTITIES: Final[Mapping[str, str]] = {
    "#": "#35;",
    '"': "#quot;",
    "&": "#amp;",
    "<": "#lt;",
    ">": "#gt;",
    "[": "#91;",
    "]": "#93;",
    "(": "#40;",
    ")": "#41;",
    "{": "#123;",
    "}": "#125;",
    "|": "#124;",
    "`": "#96;",
    ";": "#59;",
    "\\": "#92;",
}


def escape_label(text: str, max_chars: int = LABEL_CHARS) -> str:
    """Text safe inside ``["…"]``: whitespace runs (newlines included) become one
    space, the text is cut to `max_chars` (with "…"), syntax characters become
    entity codes, other control characters are dropped.  O(len(text)).
    """
    flat = " ".join(text.split())
    if len(flat) > max_chars:
        flat = flat[: max_chars - 1] + "…"
    out = []
    for char in flat:
        if char in _ENTITIES:
            out.append(_ENTITIES[char])
        elif char.isprintable():
            out.append(char)
    return "".join(out)


def _node_label(result: Mapping[str, Any]) -> str:
    kind = result.get("node_type", "")
    score = result.get("score")
    head = f"{kind} {score:.2f}" if isinstance(score, (int, float)) else str(kind)
    return f"{escape_label(head)}: {escape_label(str(result.get('content', '')))}"


def _edge_line(source: str, target: str, relationship: str) -> str:
    # Relationship kinds are [a-z_] words (model.RELATIONSHIPS): safe unquoted.
    kind = escape_label(relationship)
    if relationship in KAPPA_ARC_DIRECTION:
        return f"{source} -->|{kind}| {target}"
    return f"{source} ---|{kind}| {target}"


def _arc(source: str, target: str, relationship: str) -> tuple[str, str] | None:
    """The κ arc of an edge (inverse kinds point backwards), None for symmetric kinds."""
    direction = KAPPA_ARC_DIRECTION.get(relationship)
    if direction is None:
        return None
    return (source, target) if direction > 0 else (target, source)


def to_mermaid(result: Mapping[str, Any], edges: Iterable[Mapping[str, Any]] | None = None) -> str:
    """A ``flowchart LR`` of a `retrieve_context` result.

    Input: the result (its ``results`` and ``topology``) and optionally the
    edges among its nodes (dicts with source_id, target_id, relationship;
    the facade passes the stored edges between the results).  Nodes are the
    results; edges with an endpoint outside them are left out.  Output: Mermaid source,
    one statement per line, ending with a newline; deterministic.
    Complexity: O(V + E).
    """
    results: Sequence[Mapping[str, Any]] = result.get("results", [])
    topology: Mapping[str, Any] = result.get("topology") or {}
    order: list[str] = [str(r["node_id"]) for r in results]
    by_id = {str(r["node_id"]): r for r in results}
    edge_list = sorted(
        (
            (str(e["source_id"]), str(e["target_id"]), str(e["relationship"]))
            for e in edges or ()
            if str(e["source_id"]) in by_id and str(e["target_id"]) in by_id
        ),
    )
    names = {node_id: f"n{i}" for i, node_id in enumerate(order)}
    lines = ["flowchart LR"]
    in_scc: set[str] = set()
    for scc in topology.get("sccs", []):
        members = [m for m in scc.get("nodes", []) if m in names]
        if not members:
            continue
        in_scc.update(members)
        block = f"scc{escape_label(str(scc.get('id', '')).removeprefix('scc-'))}"
        title = escape_label(f"SCC κ={scc.get('kappa', 0)}")
        lines.append(f'  subgraph {block}["{title}"]')
        lines.extend(f'    {names[m]}["{_node_label(by_id[m])}"]' for m in members)
        lines.append("  end")
    lines.extend(
        f'  {names[node_id]}["{_node_label(by_id[node_id])}"]'
        for node_id in order
        if node_id not in in_scc
    )
    faults = {
        (str(f["source"]), str(f["target"]))
        for scc in topology.get("sccs", [])
        for f in scc.get("fault_line_edges", [])
    }
    fault_links: list[int] = []
    for position, (source, target, relationship) in enumerate(edge_list):
        lines.append(f"  {_edge_line(names[source], names[target], relationship)}")
        if _arc(source, target, relationship) in faults:
            fault_links.append(position)
    if fault_links:
        indexes = ",".join(str(i) for i in fault_links)
        lines.append(f"  linkStyle {indexes} {FAULT_LINE_STYLE}")
    return "\n".join(lines) + "\n"


def result_mermaid(engine: Engine[Any, Any], result: Mapping[str, Any]) -> str:
    """A Mermaid flowchart of a `retrieve_context` result (edges read from the store)."""
    ids = [r["node_id"] for r in result.get("results", [])]
    with engine.lock:
        edges = [edge.to_dict() for edge in engine.store.list_edges_between(ids)]
    return to_mermaid(result, edges)
