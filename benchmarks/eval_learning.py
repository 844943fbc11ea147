"""Does use make the memory better?  LoCoMo, learning from outcomes, unseen questions.

The protocol (issue "Use must make it better"), one fresh store per
conversation (the ``graph`` store of `eval_locomo`: turns, session nodes,
``part_of`` and ``follows`` edges):

* The conversation's questions are split in two halves by a hash of the
  question text (`half_of`: SHA-256, first byte's parity), so the split is
  the same for everyone and independent of file order.  Each half is played
  once while the other is measured ("A→B" and "B→A"): both are reported.
* **Play** (the agent loop, in file order over the played half): retrieve
  (``retrieve_context``, limit 20, no type filter), take the first five
  turns of the results (results that are not turns are skipped), report
  ``learn_from_outcome`` with status ``success`` when a gold turn is among
  them and ``failure`` otherwise, the five turns' node ids as
  ``causal_node_ids`` (the engine is never told which one was right), and
  run one consolidation after every 10 outcomes.
* **Measure**: R@5 (and R@1/R@10, Hit@5) of the *other* half, before (a
  fresh store) and after (the played store).  Nothing is reported for the
  measured questions, so nothing is learned from them.
* Ablations: ``both`` (learning + consolidation), ``learn`` (outcomes, no
  consolidation), ``consolidate`` (retrievals and consolidations, no
  outcomes), ``neither`` (retrievals only: the access side effects alone).
* Efforts 0, 3 and 6 (``--efforts``).
* Paired bootstrap 95 % intervals of after − before over the measured
  questions (pooled over conversations and both directions), per category.
* ``--no-forgetting``: the conversations ingested one after another into ONE
  store, each played (both) on its first half, a consolidation between
  conversations; conversation 1's second-half R@5 measured right after it was
  played and again at the end.  Two stores: "scoped" (each conversation under
  its own ``agent_id``, played within it; measured within its agent,
  "isolated", and over everything, "pooled") and "shared" (no agent ids: one
  memory, played and measured over everything).  Other conversations' turns
  count as turns: one among the first five takes a slot.  Each with a
  control that learns nothing.  ``--no-forgetting-first K`` makes the K-th
  conversation (file order) conversation 1.

Run (data is read in place, never copied):

    python benchmarks/eval_learning.py --data ../shared/data/locomo/locomo-dev.json \\
        [--efforts 0,3,6] [--modes both,learn,consolidate,neither] \\
        [--conversations N] [--no-forgetting [--no-forgetting-first K]] [--json OUT]
        [--bootstrap 1000] [--conversations-split tune|validate|all]
        [--credit bundle|attributed|both] [--sessions N] [--questions N]

Issue "learning that transfers" (rules of this file from then on):

* **Conversations are split once into tune and validate** (`conversation_split`:
  SHA-256 of the LoCoMo ``sample_id``, first byte even = tune, odd = validate;
  ``--conversations-split tune|validate|all``, default all; the report names
  which conversations fall in which split).  Every constant of the learning
  path is picked on *tune* only; reports quote *validate*.
* **Two credit protocols** (``--credit bundle|attributed|both``, default both):
  ``bundle`` is the play above (every outcome cites the five used turns);
  ``attributed`` is what an agent that cites the turn holding the answer
  reports: a success cites only the gold turns among the five used (at most
  `ATTRIBUTED_MAX_CAUSES`, first in rank order, so the engine moves their
  confidence and Q in full), a failure cites the five.  Modes that report no
  outcome (``consolidate``, ``neither``) are credit-free: played once, reported
  under every credit.  Each protocol is reported on its own, overall, per
  conversation and per category, with paired bootstrap 95 % intervals.
* **The clock is the store's own** (`graphonomous.clock.ManualClock`, starting at
  `CLOCK_START`): it moves only in play, ``--minutes-per-question`` (default
  `MINUTES_PER_QUESTION`) after each played question, so decay, retention anchors
  and relative dates are the same on every machine and every run; measuring moves
  it not at all.
* ``--sessions N`` (first N sessions of every conversation; questions whose gold
  turns all lie in them) and ``--questions N`` (the first N questions of each
  half) make the small fixed version the CI guard plays
  (tests/test_learning_guard.py).

JSON: ``cells`` / ``runs`` are the bundle protocol as before (present when it
was run); ``credit.<name>`` holds each protocol's ``cells``, ``per_conversation``
and ``runs``.

``--check`` (used by the CI-sized tests) exits 1 when learning + consolidation
lowers unseen-question R@5 (categories 1–4 pooled) by more than
``--tolerance`` (default 0: no fall at all) in any credit protocol at any effort.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import eval_locomo
import evalkit
from resultfile import stamp

from graphonomous.learning.outcomes import ATTRIBUTED_MAX_CAUSES

RETRIEVE_LIMIT: Final = 20
USED_TURNS: Final = 5
CONSOLIDATE_EVERY: Final = 10
KS: Final = (1, 5, 10)
MODES: Final = ("both", "learn", "consolidate", "neither")
HEADLINE_CATEGORIES: Final = ("1", "2", "3", "4")
DIRECTIONS: Final = (("A", "B"), ("B", "A"))
# Modes that report outcomes: the only ones a credit protocol changes.
LEARNING_MODES: Final = ("both", "learn")
CREDITS: Final = ("bundle", "attributed")
CONVERSATION_SPLITS: Final = ("all", "tune", "validate")
SPLIT_RULE: Final = "sha256(sample_id)[0] even = tune, odd = validate"
# Every store's clock starts here (a fixed moment: the run never reads the wall clock).
CLOCK_START: Final = "2026-01-01T00:00:00Z"
# How far the clock moves per played question: an agent asking about a minute apart.
# A played half (≤ 100 questions) then spans under two hours, a small share of a turn's
# 7-day TTL, yet decay and retention anchors move as they would in use.
MINUTES_PER_QUESTION: Final = 1.0


def half_of(question: str) -> str:
    """ "A" or "B": the parity of the first byte of SHA-256(question text)."""
    return "A" if hashlib.sha256(question.encode("utf-8")).digest()[0] % 2 == 0 else "B"


def conversation_split(sample_id: str) -> str:
    """ "tune" or "validate": the half of the conversations a LoCoMo sample falls in.

    The parity of the first byte of SHA-256(sample_id): even is tune, odd is
    validate.  Written down once: constants are picked on tune, reports quote
    validate.  The dev file's five conversations:

    >>> [conversation_split(f"conv-{n}") for n in (26, 30, 41, 42, 43)]
    ['tune', 'tune', 'validate', 'validate', 'tune']
    """
    return "tune" if hashlib.sha256(sample_id.encode("utf-8")).digest()[0] % 2 == 0 else "validate"


def in_split(
    conversations: Sequence[eval_locomo.Conversation], split: str
) -> list[eval_locomo.Conversation]:
    """The conversations of one split (`CONVERSATION_SPLITS`), in file order."""
    if split not in CONVERSATION_SPLITS:
        raise ValueError(f"split must be one of {', '.join(CONVERSATION_SPLITS)}; got {split!r}")
    return [c for c in conversations if split == "all" or conversation_split(c.sample_id) == split]


def split_line(conversations: Sequence[eval_locomo.Conversation], split: str) -> str:
    """The report's line about the conversation split: who is where, which was run."""
    names = {
        name: ", ".join(c.sample_id for c in in_split(conversations, name)) or "none"
        for name in ("tune", "validate")
    }
    return (
        f"Conversation split ({SPLIT_RULE}): tune = {names['tune']}; "
        f"validate = {names['validate']}; this run: {split}."
    )


