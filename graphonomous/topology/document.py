"""The language-neutral topology command: one JSON document in, one out.

This is the protocol of `graphonomous topology -` and of every implementation
checked with `graphonomous contract fixtures --run CMD` (fixtures/README.md):
the input is `{"nodes": [...], "edges": [{"source", "target", "relationship"?}]}`,
optionally with `"preview": {"source", "target"}`; the output is the analysis
(§A.1 shape), or the edge-impact preview when a preview is asked for.  The
reference mode keeps its κ and minimum cuts (the seed's brute force) but is
printed in the same §A.1 shape, so every output passes `contract check`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model import ValidationError
from .adjacency import adjacency_from_json
from .analysis import analyze, deliberation_budget, preview_edge_impact, route


def analyze_document(
    document: object,
    *,
    reference: bool = False,
    preview: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """Analyse a `{"nodes", "edges"[, "preview"]}` document.

    `preview` (from the command line) overrides a `preview` key in the document.
    Raises ValidationError naming the offending field.
    """
    if not isinstance(document, Mapping):
        raise ValidationError("document", 'must be an object {"nodes": [...], "edges": [...]}')
    adjacency = adjacency_from_json(
        {"nodes": document.get("nodes", []), "edges": document.get("edges", [])}
    )
    if preview is None and document.get("preview") is not None:
        wanted = document["preview"]
        if not isinstance(wanted, Mapping) or not all(
            isinstance(wanted.get(key), str) for key in ("source", "target")
        ):
            raise ValidationError("preview", 'must be {"source": ID, "target": ID}')
        preview = (wanted["source"], wanted["target"])
    if preview is not None:
        return dict(preview_edge_impact(adjacency, preview[0], preview[1], reference=reference))
    result = analyze(adjacency, reference=reference, emit_telemetry=False)
    return canonical_shape(result) if reference else result


def canonical_shape(reference_result: Mapping[str, Any]) -> dict[str, Any]:
    """A reference-mode analysis in the canonical §A.1 shape, its κ and cuts unchanged.

    Nodes sorted, SCCs ordered by smallest member and renumbered scc-0 …, fault
    lines sorted, per-SCC and top-level ``routing`` ("fast"/"deliberate"),
    capped budgets.  O(N log N).
    """
    sccs = sorted(reference_result["sccs"], key=lambda scc: min(scc["nodes"]))
    reports = [
        {
            "id": f"scc-{i}",
            "nodes": sorted(scc["nodes"]),
            "kappa": scc["kappa"],
            "approximate": scc["approximate"],
            "fault_line_edges": sorted(
                scc["fault_line_edges"], key=lambda f: (f["source"], f["target"])
            ),
            "routing": "deliberate" if scc["kappa"] > 0 else "fast",
            "deliberation_budget": deliberation_budget(scc["kappa"]),
        }
        for i, scc in enumerate(sccs)
    ]
    return {
        "sccs": reports,
        "dag_nodes": reference_result["dag_nodes"],
        "routing": route(reference_result),
        "max_kappa": reference_result["max_kappa"],
        "scc_count": reference_result["scc_count"],
    }
