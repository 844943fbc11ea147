"""The v1 MCP tools: seed 003's 29 tools, one per facade operation.

Every tool is a :class:`~.tools.ToolSpec` whose handler is a thin adapter
(:func:`delegate`): it renames the upstream aliases a tool accepts, then
calls the :class:`graphonomous.Graphonomous` method of the same name with the
arguments as keywords.  Input field names are the facade's argument names, so
the schema is the documentation of the method.  ``topology_analyze`` is also
registered under seed 000's name ``analyze_topology``.

Annotations follow :class:`~.tools.ToolAnnotations`' definitions; notably
``retrieve_context`` (and ``coverage_query``, ``review_goal`` and
``deliberate``, which run it) bump access and co-activation counters, so
they are not read-only.

The v2 machines (:mod:`.machines`) dispatch to these same specs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from ..api import EDGE_ACTIONS, MAX_LIST_LIMIT
from ..learning.attention import AUTONOMY_LEVELS, DEFAULT_BUDGET, MAX_BUDGET
from ..learning.beliefs import BELIEF_ACTIONS, CONTRADICTION_CANDIDATES
from ..learning.coverage import MAX_LIMIT as COVERAGE_MAX_LIMIT
from ..learning.coverage import MAX_TOPICS, RECOMMENDATIONS
from ..learning.deliberation import DEFAULT_CONCLUSION_CONFIDENCE, MAX_CONCLUSIONS
from ..learning.forgetting import (
    DEFAULT_POLICY_MODE,
    FORGET_MODES,
    FORGETTING_POLICIES,
    POLICY_MODES,
)
from ..learning.goals import (
    DEFAULT_PRIORITY,
    GOAL_ACTIONS,
    GOAL_STATUSES,
    MAX_GOALS_LISTED,
    MAX_TITLE_CHARS,
    SUBGOAL_FIELDS,
)
from ..learning.outcomes import (
    EVIDENCE_TYPE_WEIGHTS,
    FEEDBACK_KINDS,
    NOVELTY_NEIGHBOURS,
    NOVELTY_THRESHOLD,
    OUTCOME_STATUSES,
)
from ..learning.uncertainty import DEFAULT_FRONTIER_LIMIT, DEFAULT_MIN_GAP
from ..model import (
    CREATION_SOURCES,
    EDGE_DIRECTIONS,
    EDGE_FIELD_ALIASES,
    NODE_TYPES,
    RELATIONSHIPS,
    TIMESCALES,
    ValidationError,
)
from ..retrieval.defaults import DEFAULT_EXPANSION_HOPS, DEFAULT_LIMIT, DEFAULT_NEIGHBORS_PER_NODE
from ..retrieval.directives import CHANNEL as DIRECTIVE_CHANNEL
from ..retrieval.directives import KINDS as DIRECTIVE_KINDS
from ..retrieval.lookups import (
    DEFAULT_EPISODIC_LIMIT,
    DEFAULT_PATH_HOPS,
    DEFAULT_PROCEDURAL_LIMIT,
    DEFAULT_TRAVERSE_DEPTH,
    DEFAULT_TRAVERSE_LIMIT,
    DIRECTIONS,
    MAX_PATH_HOPS,
    MAX_PATHS,
    MAX_TOOL_LIMIT,
    MAX_TRAVERSE_DEPTH,
)
from ..retrieval.region import DEFAULT_SEARCH_LIMIT
from ..retrieval.retriever import MAX_EXPANSION_HOPS, MAX_NEIGHBORS_PER_NODE
from ..retrieval.retriever import MAX_LIMIT as RETRIEVE_MAX_LIMIT
from ..retrieval.run import SOURCES
from ..retrieval.settings import DEEP_EFFORT, EFFORT_MAX
from .query import QUERY_OPERATIONS, query_graph
from .tools import (
    BOOLEAN,
    COUNT,
    EDGE_OUTPUT,
    EDGES,
    INTEGER,
    JSON_OBJECT,
    MAX_SOURCE_CHARS,
    NODE_OUTPUT,
    NODES,
    NUMBER,
    OBJECT,
    PROVENANCE_OUTPUT,
    STRING,
    STRINGS,
    Handler,
    ToolAnnotations,
    ToolSpec,
    array,
    choice,
    flag,
    ids,
    integer,
    nullable,
    obj,
    out_obj,
    text,
    topology_result_schema,
    unit,
)
from .upstream import with_upstream

if TYPE_CHECKING:
    from ..api import Graphonomous


# The four annotation profiles of the v1 tools (see ToolAnnotations for the meanings).
READ: Final = ToolAnnotations(read_only=True, destructive=False, idempotent=True)
WRITE: Final = ToolAnnotations(read_only=False, destructive=False, idempotent=False)
UPSERT: Final = ToolAnnotations(read_only=False, destructive=False, idempotent=True)
DELETE: Final = ToolAnnotations(read_only=False, destructive=True, idempotent=True)
DESTRUCTIVE_WRITE: Final = ToolAnnotations(read_only=False, destructive=True, idempotent=False)


# --------------------------------------------------------------------------
# Adapters
# --------------------------------------------------------------------------


def rename_alias(arguments: Mapping[str, Any], alias: str, canonical: str) -> dict[str, Any]:
    """`arguments` with `alias` moved to `canonical`; both given with different values
    raises ValidationError naming the alias.  O(len(arguments))."""
    out = dict(arguments)
    if alias not in out:
        return out
    value = out.pop(alias)
    if out.setdefault(canonical, value) != value:
        raise ValidationError(alias, f"conflicts with {canonical!r}")
    return out


def delegate(
    method: str,
    *,
    aliases: Mapping[str, str] | None = None,
    required: Sequence[str] = (),
    fields: Mapping[str, str] | None = None,
) -> Handler:
    """A tool handler calling ``graph.<method>(**arguments)``.

    `aliases` (alias → canonical field) are renamed first; `required` lists
    fields the schema cannot require because an alias may stand in for them
    (missing → ValidationError naming the field); `fields` maps the facade's
    internal argument names back to the tool's (a ValidationError about
    ``old_id`` names ``node_id``, the field the caller sent).  No other logic.
    """
    renames = dict(aliases or {})
    public = dict(fields or {})

    def handler(graph: Graphonomous, arguments: dict[str, Any]) -> dict[str, Any]:
        args = dict(arguments)
        for alias, canonical in renames.items():
            args = rename_alias(args, alias, canonical)
        for name in required:
            if name not in args:
                raise ValidationError(name, "is required")
        try:
            result: dict[str, Any] = getattr(graph, method)(**args)
        except ValidationError as exc:
            if exc.field not in public:
                raise
            raise ValidationError(public[exc.field], exc.message) from exc
        return result

    handler.__name__ = handler.__qualname__ = method
    handler.__doc__ = f"Tool adapter: ``Graphonomous.{method}(**arguments)``."
    return handler


# --------------------------------------------------------------------------
# Input fields
# --------------------------------------------------------------------------

# Upstream edge field names (seed 000) accepted next to ours; model.EDGE_FIELD_ALIASES maps them.
_ALIAS_DESCRIPTIONS: Final = {
    "relationship": "Alias of relationship (upstream name).",
    "strength": "Alias of strength (upstream name).",
    "source_id": "Alias of source_id (upstream name).",
    "target_id": "Alias of target_id (upstream name).",
}


def _edge_alias_properties(canonical: Mapping[str, Any]) -> dict[str, Any]:
    """Schema entries for every alias whose canonical field is in `canonical`."""
    out: dict[str, Any] = {}
    for alias, target in EDGE_FIELD_ALIASES.items():
        if target in canonical:
            schema = {k: v for k, v in canonical[target].items() if k != "description"}
            out[alias] = {**schema, "description": _ALIAS_DESCRIPTIONS[target]}
    return out


def _limit(default: int, maximum: int | None, what: str = "items") -> dict[str, Any]:
    """A result-count bound; no own maximum means the tools' common one (MAX_TOOL_LIMIT)."""
    bound = MAX_TOOL_LIMIT if maximum is None else maximum
    return integer(f"Maximum number of {what} to return (default {default}).", 1, bound)


