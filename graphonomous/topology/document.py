"""The language-neutral topology command: one JSON document in, one out.

This is the protocol of `graphonomous topology -` and of every implementation
checked with `graphonomous contract fixtures --run CMD` (fixtures/README.md):
the input is `{"nodes": [...], "edges": [{"source", "target", "relationship"?}]}`,
optionally with `"preview": {"source", "target"}`; the output is the analysis
(§A.1 shape), or the edge-impact preview when a preview is asked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model import ValidationError
from .adjacency import adjacency_from_json
from .analysis import analyze, preview_edge_impact


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
    return analyze(adjacency, reference=reference, emit_telemetry=False)
