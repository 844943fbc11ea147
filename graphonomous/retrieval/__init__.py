"""Retrieval: hybrid candidates (BM25 + embeddings, weighted fusion), graph support,
expansion, PageRank walk, utility rerank, topology — and the specialised read tools.

`retrieve_context` is the main entry point (also the facade method and MCP
tool of that name).  SPEC.md ("Retrieval") is normative.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from ..lazy_import import export_from

if TYPE_CHECKING:
    from ..algorithms.push import PUSH_EPSILON, ppr_push, transitions_of
    from .bm25 import BM25_B, BM25_EPSILON, BM25_K1, BM25_STEM, Bm25Index, bm25_tokens
    from .candidates import hybrid_search
    from .fusion import RRF_K, embedder_keyword_weight, reciprocal_rank_fusion, score_fusion
    from .graph_view import (
        CAUSAL_RELATIONSHIPS,
        EDGE_KIND_WEIGHTS,
        STRUCTURAL_RELATIONSHIPS,
        GraphReader,
        GraphSnapshot,
        build_snapshot,
        store_fingerprint,
        weighted_graph,
    )
    from .lookups import (
        extract_steps,
        graph_traverse,
        match_preconditions,
        retrieve_episodic,
        retrieve_procedural,
        similarity_search,
        step_cost,
        trace_evidence_path,
    )
    from .mermaid import escape_label, result_mermaid, to_mermaid
    from .retriever import retrieve_context
    from .settings import (
        DEEP_EFFORT,
        DEFAULT_SETTINGS,
        EFFORT_MAX,
        EffortPlan,
        RetrievalSettings,
        effort_plan,
        with_settings,
    )
    from .stem import light_stem
    from .topology_stage import causal_context, contradiction_flags

# Imported on first use (PEP 562): a process that needs one retrieval module (a
# cold `consolidate` reads retrieval.experience) does not load the retriever,
# the lookups and the algorithms behind them.
_LAZY_EXPORTS: Final = {
    "BM25_B": ".bm25",
    "BM25_EPSILON": ".bm25",
    "BM25_K1": ".bm25",
    "BM25_STEM": ".bm25",
    "Bm25Index": ".bm25",
    "CAUSAL_RELATIONSHIPS": ".graph_view",
    "DEEP_EFFORT": ".settings",
    "DEFAULT_SETTINGS": ".settings",
    "EDGE_KIND_WEIGHTS": ".graph_view",
    "EFFORT_MAX": ".settings",
    "EffortPlan": ".settings",
    "GraphReader": ".graph_view",
    "GraphSnapshot": ".graph_view",
    "PUSH_EPSILON": "..algorithms.push",
    "RRF_K": ".fusion",
    "RetrievalSettings": ".settings",
    "STRUCTURAL_RELATIONSHIPS": ".graph_view",
    "bm25_tokens": ".bm25",
    "build_snapshot": ".graph_view",
    "causal_context": ".topology_stage",
    "contradiction_flags": ".topology_stage",
    "effort_plan": ".settings",
    "embedder_keyword_weight": ".fusion",
    "escape_label": ".mermaid",
    "extract_steps": ".lookups",
    "graph_traverse": ".lookups",
    "hybrid_search": ".candidates",
    "light_stem": ".stem",
    "match_preconditions": ".lookups",
    "ppr_push": "..algorithms.push",
    "reciprocal_rank_fusion": ".fusion",
    "result_mermaid": ".mermaid",
    "retrieve_context": ".retriever",
    "retrieve_episodic": ".lookups",
    "retrieve_procedural": ".lookups",
    "score_fusion": ".fusion",
    "similarity_search": ".lookups",
    "step_cost": ".lookups",
    "store_fingerprint": ".graph_view",
    "to_mermaid": ".mermaid",
    "trace_evidence_path": ".lookups",
    "transitions_of": "..algorithms.push",
    "weighted_graph": ".graph_view",
    "with_settings": ".settings",
}


def __getattr__(name: str) -> Any:
    return export_from(__name__, _LAZY_EXPORTS, globals(), name)


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "BM25_B",
    "BM25_EPSILON",
    "BM25_K1",
    "BM25_STEM",
    "CAUSAL_RELATIONSHIPS",
    "DEEP_EFFORT",
    "DEFAULT_SETTINGS",
    "EDGE_KIND_WEIGHTS",
    "EFFORT_MAX",
    "PUSH_EPSILON",
    "RRF_K",
    "STRUCTURAL_RELATIONSHIPS",
    "Bm25Index",
    "EffortPlan",
    "GraphReader",
    "GraphSnapshot",
    "RetrievalSettings",
    "bm25_tokens",
    "build_snapshot",
    "causal_context",
    "contradiction_flags",
    "effort_plan",
    "embedder_keyword_weight",
    "escape_label",
    "extract_steps",
    "graph_traverse",
    "hybrid_search",
    "light_stem",
    "match_preconditions",
    "ppr_push",
    "reciprocal_rank_fusion",
    "result_mermaid",
    "retrieve_context",
    "retrieve_episodic",
    "retrieve_procedural",
    "score_fusion",
    "similarity_search",
    "step_cost",
    "store_fingerprint",
    "to_mermaid",
    "trace_evidence_path",
    "transitions_of",
    "weighted_graph",
    "with_settings",
]