_AGENT = text("Only this agent's nodes.", minLength=1)

_NODE_INPUT: Final = {
    "content": text("The knowledge to store (embedded for similarity search).", minLength=1),
    "node_type": choice(
        NODE_TYPES, "Kind of memory; default semantic (procedural: an instruction)."
    ),
    "type": choice(NODE_TYPES, "Alias of node_type (seed column name)."),
    "metadata": JSON_OBJECT,
    "source": text("Provenance: file path, URL or tool name.", maxLength=MAX_SOURCE_CHARS),
    "confidence": unit("Belief in [0, 1]; default 0.5."),
    "causal_parent_ids": ids("Existing nodes that led to this one (for outcome nodes)."),
    "timescale": choice(TIMESCALES, "How fast the memory consolidates; default medium."),
    "creation_source": choice(CREATION_SOURCES, "Who created the node; default inference."),
    "decay_rate": unit("Forgetting speed in [0, 1]; default by node type."),
    "node_id": text("Explicit id (default: a new time-ordered UUIDv7).", minLength=1),
    "agent_id": text("Owning agent; default 'default'.", minLength=1),
    "pinned": flag("Protect from pruning and merging."),
    "valid_from": text("ISO 8601: holds from (default: now)."),
    "valid_to": text("ISO 8601: holds until (default: open)."),
}

_EDGE_CANONICAL: Final = {
    "source_id": text("Id of the source node.", minLength=1),
    "target_id": text("Id of the target node.", minLength=1),
    "relationship": choice(RELATIONSHIPS, "Edge kind; default related."),
    "strength": unit("Edge weight in [0, 1]; default 0.3."),
}

_EDGE_INPUT: Final = {
    **_EDGE_CANONICAL,
    "metadata": JSON_OBJECT,
    "decay_rate": unit("Forgetting speed in [0, 1]; default 0.005."),
    "agent_id": text("Owning agent; default 'default'.", minLength=1),
    **_edge_alias_properties(_EDGE_CANONICAL),
}

_MANAGE_EDGE_INPUT: Final = {
    "action": choice(EDGE_ACTIONS, "What to do."),
    "edge_id": text("Names the edge (get, update, delete).", minLength=1),
    **_EDGE_CANONICAL,
    "node_id": text("list: edges touching this node.", minLength=1),
    "direction": choice(EDGE_DIRECTIONS, "list with node_id: out, in or both (default)."),
    "metadata": {**JSON_OBJECT, "description": "update: merged into the edge's metadata."},
    "limit": _limit(100, MAX_LIST_LIMIT, "edges"),
    **_edge_alias_properties(_EDGE_CANONICAL),
}

_QUERY_INPUT: Final = {
    "operation": choice(QUERY_OPERATIONS, "The read operation."),
    "node_id": text("get_node: the node; get_edges: edges touching this node.", minLength=1),
    "query": text("similarity_search: the text to search for."),
    "node_type": choice(NODE_TYPES, "list_nodes / similarity_search: only this type."),
    "timescale": choice(TIMESCALES, "list_nodes: only this timescale."),
    "agent_id": text("list_nodes: only this agent's nodes.", minLength=1),
    "min_confidence": unit("list_nodes: lowest confidence."),
    "max_confidence": unit("list_nodes: highest confidence."),
    "include_forgotten": flag("list_nodes / get_node: include soft-forgotten nodes."),
    "direction": choice(EDGE_DIRECTIONS, "get_edges with node_id: out, in or both."),
    "relationship": choice(RELATIONSHIPS, "get_edges: only this kind."),
    "limit": integer("Maximum number of items to return.", 1, MAX_LIST_LIMIT),
    "offset": integer("list_nodes: items to skip.", 0),
}

_TOPOLOGY_INPUT: Final = {
    "node_ids": ids("Node IDs to analyze. If omitted, analyzes the full graph."),
    "query": text(
        "Optional query text. If provided, retrieves relevant nodes first, then analyzes "
        "their topology (together with node_ids, if given)."
    ),
    "limit": integer(
        f"With query: how many similar nodes to retrieve (default {DEFAULT_SEARCH_LIMIT}).",
        1,
        MAX_LIST_LIMIT,
    ),
}

_CONTEXT_INPUT: Final = {
    "query": text("What to find: a question or keywords."),
    "limit": _limit(DEFAULT_LIMIT, RETRIEVE_MAX_LIMIT, "results"),
    "expansion_hops": integer(
        f"Graph hops to expand from the best matches (default {DEFAULT_EXPANSION_HOPS}).",
        0,
        MAX_EXPANSION_HOPS,
    ),
    "neighbors_per_node": integer(
        f"Neighbours followed per node while expanding (default {DEFAULT_NEIGHBORS_PER_NODE}).",
        0,
        MAX_NEIGHBORS_PER_NODE,
    ),
    "min_score": unit("Drop results scoring below this (default 0)."),
    "node_type": choice(NODE_TYPES, "Only nodes of this type."),
    "agent_id": _AGENT,
    "effort": integer(
        "Retrieval effort 0–10: 0 keyword+embedding match only, 1–4 + graph expansion, "
        "5–7 + local PageRank and communities, 8–10 + whole-graph PageRank and a "
        "contradiction check.",
        0,
        EFFORT_MAX,
    ),
    "deep": flag(f"Shorthand for effort {DEEP_EFFORT} (do not combine with effort)."),
    "as_of": text("Answer as of a past moment (ISO 8601 or e.g. 'last week')."),
    "include_superseded": flag("Also return replaced facts."),
}

_EPISODIC_INPUT: Final = {
    "since": text(
        "ISO 8601 (no zone = UTC) or a date expression ('last week'): only "
        "episodes created at or after it."
    ),
    "until": text("ISO 8601 or a date expression: only episodes created at or before it."),
    "limit": _limit(DEFAULT_EPISODIC_LIMIT, MAX_TOOL_LIMIT, "episodes"),
    "agent_id": _AGENT,
}

_PROCEDURAL_INPUT: Final = {
    "task": text("The task to find procedures for."),
    "preconditions": {
        "type": "array",
        "items": {"type": "string"},
        "description": (
            "Conditions that hold now; procedures whose preconditions they meet rank higher."
        ),
    },
    "limit": _limit(DEFAULT_PROCEDURAL_LIMIT, MAX_TOOL_LIMIT, "procedures"),
    "agent_id": _AGENT,
}

_COVERAGE_INPUT: Final = {
    "task_description": text("The task you are about to do.", minLength=1),
    "critical_topics": {
        "type": "array",
        "items": {"type": "string", "minLength": 1},
        "maxItems": MAX_TOPICS,
        "description": "Topics that must be covered to act (default: the task's content words).",
    },
    "limit": integer("How many retrieved nodes to weigh (default 10).", 1, COVERAGE_MAX_LIMIT),
}