def truncated(conversation: eval_locomo.Conversation, sessions: int) -> eval_locomo.Conversation:
    """The conversation's first `sessions` sessions and the questions answered within them.

    A question is kept when every gold turn lies in the kept sessions (0: all kept).
    """
    if sessions <= 0:
        return conversation
    kept = conversation.sessions[:sessions]
    turns = {turn.dia_id for session in kept for turn in session.turns}
    queries = [q for q in conversation.queries if set(q.gold) <= turns]
    return replace(conversation, sessions=kept, queries=queries)


def halves_of(
    conversation: eval_locomo.Conversation, per_half: int = 0
) -> dict[str, list[evalkit.Query]]:
    """The questions of each half (`half_of`), file order, the first `per_half` (0: all)."""
    halves: dict[str, list[evalkit.Query]] = {"A": [], "B": []}
    for query in conversation.queries:
        halves[half_of(query.text)].append(query)
    if per_half > 0:
        halves = {half: queries[:per_half] for half, queries in halves.items()}
    return halves


def cited_turns(query: evalkit.Query, used: Sequence[str], success: bool, credit: str) -> list[str]:
    """The turns an outcome cites: the used ones, or an attributed success's gold among them.

    >>> q = evalkit.Query("q", "text", ("b", "d", "e"), "1")
    >>> cited_turns(q, ["a", "b", "c", "d", "e"], True, "attributed")
    ['b', 'd']
    >>> cited_turns(q, ["a", "b", "c", "d", "e"], False, "attributed")
    ['a', 'b', 'c', 'd', 'e']
    >>> cited_turns(q, ["a", "b"], True, "bundle")
    ['a', 'b']
    """
    if credit == "attributed" and success:
        gold = set(query.gold)
        return [uid for uid in used if uid in gold][:ATTRIBUTED_MAX_CAUSES]
    return list(used)


