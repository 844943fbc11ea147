"""Shapes shared by the topology modules (the JSON contract of seed 000 §A.1)."""

from __future__ import annotations

from typing import Literal, TypedDict

Adjacency = dict[str, set[str]]
"""Directed graph: every node is a key; its value is the set of arc targets."""

Routing = Literal["fast", "deliberate"]


class FaultLine(TypedDict):
    source: str
    target: str


class KappaResult(TypedDict):
    """κ of one SCC.  `min_cut_partition` is ``[A, B]`` (each sorted) with the
    fault lines going A→B, or None when the SCC is trivial or κ is approximate."""

    kappa: int
    approximate: bool
    fault_line_edges: list[FaultLine]
    min_cut_partition: list[list[str]] | None


class DeliberationBudget(TypedDict):
    max_iterations: int
    agent_count: int
    timeout_multiplier: float
    confidence_threshold: float


class SccReport(TypedDict):
    """One non-trivial SCC in an :func:`analyze` result (both modes)."""

    id: str
    nodes: list[str]
    kappa: int
    approximate: bool
    fault_line_edges: list[FaultLine]
    routing: str
    deliberation_budget: DeliberationBudget


class EdgeImpact(TypedDict):
    creates_new_scc: bool
    enlarges_existing_scc: bool
    kappa_before: int
    kappa_after: int
    kappa_delta: int
    description: str