_TRACE_CANONICAL: Final = {
    "from_id": text("Node the evidence chain starts at (required).", minLength=1),
    "to_id": text("Node the evidence chain ends at (required).", minLength=1),
}
_TRACE_ALIASES: Final = {"source_id": "from_id", "target_id": "to_id"}
# Evidence runs forwards, or both ways; trace_evidence_path rejects "in".
_TRACE_DIRECTIONS: Final = tuple(d for d in DIRECTIONS if d != "in")
_TRACE_INPUT: Final = {
    **_TRACE_CANONICAL,
    "k": integer("How many alternative chains, cheapest first (default 1).", 1, MAX_PATHS),
    "max_hops": integer(f"Longest chain in edges (default {DEFAULT_PATH_HOPS}).", 1, MAX_PATH_HOPS),
    "direction": choice(
        _TRACE_DIRECTIONS,
        "both (default) may walk edges backwards; out follows source→target only.",
    ),
    **{
        alias: {**_TRACE_CANONICAL[canonical], "description": f"Alias of {canonical}."}
        for alias, canonical in _TRACE_ALIASES.items()
    },
}

_FRONTIER_INPUT: Final = {
    "min_gap": unit(f"Smallest Wilson interval width reported (default {DEFAULT_MIN_GAP})."),
    "limit": _limit(DEFAULT_FRONTIER_LIMIT, None, "nodes"),
    "include_propagated": flag("Count evidence inherited from supporting nodes (default true)."),
}

_TRAVERSE_INPUT: Final = {
    "node_id": text("Start node.", minLength=1),
    "depth": integer(f"Hops to walk (default {DEFAULT_TRAVERSE_DEPTH}).", 0, MAX_TRAVERSE_DEPTH),
    "relationships": {
        "type": "array",
        "items": {"type": "string", "enum": list(RELATIONSHIPS)},
        "description": "Follow only these edge kinds (default: all).",
    },
    "direction": choice(DIRECTIONS, "out, in or both (default)."),
    "limit": _limit(DEFAULT_TRAVERSE_LIMIT, MAX_TOOL_LIMIT, "nodes (start included)"),
}

_OUTCOME_INPUT: Final = {
    "action_id": text("Your id for the action whose result you report.", minLength=1),
    "status": choice(OUTCOME_STATUSES, "How the action turned out."),
    "confidence": unit("How sure you are of this outcome."),
    "causal_node_ids": ids("The nodes whose knowledge drove the action (they get the credit)."),
    "evidence": {
        **JSON_OBJECT,
        "description": "What was observed: a JSON object (partial_success may give "
        "'fraction' in [0, 1]) or a text.",
    },
    "goal_id": text("The goal the action served.", minLength=1),
    "trace_id": text("Your trace id, stored with the outcome.", minLength=1),
    "evidence_type": choice(
        tuple(EVIDENCE_TYPE_WEIGHTS),
        "Where the evidence comes from; a measurement counts more than a self-report.",
    ),
    "signal_id": text(
        "Your idempotency key for this report: sending the same signal_id again (e.g. a "
        "retry after a timeout) is recognised and applied only once.",
        minLength=1,
    ),
}

_FEEDBACK_INPUT: Final = {
    "node_id": text("The node the feedback is about.", minLength=1),
    "feedback": choice(
        FEEDBACK_KINDS,
        "positive / negative adjust confidence; correction replaces the node's content.",
    ),
    "correction": text("correction: the corrected content (stored as a new node)."),
    "reason": text("Why (recorded with a correction)."),
}

_NOVELTY_INPUT: Final = {
    "text": text("The text to compare with what the graph knows.", minLength=1),
    "threshold": unit(f"Novelty at or above this is novel (default {NOVELTY_THRESHOLD})."),
    "limit": _limit(NOVELTY_NEIGHBOURS, None, "nearest nodes"),
}

_INTERACTION_INPUT: Final = {
    "user_message": text("What the user said.", minLength=1),
    "model_response": text("What the assistant answered.", minLength=1),
    "context": {**JSON_OBJECT, "description": "Anything else worth keeping (JSON object or text)."},
}

_BELIEF_INPUT: Final = {
    "action": choice(
        BELIEF_ACTIONS,
        "expand: add a belief (content); revise: replace node_id by new_content or by the "
        "existing new_id; contract: withdraw node_id (confidence drops to near zero).",
    ),
    "content": text("expand: the new belief.", minLength=1),
    "node_id": text("revise / contract: the belief to change.", minLength=1),
    "new_content": text("revise: the replacing belief.", minLength=1),
    "new_id": text("revise: an existing node that replaces node_id.", minLength=1),
    "reason": text("Why (recorded in the revision log)."),
    "node_type": choice(NODE_TYPES, "expand: kind of memory (default semantic)."),
    "confidence": unit("expand / revise: confidence of the new belief."),
    "metadata": JSON_OBJECT,
    "source": text("expand / revise: provenance of the new belief.", maxLength=MAX_SOURCE_CHARS),
    "contradicts": ids("expand: nodes the new belief contradicts."),
}

_CONTRADICTIONS_INPUT: Final = {
    "node_id": text("Find what contradicts this node (give node_id or content).", minLength=1),
    "content": text("Find what contradicts this text (give node_id or content).", minLength=1),
    "limit": _limit(CONTRADICTION_CANDIDATES, None, "candidates to examine"),
}

_SUBGOAL: Final = obj(
    {
        "title": text("Subgoal title.", minLength=1, maxLength=MAX_TITLE_CHARS),
        "description": text("Subgoal description."),
        "priority": unit("Subgoal priority."),
        "metadata": JSON_OBJECT,
    },
    ("title",),
)
assert tuple(_SUBGOAL["properties"]) == SUBGOAL_FIELDS

_GOAL_INPUT: Final = {
    "action": choice(
        GOAL_ACTIONS,
        "create (title) | get | list | update | delete | transition (status) | set_progress "
        "(progress) | link_nodes / unlink_nodes (node_ids) | decompose (subgoals); all but "
        "create and list need goal_id.",
    ),
    "goal_id": text("The goal.", minLength=1),
    "title": text(
        "create / update: the goal in a few words.", minLength=1, maxLength=MAX_TITLE_CHARS
    ),
    "description": text("create / update: details."),
    "priority": unit(f"create / update: priority (default {DEFAULT_PRIORITY})."),
    "status": choice(
        GOAL_STATUSES, "create: initial status; transition: the new status; list: filter."
    ),
    "parent_goal_id": text("create: parent goal; list: only its subgoals.", minLength=1),
    "linked_node_ids": ids("create: knowledge nodes supporting the goal."),
    "metadata": JSON_OBJECT,
    "agent_id": text("create: owning agent; list: filter.", minLength=1),
    "limit": _limit(100, MAX_GOALS_LISTED, "goals"),
    "reason": text("transition: why."),
    "progress": unit("set_progress: fraction done."),
    "node_ids": ids("link_nodes / unlink_nodes: knowledge nodes."),
    "subgoals": {
        "type": "array",
        "minItems": 1,
        "items": {"anyOf": [{"type": "string", "minLength": 1}, _SUBGOAL]},
        "description": "decompose: subgoal titles or {title, description, priority, metadata}.",
    },
}