@dataclass
class Store:
    """One engine store holding one conversation, and how its nodes map to turns."""

    graph: Any
    unit_of: dict[str, str]
    node_of: dict[str, str]


def open_store(
    conversation: eval_locomo.Conversation,
    embedder: Any,
    prefix: str = "",
    graph: Any = None,
    agents: bool = True,
) -> Store:
    """Fill a store (a new in-memory one unless `graph` is given) with a conversation.

    With a `prefix`, node ids are prefixed and (with `agents`) the nodes belong to
    agent `prefix` (the no-forgetting run pools conversations in one store).
    """
    from graphonomous.api import Graphonomous
    from graphonomous.clock import ManualClock

    variant = eval_locomo.store_variants(conversation)[eval_locomo.GRAPH_VARIANT]
    operations = (
        [_prefixed(op, prefix, agents) for op in variant.operations]
        if prefix
        else variant.operations
    )
    if graph is None:
        graph = Graphonomous(db=":memory:", embedder=embedder, clock=ManualClock(CLOCK_START))
    graph.apply_batch(list(operations))
    graph.vector_index()
    unit_of = {prefix + node_id: uid for node_id, uid in variant.unit_of.items()}
    return Store(graph, unit_of, {uid: node_id for node_id, uid in unit_of.items()})


def _prefixed(op: Mapping[str, Any], prefix: str, agents: bool = True) -> dict[str, Any]:
    if op["op"] == "add_node":
        node = dict(op["node"])
        node["id"] = prefix + node["id"]
        if agents:
            node["agent_id"] = prefix.rstrip("/")
        return {"op": "add_node", "node": node}
    edge = dict(op["edge"])
    edge["source_id"] = prefix + edge["source_id"]
    edge["target_id"] = prefix + edge["target_id"]
    return {"op": "add_edge", "edge": edge}


SETTINGS: dict[str, Any] = {}  # --settings: RetrievalSettings overrides (ablations)
# --minutes-per-question: how far play moves each store's clock per question.
PACE: dict[str, float] = {"minutes": MINUTES_PER_QUESTION}


def ranked_turns(store: Store, query: str, effort: int, agent_id: str | None = None) -> list[str]:
    """Turn ids of one retrieval (limit 20, no type filter), de-duplicated, in rank order."""
    from graphonomous.retrieval.settings import with_settings

    answer = store.graph.retrieve_context(
        query,
        limit=RETRIEVE_LIMIT,
        effort=effort,
        agent_id=agent_id,
        settings=with_settings(**SETTINGS) if SETTINGS else None,
    )
    return evalkit.dedupe_cut((store.unit_of.get(r["node_id"]) for r in answer["results"]), 20)


def play(
    store: Store,
    queries: Sequence[evalkit.Query],
    effort: int,
    mode: str,
    agent_id: str | None = None,
    credit: str = "bundle",
) -> dict[str, int]:
    """The agent loop over `queries`; returns counts of what was reported.

    `credit` (`CREDITS`): which of the used turns an outcome cites (`cited_turns`).
    """
    counts = {"success": 0, "failure": 0, "consolidations": 0}
    for number, query in enumerate(queries, start=1):
        used = ranked_turns(store, query.text, effort, agent_id)[:USED_TURNS]
        success = bool(set(query.gold).intersection(used))
        status = "success" if success else "failure"
        if mode in LEARNING_MODES and used:
            cited = cited_turns(query, used, success, credit)
            store.graph.learn_from_outcome(
                action_id=f"answer-{query.qid}",
                status=status,
                confidence=1.0,
                causal_node_ids=[store.node_of[uid] for uid in cited],
            )
            counts[status] += 1
        if mode in ("both", "consolidate") and number % CONSOLIDATE_EVERY == 0:
            store.graph.run_consolidation()
            counts["consolidations"] += 1
        store.graph.clock.advance(minutes=PACE["minutes"])
    return counts


