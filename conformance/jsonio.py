"""Fixture input documents → plain (nodes, arcs) for the reference.

The only piece of the conformance suite that reads :mod:`graphonomous.model`:
which relationship kinds become arcs, and in which direction, is a product
rule owned by ``KAPPA_ARC_DIRECTION`` (and must not be restated here).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.reference import Arc
from graphonomous.model import KAPPA_ARC_DIRECTION


def graph_from_document(document: Mapping[str, Any]) -> tuple[list[str], list[Arc]]:
    """The universe and κ arcs of ``{"nodes": [...], "edges": [{source, target, relationship?}]}``.

    Universe: the listed nodes plus every edge endpoint (whatever the edge's
    kind).  An edge without a relationship is an arc source→target; otherwise
    the kind's direction in ``KAPPA_ARC_DIRECTION`` decides (+1 as given, −1
    reversed, absent: excluded).  Self-loops are kept here; the reference drops them.
    """
    nodes = list(document.get("nodes", []))
    arcs: list[Arc] = []
    for edge in document.get("edges", []):
        source, target = edge["source"], edge["target"]
        nodes += [source, target]
        relationship = edge.get("relationship")
        direction = 1 if relationship is None else KAPPA_ARC_DIRECTION.get(relationship, 0)
        if direction > 0:
            arcs.append((source, target))
        elif direction < 0:
            arcs.append((target, source))
    return nodes, arcs