_REVIEW_INPUT: Final = {
    "goal_id": text("The goal to review.", minLength=1),
    "apply": flag("Apply the decision's status transition (default false: advise only)."),
}

_CONCLUSION: Final = obj(
    {
        "scc_id": text("The SCC concluded on (as numbered by this call), or give node_ids."),
        "node_ids": ids("The nodes concluded on, or give scc_id."),
        "content": text("The conclusion.", minLength=1),
        "confidence": unit(f"Default {DEFAULT_CONCLUSION_CONFIDENCE}."),
    },
    ("content",),
)

_DELIBERATE_INPUT: Final = {
    "query": text("Deliberate over the region retrieve_context finds for this (or node_ids)."),
    "node_ids": ids("Deliberate over these nodes (or query; neither: the whole graph)."),
    "conclusions": {
        "type": "array",
        "items": _CONCLUSION,
        "maxItems": MAX_CONCLUSIONS,
        "description": "Your conclusions on the loops, validated and echoed.",
    },
    "write_back": flag("Store the conclusions as nodes derived from their loop (default false)."),
}

_CYCLE_INPUT: Final = {
    "autonomy": choice(
        AUTONOMY_LEVELS,
        "observe: list actions; advise (default): recommend them; act: also perform "
        "forgetting, item resolution and consolidation.",
    ),
    "budget": integer(f"Most actions dispatched (default {DEFAULT_BUDGET}).", 0, MAX_BUDGET),
}

_FORGET_INPUT: Final = {
    "node_id": text("The node to forget.", minLength=1),
    "mode": choice(
        FORGET_MODES,
        "soft (default): hide from retrieval, keep the row; hard: delete with its edges; "
        "cascade: hard plus the nodes that rested only on it.",
    ),
    "reason": text("Why (kept in the audit log; do not put the data itself here)."),
}

_POLICY_INPUT: Final = {
    "policy": choice(
        FORGETTING_POLICIES, "Priority rule (hybrid: confidence × recency × use × connectivity)."
    ),
    "max_nodes": integer("Node budget (default: the configured max_nodes).", 0),
    "dry_run": flag("Only report what would be forgotten."),
    "mode": choice(POLICY_MODES, f"soft hides, hard deletes (default {DEFAULT_POLICY_MODE})."),
}

_ERASE_INPUT: Final = {
    "node_id": text("The node to erase.", minLength=1),
    "reason": text("Why (only its SHA-256 is kept in the audit log)."),
    "with_quoting": flag("Also erase the nodes holding its text or a sentence of it verbatim."),
}

_CONSOLIDATION_INPUT: Final = {
    "dry_run": flag("Compute every stage and roll it back (the log records the run)."),
}


# --------------------------------------------------------------------------
# Output schemas
# --------------------------------------------------------------------------

_GOAL: Final = out_obj(
    {
        "id": STRING,
        "node_id": nullable("string"),
        "title": STRING,
        "description": STRING,
        "status": {"enum": list(GOAL_STATUSES)},
        "priority": NUMBER,
        "progress": NUMBER,
        "parent_goal_id": nullable("string"),
        "linked_node_ids": STRINGS,
        "metadata": OBJECT,
        "agent_id": STRING,
        "created_at": STRING,
        "updated_at": STRING,
    },
    ("id", "title", "status", "priority", "progress"),
)
_ROUTING: Final = topology_result_schema()["properties"]["routing"]  # §A.1 routing values
_TOPOLOGY_SUMMARY: Final = out_obj(
    {"max_kappa": COUNT, "scc_count": COUNT, "routing": STRING},
    ("max_kappa", "scc_count", "routing"),
)
_NOVELTY_OUTPUT: Final = out_obj(
    {
        "novelty": NUMBER,
        "is_novel": BOOLEAN,
        "threshold": NUMBER,
        "max_similarity": NUMBER,
        "nearest": array(
            out_obj({"node_id": STRING, "similarity": NUMBER, "node_type": STRING}, ("node_id",))
        ),
    },
    ("novelty", "is_novel", "threshold", "max_similarity", "nearest"),
)
_COVERAGE_OUTPUT: Final = out_obj(
    {
        "task": STRING,
        "relevant_nodes": array(
            out_obj(
                {
                    "node_id": STRING,
                    "node_type": STRING,
                    "content": STRING,
                    "confidence": NUMBER,
                    "similarity": NUMBER,
                    "topics": STRINGS,
                },
                ("node_id",),
            )
        ),
        "topics": array(
            out_obj(
                {
                    "topic": STRING,
                    "critical": BOOLEAN,
                    "covered": BOOLEAN,
                    "best_confidence": NUMBER,
                    "node_ids": STRINGS,
                },
                ("topic", "covered"),
            )
        ),
        "coverage_score": NUMBER,
        "confidence_mean": NUMBER,
        "uncertainty": NUMBER,
        "risk": NUMBER,
        "decision_confidence": NUMBER,
        "knowledge_gaps": array(OBJECT),
        "recommendation": {"enum": list(RECOMMENDATIONS)},
        "topology": _TOPOLOGY_SUMMARY,
        "method": STRING,
    },
    ("task", "relevant_nodes", "topics", "coverage_score", "decision_confidence", "recommendation"),
)
_REVISION_OUTPUT: Final = out_obj(
    {
        "operation": {"enum": list(BELIEF_ACTIONS)},
        "node": NODE_OUTPUT,
        "node_id": STRING,
        "old_node_id": STRING,
        "new_node_id": STRING,
        "confidence_before": NUMBER,
        "confidence_after": NUMBER,
        "propagated": array(OBJECT),
        "revision_id": STRING,
        "contradictions": array(OBJECT),
        "hook_results": array(OBJECT),
    },
    ("operation", "revision_id"),
)
_CONSOLIDATION_RUN: Final = out_obj(
    {
        "id": STRING,
        "started_at": STRING,
        "finished_at": STRING,
        "trigger": STRING,
        "dry_run": BOOLEAN,
        "stages": array(
            out_obj({"stage": STRING, "name": STRING, "ms": NUMBER}, ("stage", "name"))
        ),
        "totals": out_obj(
            {
                "nodes_before": COUNT,
                "nodes_after": COUNT,
                "edges_before": COUNT,
                "edges_after": COUNT,
                "nodes_pruned": COUNT,
                "edges_pruned": COUNT,
                "nodes_merged": COUNT,
                "conflicts_resolved": COUNT,
                "abstractions": COUNT,
                "duration_ms": NUMBER,
            },
        ),
    },
    ("id", "started_at", "trigger", "dry_run", "stages", "totals"),
)

_TOPOLOGY_OUTPUT: Final = topology_result_schema()
_TOPOLOGY_OUTPUT["properties"]["recommendation"] = text(
    "What the topology means for answering, in one paragraph."
)
_TOPOLOGY_OUTPUT["required"] = [*_TOPOLOGY_OUTPUT["required"], "recommendation"]

_CONTEXT_RESULT: Final = out_obj(
    {
        "node_id": STRING,
        "content": STRING,
        "node_type": {"enum": list(NODE_TYPES)},
        "confidence": NUMBER,
        "similarity": NUMBER,
        "score": NUMBER,
        **PROVENANCE_OUTPUT,
        "channel": {"enum": list(SOURCES)},
        "hops": COUNT,
        "via": nullable("string"),
        "flags": STRINGS,
    },
    ("node_id", "content", "node_type", "confidence", "score", "path", "source", "channel"),
)