def measure(
    store: Store, queries: Sequence[evalkit.Query], effort: int, agent_id: str | None = None
) -> list[dict[str, float]]:
    """Per-question metrics (R@k, Hit@5) of `queries`, learning nothing from them."""
    rows = []
    for query in queries:
        ranked = ranked_turns(store, query.text, effort, agent_id)
        row = {f"R@{k}": evalkit.recall_at(ranked, query.gold, k) for k in KS}
        row["Hit@5"] = evalkit.hit_at(ranked, query.gold, 5)
        rows.append(row)
    return rows


@dataclass
class Cell:
    """Paired per-question values of one (credit, effort, mode) cell, pooled over runs."""

    labels: list[str] = field(default_factory=list)
    conversations: list[str] = field(default_factory=list)
    before: list[dict[str, float]] = field(default_factory=list)
    after: list[dict[str, float]] = field(default_factory=list)
    per_run: list[dict[str, Any]] = field(default_factory=list)


CellKey = tuple[str, int, str]  # (credit, effort, mode)


def empty_cells(
    credits: Sequence[str], efforts: Sequence[int], modes: Sequence[str]
) -> dict[CellKey, Cell]:
    """One cell per (credit, effort, mode); a credit-free mode's cell is shared by all credits."""
    cells: dict[CellKey, Cell] = {}
    for effort in efforts:
        for mode in modes:
            shared = Cell()
            for credit in credits:
                cells[(credit, effort, mode)] = Cell() if mode in LEARNING_MODES else shared
    return cells


def credits_to_play(mode: str, credits: Sequence[str]) -> Sequence[str]:
    """The credits a mode is played under: every one if it reports outcomes, else the first."""
    return credits if mode in LEARNING_MODES else credits[:1]


def run_grid(
    conversations: Sequence[eval_locomo.Conversation],
    embedder: Any,
    efforts: Sequence[int],
    modes: Sequence[str],
    log: Callable[[str], None],
    credits: Sequence[str] = ("bundle",),
    per_half: int = 0,
) -> dict[CellKey, Cell]:
    """Every (credit, effort, mode) cell over every conversation and both directions.

    `per_half`: the first N questions of each half only (0: all).
    """
    cells = empty_cells(credits, efforts, modes)
    for conversation in conversations:
        halves = halves_of(conversation, per_half)
        for played, measured in DIRECTIONS:
            for effort in efforts:
                fresh = open_store(conversation, embedder)
                before = measure(fresh, halves[measured], effort)
                fresh.graph.close()
                for mode in modes:
                    for credit in credits_to_play(mode, credits):
                        started = time.perf_counter()
                        store = open_store(conversation, embedder)
                        counts = play(store, halves[played], effort, mode, credit=credit)
                        after = measure(store, halves[measured], effort)
                        nodes = store.graph.graph_stats()["node_count"]
                        store.graph.close()
                        run = {
                            "conversation": conversation.sample_id,
                            "played": played,
                            "measured": measured,
                            "n": len(after),
                            "R@5_before": _r5(before),
                            "R@5_after": _r5(after),
                            "nodes_after": nodes,
                            **counts,
                        }
                        cell = cells[(credit, effort, mode)]
                        _record(cell, conversation.sample_id, halves[measured], before, after)
                        cell.per_run.append(run)
                        log(
                            f"{conversation.sample_id} {played}->{measured} e{effort} "
                            f"{mode:<11} {credit if mode in LEARNING_MODES else '-':<10} "
                            f"R@5 {run['R@5_before']:.3f} -> {run['R@5_after']:.3f}  "
                            f"({counts}, {time.perf_counter() - started:.1f} s)"
                        )
    return cells


def _record(
    cell: Cell,
    conversation: str,
    queries: Sequence[evalkit.Query],
    before: Sequence[dict[str, float]],
    after: Sequence[dict[str, float]],
) -> None:
    """Append one run's paired rows: the measured questions, before and after."""
    cell.labels.extend(q.label for q in queries)
    cell.conversations.extend(conversation for _ in queries)
    cell.before.extend(before)
    cell.after.extend(after)


