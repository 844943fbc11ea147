"""Retrieval: hybrid candidates (BM25 + embeddings, weighted fusion), graph support,
expansion, PageRank walk, utility rerank, topology — and the specialised read tools.

`retrieve_context` is the main entry point (also the facade method and MCP
tool of that name).  SPEC.md ("Retrieval") is normative.
"""

from __future__ import annotations

from ..algorithms.push import PUSH_EPSILON, ppr_push, transitions_of
from .bm25 import BM25_B, BM25_EPSILON, BM25_K1, BM25_STEM, Bm25Index, bm25_tokens
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
from .retriever import (
    DEEP_EFFORT,
    DEFAULT_SETTINGS,
    EFFORT_MAX,
    EffortPlan,
    RetrievalSettings,
    causal_context,
    contradiction_flags,
    effort_plan,
    hybrid_search,
    retrieve_context,
    with_settings,
)
from .stem import light_stem

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