# One entry of retrieve_context's `directives` list (retrieval/directives.py).
_DIRECTIVE_RESULT: Final = out_obj(
    {
        "node_id": STRING,
        "content": STRING,
        "node_type": {"enum": list(NODE_TYPES)},
        "confidence": NUMBER,
        **PROVENANCE_OUTPUT,
        "channel": {"enum": [DIRECTIVE_CHANNEL]},
        "kind": {"enum": list(DIRECTIVE_KINDS)},
        "rule": STRING,
        "scope": STRINGS,
        "matched": STRINGS,
        "created_at": STRING,
    },
    ("node_id", "content", "node_type", "channel", "kind", "scope", "matched"),
)

# --------------------------------------------------------------------------
# The tool specs
# --------------------------------------------------------------------------

_TOPOLOGY_DESCRIPTION: Final = (
    "Compute topological structure (SCCs, κ values, routing decision) for a set of nodes in "
    "the knowledge graph. Use this to determine whether a knowledge region requires iterative "
    "deliberation (κ > 0) or can be answered with simple retrieval (κ = 0)."
)

STORE_NODE: Final = ToolSpec(
    name="store_node",
    title="Store a knowledge node",
    description=(
        "Store one piece of knowledge as a node (episodic event, semantic fact, procedure, "
        "temporal fact, outcome or goal). Returns the stored node with its id."
    ),
    input_schema=obj(_NODE_INPUT, ("content",)),
    output_schema=out_obj({"node": NODE_OUTPUT}, ("node",)),
    annotations=WRITE,
    handler=delegate("store_node", aliases={"type": "node_type"}, fields={"id": "node_id"}),
)
STORE_EDGE: Final = ToolSpec(
    name="store_edge",
    title="Store a relationship edge",
    description=(
        "Connect two existing nodes with a typed edge. Storing an existing (source_id, "
        "target_id, relationship) triple updates its strength/metadata. Upstream names "
        "edge_type, weight, from/source and to/target are accepted."
    ),
    input_schema=obj(_EDGE_INPUT),
    output_schema=out_obj({"edge": EDGE_OUTPUT, "created": BOOLEAN}, ("edge", "created")),
    annotations=UPSERT,
    handler=delegate("store_edge"),  # the facade resolves the edge aliases
)
DELETE_NODE: Final = ToolSpec(
    name="delete_node",
    title="Delete a node",
    description="Delete a node together with its edges and embedding.",
    input_schema=obj({"node_id": text("Id of the node to delete.", minLength=1)}, ("node_id",)),
    output_schema=out_obj(
        {"deleted": BOOLEAN, "node_id": STRING, "edges_removed": COUNT},
        ("deleted", "node_id", "edges_removed"),
    ),
    annotations=DELETE,
    handler=delegate("delete_node"),
)
MANAGE_EDGE: Final = ToolSpec(
    name="manage_edge",
    title="Get, list, update or delete edges",
    description=(
        "Edge CRUD. get/update/delete name an edge by edge_id or by source_id + target_id + "
        "relationship; update sets strength and/or merges metadata; list returns edges "
        "touching node_id (direction out|in|both) and/or of one relationship."
    ),
    input_schema=obj(_MANAGE_EDGE_INPUT, ("action",)),
    output_schema=out_obj(
        {
            "edge": EDGE_OUTPUT,
            "edges": EDGES,
            "count": COUNT,
            "deleted": BOOLEAN,
            "edge_id": STRING,
        }
    ),
    annotations=DELETE,
    handler=delegate("manage_edge"),
)
RETRIEVE_CONTEXT: Final = ToolSpec(
    name="retrieve_context",
    title="Retrieve ranked context (κ-aware)",
    description=(
        "The main way to recall what the graph knows about a question: keyword + embedding "
        "search fused, expanded along edges, reranked by learned usefulness (Q-values from "
        "learn_from_outcome). Returns ranked nodes, which of them are causes of others, and "
        "the topology of the region: routing 'deliberate' (κ > 0) means the results form a "
        "feedback loop to reason through. Counts each result as accessed."
    ),
    input_schema=obj(_CONTEXT_INPUT, ("query",)),
    output_schema=out_obj(
        {
            "query": STRING,
            "results": array(_CONTEXT_RESULT),
            "directives": array(_DIRECTIVE_RESULT),
            "causal_context": STRINGS,
            "stats": out_obj({"effort": INTEGER, "mechanisms": STRINGS, "returned": COUNT}),
            "topology": topology_result_schema(),
        },
        ("query", "results", "causal_context", "stats", "topology"),
    ),
    annotations=WRITE,
    handler=delegate("retrieve_context"),
)


def _query_graph(graph: Graphonomous, arguments: dict[str, Any]) -> dict[str, Any]:
    """Tool adapter: :func:`.query.query_graph` (the dispatch lives in the MCP layer)."""
    args = dict(arguments)
    return query_graph(graph, args.pop("operation", None), **args)


