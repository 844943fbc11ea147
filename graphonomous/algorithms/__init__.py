"""Pure graph algorithms over plain Python mappings (no store access).

Inputs are dicts such as ``{node: {neighbour: weight}}``; outputs are plain
lists and dicts in sorted-id order, so results do not depend on how the
caller built its mappings.  SPEC.md (algorithms section) is normative.
"""

from __future__ import annotations

from ._graph import WeightedGraph
from .community import louvain_communities, modularity
from .pagerank import personalized_pagerank
from .paths import CostGraph, dijkstra_path, k_shortest_paths
from .push import ppr_push, transitions_of
from .traversal import bfs_layers

__all__ = [
    "CostGraph",
    "WeightedGraph",
    "bfs_layers",
    "dijkstra_path",
    "k_shortest_paths",
    "louvain_communities",
    "modularity",
    "personalized_pagerank",
    "ppr_push",
    "transitions_of",
]
