"""Spectral metrics of the stored graph (`graphonomous metrics`, graphonomous://graph/metrics).

The graph measured: every live node, and one arc per edge between two different live
nodes (the snapshot leaves self-loops out) weighted by the edge's `strength`.  The algorithms are
`graphonomous.algorithms.spectral`'s; this module only reads the snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from ..algorithms.spectral import graph_metrics
from ..embed import numpy_available

if TYPE_CHECKING:
    from .graph_view import GraphEngine


def stored_graph(graph: GraphEngine) -> dict[str, dict[str, float]]:
    """``{source: {target: summed strength}}`` over the live graph.  O(V + E)."""
    snapshot = graph.graph_snapshot()
    arcs: dict[str, dict[str, float]] = {node: {} for node in sorted(snapshot.live)}
    for edge in snapshot.edges:
        row = arcs[edge.source_id]
        row[edge.target_id] = row.get(edge.target_id, 0.0) + max(0.0, edge.strength)
    return arcs


def default_backend() -> str:
    """NumPy's ``eigvalsh`` when NumPy is importable, else the pure solver (same results)."""
    return "numpy" if numpy_available() else "pure"


def stored_graph_metrics(graph: GraphEngine, backend: str | None = None) -> dict[str, Any]:
    """`graph_metrics` of `stored_graph`, plus ``"source": "graph"``."""
    result = graph_metrics(stored_graph(graph), backend=backend or default_backend())
    return {"source": "graph", **result}


BOX_WIDTH: Final = 79
"""Seed 002's metrics box is 79 columns wide."""


def metrics_box(metrics: Mapping[str, Any], title: str = "Graphonomous") -> str:
    """Seed 002's "System Metrics" box for a `graph_metrics` result (text, ends in a newline)."""
    lam = metrics["algebraic_connectivity"]
    connectivity = "n/a" if lam is None else f"{lam:.3f} ({metrics['integration']})"
    rows = [
        ("Graph Nodes / Edges", f"{metrics['node_count']} nodes / {metrics['edge_count']} edges"),
        (
            "Connected Components",
            f"{metrics['component_count']} ({metrics['isolated_count']} isolated)",
        ),
        ("Knowledge Communities", f"{metrics['community_count']} Louvain Clusters"),
        ("Algebraic Connectivity", connectivity),
        ("Modularity Score (Q)", f"{metrics['modularity']:.3f}"),
        (
            "Epistemic Entropy (H)",
            f"{metrics['entropy_bits']:.3f} bits ({metrics['entropy_normalized']:.3f} of max)",
        ),
    ]
    inner = BOX_WIDTH - 2
    heading = f" System Metrics: {title} "
    left = (inner - len(heading)) // 2
    lines = ["┌" + "─" * left + heading + "─" * (inner - left - len(heading)) + "┐"]
    blank = "│" + " " * inner + "│"
    lines.append(blank)
    for label, value in rows:
        text = f"   {label:<24}{value}"
        lines.append("│" + text[:inner].ljust(inner) + "│")
    lines.append(blank)
    lines.append("└" + "─" * inner + "┘")
    return "\n".join(lines) + "\n"
