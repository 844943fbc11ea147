"""The tunables of a consolidation run (`ConsolidationConfig`) and their defaults.

Rules of this module: one frozen dataclass, validated on construction (errors
name the field); defaults are seed 003's config where it has one.  Kept apart
from the consolidator so its stages (conflicts, abstraction) take a config
without importing the run that calls them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Final

from ..model import (
    CONCURRENT_WITHIN_S,
    check_choice,
    check_int,
    check_non_negative,
    check_unit_interval,
)
from .thresholds import PRUNE_CONFIDENCE, SAME_KNOWLEDGE_SIMILARITY

# How a conflict between two similar statements is settled, in the order tried.
CONFLICT_STRATEGIES: Final = ("evidence", "recency", "confidence")


@dataclass(frozen=True)
class ConsolidationConfig:
    """Every tunable of a run; defaults are seed 003's config where it has one."""

    min_confidence_threshold: float = PRUNE_CONFIDENCE  # seed 003
    min_edge_strength_threshold: float = 0.02  # seed 003
    merge_similarity_threshold: float = SAME_KNOWLEDGE_SIMILARITY  # seed 003
    # Statements this similar talk about the same thing (measured with the
    # hashing embedder: one changed number or name scores 0.90-0.95).
    conflict_similarity_threshold: float = 0.85
    # A default belief (0.5) against a well-supported one (0.8).
    conflict_confidence_gap: float = 0.3
    conflict_strategies: tuple[str, ...] = ("evidence", "recency")
    # Two statements stored within an hour are concurrent: neither is "newer".
    recency_min_gap_s: float = CONCURRENT_WITHIN_S
    coactivation_gain: float = 0.1
    # Changed nodes examined per run and neighbours asked of the index for each.
    # 16 exact searches keep a pure-Python run of a 10K-node graph under the
    # 500 ms target (seed 003); a bulk import is worked through over later runs.
    similarity_budget: int = 16
    neighbours_k: int = 8
    abstraction_min_cluster: int = 3
    abstraction_max_cluster: int = 25
    abstraction_similarity: float = 0.75
    max_abstractions_per_run: int = 20
    # None: the forgetting_config row (seed 004), else DEFAULT_MAX_NODES.
    max_nodes: int | None = None

    def __post_init__(self) -> None:
        for name in (
            "min_confidence_threshold",
            "min_edge_strength_threshold",
            "merge_similarity_threshold",
            "conflict_similarity_threshold",
            "conflict_confidence_gap",
            "coactivation_gain",
            "abstraction_similarity",
        ):
            check_unit_interval(name, getattr(self, name))
        check_non_negative("recency_min_gap_s", self.recency_min_gap_s)
        for strategy in self.conflict_strategies:
            check_choice("conflict_strategies", strategy, CONFLICT_STRATEGIES)
        check_int("similarity_budget", self.similarity_budget, 0)
        check_int("neighbours_k", self.neighbours_k, 1)
        check_int("abstraction_min_cluster", self.abstraction_min_cluster, 2)
        check_int("abstraction_max_cluster", self.abstraction_max_cluster, 2)
        check_int("max_abstractions_per_run", self.max_abstractions_per_run, 0)
        if self.max_nodes is not None:
            check_int("max_nodes", self.max_nodes, 1)


DEFAULT_CONFIG: Final = ConsolidationConfig()


def with_config(**overrides: Any) -> ConsolidationConfig:
    """`ConsolidationConfig` with some fields changed (unknown names raise TypeError)."""
    return replace(DEFAULT_CONFIG, **overrides)