QUERY_GRAPH: Final = ToolSpec(
    name="query_graph",
    title="Inspect the graph",
    description=(
        "Operation-based graph inspection. list_nodes: filter by node_type, timescale, "
        "agent_id, confidence range (limit/offset). get_node: one node with its edges. "
        "get_edges: edges touching node_id (direction, relationship). similarity_search: "
        "nodes most similar to query. Arguments not used by the operation are rejected."
    ),
    input_schema=obj(_QUERY_INPUT, ("operation",)),
    output_schema=out_obj(
        {
            "operation": {"enum": list(QUERY_OPERATIONS)},
            "nodes": NODES,
            "count": COUNT,
            "total": COUNT,
            "node": NODE_OUTPUT,
            "edges": EDGES,
            "query": STRING,
            "results": NODES,
        },
        ("operation",),
    ),
    annotations=READ,
    handler=_query_graph,
)
TOPOLOGY_ANALYZE: Final = ToolSpec(
    name="topology_analyze",
    title="Analyze feedback-loop topology (κ)",
    description=_TOPOLOGY_DESCRIPTION,
    input_schema=obj(_TOPOLOGY_INPUT),
    output_schema=_TOPOLOGY_OUTPUT,
    annotations=READ,
    handler=delegate("topology_analyze"),
)
ANALYZE_TOPOLOGY: Final = ToolSpec(
    name="analyze_topology",
    title="Analyze feedback-loop topology (κ)",
    description=_TOPOLOGY_DESCRIPTION + " (Same tool as topology_analyze, seed 000 name.)",
    input_schema=obj(_TOPOLOGY_INPUT),
    output_schema=_TOPOLOGY_OUTPUT,
    annotations=READ,
    handler=delegate("topology_analyze"),
)
GRAPH_TRAVERSE: Final = ToolSpec(
    name="graph_traverse",
    title="Walk the graph from a node",
    description=(
        "Breadth-first walk from a node, optionally along some edge kinds and one direction. "
        "Returns the nodes reached with their depth and the edges among them."
    ),
    input_schema=obj(_TRAVERSE_INPUT, ("node_id",)),
    output_schema=out_obj(
        {
            "root": STRING,
            "depth": COUNT,
            "direction": STRING,
            "relationships": nullable(STRINGS),
            "nodes": NODES,
            "edges": EDGES,
            "count": COUNT,
            "truncated": BOOLEAN,
        },
        ("root", "nodes", "edges", "count", "truncated"),
    ),
    annotations=READ,
    handler=delegate("graph_traverse"),
)
GRAPH_STATS: Final = ToolSpec(
    name="graph_stats",
    title="Graph statistics",
    description=(
        "Aggregate counts: nodes by type and timescale, edges by relationship, mean "
        "confidence, embeddings, agents and storage facts."
    ),
    input_schema=obj({}),
    output_schema=out_obj(
        {
            "node_count": COUNT,
            "edge_count": COUNT,
            "forgotten_count": COUNT,
            "nodes_by_type": OBJECT,
            "nodes_by_timescale": OBJECT,
            "edges_by_relationship": OBJECT,
            "mean_confidence": nullable("number"),
            "embedding_count": COUNT,
            "embedding_models": OBJECT,
            "embedder": STRING,
            "agents": STRINGS,
            "schema_version": INTEGER,
            "db_path": STRING,
        },
        ("node_count", "edge_count"),
    ),
    annotations=READ,
    handler=delegate("graph_stats"),
)
RETRIEVE_EPISODIC: Final = ToolSpec(
    name="retrieve_episodic",
    title="Recall episodes in a time range",
    description=(
        "Episodic memories (events, conversations) created in a time window, newest first. "
        "Use it for 'what happened since/until …' questions."
    ),
    input_schema=obj(_EPISODIC_INPUT),
    output_schema=out_obj(
        {
            "since": nullable("string"),
            "until": nullable("string"),
            "count": COUNT,
            "results": NODES,
        },
        ("count", "results"),
    ),
    annotations=READ,
    handler=delegate("retrieve_episodic"),
)
RETRIEVE_PROCEDURAL: Final = ToolSpec(
    name="retrieve_procedural",
    title="Find procedures for a task",
    description=(
        "How-to knowledge: procedural nodes matching a task, ranked higher when their "
        "preconditions are met, each with its steps split out."
    ),
    input_schema=obj(_PROCEDURAL_INPUT, ("task",)),
    output_schema=out_obj(
        {
            "task": STRING,
            "count": COUNT,
            "results": array(
                out_obj(
                    {
                        "node_id": STRING,
                        "content": STRING,
                        "confidence": NUMBER,
                        "score": NUMBER,
                        **PROVENANCE_OUTPUT,
                        "channel": {"enum": ["seed", "bm25"]},
                        "preconditions_met": STRINGS,
                        "preconditions_unmet": STRINGS,
                        "steps": STRINGS,
                    },
                    ("node_id", "content", "score", "steps"),
                )
            ),
        },
        ("task", "count", "results"),
    ),
    annotations=READ,
    handler=delegate("retrieve_procedural"),
)
COVERAGE_QUERY: Final = ToolSpec(
    name="coverage_query",
    title="Is my knowledge enough for a task?",
    description=(
        "Before acting, check whether the graph knows enough: covered and missing topics, "
        "confidence, uncertainty and contradiction risk, and a recommendation — act, learn_first "
        "(gather knowledge first) or escalate (conflicting knowledge: ask a human). Runs "
        "retrieve_context, so results count as accessed."
    ),
    input_schema=obj(_COVERAGE_INPUT, ("task_description",)),
    output_schema=_COVERAGE_OUTPUT,
    annotations=WRITE,
    handler=delegate("coverage_query"),
)
TRACE_EVIDENCE_PATH: Final = ToolSpec(
    name="trace_evidence_path",
    title="Trace the evidence between two nodes",
    description=(
        "The most credible chains of edges linking two nodes (cost = −ln of edge strength × "
        "node confidence × recency), to explain why one thing bears on another. "
        "source_id/target_id are accepted for from_id/to_id."
    ),
    input_schema=obj(_TRACE_INPUT),
    output_schema=out_obj(
        {
            "from_id": STRING,
            "to_id": STRING,
            "found": BOOLEAN,
            "paths": array(
                out_obj(
                    {
                        "cost": NUMBER,
                        "credibility": NUMBER,
                        "hops": COUNT,
                        "nodes": STRINGS,
                        "edges": array(
                            out_obj(
                                {
                                    "edge_id": STRING,
                                    "source_id": STRING,
                                    "target_id": STRING,
                                    "relationship": STRING,
                                    "strength": NUMBER,
                                    "forward": BOOLEAN,
                                },
                                ("edge_id", "source_id", "target_id", "forward"),
                            )
                        ),
                    },
                    ("cost", "credibility", "hops", "nodes", "edges"),
                )
            ),
        },
        ("from_id", "to_id", "found", "paths"),
    ),
    annotations=READ,
    handler=delegate(
        "trace_evidence_path", aliases=_TRACE_ALIASES, required=tuple(_TRACE_CANONICAL)
    ),
)
EPISTEMIC_FRONTIER: Final = ToolSpec(
    name="epistemic_frontier",
    title="Where is knowledge most uncertain?",
    description=(
        "Nodes whose success evidence (from reported outcomes) leaves the widest Wilson "
        "95% interval: where one more experiment or question teaches the most."
    ),
    input_schema=obj(_FRONTIER_INPUT),
    output_schema=out_obj(
        {
            "min_gap": NUMBER,
            "limit": COUNT,
            "evaluated": COUNT,
            "frontier": array(
                out_obj(
                    {
                        "node_id": STRING,
                        "node_type": STRING,
                        "content": STRING,
                        "propagated": BOOLEAN,
                        "successes": NUMBER,
                        "trials": NUMBER,
                        "p_hat": NUMBER,
                        "lower": NUMBER,
                        "upper": NUMBER,
                        "width": NUMBER,
                        "entropy": NUMBER,
                        "information_gain": NUMBER,
                    },
                    ("node_id", "width"),
                )
            ),
        },
        ("min_gap", "evaluated", "frontier"),
    ),
    annotations=READ,
    handler=delegate("epistemic_frontier"),
)
LEARN_FROM_OUTCOME: Final = ToolSpec(
    name="learn_from_outcome",
    title="Report how an action turned out",
    description=(
        "Close the loop after acting: report the outcome (success, partial_success, failure, "
        "timeout) and the nodes whose knowledge drove the action. Their confidence and "
        "usefulness (Q-value) move accordingly, so retrieval ranks proven knowledge higher; "
        "an outcome node records the event."
    ),
    input_schema=obj(_OUTCOME_INPUT, ("action_id", "status", "confidence", "causal_node_ids")),
    output_schema=out_obj(
        {
            "outcome_id": STRING,
            # null only when a repeated signal's first outcome node was since erased
            "outcome_node_id": nullable("string"),
            "status": {"enum": list(OUTCOME_STATUSES)},
            "signal": NUMBER,
            "weight": NUMBER,
            "reward": NUMBER,
            "updates": array(
                out_obj(
                    {
                        "node_id": STRING,
                        "confidence_before": NUMBER,
                        "confidence_after": NUMBER,
                        "q_before": NUMBER,
                        "q_after": NUMBER,
                        "q_update_count": COUNT,
                        "evidence_count": COUNT,
                    },
                    ("node_id", "confidence_after", "q_after"),
                )
            ),
            "causal_edges": array(OBJECT),
            "goal_id": nullable("string"),
            "goal_node_id": nullable("string"),
            "duplicate": BOOLEAN,
        },
        ("outcome_id", "outcome_node_id", "status", "updates", "duplicate"),
    ),
    annotations=WRITE,
    handler=delegate("learn_from_outcome"),
)
LEARN_FROM_FEEDBACK: Final = ToolSpec(
    name="learn_from_feedback",
    title="Give feedback on a node",
    description=(
        "Tell the graph a node was right (positive), wrong (negative) or needs a correction "
        "(the corrected text supersedes the node)."
    ),
    input_schema=obj(_FEEDBACK_INPUT, ("node_id", "feedback")),
    output_schema=out_obj(
        {
            "node_id": STRING,
            "feedback": {"enum": list(FEEDBACK_KINDS)},
            "confidence_before": NUMBER,
            "confidence_after": NUMBER,
            "revision": _REVISION_OUTPUT,
        },
        ("node_id", "feedback", "confidence_before", "confidence_after"),
    ),
    annotations=WRITE,
    handler=delegate("learn_from_feedback"),
)
LEARN_DETECT_NOVELTY: Final = ToolSpec(
    name="learn_detect_novelty",
    title="Is this text new to the graph?",
    description=(
        "Novelty of a text: 1 minus its similarity to the closest known node, with the "
        "nearest nodes. Use it to decide whether something is worth storing."
    ),
    input_schema=obj(_NOVELTY_INPUT, ("text",)),
    output_schema=_NOVELTY_OUTPUT,
    annotations=READ,
    handler=delegate("learn_detect_novelty"),
)
LEARN_FROM_INTERACTION: Final = ToolSpec(
    name="learn_from_interaction",
    title="Learn from a conversation turn",
    description=(
        "Store a user message and your answer as an episode, extract the answer's factual "
        "claims, and store each as a new node or reinforce the known node it repeats, "
        "linking related and contradicting knowledge."
    ),
    input_schema=obj(_INTERACTION_INPUT, ("user_message", "model_response")),
    output_schema=out_obj(
        {
            "episode": NODE_OUTPUT,
            "novelty": _NOVELTY_OUTPUT,
            "claims": array(
                out_obj(
                    {
                        "claim": STRING,
                        "action": STRING,
                        "node_id": STRING,
                        "similarity": NUMBER,
                        "related": STRINGS,
                        "contradicts": STRINGS,
                    },
                    ("claim", "action", "node_id"),
                )
            ),
            "created_node_ids": STRINGS,
            "reinforced_node_ids": STRINGS,
        },
        ("episode", "claims", "created_node_ids", "reinforced_node_ids"),
    ),
    annotations=WRITE,
    handler=delegate("learn_from_interaction"),
)
BELIEF_REVISE: Final = ToolSpec(
    name="belief_revise",
    title="Expand, revise or contract a belief",
    description=(
        "Change what the graph believes, keeping history: expand adds a belief (and links "
        "what it contradicts), revise supersedes a belief with a new one, contract withdraws "
        "one. Beliefs that depended on a changed one lose confidence."
    ),
    input_schema=obj(_BELIEF_INPUT, ("action",)),
    output_schema=_REVISION_OUTPUT,
    annotations=DESTRUCTIVE_WRITE,  # revise deletes the contradicts edges it resolves
    handler=delegate("belief_revise", fields={"old_id": "node_id"}),
)
BELIEF_CONTRADICTIONS: Final = ToolSpec(
    name="belief_contradictions",
    title="Find contradicting beliefs",
    description=(
        "Nodes that contradict a node or a text: explicit contradicts edges and similar "
        "statements that differ by a negation, a number, an antonym or a name."
    ),
    input_schema=obj(_CONTRADICTIONS_INPUT),
    output_schema=out_obj(
        {
            "node_id": STRING,
            "content": STRING,
            "contradictions": array(
                out_obj(
                    {"node_id": STRING, "similarity": NUMBER, "cues": STRINGS, "explicit": BOOLEAN},
                    ("node_id", "similarity", "cues", "explicit"),
                )
            ),
        },
        ("contradictions",),
    ),
    annotations=READ,
    handler=delegate("belief_contradictions", fields={"k": "limit"}),
)
MANAGE_GOAL: Final = ToolSpec(
    name="manage_goal",
    title="Create and manage goals",
    description=(
        "Goals with a lifecycle (proposed → active → blocked / completed / abandoned), "
        "priority, progress, subgoals and supporting knowledge nodes. Pass the action and "
        "its fields; fields an action does not take are rejected."
    ),
    input_schema=obj(_GOAL_INPUT, ("action",)),
    output_schema=out_obj(
        {
            "goal": _GOAL,
            "goals": array(_GOAL),
            "count": COUNT,
            "subgoals": array(_GOAL),
            "linked_nodes": array(OBJECT),
            "from": STRING,
            "to": STRING,
            "linked": STRINGS,
            "unlinked": STRINGS,
            "deleted": BOOLEAN,
            "goal_id": STRING,
            "subgoals_detached": COUNT,
        }
    ),
    annotations=DESTRUCTIVE_WRITE,  # delete removes the goal's node
    handler=delegate("manage_goal"),
)
REVIEW_GOAL: Final = ToolSpec(
    name="review_goal",
    title="Decide whether to pursue a goal now",
    description=(
        "Coverage check of a goal's knowledge: act (enough, reliable knowledge), learn_first "
        "(gaps to fill first) or escalate (conflicts: needs a human). With apply, the goal's "
        "status follows the decision."
    ),
    input_schema=obj(_REVIEW_INPUT, ("goal_id",)),
    output_schema=out_obj(
        {
            "goal_id": STRING,
            "decision": {"enum": list(RECOMMENDATIONS)},
            "coverage": _COVERAGE_OUTPUT,
            "transition": nullable(out_obj({"from": STRING, "to": STRING})),
            "applied": BOOLEAN,
            "goal": _GOAL,
        },
        ("goal_id", "decision", "coverage", "applied", "goal"),
    ),
    annotations=WRITE,
    handler=delegate("review_goal"),
)
DELIBERATE: Final = ToolSpec(
    name="deliberate",
    title="Plan deliberation over feedback loops",
    description=(
        "For each feedback loop (κ > 0) in a region: its fault lines, the two competing "
        "sides, an iteration budget and concrete questions to settle. Optionally store your "
        "conclusions back as nodes."
    ),
    input_schema=obj(_DELIBERATE_INPUT),
    output_schema=out_obj(
        {
            "region": out_obj({"source": STRING, "node_count": COUNT}),
            "routing": _ROUTING,
            "max_kappa": COUNT,
            "scc_count": COUNT,
            "plans": array(
                out_obj(
                    {
                        "scc_id": STRING,
                        "nodes": STRINGS,
                        "kappa": COUNT,
                        "approximate": BOOLEAN,
                        "deliberation_budget": OBJECT,
                        "fault_lines": array(OBJECT),
                        "competing_claims": nullable(OBJECT),
                        "questions": STRINGS,
                    },
                    ("scc_id", "nodes", "kappa", "questions"),
                )
            ),
            "conclusions": array(OBJECT),
            "written": BOOLEAN,
            "kappa_after": nullable(OBJECT),
        },
        ("region", "routing", "max_kappa", "plans"),
    ),
    annotations=WRITE,
    handler=delegate("deliberate"),
)
ATTENTION_SURVEY: Final = ToolSpec(
    name="attention_survey",
    title="What needs attention?",
    description=(
        "Survey of what deserves attention now: active goals ranked by urgency × knowledge gap "
        "+ surprise, memory pressure, feedback loops (κ > 0), open contradiction items and "
        "whether consolidation is due."
    ),
    input_schema=obj({}),
    output_schema=out_obj(
        {
            "surveyed_at": STRING,
            "goals": array(OBJECT),
            "memory_pressure": nullable(OBJECT),
            "kappa_regions": out_obj(
                {"max_kappa": COUNT, "scc_count": COUNT, "regions": array(OBJECT)}
            ),
            "open_items": array(OBJECT),
            "consolidation": out_obj({"last_run_at": nullable("string"), "due": BOOLEAN}),
        },
        ("surveyed_at", "goals", "kappa_regions", "open_items", "consolidation"),
    ),
    annotations=READ,
    handler=delegate("attention_survey"),
)
ATTENTION_RUN_CYCLE: Final = ToolSpec(
    name="attention_run_cycle",
    title="Run an attention cycle",
    description=(
        "Triage the attention survey into actions (forget under memory pressure, close stale "
        "items, consolidate, deliberate on loops, review goals) and, with autonomy act, "
        "perform the maintenance ones within the budget."
    ),
    input_schema=obj(_CYCLE_INPUT),
    output_schema=out_obj(
        {
            "autonomy": {"enum": list(AUTONOMY_LEVELS)},
            "budget": COUNT,
            "used": COUNT,
            "deferred": COUNT,
            "actions": array(
                out_obj(
                    {"action": STRING, "why": STRING, "status": STRING, "result": OBJECT},
                    ("action", "status"),
                )
            ),
            "survey": OBJECT,
        },
        ("autonomy", "budget", "used", "actions"),
    ),
    annotations=DESTRUCTIVE_WRITE,  # act may forget nodes and run consolidation
    handler=delegate("attention_run_cycle"),
)
FORGET_NODE: Final = ToolSpec(
    name="forget_node",
    title="Forget a node",
    description=(
        "Forget one node: soft hides it from every retrieval (recoverable), hard deletes it "
        "with its edges, cascade also deletes the nodes that rested only on it."
    ),
    input_schema=obj(_FORGET_INPUT, ("node_id",)),
    output_schema=out_obj(
        {
            "mode": {"enum": list(FORGET_MODES)},
            "node_id": STRING,
            "forgotten": STRINGS,
            "edges_removed": COUNT,
            "already_forgotten": BOOLEAN,
        },
        ("mode", "node_id", "forgotten"),
    ),
    annotations=DELETE,
    handler=delegate("forget_node"),
)
RESTORE_NODE: Final = ToolSpec(
    name="restore_node",
    title="Restore a forgotten node",
    description=(
        "Bring back a soft-forgotten node (faded by decay, forgotten over budget or on "
        "request): it rejoins retrieval, anchored now with at least the default confidence."
    ),
    input_schema=obj(
        {
            "node_id": text("The forgotten node.", minLength=1),
            "reason": text("Why (kept in the audit log)."),
        },
        ("node_id",),
    ),
    output_schema=out_obj(
        {"node_id": STRING, "restored": BOOLEAN, "node": NODE_OUTPUT},
        ("node_id", "restored"),
    ),
    annotations=WRITE,
    handler=delegate("restore_node"),
)
FORGET_BY_POLICY: Final = ToolSpec(
    name="forget_by_policy",
    title="Forget low-priority nodes to fit a budget",
    description=(
        "Forget the lowest-priority unprotected nodes (goals, glacial and pinned nodes are "
        "kept) until the graph fits its node budget. Use dry_run to preview."
    ),
    input_schema=obj(_POLICY_INPUT),
    output_schema=out_obj(
        {
            "policy": STRING,
            "mode": {"enum": list(POLICY_MODES)},
            "dry_run": BOOLEAN,
            "max_nodes": COUNT,
            "node_count_before": COUNT,
            "forgotten_count": COUNT,
            "surviving_count": COUNT,
            "protected_count": COUNT,
            "over_budget_protected": BOOLEAN,
            "candidates": array(
                out_obj({"node_id": STRING, "priority": NUMBER, "reason": STRING}, ("node_id",))
            ),
        },
        ("policy", "dry_run", "forgotten_count", "candidates"),
    ),
    annotations=DESTRUCTIVE_WRITE,
    handler=delegate("forget_by_policy"),
)
GDPR_ERASE: Final = ToolSpec(
    name="gdpr_erase",
    title="Erase a node completely (GDPR)",
    description=(
        "Erase a node and every trace of it (references, logs, free pages of the database "
        "file), then verify nothing is left. Irreversible; an audit entry records the "
        "erasure without its content."
    ),
    input_schema=obj(_ERASE_INPUT, ("node_id",)),
    output_schema=out_obj(
        {
            "erased": BOOLEAN,
            "node_id": STRING,
            "edges_removed": COUNT,
            "scrubbed": OBJECT,
            "residual": STRINGS,
            "nodes_quoting_content": STRINGS,
            "file": OBJECT,
        },
        ("erased", "node_id", "residual"),
    ),
    annotations=DELETE,
    handler=delegate("gdpr_erase"),
)
RUN_CONSOLIDATION: Final = ToolSpec(
    name="run_consolidation",
    title="Consolidate the graph",
    description=(
        "One maintenance cycle, as sleep does for memory: decay unused knowledge, prune "
        "what fell below thresholds, strengthen co-activated edges, resolve or flag "
        "conflicts, merge duplicates, promote well-used nodes, summarise episode clusters."
    ),
    input_schema=obj(_CONSOLIDATION_INPUT),
    output_schema=_CONSOLIDATION_RUN,
    annotations=DESTRUCTIVE_WRITE,
    handler=delegate("run_consolidation"),
)