def summarise_cell(
    cell: Cell, rounds: int, seed: int, conversation: str | None = None
) -> dict[str, Any]:
    """Before/after means and the paired bootstrap of the difference, per category group.

    `conversation`: that conversation's questions only (None: all of them).
    """
    groups: dict[str, list[int]] = {"1-4": []}
    for index, label in enumerate(cell.labels):
        if conversation is not None and cell.conversations[index] != conversation:
            continue
        if label in HEADLINE_CATEGORIES:
            groups["1-4"].append(index)
        groups.setdefault(label, []).append(index)
    out: dict[str, Any] = {}
    for group in sorted(groups, key=lambda g: (g != "1-4", g)):
        indices = groups[group]
        samples = _samples(len(indices), rounds, seed)
        entry: dict[str, Any] = {"n": len(indices)}
        for metric in ("R@1", "R@5", "R@10", "Hit@5"):
            before = [cell.before[i][metric] for i in indices]
            after = [cell.after[i][metric] for i in indices]
            diff = evalkit.paired_difference(after, before, samples)
            entry[metric] = {
                "before": round(evalkit.mean(before), 4),
                "after": round(evalkit.mean(after), 4),
                "diff": round(diff["diff"], 4),
                "ci": [round(diff["low"], 4), round(diff["high"], 4)],
            }
        out[group] = entry
    return out


_SAMPLES: dict[tuple[int, int, int], list[list[int]]] = {}


def _samples(n: int, rounds: int, seed: int) -> list[list[int]]:
    """`evalkit.bootstrap_samples`, kept per (n, rounds, seed): the same resamples, made once."""
    key = (n, rounds, seed)
    if key not in _SAMPLES:
        _SAMPLES[key] = evalkit.bootstrap_samples(n, rounds, seed)
    return _SAMPLES[key]


def summarise_credit(
    cells: Mapping[CellKey, Cell], credit: str, rounds: int, seed: int
) -> dict[str, Any]:
    """One credit protocol's ``cells``, ``per_conversation`` and ``runs``, keyed "effort/mode"."""
    mine = {(effort, mode): cell for (c, effort, mode), cell in cells.items() if c == credit}
    return {
        "cells": {
            f"{effort}/{mode}": summarise_cell(cell, rounds, seed)
            for (effort, mode), cell in mine.items()
        },
        "per_conversation": {
            f"{effort}/{mode}": {
                name: summarise_cell(cell, rounds, seed, conversation=name)
                for name in dict.fromkeys(cell.conversations)
            }
            for (effort, mode), cell in mine.items()
        },
        "runs": {f"{effort}/{mode}": cell.per_run for (effort, mode), cell in mine.items()},
    }


def no_forgetting(
    conversations: Sequence[eval_locomo.Conversation],
    embedder: Any,
    effort: int,
    log: Callable[[str], None],
    mode: str = "both",
    scoped: bool = True,
) -> dict[str, Any]:
    """Conversation 1's unseen-half R@5 right after it was learned and after all the others.

    Every conversation's turns are turns of the pooled store (their units
    qualified by conversation), so another conversation's turn among the first
    five takes a slot — in play (it is among the causes reported) and in the
    measurement.  `scoped`: nodes carry their conversation's agent id and play
    retrieves within it; the "isolated" reading is conversation 1's questions
    within its agent, "pooled" over everything.  Unscoped: no agent ids at all
    (one shared memory; play and measurement over everything, "pooled" only).
    `mode` "neither" is the control: the same stores and consolidations with
    nothing learned, so the fall from the other conversations' competing turns
    is told apart from forgetting caused by learning.
    """
    from graphonomous.api import Graphonomous
    from graphonomous.clock import ManualClock

    graph = Graphonomous(db=":memory:", embedder=embedder, clock=ManualClock(CLOCK_START))
    pooled = Store(graph, {}, {})
    first = conversations[0]
    measured = _qualified(first, "B")
    agent = first.sample_id if scoped else None

    def readings() -> dict[str, float]:
        values = {"pooled": _r5(measure(pooled, measured, effort))}
        if agent is not None:
            values["isolated"] = _r5(measure(pooled, measured, effort, agent_id=agent))
        return values

    start: dict[str, float] = {}
    decay = 0.0
    for number, conversation in enumerate(conversations):
        prefix = conversation.sample_id + "/"
        store = open_store(conversation, embedder, prefix=prefix, graph=graph, agents=scoped)
        for node_id, unit in store.unit_of.items():
            pooled.unit_of[node_id] = prefix + unit
            pooled.node_of[prefix + unit] = node_id
        scope = conversation.sample_id if scoped else None
        play(pooled, _qualified(conversation, "A"), effort, mode, agent_id=scope)
        if number == 0:
            start = readings()
        decay += decay_days(graph.run_consolidation())
        log(f"no-forgetting ({mode}, {'scoped' if scoped else 'shared'}): {conversation.sample_id}")
    end = readings()
    nodes = graph.graph_stats()["node_count"]
    graph.close()
    return {
        "effort": effort,
        "conversation": first.sample_id,
        "scoped": scoped,
        "n": len(measured),
        "start": start,
        "end": end,
        "nodes_at_end": nodes,
        # Decay follows the store's ManualClock (moved by play only): the days the
        # between-conversation consolidations' decay stages covered, summed.
        "decay_days_between": round(decay, 3),
    }


