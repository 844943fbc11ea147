"""Attention: what deserves the agent's effort now, and a budgeted cycle acting on it.

`attention_survey()` looks at five things:

- **goals** — active goals ranked by score = urgency × knowledge_gap + surprise:
  - urgency = max(priority, deadline pressure); deadline pressure =
    1 − hours_left / `DEADLINE_HORIZON_H`, clamped to [0, 1], from an ISO
    ``metadata.deadline`` (overdue = 1);
  - knowledge_gap = 1 − coverage_score of the goal's coverage (title +
    description, ``metadata.critical_topics``, linked nodes; the
    side-effect-free similarity path, so a survey writes nothing);
  - surprise = mean |reward − expected| over the goal's last
    `SURPRISE_WINDOW` outcomes, reward by status as the learner's Q-rewards
    (success 1, partial 0.65, failure 0, timeout 0.25) and expected = the mean
    q_value of the goal's linked nodes (the learned expectation; 0.5 when
    none); 0 without outcomes;
- **memory_pressure** — the forgetting module's `memory_pressure` item (None
  when the graph is under 90 % of max_nodes);
- **kappa_regions** — every SCC with κ > 0 of the whole live graph (members
  listed up to `REGION_NODE_SAMPLE`, with ``size``);
- **open_items** — open attention items (e.g. unresolved contradictions);
- **consolidation** — when the last real run started, and whether one is due
  (none yet, or older than `CONSOLIDATION_DUE_S`).

`attention_run_cycle(autonomy, budget)` triages these into actions, in this
order: forget_by_policy (memory pressure), resolve_item (an open item whose
cause is gone: a subject deleted, forgotten or superseded, or its
contradiction edges removed), run_consolidation (when due), deliberate
(open contradiction items, then κ > 0 regions by κ descending, except a
region that is exactly a listed contradiction's pair), review_goal
(goals with knowledge_gap >= `REVIEW_MIN_GAP`, by score).  Each dispatched
action uses one unit of `budget`; the rest are counted as deferred.

What each autonomy level may do:

- ``observe`` — nothing: every action is listed as ``observed``; no writes.
- ``advise`` — the first `budget` actions are ``recommended``; no writes.
- ``act`` — within the budget, forget_by_policy, resolve_item and
  run_consolidation are *performed* (``done``, with their result);
  deliberate and review_goal stay ``recommended``: they need an agent or a
  human (goal transitions are never automatic here).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from ..model import DEFAULT_Q_VALUE, check_choice, check_int, parse_time
from ..topology import analyze, build_adjacency
from . import tables
from .consolidator import consolidation_log, run_consolidation
from .forgetting import forget_by_policy, memory_pressure
from .goals import goal_coverage
from .outcomes import Q_REWARDS

if TYPE_CHECKING:
    from ..model import Node
    from ..retrieval.graph_view import GraphEngine

AUTONOMY_LEVELS: Final = ("observe", "advise", "act")
# Actions `act` may perform itself; the others are only ever recommended.
EXECUTABLE_ACTIONS: Final = ("forget_by_policy", "resolve_item", "run_consolidation")
DEADLINE_HORIZON_H: Final = 168.0  # a week: deadlines further away add no urgency
SURPRISE_WINDOW: Final = 5
REVIEW_MIN_GAP: Final = 0.5
CONSOLIDATION_DUE_S: Final = 300.0  # seed 003 consolidation_interval
GOALS_SURVEYED: Final = 20
REGION_NODE_SAMPLE: Final = 50
DEFAULT_BUDGET: Final = 5
MAX_BUDGET: Final = 100
ACTIVE_STATUS: Final = "active"
CONTRADICTION_ITEM: Final = "contradiction"
DIGITS: Final = 6


# -- survey ------------------------------------------------------------------------------


def urgency(goal: Mapping[str, Any], now: datetime) -> float:
    """max(priority, deadline pressure) — see the module docstring.  O(1)."""
    value = float(goal["priority"])
    deadline = goal["metadata"].get("deadline")
    if isinstance(deadline, str):
        try:
            hours_left = (parse_time(deadline) - now).total_seconds() / 3600.0
        except ValueError:
            return value
        value = max(value, min(1.0, max(0.0, 1.0 - hours_left / DEADLINE_HORIZON_H)))
    return value


def surprise(graph: GraphEngine, goal: Mapping[str, Any], linked: Sequence[Node]) -> float:
    """Mean |reward − expected| over the goal's latest outcomes (module docstring)."""
    rows = tables.query(
        graph.store,
        "SELECT status FROM outcomes WHERE goal_id IN (?, ?) ORDER BY created_at DESC, id DESC "
        "LIMIT ?",
        (goal["id"], goal["node_id"] or goal["id"], SURPRISE_WINDOW),
    )
    rewards = [Q_REWARDS[row[0]] for row in rows if row[0] in Q_REWARDS]
    if not rewards:
        return 0.0
    expected = sum(n.q_value for n in linked) / len(linked) if linked else DEFAULT_Q_VALUE
    return sum(abs(r - expected) for r in rewards) / len(rewards)