# Seed 003 §5.3's order (by category), with seed 000's alias next to its twin.
_V1_SPECS: Final[tuple[ToolSpec, ...]] = (
    STORE_NODE,
    STORE_EDGE,
    DELETE_NODE,
    MANAGE_EDGE,
    RETRIEVE_CONTEXT,
    QUERY_GRAPH,
    TOPOLOGY_ANALYZE,
    ANALYZE_TOPOLOGY,
    GRAPH_TRAVERSE,
    GRAPH_STATS,
    RETRIEVE_EPISODIC,
    RETRIEVE_PROCEDURAL,
    COVERAGE_QUERY,
    TRACE_EVIDENCE_PATH,
    EPISTEMIC_FRONTIER,
    LEARN_FROM_OUTCOME,
    LEARN_FROM_FEEDBACK,
    LEARN_DETECT_NOVELTY,
    LEARN_FROM_INTERACTION,
    BELIEF_REVISE,
    BELIEF_CONTRADICTIONS,
    MANAGE_GOAL,
    REVIEW_GOAL,
    DELIBERATE,
    ATTENTION_SURVEY,
    ATTENTION_RUN_CYCLE,
    FORGET_NODE,
    RESTORE_NODE,
    FORGET_BY_POLICY,
    GDPR_ERASE,
    RUN_CONSOLIDATION,
)
# Each also takes upstream Graphonomous' argument names and returns its result fields too.
V1_TOOLS: Final[tuple[ToolSpec, ...]] = tuple(with_upstream(spec) for spec in _V1_SPECS)
V1_BY_NAME: Final[Mapping[str, ToolSpec]] = {spec.name: spec for spec in V1_TOOLS}
