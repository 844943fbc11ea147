"""The two product-engine entry points the exhaustive run drives.

Kept behind a tiny record so tests can substitute a deliberately broken engine
and prove the harness really detects counterexamples.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

Adjacency = dict[str, set[str]]


class Engine(NamedTuple):
    """SCC decomposition and κ of one SCC, as the product engine exposes them."""

    tarjan_scc: Callable[[Adjacency], list[list[str]]]
    compute_kappa: Callable[[Adjacency, Sequence[str]], Mapping[str, Any]]


def product_engine() -> Engine:
    """The canonical (max-flow) product engine from ``graphonomous.topology``."""
    from graphonomous import topology

    return Engine(tarjan_scc=topology.tarjan_scc, compute_kappa=topology.compute_kappa)


def reference_engine() -> Engine:
    """The brute-force reference posing as an engine (for self-tests of the harness)."""
    from conformance.reference import compute_kappa_reference, tarjan_reference

    return Engine(tarjan_scc=tarjan_reference, compute_kappa=compute_kappa_reference)