def rank_goals(graph: GraphEngine, limit: int = GOALS_SURVEYED) -> list[dict[str, Any]]:
    """Active goals by score descending (then goal id).  One coverage query per goal."""
    now = graph.clock.now()
    goals = tables.list_goal_rows(graph.store, status=ACTIVE_STATUS, limit=limit)
    ranked = []
    for goal in goals:
        coverage = goal_coverage(graph, goal, use_retrieval=False)
        linked = [
            n
            for n in graph.store.get_nodes(goal["linked_node_ids"]).values()
            if n.forgotten_at is None
        ]
        urgent = urgency(goal, now)
        gap = 1.0 - coverage["coverage_score"]
        surprised = surprise(graph, goal, linked)
        ranked.append(
            {
                "goal_id": goal["id"],
                "title": goal["title"],
                "priority": goal["priority"],
                "progress": goal["progress"],
                "urgency": round(urgent, DIGITS),
                "knowledge_gap": round(gap, DIGITS),
                "surprise": round(surprised, DIGITS),
                "score": round(urgent * gap + surprised, DIGITS),
                "recommendation": coverage["recommendation"],
            }
        )
    ranked.sort(key=lambda g: (-g["score"], g["goal_id"]))
    return ranked


def kappa_regions(graph: GraphEngine) -> dict[str, Any]:
    """SCCs with κ > 0 of the whole live graph.  O(V + E) plus κ per SCC."""
    snapshot = graph.graph_snapshot()
    result = analyze(build_adjacency(sorted(snapshot.live), snapshot.edges), emit_telemetry=False)
    regions = [
        {
            "scc_id": scc["id"],
            "size": len(scc["nodes"]),
            "nodes": scc["nodes"][:REGION_NODE_SAMPLE],
            "kappa": scc["kappa"],
            "approximate": scc["approximate"],
            "fault_line_edges": scc["fault_line_edges"],
            "deliberation_budget": scc["deliberation_budget"],
        }
        for scc in result["sccs"]
        if scc["kappa"] > 0
    ]
    return {"max_kappa": result["max_kappa"], "scc_count": result["scc_count"], "regions": regions}


def _consolidation_state(graph: GraphEngine) -> dict[str, Any]:
    last = consolidation_log(graph, 1)["last_run_at"]
    due = last is None or (
        (graph.clock.now() - parse_time(last)).total_seconds() >= CONSOLIDATION_DUE_S
    )
    return {"last_run_at": last, "due": due}


def attention_survey(graph: GraphEngine) -> dict[str, Any]:
    """The survey (module docstring).  Reads only; holds the facade lock throughout.

    Output: ``{"surveyed_at", "goals", "memory_pressure", "kappa_regions",
    "open_items", "consolidation"}``.
    Complexity: one coverage query per active goal (at most `GOALS_SURVEYED`),
    a whole-graph topology analysis (cached snapshot), and small queries.
    """
    with graph.lock:
        return {
            "surveyed_at": graph.now(),
            "goals": rank_goals(graph),
            "memory_pressure": memory_pressure(graph),
            "kappa_regions": kappa_regions(graph),
            "open_items": tables.attention_items(graph.store),
            "consolidation": _consolidation_state(graph),
        }


# -- the cycle ---------------------------------------------------------------------------


def stale_reason(graph: GraphEngine, item: Mapping[str, Any]) -> str | None:
    """Why an open contradiction item no longer applies, or None (still open / other kind)."""
    if item["kind"] != CONTRADICTION_ITEM or len(item["subject_ids"]) != 2:
        return None
    a, b = item["subject_ids"]
    nodes = graph.store.get_nodes([a, b])
    for node_id in (a, b):
        node = nodes.get(node_id)
        if node is None:
            return f"{node_id} no longer exists"
        if node.forgotten_at is not None:
            return f"{node_id} was forgotten"
        if node.superseded_by is not None:
            return f"{node_id} was superseded by {node.superseded_by}"
    linked = any(
        edge.relationship == "contradicts" and {edge.source_id, edge.target_id} == {a, b}
        for edge in graph.store.edges_of(a, "both")
    )
    return None if linked else "the contradiction edges were removed"


