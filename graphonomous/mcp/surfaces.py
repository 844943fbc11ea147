"""The MCP surfaces: which tools one server exposes, in order, with its instructions.

Rules of this module: it only assembles the tool sets of :mod:`.v1`,
:mod:`.machines` and :mod:`.memory_compat` (built on :mod:`.tools`' helpers);
it is kept apart from :mod:`.tools` so the tool modules import the helpers
without a cycle.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from .machines import MACHINE_TOOLS
from .memory_compat import MEMORY_TOOLS
from .names import DEFAULT_SURFACE as DEFAULT_SURFACE
from .names import SURFACE_NAMES
from .tools import ToolSpec, describe_tool
from .v1 import V1_TOOLS


def describe_tools(tools: Sequence[ToolSpec] | None = None, heading_level: int = 3) -> str:
    """Markdown documenting `tools` (default: the v1 tools) in order, one section each."""
    chosen = V1_TOOLS if tools is None else tools
    return "\n".join(describe_tool(spec, heading_level) for spec in chosen)


# --------------------------------------------------------------------------
# Surfaces
# --------------------------------------------------------------------------

# Graphonomous' own tools (every surface but memory-compat's).
CORE_TOOLS: Final[tuple[ToolSpec, ...]] = (*MACHINE_TOOLS, *V1_TOOLS)
# A surface is the list of tools one server exposes, in tools/list order.
SURFACES: Final[Mapping[str, tuple[ToolSpec, ...]]] = {
    # Seed 003: the five loop-phase machines are the production default.
    "v2": MACHINE_TOOLS,
    "v1": V1_TOOLS,
    # server-memory's tool API (graphonomous.mcp.memory_compat over graphonomous.server_memory)
    "memory": MEMORY_TOOLS,
    "all": (*MACHINE_TOOLS, *V1_TOOLS, *MEMORY_TOOLS),
}
# names.py holds the CLI's copy of the keys (the parser must not import the tool sets).
if tuple(SURFACES) != SURFACE_NAMES or DEFAULT_SURFACE not in SURFACES:
    raise ImportError("mcp.names.SURFACE_NAMES does not list mcp.surfaces.SURFACES")

_KAPPA_ADVICE: Final = (
    "routing 'fast' (κ=0) means one retrieval pass is enough, 'deliberate' (κ>0) means "
    "iterate over the feedback loop and its fault lines first."
)
_V2_INSTRUCTIONS: Final = (
    "Graphonomous is a continual-learning knowledge graph with five tools, one per phase "
    "of the memory loop; each takes an `action`. retrieve (context, episodic, procedural, "
    "coverage, trace_evidence, frontier): what do I know? route (topology, deliberate, "
    "attention_survey, attention_cycle, review_goal): what should I do? act (store_node, "
    "store_edge, delete_node, manage_edge, manage_goal, belief_revise, forget_node, "
    "restore_node, forget_policy, gdpr_erase): change the graph. learn (from_outcome, "
    "from_feedback, detect_novelty, from_interaction, contradictions): did it work? "
    "consolidate (run, stats, query, traverse): maintain the graph. Typical loop: "
    "retrieve context → route topology → act → learn from_outcome → consolidate run. Topology: "
    + _KAPPA_ADVICE
)
SURFACE_INSTRUCTIONS: Final[Mapping[str, str]] = {
    "v2": _V2_INSTRUCTIONS,
    "v1": (
        "Graphonomous is a continual-learning knowledge graph. Store knowledge with store_node "
        "and store_edge; find it with retrieve_context (ranked, κ-aware), retrieve_episodic, "
        "retrieve_procedural and query_graph; check whether it suffices with coverage_query; "
        "report how an action went with learn_from_outcome so confident knowledge ranks "
        "higher; maintain the graph with run_consolidation. Before answering about an "
        "interconnected region, call topology_analyze: " + _KAPPA_ADVICE
    ),
    "memory": (
        "A knowledge graph memory with the tool API of the reference memory server: entities "
        "with observations, connected by relations in active voice. Create them with "
        "create_entities, create_relations and add_observations; find them with search_nodes "
        "and open_nodes; read_graph returns everything; delete_entities, delete_observations "
        "and delete_relations remove them."
    ),
    "all": (
        _V2_INSTRUCTIONS
        + " Every action is also a v1 tool of its own (e.g. retrieve_context, store_node, "
        "learn_from_outcome); the memory-server tools (create_entities, search_nodes, …) "
        "work on the same graph."
    ),
}


def surface_tools(surface: str) -> tuple[ToolSpec, ...]:
    """The tools of a named surface.  Raises ValueError for an unknown name."""
    try:
        return SURFACES[surface]
    except KeyError:
        raise ValueError(
            f"unknown MCP surface {surface!r} (known: {', '.join(sorted(SURFACES))})"
        ) from None


def surface_instructions(surface: str) -> str:
    """The ``initialize`` instructions of a named surface (it names only its own tools)."""
    surface_tools(surface)
    return SURFACE_INSTRUCTIONS[surface]