def decay_days(run: Mapping[str, Any]) -> float:
    """The days the decay stage of one consolidation result covered (its `elapsed_days`)."""
    return sum(
        float(stage.get("elapsed_days", 0.0))
        for stage in run.get("stages", [])
        if stage.get("name") == "decay"
    )


def _qualified(conversation: eval_locomo.Conversation, half: str) -> list[evalkit.Query]:
    """The conversation's questions of `half`, gold units qualified by the conversation."""
    prefix = conversation.sample_id + "/"
    return [
        replace(query, gold=tuple(prefix + unit for unit in query.gold))
        for query in conversation.queries
        if half_of(query.text) == half
    ]


def _r5(rows: Sequence[Mapping[str, float]]) -> float:
    return round(evalkit.mean([row["R@5"] for row in rows]), 4)


CREDIT_WORDS: Final[Mapping[str, str]] = {
    "bundle": "every outcome cites the five used turns",
    "attributed": "a success cites the gold turns among the five used (at most "
    f"{ATTRIBUTED_MAX_CAUSES}), a failure the five",
}


def report(summary: Mapping[str, Any]) -> str:
    """Markdown: per credit protocol, the headline table (R@5 before → after, diff and CI,
    per category) and the per-conversation / per-category intervals of the learning modes."""
    split = summary["protocol"].get("conversation_split", {})
    lines = [split["line"], ""] if "line" in split else []
    credits = summary.get("credit") or {"bundle": {"cells": summary["cells"]}}
    for credit, part in credits.items():
        lines += [f"Credit {credit}: {CREDIT_WORDS[credit]}.", "", *_headline(part["cells"])]
        if part.get("per_conversation"):
            lines += ["", *_breakdown(part)]
        lines.append("")
    for scope, nf in summary.get("no_forgetting", {}).items():
        lines += ["", _no_forgetting_line(scope, nf)]
        if nf.get("control"):
            lines.append("  control, nothing learned: " + _readings(nf["control"]))
    return "\n".join(lines).rstrip("\n")