def triage(graph: GraphEngine, survey: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The survey as an ordered list of candidate actions (module docstring)."""
    actions: list[dict[str, Any]] = []
    pressure = survey["memory_pressure"]
    if pressure is not None:
        actions.append({"action": "forget_by_policy", "target": None, "why": pressure})
    live_items = []
    for item in survey["open_items"]:
        reason = stale_reason(graph, item)
        if reason is not None:
            actions.append({"action": "resolve_item", "target": item["id"], "why": reason})
        else:
            live_items.append(item)
    if survey["consolidation"]["due"]:
        why = f"last run: {survey['consolidation']['last_run_at'] or 'never'}"
        actions.append({"action": "run_consolidation", "target": None, "why": why})
    for item in live_items:
        if item["kind"] == CONTRADICTION_ITEM:
            actions.append(
                {"action": "deliberate", "target": item["subject_ids"], "why": "open contradiction"}
            )
    regions = sorted(survey["kappa_regions"]["regions"], key=lambda r: (-r["kappa"], r["scc_id"]))
    listed = {frozenset(a["target"]) for a in actions if a["action"] == "deliberate"}
    for region in regions:
        if region["size"] == len(region["nodes"]) and frozenset(region["nodes"]) in listed:
            continue  # the loop of a contradiction already listed above
        actions.append(
            {
                "action": "deliberate",
                "target": region["nodes"],
                "why": f"{region['scc_id']}: κ = {region['kappa']} over {region['size']} nodes",
            }
        )
    for goal in survey["goals"]:
        if goal["knowledge_gap"] >= REVIEW_MIN_GAP:
            why = f"knowledge gap {goal['knowledge_gap']}, score {goal['score']}"
            actions.append({"action": "review_goal", "target": goal["goal_id"], "why": why})
    return actions


def _perform(graph: GraphEngine, action: Mapping[str, Any]) -> dict[str, Any]:
    if action["action"] == "forget_by_policy":
        result = forget_by_policy(graph, "hybrid")
        return {"forgotten_count": result["forgotten_count"], "max_nodes": result["max_nodes"]}
    if action["action"] == "resolve_item":
        done = tables.resolve_attention_item(
            graph.store, action["target"], graph.now(), f"attention cycle: {action['why']}"
        )
        return {"resolved": done}
    entry = run_consolidation(graph, trigger="attention")
    return {"log_id": entry["id"], "totals": entry["totals"]}


def attention_run_cycle(
    graph: GraphEngine, autonomy: str = "advise", budget: int = DEFAULT_BUDGET
) -> dict[str, Any]:
    """Survey, triage, and dispatch up to `budget` actions as `autonomy` allows.

    Output: ``{"autonomy", "budget", "used", "deferred", "actions": [{"action",
    "target", "why", "status": observed | recommended | done, "result"?}],
    "survey": {"goals", "open_items", "kappa_regions", "memory_pressure"}}``
    (the survey part is counts only).  Complexity: the survey plus the
    performed actions (a consolidation run, a forgetting pass).
    """
    check_choice("autonomy", autonomy, AUTONOMY_LEVELS)
    check_int("budget", budget, 0, MAX_BUDGET)
    with graph.lock:
        survey = attention_survey(graph)
        candidates = triage(graph, survey)
        dispatched = []
        for position, action in enumerate(candidates):
            if autonomy == "observe":
                dispatched.append({**action, "status": "observed"})
                continue
            if position >= budget:
                break
            if autonomy == "act" and action["action"] in EXECUTABLE_ACTIONS:
                result = _perform(graph, action)  # each action is its own transaction
                dispatched.append({**action, "status": "done", "result": result})
            else:
                dispatched.append({**action, "status": "recommended"})
        used = 0 if autonomy == "observe" else len(dispatched)
    return {
        "autonomy": autonomy,
        "budget": budget,
        "used": used,
        "deferred": len(candidates) - used if autonomy != "observe" else 0,
        "actions": dispatched,
        "survey": {
            "goals": len(survey["goals"]),
            "open_items": len(survey["open_items"]),
            "kappa_regions": len(survey["kappa_regions"]["regions"]),
            "memory_pressure": survey["memory_pressure"] is not None,
        },
    }
