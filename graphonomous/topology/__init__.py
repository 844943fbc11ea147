"""The κ topology engine: feedback loops in a knowledge graph and how entangled they are.

Pure functions over a directed graph given as ``{node: set(targets)}``; no
store access.  κ of a strongly connected component (SCC) is the smallest
number of arcs whose removal breaks its strong connectivity; κ = 0 everywhere
means the region is a DAG and one retrieval pass suffices ("fast"), κ > 0
means the agent should deliberate.  SPEC.md (topology section) is normative.
"""

from __future__ import annotations

from ..model import BENDSCRIPT_EXCLUDED_KINDS
from .adjacency import (
    EdgeLike,
    adjacency_from_json,
    adjacency_over,
    build_adjacency,
    normalize_adjacency,
)
from .analysis import analyze, as_adjacency, deliberation_budget, preview_edge_impact, route
from .document import analyze_document
from .kappa import DEFAULT_WORK_BUDGET, compute_kappa, kappa_work
from .reference import ENUMERATION_LIMIT, reference_kappa
from .scc import tarjan_scc
from .types import (
    Adjacency,
    DeliberationBudget,
    EdgeImpact,
    FaultLine,
    KappaResult,
    SccReport,
)

__all__ = [
    "BENDSCRIPT_EXCLUDED_KINDS",
    "DEFAULT_WORK_BUDGET",
    "ENUMERATION_LIMIT",
    "Adjacency",
    "DeliberationBudget",
    "EdgeImpact",
    "EdgeLike",
    "FaultLine",
    "KappaResult",
    "SccReport",
    "adjacency_from_json",
    "adjacency_over",
    "analyze",
    "analyze_document",
    "as_adjacency",
    "build_adjacency",
    "compute_kappa",
    "deliberation_budget",
    "kappa_work",
    "normalize_adjacency",
    "preview_edge_impact",
    "reference_kappa",
    "route",
    "tarjan_scc",
]
