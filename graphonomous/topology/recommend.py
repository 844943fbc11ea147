"""A plain-language reading of a topology result, for the agent that asked (seed 000)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

# How many node ids / fault lines a recommendation spells out.
RECOMMENDATION_LIST_LIMIT: Final = 12


def _listing(items: Sequence[str]) -> str:
    shown = ", ".join(items[:RECOMMENDATION_LIST_LIMIT])
    more = len(items) - RECOMMENDATION_LIST_LIMIT
    return f"{shown}, … ({more} more)" if more > 0 else shown


def recommendation(topology: Mapping[str, Any], node_count: int) -> str:
    """One paragraph telling an agent what the topology means for answering.

    Input: a canonical analyze() result and the size of the analysed region.
    Output: text naming the SCCs, their κ and the fault lines to deliberate on
    (seed 000's analyze_topology example).  O(size of the result).
    """
    sccs = topology["sccs"]
    if not sccs:
        noun = "node" if node_count == 1 else "nodes"
        return (
            f"This knowledge region ({node_count} {noun}) contains no feedback loops (κ=0). "
            "Retrieve context in one pass and answer directly."
        )
    parts: list[str] = []
    if len(sccs) == 1:
        parts.append(
            f"This knowledge region contains 1 strongly connected component with "
            f"κ={sccs[0]['kappa']}."
        )
    else:
        parts.append(
            f"This knowledge region contains {len(sccs)} strongly connected components "
            f"(max κ={topology['max_kappa']})."
        )
    for scc in sccs[:3]:
        kappa = f"κ≈{scc['kappa']}, approximate" if scc["approximate"] else f"κ={scc['kappa']}"
        suffix = "" if len(sccs) == 1 else f" ({scc['id']}, {kappa})"
        parts.append(f"The concepts [{_listing(scc['nodes'])}] are mutually dependent{suffix}.")
    if len(sccs) > 3:
        parts.append(f"{len(sccs) - 3} more components are listed in sccs.")
    faults = [f"{f['source']}→{f['target']}" for scc in sccs for f in scc["fault_line_edges"]]
    if faults:
        noun = "fault line" if len(faults) == 1 else "fault lines"
        parts.append(f"Deliberate on the {noun} before answering: {_listing(faults)}.")
    else:
        parts.append("Deliberate (iterate over the loop) before answering.")
    return " ".join(parts)
