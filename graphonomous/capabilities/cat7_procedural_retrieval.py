"""Category 7 — procedural retrieval (GraphMemBench Phase 2): 8 scenarios.

`retrieve_procedural` returns procedures for a task with their steps: only
procedural nodes, steps in order whatever their notation, met preconditions
and outcome-driven confidence lifting a procedure, agents kept apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .registry import scenario

if TYPE_CHECKING:
    from ..api import Graphonomous

CATEGORY = 7


def _procedure(graph: Graphonomous, text: str, **fields: Any) -> str:
    node: str = graph.store_node(text, "procedural", **fields)["node"]["id"]
    return node


def _steps(graph: Graphonomous, text: str, task: str, **fields: Any) -> list[str]:
    node = _procedure(graph, text, **fields)
    for result in graph.retrieve_procedural(task)["results"]:
        if result["node_id"] == node:
            steps: list[str] = result["steps"]
            return steps
    return []


@scenario(CATEGORY, "Only procedural nodes answer a task, however similar a fact is")
def only_procedures(graph: Graphonomous) -> tuple[bool, str]:
    fact = graph.store_node("Resetting the chiller clears alarm C-4")["node"]["id"]
    proc = _procedure(graph, "Reset the chiller: switch it off, wait a minute, switch it on")
    ids = [r["node_id"] for r in graph.retrieve_procedural("reset the chiller")["results"]]
    return ids == [proc] and fact not in ids, f"results {ids}"


@scenario(CATEGORY, "Numbered steps come back in order")
def numbered_steps(graph: Graphonomous) -> tuple[bool, str]:
    steps = _steps(
        graph,
        "Drain the tank:\n1. close the inlet valve\n2. open the drain\n3. rinse with water",
        "drain the tank",
    )
    expected = ["close the inlet valve", "open the drain", "rinse with water"]
    return steps == expected, f"steps {steps}"


@scenario(CATEGORY, "Bulleted steps come back in order")
def bulleted_steps(graph: Graphonomous) -> tuple[bool, str]:
    steps = _steps(
        graph,
        "Replace a fuse:\n- isolate the panel\n- pull the old fuse\n- insert a 10 A fuse",
        "replace a fuse",
    )
    expected = ["isolate the panel", "pull the old fuse", "insert a 10 A fuse"]
    return steps == expected, f"steps {steps}"


@scenario(CATEGORY, "A 'first …, then …' sentence is split into steps")
def then_chain(graph: Graphonomous) -> tuple[bool, str]:
    steps = _steps(
        graph,
        "First lock out the conveyor, then remove the guard and then clear the jam",
        "clear a conveyor jam",
    )
    expected = ["lock out the conveyor", "remove the guard", "clear the jam"]
    return steps == expected, f"steps {steps}"


@scenario(CATEGORY, "Steps given in metadata win over the text")
def metadata_steps(graph: Graphonomous) -> tuple[bool, str]:
    listed = ["open the hatch", "check the float", "close the hatch"]
    steps = _steps(
        graph,
        "Inspect the sump float switch (see the listed steps)",
        "inspect the sump float",
        metadata={"steps": listed},
    )
    return steps == listed, f"steps {steps}"


@scenario(CATEGORY, "A met precondition lifts a procedure above a more trusted one")
def preconditions_boost(graph: Graphonomous) -> tuple[bool, str]:
    # Without the boost the more confident procedure would rank first (0.8 > 0.6).
    needs_power = _procedure(
        graph,
        "Restart the compressor from the control panel",
        confidence=0.6,
        metadata={"preconditions": ["main power is off"]},
    )
    needs_key = _procedure(
        graph,
        "Restart the compressor from the local panel",
        confidence=0.8,
        metadata={"preconditions": ["maintenance key inserted"]},
    )
    results = graph.retrieve_procedural("restart the compressor", ["main power is off"])["results"]
    ids = [r["node_id"] for r in results]
    met = {r["node_id"]: r["preconditions_met"] for r in results}
    ok = ids[:1] == [needs_power] and met.get(needs_key) == []
    return ok, f"order {ids}, met {met}"


@scenario(CATEGORY, "Successful outcomes lift a procedure to the top")
def outcomes_lift(graph: Graphonomous) -> tuple[bool, str]:
    first = _procedure(graph, "Unblock the pump strainer by back-flushing it", confidence=0.6)
    second = _procedure(graph, "Unblock the pump strainer by removing the basket", confidence=0.5)
    before = [
        r["node_id"] for r in graph.retrieve_procedural("unblock the pump strainer")["results"]
    ]
    for run in range(4):
        graph.learn_from_outcome(f"unblock-{run}", "success", 1.0, [second])
        graph.learn_from_outcome(f"flush-{run}", "failure", 1.0, [first])
    after = [
        r["node_id"] for r in graph.retrieve_procedural("unblock the pump strainer")["results"]
    ]
    ok = before[:1] == [first] and after[:1] == [second]
    return ok, f"before {before}, after {after}"


@scenario(CATEGORY, "Another agent's procedures are not returned")
def agents_apart(graph: Graphonomous) -> tuple[bool, str]:
    mine = _procedure(graph, "Calibrate the scale with the 5 kg weight", agent_id="line-a")
    theirs = _procedure(graph, "Calibrate the scale with the 2 kg weight", agent_id="line-b")
    found = graph.retrieve_procedural("calibrate the scale", agent_id="line-a")["results"]
    ids = [r["node_id"] for r in found]
    return ids == [mine] and theirs not in ids, f"results {ids}"