def _headline(cells: Mapping[str, Any]) -> list[str]:
    """The table of one credit: R@5 before → after, diff [CI], per-category diffs."""
    lines = [
        "| effort | mode | n | R@5 before | R@5 after | diff [95 % CI] "
        "| cat 1 | cat 2 | cat 3 | cat 4 |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key, cell in cells.items():
        effort, mode = key.split("/")
        head = cell["1-4"]["R@5"]
        cats = []
        for category in HEADLINE_CATEGORIES:
            entry = cell.get(category)
            cats.append(f"{entry['R@5']['diff']:+.3f}" if entry else "–")
        lines.append(
            f"| {effort} | {mode} | {cell['1-4']['n']} | {head['before']:.3f} | "
            f"{head['after']:.3f} | {_with_ci(head)} | " + " | ".join(cats) + " |"
        )
    return lines


def _breakdown(part: Mapping[str, Any]) -> list[str]:
    """R@5 after − before [95 % CI] per conversation (categories 1–4) and per category."""
    keys = [key for key in part["cells"] if key.split("/")[1] in LEARNING_MODES]
    if not keys:
        return []
    first = keys[0]
    names = list(part["per_conversation"][first])
    columns = [
        f"{name} (n {part['per_conversation'][first][name]['1-4']['n']})" for name in names
    ] + [
        f"cat {c} (n {part['cells'][first][c]['n']})"
        for c in HEADLINE_CATEGORIES
        if c in part["cells"][first]
    ]
    lines = [
        "| effort | mode | " + " | ".join(columns) + " |",
        "|---|---|" + "---|" * len(columns),
    ]
    for key in keys:
        effort, mode = key.split("/")
        values = [_with_ci(part["per_conversation"][key][name]["1-4"]["R@5"]) for name in names]
        values += [
            _with_ci(part["cells"][key][c]["R@5"])
            for c in HEADLINE_CATEGORIES
            if c in part["cells"][key]
        ]
        lines.append(f"| {effort} | {mode} | " + " | ".join(values) + " |")
    return lines


def _with_ci(entry: Mapping[str, Any]) -> str:
    return f"{entry['diff']:+.3f} [{entry['ci'][0]:+.3f}, {entry['ci'][1]:+.3f}]"


def _readings(run: Mapping[str, Any]) -> str:
    return "; ".join(
        f"{name} R@5 {run['start'][name]:.3f} → {run['end'][name]:.3f}"
        for name in ("isolated", "pooled")
        if name in run["start"]
    )


def _no_forgetting_line(scope: str, nf: Mapping[str, Any]) -> str:
    how = "agent ids, play within each agent" if scope == "scoped" else "no agent ids"
    return (
        f"No forgetting, {scope} ({how}; {nf['conversation']}, effort {nf['effort']}, "
        f"n = {nf['n']}, {nf['nodes_at_end']} nodes at the end, decay between conversations "
        f"{nf['decay_days_between']} days): " + _readings(nf)
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    SETTINGS.clear()  # one call's overrides never leak into the next (tests call main)
    if args.minutes_per_question < 0:
        parser.error("--minutes-per-question must be >= 0")
    PACE["minutes"] = args.minutes_per_question
    for pair in filter(None, args.settings.split(",")):
        key, _, raw = pair.partition("=")
        SETTINGS[key] = evalkit._parse_value(raw)
    efforts = [int(part) for part in args.efforts.split(",") if part]
    modes = [part for part in args.modes.split(",") if part]
    unknown = sorted(set(modes) - set(MODES))
    if unknown:
        parser.error(f"unknown modes: {', '.join(unknown)} (known: {', '.join(MODES)})")
    credits = list(CREDITS) if args.credit == "both" else [args.credit]
    loaded = eval_locomo.load_locomo(args.data)
    conversations = in_split(loaded, args.conversations_split)
    if args.conversations:
        conversations = conversations[: args.conversations]
    conversations = [truncated(c, args.sessions) for c in conversations]
    embedder = evalkit.make_embedder("hashing", None)

    def log(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    print(
        f"split: SHA-256(question)[0] parity, A = even; {len(conversations)} conversations "
        f"({', '.join(c.sample_id for c in conversations)}); efforts {efforts}; modes {modes}; "
        f"credits {credits}",
        file=sys.stderr,
    )
    print(split_line(loaded, args.conversations_split), file=sys.stderr)
    cells = run_grid(conversations, embedder, efforts, modes, log, credits, args.questions)
    summary = _summary(args, loaded, conversations, cells, credits)
    if args.no_forgetting:
        summary["no_forgetting"] = _no_forgetting_runs(args, conversations, embedder, log)
    print(report(summary))
    if args.json:
        args.json.write_text(
            json.dumps(stamp(summary, __file__, argv), indent=2) + "\n", encoding="utf-8"
        )
    if args.check:
        lowered = lowered_cells(summary, args.tolerance)
        if lowered:
            print(f"learning lowered unseen-question R@5 in: {', '.join(lowered)}")
            return 1
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, required=True, help="LoCoMo JSON (read in place)")
    parser.add_argument(
        "--efforts", default="0,3,6", help="comma-separated efforts (default 0,3,6)"
    )
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated ablation modes")
    parser.add_argument(
        "--conversations-split",
        choices=CONVERSATION_SPLITS,
        default="all",
        help=f"which conversations ({SPLIT_RULE}; default all)",
    )
    parser.add_argument(
        "--credit",
        choices=(*CREDITS, "both"),
        default="both",
        help="which turns an outcome cites (default both protocols, reported apart)",
    )
    parser.add_argument(
        "--conversations", type=int, default=0, help="first N (of the split) only (0: all)"
    )
    parser.add_argument("--sessions", type=int, default=0, help="first N sessions only (0: all)")
    parser.add_argument(
        "--questions", type=int, default=0, help="first N questions of each half only (0: all)"
    )
    parser.add_argument("--no-forgetting", action="store_true", help="also the pooled-store run")
    parser.add_argument("--no-forgetting-effort", type=int, default=3)
    parser.add_argument(
        "--no-forgetting-first",
        type=int,
        default=0,
        help="which conversation (0-based, file order) is conversation 1; the rest follow",
    )
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap rounds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write the summary here")
    parser.add_argument("--check", action="store_true", help="exit 1 if 'both' lowers R@5")
    parser.add_argument(
        "--tolerance",
        type=float,
        default=0.0,
        help="--check: the R@5 fall allowed (default 0: none)",
    )
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument(
        "--minutes-per-question",
        type=float,
        default=MINUTES_PER_QUESTION,
        help=f"how far play moves the store's clock per question (default {MINUTES_PER_QUESTION})",
    )
    parser.add_argument(
        "--settings", default="", help="retrieval settings overrides, e.g. utility_weight=0"
    )
    return parser


def _summary(
    args: argparse.Namespace,
    loaded: Sequence[eval_locomo.Conversation],
    conversations: Sequence[eval_locomo.Conversation],
    cells: Mapping[CellKey, Cell],
    credits: Sequence[str],
) -> dict[str, Any]:
    """The JSON summary: the protocol, each credit's results, the bundle ones as before."""
    by_credit = {
        credit: summarise_credit(cells, credit, args.bootstrap, args.seed) for credit in credits
    }
    summary: dict[str, Any] = {
        "protocol": {
            "split": "sha256(question)[0] % 2 == 0 -> A",
            "retrieve_limit": RETRIEVE_LIMIT,
            "used_turns": USED_TURNS,
            "consolidate_every": CONSOLIDATE_EVERY,
            "conversations": [c.sample_id for c in conversations],
            "conversation_split": {
                "rule": SPLIT_RULE,
                "run": args.conversations_split,
                "tune": [c.sample_id for c in in_split(loaded, "tune")],
                "validate": [c.sample_id for c in in_split(loaded, "validate")],
                "line": split_line(loaded, args.conversations_split),
            },
            "credits": {credit: CREDIT_WORDS[credit] for credit in credits},
            "attributed_max_causes": ATTRIBUTED_MAX_CAUSES,
            "sessions": args.sessions,
            "questions_per_half": args.questions,
            "clock": {"start": CLOCK_START, "minutes_per_question": args.minutes_per_question},
            "bootstrap": args.bootstrap,
            "seed": args.seed,
        },
    }
    if "bundle" in by_credit:  # the keys of every earlier result file
        summary["cells"] = by_credit["bundle"]["cells"]
        summary["runs"] = by_credit["bundle"]["runs"]
    summary["credit"] = by_credit
    return summary


def _no_forgetting_runs(
    args: argparse.Namespace,
    conversations: Sequence[eval_locomo.Conversation],
    embedder: Any,
    log: Callable[[str], None],
) -> dict[str, Any]:
    """The scoped and shared no-forgetting runs (bundle credit), each with its control."""
    effort = args.no_forgetting_effort
    first = args.no_forgetting_first % len(conversations)
    order = [*conversations[first:], *conversations[:first]]
    runs = {}
    for scope, scoped in (("scoped", True), ("shared", False)):
        run = no_forgetting(order, embedder, effort, log, scoped=scoped)
        run["control"] = no_forgetting(order, embedder, effort, log, mode="neither", scoped=scoped)
        runs[scope] = run
    return runs


def lowered_cells(summary: Mapping[str, Any], tolerance: float = 0.0) -> list[str]:
    """The "credit:effort/both" cells whose R@5 (categories 1–4) fell by more than `tolerance`."""
    return [
        f"{credit}:{key}"
        for credit, part in summary["credit"].items()
        for key, cell in part["cells"].items()
        if key.endswith("/both") and cell["1-4"]["R@5"]["diff"] < -tolerance
    ]


if __name__ == "__main__":
    raise SystemExit(main())
