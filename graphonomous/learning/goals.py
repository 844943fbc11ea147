"""GoalGraph: durable intent as goal rows plus a ``goal`` node per goal (seed 003).

A goal lives in the ``goals`` table (title, description, status, priority,
progress, parent, linked nodes, metadata) and is mirrored by a node of type
``goal`` whose content is the title and description, so goals take part in
retrieval and topology.  Edges: a subgoal's node ``part_of`` its parent's
node; a linked knowledge node ``supports`` the goal node.  Goal nodes are
protected from consolidation (never decayed, pruned or merged).

Statuses and the allowed transitions (anything else raises a
ValidationError naming the transition):

    proposed -> active | abandoned
    active   -> blocked | completed | abandoned
    blocked  -> active | abandoned
    completed, abandoned: terminal

Seed 003's goal-node statuses map onto these: failed → abandoned,
suspended → blocked.  Completing a goal sets its progress to 1.0; progress
of a terminal goal cannot change.  Every transition is appended to
``metadata.history`` (``{"from", "to", "at", "reason"}``).

Outcomes drive goals (seed 003 "Outcome-to-goal linkage"): `apply_outcome`
runs inside `learn_from_outcome`'s transaction for an outcome that names a
goal.  It counts the outcome in ``metadata.outcome_stats`` and then, in order:
a proposed goal becomes active (work has started); progress becomes the
success rate (success 1, partial_success 0.5, failure 0; timeouts not
counted); ``metadata.completion_criteria`` ``{"type": "outcome_threshold",
"target": t, "min_outcomes": n (default 1)}`` completes the goal on a success
once the rate is ≥ t over ≥ n counted outcomes; ``metadata.retry_budget``
(default `DEFAULT_RETRY_BUDGET`) consecutive failures abandon it (seed:
failed).  A blocked goal that gets a success becomes active again.  Each
transition's history entry carries ``evidence`` (outcome id, status,
confidence, success rate, consecutive failures).

`review_goal` asks `coverage.coverage_query` about the goal's title and
description and maps the recommendation to a transition (applied only with
``apply=True``): act → proposed/blocked become active; escalate →
proposed/active become blocked; learn → no change.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from ..embed import pack_f32
from ..hygiene import refuse_nul
from ..model import (
    DEFAULT_AGENT_ID,
    NotFoundError,
    ValidationError,
    check_choice,
    check_id,
    check_id_list,
    check_int,
    check_metadata,
    check_text,
    check_unit_interval,
    new_id,
)
from ..records import node_from_fields
from . import tables
from .writes import insert_node, link

if TYPE_CHECKING:
    from ..retrieval.graph_view import GraphEngine

GOAL_STATUSES: Final = ("proposed", "active", "blocked", "completed", "abandoned")
GOAL_TRANSITIONS: Final[Mapping[str, tuple[str, ...]]] = {
    "proposed": ("active", "abandoned"),
    "active": ("blocked", "completed", "abandoned"),
    "blocked": ("active", "abandoned"),
    "completed": (),
    "abandoned": (),
}
TERMINAL_STATUSES: Final = ("completed", "abandoned")
GOAL_ACTIONS: Final = (
    "create",
    "get",
    "list",
    "update",
    "delete",
    "transition",
    "set_progress",
    "link_nodes",
    "unlink_nodes",
    "decompose",
)
GOAL_NODE_TYPE: Final = "goal"  # a member of model.NODE_TYPES
SUBGOAL_RELATIONSHIP: Final = "part_of"  # subgoal node -> parent goal node
SUPPORT_RELATIONSHIP: Final = "supports"  # knowledge node -> goal node
DEFAULT_PRIORITY: Final = 0.5
MAX_TITLE_CHARS: Final = 500
MAX_GOALS_LISTED: Final = 1000
HISTORY_KEY: Final = "history"
CREATE_FIELDS: Final = (
    "title",
    "description",
    "priority",
    "status",
    "parent_goal_id",
    "linked_node_ids",
    "metadata",
    "agent_id",
)
SUBGOAL_FIELDS: Final = ("title", "description", "priority", "metadata")
# review decision -> {status it applies to: new status} ("learn" is the old name of learn_first)
REVIEW_TRANSITIONS: Final[Mapping[str, Mapping[str, str]]] = {
    "act": {"proposed": "active", "blocked": "active"},
    "learn_first": {},
    "learn": {},
    "escalate": {"proposed": "blocked", "active": "blocked"},
}
assert set(GOAL_TRANSITIONS) == set(GOAL_STATUSES)
DEFAULT_RETRY_BUDGET: Final = 3
"""Consecutive failed outcomes that abandon a goal (the issue's audit: three failures
left a goal active).  ``metadata.retry_budget`` overrides it; 0 disables the rule."""
OUTCOME_CREDIT: Final[Mapping[str, float | None]] = {
    "success": 1.0,
    "partial_success": 0.5,
    "failure": 0.0,
    "timeout": None,  # says nothing about the goal; the caller may re-run
}
OUTCOME_STATS_KEY: Final = "outcome_stats"
CRITERIA_KEY: Final = "completion_criteria"
CRITERIA_TYPES: Final = ("outcome_threshold",)


# -- helpers ----------------------------------------------------------------------------


def _require_goal(graph: GraphEngine, goal_id: object) -> dict[str, Any]:
    check_id("goal_id", goal_id)
    assert isinstance(goal_id, str)
    goal = tables.get_goal_row(graph.store, goal_id)
    if goal is None:
        raise NotFoundError("goal", goal_id)
    return goal


def _require_open_goal(
    graph: GraphEngine, goal_id: object, field: str, refused: str
) -> dict[str, Any]:
    """The goal, unless it is terminal (then ValidationError naming `field`: "goal is
    <status>; <refused>")."""
    goal = _require_goal(graph, goal_id)
    if goal["status"] in TERMINAL_STATUSES:
        raise ValidationError(field, f"goal is {goal['status']}; {refused}")
    return goal


def _title(value: object) -> str:
    title = " ".join(check_text("title", value).split())
    if len(title) > MAX_TITLE_CHARS:
        raise ValidationError("title", f"is longer than {MAX_TITLE_CHARS} characters")
    return title


def node_content(title: str, description: str) -> str:
    """The goal node's content: the title, then the description."""
    return f"{title}\n{description}" if description.strip() else title


def _node_metadata(goal: Mapping[str, Any]) -> dict[str, Any]:
    return {k: goal[k] for k in ("status", "priority", "progress")} | {"goal_id": goal["id"]}


def _sync_node(graph: GraphEngine, goal: Mapping[str, Any], now: str) -> None:
    """Mirror status/priority/progress into the goal node's metadata."""
    node = graph.store.get_node(goal["node_id"]) if goal["node_id"] else None
    if node is not None:
        graph.store.update_node(
            node.id, metadata={**node.metadata, **_node_metadata(goal)}, updated_at=now
        )


def _live_ids(graph: GraphEngine, ids: Sequence[str], field: str) -> list[str]:
    unique = sorted(set(ids))
    found = graph.store.get_nodes(unique)
    missing = [i for i in unique if i not in found or found[i].forgotten_at is not None]
    if missing:
        raise ValidationError(field, f"unknown node ids: {', '.join(missing)}")
    return unique


# -- actions ----------------------------------------------------------------------------


def _new_goal(graph: GraphEngine, fields: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """Validate create-fields; returns the goal row (no node yet) and the node content."""
    unknown = sorted(set(fields) - set(CREATE_FIELDS))
    if unknown:
        raise ValidationError(unknown[0], f"is not a goal field ({', '.join(CREATE_FIELDS)})")
    title = _title(fields.get("title"))
    description = check_text("description", fields.get("description", ""), allow_empty=True)
    status = check_choice("status", fields.get("status", "proposed"), GOAL_STATUSES)
    parent = fields.get("parent_goal_id")
    metadata = check_metadata("metadata", fields.get("metadata") or {})
    check_criteria(metadata)
    goal = {
        "id": new_id(),
        "node_id": None,
        "title": title,
        "description": description,
        "status": status,
        "priority": check_unit_interval("priority", fields.get("priority", DEFAULT_PRIORITY)),
        "progress": 1.0 if status == "completed" else 0.0,
        "parent_goal_id": None if parent is None else check_id("parent_goal_id", parent),
        "linked_node_ids": check_id_list("linked_node_ids", fields.get("linked_node_ids") or []),
        "metadata": metadata,
        "agent_id": check_id("agent_id", fields.get("agent_id") or DEFAULT_AGENT_ID),
    }
    # Named here: the goal's node would report NUL as its `content`.
    for column in ("title", "description", "metadata"):
        refuse_nul(column, goal[column])
    return goal, node_content(title, description)


def _insert_goal(
    graph: GraphEngine,
    goal: dict[str, Any],
    content: str,
    vector: list[float],
    now: str,
) -> None:
    """Insert a validated goal, its node and its edges (inside the caller's transaction)."""
    parent = _require_goal(graph, goal["parent_goal_id"]) if goal["parent_goal_id"] else None
    goal["linked_node_ids"] = _live_ids(graph, goal["linked_node_ids"], "linked_node_ids")
    goal["created_at"] = goal["updated_at"] = now
    node = node_from_fields(
        {
            "node_type": GOAL_NODE_TYPE,
            "content": content,
            "metadata": _node_metadata(goal),
            "creation_source": "manual",
            "agent_id": goal["agent_id"],
        },
        now=now,
    )
    insert_node(graph, node, vector)
    goal["node_id"] = node.id
    tables.insert_goal(graph.store, goal)
    if parent is not None and parent["node_id"]:
        link(graph.store, node.id, parent["node_id"], SUBGOAL_RELATIONSHIP, now)
    for linked in goal["linked_node_ids"]:
        link(graph.store, linked, node.id, SUPPORT_RELATIONSHIP, now)


def create_goal(
    graph: GraphEngine,
    title: str,
    *,
    description: str = "",
    priority: float = DEFAULT_PRIORITY,
    status: str = "proposed",
    parent_goal_id: str | None = None,
    linked_node_ids: Sequence[str] | None = None,
    metadata: Mapping[str, Any] | str | None = None,
    agent_id: str | None = None,
) -> dict[str, Any]:
    """A new goal and its goal node.  Output: ``{"goal": {...}}``.  One transaction."""
    goal, content = _new_goal(
        graph,
        {
            "title": title,
            "description": description,
            "priority": priority,
            "status": status,
            "parent_goal_id": parent_goal_id,
            "linked_node_ids": linked_node_ids,
            "metadata": metadata,
            "agent_id": agent_id,
        },
    )
    (vector,) = graph.embed_texts([content])
    with graph.lock:
        with graph.store.transaction():
            _insert_goal(graph, goal, content, vector, graph.now())
        return {"goal": _require_goal(graph, goal["id"])}


def get_goal(graph: GraphEngine, goal_id: str) -> dict[str, Any]:
    """``{"goal", "subgoals", "linked_nodes": [{id, node_type, content, confidence}]}``."""
    with graph.lock:
        goal = _require_goal(graph, goal_id)
        subgoals = tables.list_goal_rows(graph.store, parent_goal_id=goal_id)
        nodes = graph.store.get_nodes(goal["linked_node_ids"])
    linked = [
        {
            "id": node.id,
            "node_type": node.node_type,
            "content": node.content,
            "confidence": node.confidence,
        }
        for node_id in goal["linked_node_ids"]
        if (node := nodes.get(node_id)) is not None and node.forgotten_at is None
    ]
    return {"goal": goal, "subgoals": subgoals, "linked_nodes": linked}


def list_goals(
    graph: GraphEngine,
    *,
    status: str | None = None,
    parent_goal_id: str | None = None,
    agent_id: str | None = None,
    limit: int = 100,
) -> dict[str, Any]:
    """Goals by priority (highest first), then age.  ``{"goals", "count"}``."""
    if status is not None:
        check_choice("status", status, GOAL_STATUSES)
    if parent_goal_id is not None:
        check_id("parent_goal_id", parent_goal_id)
    if agent_id is not None:
        check_id("agent_id", agent_id)
    check_int("limit", limit, 1, MAX_GOALS_LISTED)
    with graph.lock:
        goals = tables.list_goal_rows(
            graph.store,
            status=status,
            parent_goal_id=parent_goal_id,
            agent_id=agent_id,
            limit=limit,
        )
    return {"goals": goals, "count": len(goals)}


def update_goal(
    graph: GraphEngine,
    goal_id: str,
    *,
    title: str | None = None,
    description: str | None = None,
    priority: float | None = None,
    metadata: Mapping[str, Any] | str | None = None,
) -> dict[str, Any]:
    """Change title, description, priority and/or metadata (merged over the old).

    A new title or description rewrites and re-embeds the goal node.
    """
    fields: dict[str, Any] = {}
    if title is not None:
        fields["title"] = _title(title)
    if description is not None:
        fields["description"] = check_text("description", description, allow_empty=True)
    if priority is not None:
        fields["priority"] = check_unit_interval("priority", priority)
    extra = check_metadata("metadata", metadata) if metadata is not None else None
    if extra is not None:
        check_criteria(extra)
    if not fields and extra is None:
        raise ValidationError("title", "update needs title, description, priority or metadata")
    for column, value in (*fields.items(), ("metadata", extra)):
        refuse_nul(column, value)  # named here, not as the goal node's `content`
    with graph.lock:
        goal = _require_goal(graph, goal_id)
        if extra is not None:
            fields["metadata"] = {**goal["metadata"], **extra}
        now = graph.now()
        updated = {**goal, **fields}
        rewrite = "title" in fields or "description" in fields
        content = node_content(updated["title"], updated["description"])
        vector = graph.embed_texts([content])[0] if rewrite else None
        with graph.store.transaction():
            tables.update_goal_row(graph.store, goal_id, **fields, updated_at=now)
            if goal["node_id"] and graph.store.get_node(goal["node_id"]) is not None:
                if vector is not None:
                    graph.store.update_node(goal["node_id"], content=content, updated_at=now)
                    graph.store.set_embedding(
                        goal["node_id"], pack_f32(vector), graph.embedding_model
                    )
                _sync_node(graph, updated, now)
        return {"goal": _require_goal(graph, goal_id)}


def delete_goal(graph: GraphEngine, goal_id: str) -> dict[str, Any]:
    """Delete a goal and its node; its subgoals are detached (parent_goal_id = null)."""
    with graph.lock:
        goal = _require_goal(graph, goal_id)
        children = tables.list_goal_rows(graph.store, parent_goal_id=goal_id)
        with graph.store.transaction():
            tables.execute(graph.store, "DELETE FROM goals WHERE id = ?", (goal_id,))
            if goal["node_id"] and graph.store.get_node(goal["node_id"]) is not None:
                graph.store.delete_node(goal["node_id"])
    return {
        "deleted": True,
        "goal_id": goal_id,
        "subgoals_detached": [child["id"] for child in children],
    }


def check_transition(current: str, target: str) -> None:
    """Raise ValidationError("status", ...) unless current -> target is allowed.  O(1)."""
    check_choice("status", target, GOAL_STATUSES)
    allowed = GOAL_TRANSITIONS[current]
    if target not in allowed:
        options = ", ".join(allowed) if allowed else f"none ({current} is terminal)"
        raise ValidationError(
            "status", f"transition {current} -> {target} is not allowed (from {current}: {options})"
        )


def transition_goal(
    graph: GraphEngine,
    goal_id: str,
    status: str,
    *,
    reason: str | None = None,
    evidence: Mapping[str, Any] | str | None = None,
) -> dict[str, Any]:
    """Move a goal to `status` (see the table above).  ``{"goal", "from", "to"}``.

    `evidence` (an object) is kept in the history entry beside the reason."""
    if reason is not None:
        check_text("reason", reason, allow_empty=True)
    evidence_data = check_metadata("evidence", evidence) if evidence is not None else None
    with graph.lock:
        goal = _require_goal(graph, goal_id)
        current = goal["status"]
        check_transition(current, status)
        now = graph.now()
        entry: dict[str, Any] = {"from": current, "to": status, "at": now, "reason": reason or ""}
        if evidence_data is not None:
            entry["evidence"] = evidence_data
        metadata = {
            **goal["metadata"],
            HISTORY_KEY: [*goal["metadata"].get(HISTORY_KEY, []), entry],
        }
        fields: dict[str, Any] = {"status": status, "metadata": metadata, "updated_at": now}
        if status == "completed":
            fields["progress"] = 1.0
        with graph.store.transaction():
            tables.update_goal_row(graph.store, goal_id, **fields)
            _sync_node(graph, {**goal, **fields}, now)
        return {"goal": _require_goal(graph, goal_id), "from": current, "to": status}


def set_progress(graph: GraphEngine, goal_id: str, progress: float) -> dict[str, Any]:
    """Set progress in [0, 1] of a goal that is not terminal.  ``{"goal"}``."""
    value = check_unit_interval("progress", progress)
    with graph.lock:
        goal = _require_open_goal(graph, goal_id, "progress", "progress is final")
        now = graph.now()
        with graph.store.transaction():
            tables.update_goal_row(graph.store, goal_id, progress=value, updated_at=now)
            _sync_node(graph, {**goal, "progress": value}, now)
        return {"goal": _require_goal(graph, goal_id)}


def link_nodes(graph: GraphEngine, goal_id: str, node_ids: Sequence[str]) -> dict[str, Any]:
    """Link knowledge nodes to a goal (``node supports goal``).  ``{"goal", "linked"}``."""
    ids = check_id_list("node_ids", node_ids)
    with graph.lock:
        goal = _require_goal(graph, goal_id)
        now = graph.now()
        with graph.store.transaction():
            ids = _live_ids(graph, ids, "node_ids")
            added = [i for i in ids if i not in goal["linked_node_ids"]]
            linked = sorted({*goal["linked_node_ids"], *ids})
            tables.update_goal_row(graph.store, goal_id, linked_node_ids=linked, updated_at=now)
            if goal["node_id"] and graph.store.get_node(goal["node_id"]) is not None:
                for node_id in ids:
                    if node_id != goal["node_id"]:
                        link(graph.store, node_id, goal["node_id"], SUPPORT_RELATIONSHIP, now)
        return {"goal": _require_goal(graph, goal_id), "linked": added}


def unlink_nodes(graph: GraphEngine, goal_id: str, node_ids: Sequence[str]) -> dict[str, Any]:
    """Unlink nodes from a goal (and drop their ``supports`` edges).  ``{"goal", "unlinked"}``."""
    ids = set(check_id_list("node_ids", node_ids))
    with graph.lock:
        goal = _require_goal(graph, goal_id)
        now = graph.now()
        removed = sorted(ids & set(goal["linked_node_ids"]))
        with graph.store.transaction():
            kept = [i for i in goal["linked_node_ids"] if i not in ids]
            tables.update_goal_row(graph.store, goal_id, linked_node_ids=kept, updated_at=now)
            for node_id in removed:
                edge = graph.store.find_edge(node_id, goal["node_id"] or "", SUPPORT_RELATIONSHIP)
                if edge is not None:
                    graph.store.delete_edge(edge.id)
        return {"goal": _require_goal(graph, goal_id), "unlinked": removed}


def decompose_goal(graph: GraphEngine, goal_id: str, subgoals: Sequence[object]) -> dict[str, Any]:
    """Create subgoals of a goal (titles or {title, description, priority, metadata}).

    Each subgoal is a proposed goal with ``parent_goal_id`` = the goal, its
    node ``part_of`` the goal's node; the parent's ``metadata.decomposition``
    lists subgoal ids (seed 003).  Output: ``{"goal", "subgoals"}``.  One
    transaction for all of them.
    """
    if not isinstance(subgoals, Sequence) or isinstance(subgoals, (str, bytes)) or not subgoals:
        raise ValidationError("subgoals", "must be a non-empty list")
    check_id("goal_id", goal_id)
    prepared = []
    for position, item in enumerate(subgoals):
        fields = {"title": item} if isinstance(item, str) else item
        if not isinstance(fields, Mapping):
            raise ValidationError(f"subgoals[{position}]", "must be a title or an object")
        unknown = sorted(set(fields) - set(SUBGOAL_FIELDS))
        if unknown:
            raise ValidationError(f"subgoals[{position}].{unknown[0]}", "is not a subgoal field")
        prepared.append(_new_goal(graph, {**fields, "parent_goal_id": goal_id}))
    vectors = graph.embed_texts([content for _, content in prepared])
    with graph.lock:
        parent = _require_open_goal(graph, goal_id, "goal_id", "cannot decompose it")
        now = graph.now()
        with graph.store.transaction():
            for (goal, content), vector in zip(prepared, vectors, strict=True):
                goal["agent_id"] = parent["agent_id"]
                _insert_goal(graph, goal, content, vector, now)
            decomposition = [
                *parent["metadata"].get("decomposition", []),
                *(goal["id"] for goal, _ in prepared),
            ]
            tables.update_goal_row(
                graph.store,
                goal_id,
                metadata={**parent["metadata"], "decomposition": decomposition},
                updated_at=now,
            )
        return {
            "goal": _require_goal(graph, goal_id),
            "subgoals": [_require_goal(graph, goal["id"]) for goal, _ in prepared],
        }


# -- outcomes -------------------------------------------------------------------------------


def goal_row_for(graph: GraphEngine, goal_id: str) -> dict[str, Any] | None:
    """The goals row named by its id or by its goal node's id, else None."""
    row = tables.get_goal_row(graph.store, goal_id)
    if row is not None:
        return row
    node = graph.store.get_node(goal_id)
    named = node.metadata.get("goal_id") if node is not None else None
    return tables.get_goal_row(graph.store, named) if isinstance(named, str) else None


def _criteria(goal: Mapping[str, Any]) -> tuple[float, int] | None:
    """(target, min_outcomes) of an outcome_threshold criterion, else None."""
    criteria = goal["metadata"].get(CRITERIA_KEY)
    if not isinstance(criteria, Mapping) or criteria.get("type") not in CRITERIA_TYPES:
        return None
    target = criteria.get("target")
    minimum = criteria.get("min_outcomes", 1)
    if isinstance(target, bool) or not isinstance(target, (int, float)) or not 0 <= target <= 1:
        return None
    if isinstance(minimum, bool) or not isinstance(minimum, int) or minimum < 1:
        minimum = 1
    return float(target), minimum


def _retry_budget(goal: Mapping[str, Any]) -> int:
    budget = goal["metadata"].get("retry_budget", DEFAULT_RETRY_BUDGET)
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        return DEFAULT_RETRY_BUDGET
    return budget


def check_criteria(metadata: Mapping[str, Any]) -> None:
    """Reject a malformed completion_criteria / retry_budget, naming the field."""
    criteria = metadata.get(CRITERIA_KEY)
    if criteria is not None:
        if not isinstance(criteria, Mapping) or criteria.get("type") not in CRITERIA_TYPES:
            raise ValidationError(
                f"metadata.{CRITERIA_KEY}", f"must be {{type: {'|'.join(CRITERIA_TYPES)}, target}}"
            )
        check_unit_interval(f"metadata.{CRITERIA_KEY}.target", criteria.get("target"))
        if "min_outcomes" in criteria:
            check_int(f"metadata.{CRITERIA_KEY}.min_outcomes", criteria["min_outcomes"], 1, 10**6)
    if "retry_budget" in metadata:
        check_int("metadata.retry_budget", metadata["retry_budget"], 0, 10**6)


def apply_outcome(
    graph: GraphEngine, goal_id: str, outcome: Mapping[str, Any]
) -> dict[str, Any] | None:
    """Fold one outcome (``outcome_id``, ``status``, ``confidence``) into its goal.

    Runs inside the caller's transaction (see the module docstring for the
    policy).  Returns ``{"goal_id", "status_before", "status", "progress",
    "transitions": [{"from", "to", "reason"}], "outcome_stats"}``, or None when
    `goal_id` names a bare goal node without a goals row.  O(1) statements.
    """
    goal = goal_row_for(graph, goal_id)
    if goal is None:
        return None
    stats = dict(goal["metadata"].get(OUTCOME_STATS_KEY) or {})
    status = str(outcome["status"])
    counts = {k: int(stats.get(k, 0)) for k in OUTCOME_CREDIT}
    counts[status] += 1
    streak = int(stats.get("consecutive_failures", 0))
    streak = streak + 1 if status == "failure" else (0 if status != "timeout" else streak)
    counted = sum(n for k, n in counts.items() if OUTCOME_CREDIT[k] is not None)
    credit = sum(n * (OUTCOME_CREDIT[k] or 0.0) for k, n in counts.items())
    rate = credit / counted if counted else 0.0
    stats = {**counts, "consecutive_failures": streak, "success_rate": round(rate, 6)}
    now = graph.now()
    evidence = {
        "outcome_id": outcome["outcome_id"],
        "status": status,
        "confidence": outcome["confidence"],
        "success_rate": round(rate, 6),
        "consecutive_failures": streak,
    }
    before = goal["status"]
    transitions: list[dict[str, str]] = []

    def move(target: str, reason: str) -> None:
        current = _require_goal(graph, goal["id"])["status"]
        if target in GOAL_TRANSITIONS[current]:
            transition_goal(graph, goal["id"], target, reason=reason, evidence=evidence)
            transitions.append({"from": current, "to": target, "reason": reason})

    if goal["status"] in TERMINAL_STATUSES:
        tables.update_goal_row(
            graph.store,
            goal["id"],
            metadata={**goal["metadata"], OUTCOME_STATS_KEY: stats},
            updated_at=now,
        )
        return _outcome_report(graph, goal["id"], before, transitions, stats)
    if goal["status"] == "proposed":
        move("active", "outcome recorded: work started")
    elif goal["status"] == "blocked" and status == "success":
        move("active", "successful outcome on a blocked goal")
    current = _require_goal(graph, goal["id"])
    progress = rate if counted else current["progress"]
    tables.update_goal_row(
        graph.store,
        goal["id"],
        progress=progress,
        metadata={**current["metadata"], OUTCOME_STATS_KEY: stats},
        updated_at=now,
    )
    _sync_node(graph, {**current, "progress": progress}, now)
    criteria = _criteria(goal)
    budget = _retry_budget(goal)
    if (
        criteria is not None
        and status == "success"
        and counted >= criteria[1]
        and rate >= criteria[0]
    ):
        move("completed", f"outcome_threshold met: {rate:.3f} >= {criteria[0]}")
    if budget and streak >= budget:
        move("abandoned", f"retry budget exhausted: {streak} consecutive failures")
    return _outcome_report(graph, goal["id"], before, transitions, stats)


def _outcome_report(
    graph: GraphEngine,
    goal_id: str,
    before: str,
    transitions: list[dict[str, str]],
    stats: Mapping[str, Any],
) -> dict[str, Any]:
    goal = _require_goal(graph, goal_id)
    return {
        "goal_id": goal_id,
        "status_before": before,
        "status": goal["status"],
        "progress": goal["progress"],
        "transitions": transitions,
        OUTCOME_STATS_KEY: dict(stats),
    }


# -- the tool entry points ------------------------------------------------------------------

_ACTIONS: Final[Mapping[str, Callable[..., dict[str, Any]]]] = {
    "create": create_goal,
    "get": get_goal,
    "list": list_goals,
    "update": update_goal,
    "delete": delete_goal,
    "transition": transition_goal,
    "set_progress": set_progress,
    "link_nodes": link_nodes,
    "unlink_nodes": unlink_nodes,
    "decompose": decompose_goal,
}
assert tuple(_ACTIONS) == GOAL_ACTIONS


def manage_goal(graph: GraphEngine, action: str, **params: Any) -> dict[str, Any]:
    """One GoalGraph operation: `action` in GOAL_ACTIONS with that action's parameters.

    Unknown or missing parameters raise ValidationError naming them.
    Complexity: O(1) statements per action (decompose: per subgoal).
    """
    check_choice("action", action, GOAL_ACTIONS)
    function = _ACTIONS[action]
    signature = inspect.signature(function)
    accepted = [name for name in signature.parameters if name != "graph"]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ValidationError(
            unknown[0], f"is not a parameter of {action} (accepted: {', '.join(accepted)})"
        )
    missing = [
        name
        for name in accepted
        if signature.parameters[name].default is inspect.Parameter.empty and name not in params
    ]
    if missing:
        raise ValidationError(missing[0], f"is required by {action}")
    return function(graph, **params)


def goal_coverage(
    graph: GraphEngine, goal: Mapping[str, Any], *, use_retrieval: bool = True
) -> dict[str, Any]:
    """`coverage_query` for a goal row: its title and description, its critical topics
    (metadata), its linked nodes."""
    from .coverage import coverage_query  # coverage is a client of goals' rows

    topics = goal["metadata"].get("critical_topics")
    return coverage_query(
        graph,
        node_content(goal["title"], goal["description"]),
        critical_topics=topics if isinstance(topics, list) else None,
        extra_node_ids=goal["linked_node_ids"],
        use_retrieval=use_retrieval,
    )


def review_goal(graph: GraphEngine, goal_id: str, apply: bool = False) -> dict[str, Any]:
    """Coverage-driven decision for a goal: act | learn | escalate (module docstring).

    Output: ``{"goal_id", "decision", "coverage": {...coverage_query result},
    "transition": {"from", "to"} | None, "applied": bool, "goal"}``; the
    review is recorded in ``metadata.last_review`` when applied.
    """
    if not isinstance(apply, bool):
        raise ValidationError("apply", "must be true or false")
    with graph.lock:
        goal = _require_goal(graph, goal_id)
        coverage = goal_coverage(graph, goal)
        decision = coverage["recommendation"]
        target = REVIEW_TRANSITIONS[decision].get(goal["status"])
        transition = {"from": goal["status"], "to": target} if target else None
        if apply:
            review = {
                "decision": decision,
                "coverage_score": coverage["coverage_score"],
                "decision_confidence": coverage["decision_confidence"],
                "at": graph.now(),
            }
            with graph.store.transaction():
                if target:
                    transition_goal(graph, goal_id, target, reason=f"review: {decision}")
                current = _require_goal(graph, goal_id)
                tables.update_goal_row(
                    graph.store,
                    goal_id,
                    metadata={**current["metadata"], "last_review": review},
                    updated_at=review["at"],
                )
        return {
            "goal_id": goal_id,
            "decision": decision,
            "coverage": coverage,
            "transition": transition,
            "applied": apply,
            "goal": _require_goal(graph, goal_id),
        }


def goals_snapshot(graph: GraphEngine, limit: int = 100) -> dict[str, Any]:
    """Totals, status breakdown and the goals themselves (``graphonomous://goals/snapshot``)."""
    check_int("limit", limit, 1, MAX_GOALS_LISTED)
    with graph.lock:
        counts = tables.goal_status_counts(graph.store)
        goals = tables.list_goal_rows(graph.store, limit=limit)
    return {
        "total": sum(counts.values()),
        "by_status": {status: counts.get(status, 0) for status in GOAL_STATUSES},
        "goals": goals,
    }
