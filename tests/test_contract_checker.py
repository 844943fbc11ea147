"""The κ topology contract: schema + semantic checker.

The corpus below is hand-written canonical output (never produced by the
engine).  Structural mutations are judged by both our stdlib interpreter and
`jsonschema` (the oracle, a dev dependency only); semantic mutations are
schema-valid by construction, so only our checker can reject them.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterator
from typing import Any

import jsonschema
import pytest

from graphonomous.contract import (
    DOCUMENT_KINDS,
    Violation,
    camel_to_snake,
    check_analyze_topology,
    check_document,
    check_preview,
    check_retrieve_context,
    check_topology,
    contract_validator,
    detect_kind,
    expected_budget,
    format_report,
    topology_schema,
)

# --------------------------------------------------------------------------
# Hand-written canonical documents
# --------------------------------------------------------------------------


def budget(max_iterations: int, agents: int, timeout: float, confidence: float) -> dict[str, Any]:
    return {
        "max_iterations": max_iterations,
        "agent_count": agents,
        "timeout_multiplier": timeout,
        "confidence_threshold": confidence,
    }


def scc(
    index: int,
    nodes: list[str],
    kappa: int,
    lines: list[tuple[str, str]],
    *,
    approximate: bool = False,
    plan: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "id": f"scc-{index}",
        "nodes": nodes,
        "kappa": kappa,
        "approximate": approximate,
        "fault_line_edges": [{"source": s, "target": t} for s, t in lines],
        "routing": "deliberate",
        "deliberation_budget": plan if plan is not None else budget(2, 1, 1.5, 0.75),
    }


def result(sccs: list[dict[str, Any]], dag: list[str]) -> dict[str, Any]:
    max_kappa = max((entry["kappa"] for entry in sccs), default=0)
    return {
        "sccs": sccs,
        "dag_nodes": dag,
        "routing": "deliberate" if max_kappa else "fast",
        "max_kappa": max_kappa,
        "scc_count": len(sccs),
    }


EMPTY = {"sccs": [], "dag_nodes": [], "routing": "fast", "max_kappa": 0, "scc_count": 0}
CHAIN = result([], ["a", "b", "c"])
CYCLE3 = result([scc(0, ["a", "b", "c"], 1, [("a", "b")])], [])
K22 = result(
    [
        scc(
            0,
            ["a1", "a2", "b1", "b2"],
            2,
            [("a1", "b1"), ("a1", "b2")],
            plan=budget(3, 2, 2.0, 0.8),
        )
    ],
    [],
)
TWO_SCCS = result(
    [scc(0, ["a", "b"], 1, [("a", "b")]), scc(1, ["c", "d", "e"], 1, [("e", "c")])],
    ["x", "z"],
)
BUSINESS = result(
    [
        scc(
            0,
            ["customer-retention", "market-share", "product-quality", "r-and-d", "revenue"],
            1,
            [("product-quality", "market-share")],
        )
    ],
    ["ceo-name", "founding-date"],
)
APPROXIMATE = result(
    [
        scc(
            0,
            [f"n{i:02d}" for i in range(25)],
            25,
            [],
            approximate=True,
            plan=budget(4, 3, 3.5, 0.95),
        )
    ],
    ["zz"],
)
PREVIEW = {
    "creates_new_scc": True,
    "enlarges_existing_scc": False,
    "kappa_before": 0,
    "kappa_after": 1,
    "kappa_delta": 1,
    "description": "κ: 0→1 — creates a feedback loop",
}
PREVIEW_NO_CHANGE = {
    "creates_new_scc": False,
    "enlarges_existing_scc": False,
    "kappa_before": 2,
    "kappa_after": 2,
    "kappa_delta": 0,
    "description": "κ: 2→2 — no change",
}

VALID_TOPOLOGY = {
    "empty": EMPTY,
    "chain": CHAIN,
    "cycle3": CYCLE3,
    "k22": K22,
    "two_sccs": TWO_SCCS,
    "business": BUSINESS,
    "approximate": APPROXIMATE,
}
VALID_PREVIEW = {"creates": PREVIEW, "no_change": PREVIEW_NO_CHANGE}


def oracle(definition: str) -> jsonschema.Draft202012Validator:
    """jsonschema's validator for one $defs entry of our schema file."""
    schema = topology_schema()
    schema["$ref"] = f"#/$defs/{definition}"
    return jsonschema.Draft202012Validator(schema)


def ours_structural(doc: Any, definition: str) -> list[Violation]:
    return contract_validator().validate(doc, ref=f"#/$defs/{definition}")


def mutate(doc: dict[str, Any], edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    changed = copy.deepcopy(doc)
    edit(changed)
    return changed


def rename(obj: dict[str, Any], old: str, new: str) -> None:
    obj[new] = obj.pop(old)


# --------------------------------------------------------------------------
# The schema file itself
# --------------------------------------------------------------------------


def test_schema_is_valid_2020_12_and_has_the_contract_defs() -> None:
    schema = topology_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    for name in (
        "topology_result",
        "scc",
        "deliberation_budget",
        "fault_line_edge",
        "preview_result",
        "retrieve_context_topology",
    ):
        assert name in schema["$defs"]


def test_every_object_in_the_schema_forbids_additional_properties() -> None:
    def objects(node: Any) -> Iterator[dict[str, Any]]:
        if isinstance(node, dict):
            if node.get("type") == "object":
                yield node
            for value in node.values():
                yield from objects(value)
        elif isinstance(node, list):
            for value in node:
                yield from objects(value)

    found = list(objects(topology_schema()))
    assert len(found) >= 5
    assert all(node.get("additionalProperties") is False for node in found)


def test_integer_fields_use_type_integer() -> None:
    defs = topology_schema()["$defs"]
    assert defs["scc"]["properties"]["kappa"]["type"] == "integer"
    assert defs["topology_result"]["properties"]["max_kappa"]["type"] == "integer"
    assert defs["topology_result"]["properties"]["scc_count"]["type"] == "integer"
    assert defs["scc"]["properties"]["id"]["pattern"] == "^scc-(0|[1-9][0-9]*)$"


def test_routing_constants_match_the_schema_enum() -> None:
    from graphonomous.contract.checker import ROUTING_DELIBERATE, ROUTING_FAST

    assert topology_schema()["$defs"]["routing"]["enum"] == [ROUTING_FAST, ROUTING_DELIBERATE]


# --------------------------------------------------------------------------
# Valid corpus
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(VALID_TOPOLOGY))
def test_valid_topology_documents_pass_both_validators(name: str) -> None:
    doc = VALID_TOPOLOGY[name]
    assert oracle("topology_result").is_valid(doc)
    assert oracle("retrieve_context_topology").is_valid(doc)
    assert check_topology(doc) == []
    assert check_document(doc) == []
    assert check_retrieve_context({"status": "ok", "topology": doc}) == []


@pytest.mark.parametrize("name", sorted(VALID_PREVIEW))
def test_valid_previews_pass_both_validators(name: str) -> None:
    doc = VALID_PREVIEW[name]
    assert oracle("preview_result").is_valid(doc)
    assert check_preview(doc) == []
    assert check_document(doc) == []


def test_budget_floats_are_compared_with_tolerance() -> None:
    # 0.7 + 0.05 * 2 evaluates to 0.7999999999999999 in IEEE doubles.
    doc = mutate(
        K22,
        lambda d: d["sccs"][0]["deliberation_budget"].update(confidence_threshold=0.7 + 0.05 * 2),
    )
    assert check_topology(doc) == []
    doc = mutate(
        K22, lambda d: d["sccs"][0]["deliberation_budget"].update(confidence_threshold=0.8001)
    )
    [violation] = check_topology(doc)
    assert violation.path == "$.sccs[0].deliberation_budget.confidence_threshold"
    assert violation.rule == "budget"


def test_expected_budget_follows_the_capped_formula() -> None:
    assert expected_budget(1) == budget(2, 1, 1.5, pytest.approx(0.75))
    assert expected_budget(2)["confidence_threshold"] == pytest.approx(0.8)
    assert expected_budget(25) == budget(4, 3, 3.5, 0.95)


# --------------------------------------------------------------------------
# Structural mutations: both validators agree
# --------------------------------------------------------------------------


def _locate(doc: Any, dotted: str) -> tuple[Any, Any]:
    """(container, key) for a dotted location such as "sccs.0.kappa"."""
    steps: list[Any] = [int(p) if p.isdigit() else p for p in dotted.split(".")]
    container = doc
    for step in steps[:-1]:
        container = container[step]
    return container, steps[-1]


def put(doc: Any, dotted: str, value: Any) -> Any:
    """A copy of `doc` with the value at `dotted` replaced (or added; appended to a list)."""
    changed = copy.deepcopy(doc)
    container, key = _locate(changed, dotted)
    if isinstance(container, list) and key == len(container):
        container.append(value)
    else:
        container[key] = value
    return changed


def drop(doc: Any, dotted: str) -> Any:
    """A copy of `doc` without the key at `dotted`."""
    changed = copy.deepcopy(doc)
    container, key = _locate(changed, dotted)
    del container[key]
    return changed


def ren(doc: Any, dotted: str, new: str) -> Any:
    """A copy of `doc` with the key at `dotted` renamed to `new` (value kept)."""
    changed = copy.deepcopy(doc)
    container, key = _locate(changed, dotted)
    container[new] = container.pop(key)
    return changed


S0 = "sccs.0"
B0 = "sccs.0.deliberation_budget"
L0 = "sccs.0.fault_line_edges"
TOP = "topology_result"
PRE = "preview_result"

# (name, document, definition, JSON path that must be reported)
STRUCTURAL: list[tuple[str, Any, str, str]] = [
    ("overall_routing", ren(CYCLE3, "routing", "overall_routing"), TOP, "$.overall_routing"),
    ("min_cut_edges", ren(CYCLE3, L0, "min_cut_edges"), TOP, "$.sccs[0].min_cut_edges"),
    ("from_to", put(CYCLE3, L0, [{"from": "a", "to": "b"}]), TOP,
     "$.sccs[0].fault_line_edges[0].from"),
    ("a_b", put(CYCLE3, L0, [{"a": "a", "b": "b"}]), TOP, "$.sccs[0].fault_line_edges[0].a"),
    ("maxKappa", ren(CYCLE3, "max_kappa", "maxKappa"), TOP, "$.maxKappa"),
    ("sccCount", ren(CYCLE3, "scc_count", "sccCount"), TOP, "$.sccCount"),
    ("dagNodes", ren(CYCLE3, "dag_nodes", "dagNodes"), TOP, "$.dagNodes"),
    ("faultLineEdges", ren(CYCLE3, L0, "faultLineEdges"), TOP, "$.sccs[0].faultLineEdges"),
    ("deliberationBudget", ren(CYCLE3, B0, "deliberationBudget"), TOP,
     "$.sccs[0].deliberationBudget"),
    ("maxIterations", ren(CYCLE3, f"{B0}.max_iterations", "maxIterations"), TOP,
     "$.sccs[0].deliberation_budget.maxIterations"),
    ("kappa_string", put(CYCLE3, f"{S0}.kappa", "1"), TOP, "$.sccs[0].kappa"),
    ("kappa_bool", put(CYCLE3, f"{S0}.kappa", True), TOP, "$.sccs[0].kappa"),
    ("kappa_fraction", put(CYCLE3, f"{S0}.kappa", 1.5), TOP, "$.sccs[0].kappa"),
    ("kappa_null", put(CYCLE3, f"{S0}.kappa", None), TOP, "$.sccs[0].kappa"),
    ("kappa_zero", put(CYCLE3, f"{S0}.kappa", 0), TOP, "$.sccs[0].kappa"),
    ("kappa_missing", drop(CYCLE3, f"{S0}.kappa"), TOP, "$.sccs[0].kappa"),
    ("approximate_missing", drop(CYCLE3, f"{S0}.approximate"), TOP, "$.sccs[0].approximate"),
    ("approximate_string", put(CYCLE3, f"{S0}.approximate", "false"), TOP, "$.sccs[0].approximate"),
    ("extra_top_key", put(CYCLE3, "recommendation", "think"), TOP, "$.recommendation"),
    ("extra_budget_key", put(CYCLE3, f"{B0}.tokens", 10), TOP,
     "$.sccs[0].deliberation_budget.tokens"),
    ("routing_value", put(CYCLE3, "routing", "Deliberate"), TOP, "$.routing"),
    ("routing_retrieve", put(CYCLE3, f"{S0}.routing", "retrieve"), TOP, "$.sccs[0].routing"),
    ("id_leading_zero", put(CYCLE3, f"{S0}.id", "scc-00"), TOP, "$.sccs[0].id"),
    ("id_upper", put(CYCLE3, f"{S0}.id", "SCC-0"), TOP, "$.sccs[0].id"),
    ("id_int", put(CYCLE3, f"{S0}.id", 0), TOP, "$.sccs[0].id"),
    ("one_node_scc", put(CYCLE3, f"{S0}.nodes", ["a"]), TOP, "$.sccs[0].nodes"),
    ("empty_node_id", put(CHAIN, "dag_nodes", ["", "a"]), TOP, "$.dag_nodes[0]"),
    ("node_not_string", put(CHAIN, "dag_nodes", [1, "a"]), TOP, "$.dag_nodes[0]"),
    ("dag_null", put(CHAIN, "dag_nodes", None), TOP, "$.dag_nodes"),
    ("sccs_object", put(CYCLE3, "sccs", {"scc-0": CYCLE3["sccs"][0]}), TOP, "$.sccs"),
    ("max_kappa_negative", put(EMPTY, "max_kappa", -1), TOP, "$.max_kappa"),
    ("scc_count_string", put(EMPTY, "scc_count", "0"), TOP, "$.scc_count"),
    ("budget_iterations_uncapped", put(APPROXIMATE, f"{B0}.max_iterations", 26), TOP,
     "$.sccs[0].deliberation_budget.max_iterations"),
    ("budget_confidence_uncapped", put(APPROXIMATE, f"{B0}.confidence_threshold", 1.95), TOP,
     "$.sccs[0].deliberation_budget.confidence_threshold"),
    ("budget_timeout_bool", put(CYCLE3, f"{B0}.timeout_multiplier", True), TOP,
     "$.sccs[0].deliberation_budget.timeout_multiplier"),
    ("fault_line_target_missing", drop(CYCLE3, f"{L0}.0.target"), TOP,
     "$.sccs[0].fault_line_edges[0].target"),
    ("top_level_array", [CYCLE3], TOP, "$"),
    ("top_level_null", None, TOP, "$"),
    ("preview_delta_string", put(PREVIEW, "kappa_delta", "1"), PRE, "$.kappa_delta"),
    ("preview_flag_int", put(PREVIEW, "creates_new_scc", 1), PRE, "$.creates_new_scc"),
    ("preview_camel", ren(PREVIEW, "creates_new_scc", "createsNewSCC"), PRE, "$.createsNewSCC"),
    ("preview_missing_description", drop(PREVIEW, "description"), PRE, "$.description"),
]  # fmt: skip


def test_the_structural_corpus_is_large_enough() -> None:
    assert len(STRUCTURAL) >= 30


@pytest.mark.parametrize(
    ("name", "doc", "definition", "path"), STRUCTURAL, ids=[m[0] for m in STRUCTURAL]
)
def test_structural_mutations_rejected_by_both_and_paths_reported(
    name: str, doc: Any, definition: str, path: str
) -> None:
    assert not oracle(definition).is_valid(doc)
    structural = ours_structural(doc, definition)
    assert structural, "our interpreter accepted a document jsonschema rejects"
    assert path in {violation.path for violation in structural}
    assert path in {violation.path for violation in check_document(doc, definition.split("_")[0])}


def _all_locations(value: Any, trail: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield trail
    if isinstance(value, dict):
        for key, member in value.items():
            yield from _all_locations(member, (*trail, key))
    elif isinstance(value, list):
        for index, member in enumerate(value):
            yield from _all_locations(member, (*trail, index))


def _random_mutation(rng: random.Random, doc: Any) -> Any:
    """Delete a key, add a key, change a type, bool for int, string κ, or null."""
    doc = copy.deepcopy(doc)
    trail = rng.choice([t for t in _all_locations(doc) if t])
    parent = doc
    for step in trail[:-1]:
        parent = parent[step]
    last = trail[-1]
    current = parent[last]
    action = rng.choice(["delete", "add", "retype", "bool_for_int", "string_kappa", "null"])
    if action == "delete" and isinstance(parent, dict):
        del parent[last]
    elif action == "add":
        target = current if isinstance(current, dict) else parent
        if isinstance(target, dict):
            target[rng.choice(["extra", "overall_routing", "kappaValue", "from"])] = rng.choice(
                [1, "x", None]
            )
    elif action == "retype":
        options: list[Any] = [7, 2.5, "text", True, [], {}, None]
        parent[last] = rng.choice([o for o in options if type(o) is not type(current)])
    elif action == "bool_for_int":
        parent[last] = rng.choice([True, False])
    elif action == "string_kappa":
        parent[last] = str(current)
    else:
        parent[last] = None
    return doc


def test_random_structural_mutations_agree_with_jsonschema() -> None:
    rng = random.Random(20260321)
    seeds = list(VALID_TOPOLOGY.values())
    oracle_topology = oracle("topology_result")
    oracle_preview = oracle("preview_result")
    invalid = 0
    for _ in range(400):
        if rng.random() < 0.8:
            doc, definition, judge = (
                _random_mutation(rng, rng.choice(seeds)),
                "topology_result",
                oracle_topology,
            )
        else:
            doc = _random_mutation(rng, rng.choice(list(VALID_PREVIEW.values())))
            definition, judge = "preview_result", oracle_preview
        theirs = judge.is_valid(doc)
        ours = not ours_structural(doc, definition)
        assert ours == theirs, (definition, json.dumps(doc))
        if not theirs:
            invalid += 1
            # The full checker never accepts what the schema rejects.
            assert check_document(doc, definition.split("_")[0])
    assert invalid > 250  # the generator really produces broken documents


def test_both_validators_report_the_same_error_locations() -> None:
    doc = mutate(TWO_SCCS, lambda d: d["sccs"][1].update(kappa="1", approximate=None))
    theirs = {
        "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        for error in oracle("topology_result").iter_errors(doc)
    }
    ours = {violation.path for violation in ours_structural(doc, "topology_result")}
    assert ours == theirs == {"$.sccs[1].kappa", "$.sccs[1].approximate"}


# --------------------------------------------------------------------------
# Drift hints
# --------------------------------------------------------------------------


DRIFT_HINTS: list[tuple[Any, str, str]] = [
    (ren(CYCLE3, "routing", "overall_routing"), "$.overall_routing", "use 'routing'"),
    (ren(CYCLE3, L0, "min_cut_edges"), "$.sccs[0].min_cut_edges", "use 'fault_line_edges'"),
    (put(CYCLE3, L0, [{"from": "a", "to": "b"}]), "$.sccs[0].fault_line_edges[0].to",
     "use 'target'"),
    (put(CYCLE3, L0, [{"a": "a", "b": "b"}]), "$.sccs[0].fault_line_edges[0].a", "use 'source'"),
    (put(CYCLE3, L0, [{"source_id": "a", "target": "b"}]),
     "$.sccs[0].fault_line_edges[0].source_id", "use 'source'"),
    (ren(CYCLE3, "max_kappa", "maxKappa"), "$.maxKappa", "use 'max_kappa'"),
    (ren(CYCLE3, "scc_count", "sccCount"), "$.sccCount", "use 'scc_count'"),
    (ren(CYCLE3, "dag_nodes", "dagNodes"), "$.dagNodes", "use 'dag_nodes'"),
    (ren(CYCLE3, L0, "faultLineEdges"), "$.sccs[0].faultLineEdges", "use 'fault_line_edges'"),
    (ren(CYCLE3, B0, "deliberationBudget"), "$.sccs[0].deliberationBudget",
     "use 'deliberation_budget'"),
    (ren(CYCLE3, "routing", "overallRouting"), "$.overallRouting", "use 'routing'"),
    (ren(PREVIEW, "creates_new_scc", "createsNewSCC"), "$.createsNewSCC", "use 'creates_new_scc'"),
    (put(CYCLE3, f"{S0}.routing", "retrieve"), "$.sccs[0].routing", "use 'fast'"),
]  # fmt: skip


@pytest.mark.parametrize(("doc", "path", "advice"), DRIFT_HINTS)
def test_drifted_names_get_a_targeted_hint(doc: dict[str, Any], path: str, advice: str) -> None:
    messages = [v.message for v in check_document(doc) if v.path == path]
    assert len(messages) == 1
    assert advice in messages[0]


def test_camel_to_snake() -> None:
    assert camel_to_snake("maxKappa") == "max_kappa"
    assert camel_to_snake("createsNewSCC") == "creates_new_scc"
    assert camel_to_snake("faultLineEdges") == "fault_line_edges"
    assert camel_to_snake("max_kappa") == "max_kappa"


def test_unknown_key_without_hint_lists_the_allowed_keys() -> None:
    [violation] = check_topology(mutate(EMPTY, lambda d: d.update(zzz=1)))
    assert violation.path == "$.zzz"
    assert "allowed keys: dag_nodes, max_kappa, routing, scc_count, sccs" in violation.message


def test_string_kappa_is_reported_once_without_follow_on_noise() -> None:
    violations = check_topology(mutate(CYCLE3, lambda d: d["sccs"][0].update(kappa="1")))
    assert [(v.path, v.rule) for v in violations] == [("$.sccs[0].kappa", "type")]
    assert violations[0].message == 'must be an integer; got string "1"'


def test_bool_kappa_is_not_an_integer() -> None:
    violations = check_topology(mutate(CYCLE3, lambda d: d["sccs"][0].update(kappa=True)))
    assert [str(v) for v in violations] == ["$.sccs[0].kappa: must be an integer; got boolean true"]


# --------------------------------------------------------------------------
# Semantic mutations: valid for JSON Schema, rejected by our checker
# --------------------------------------------------------------------------
# JSON Schema cannot relate one field to another (counts, maxima, formulas,
# ordering, set membership), so jsonschema accepts every document below.

K22_LINES = "sccs.0.fault_line_edges"
SEMANTIC: list[tuple[str, Any, str, str]] = [
    ("scc_count", put(CYCLE3, "scc_count", 2), "$.scc_count", "scc-count"),
    ("max_kappa", put(K22, "max_kappa", 1), "$.max_kappa", "max-kappa"),
    ("max_kappa_empty", put(put(CHAIN, "max_kappa", 1), "routing", "deliberate"), "$.max_kappa",
     "max-kappa"),
    ("routing_top", put(CYCLE3, "routing", "fast"), "$.routing", "routing"),
    ("routing_top_empty", put(EMPTY, "routing", "deliberate"), "$.routing", "routing"),
    ("routing_scc", put(CYCLE3, f"{S0}.routing", "fast"), "$.sccs[0].routing", "routing"),
    ("id_not_consecutive", put(TWO_SCCS, "sccs.1.id", "scc-2"), "$.sccs[1].id", "scc-id"),
    ("id_first", put(CYCLE3, f"{S0}.id", "scc-1"), "$.sccs[0].id", "scc-id"),
    ("dag_and_scc", put(CYCLE3, "dag_nodes", ["b"]), "$.dag_nodes[0]", "node-partition"),
    ("two_sccs", put(TWO_SCCS, "sccs.1.nodes", ["b", "d", "e"]), "$.sccs[1].nodes[0]",
     "node-partition"),
    ("duplicate_scc_node", put(CYCLE3, f"{S0}.nodes", ["a", "b", "b", "c"]), "$.sccs[0].nodes[2]",
     "duplicate-node"),
    ("duplicate_dag_node", put(CHAIN, "dag_nodes", ["a", "a", "b"]), "$.dag_nodes[1]",
     "duplicate-node"),
    ("approximate_with_lines", put(CYCLE3, f"{S0}.approximate", True), "$.sccs[0].fault_line_edges",
     "approximate-fault-lines"),
    ("too_few_lines", drop(K22, f"{L0}.1"), "$.sccs[0].fault_line_edges", "fault-line-count"),
    ("too_many_lines", put(CYCLE3, f"{L0}.1", {"source": "b", "target": "c"}),
     "$.sccs[0].fault_line_edges", "fault-line-count"),
    ("endpoint_outside", put(CYCLE3, f"{L0}.0.target", "x"), "$.sccs[0].fault_line_edges[0].target",
     "fault-line-endpoint"),
    ("self_loop_line", put(CYCLE3, f"{L0}.0.target", "a"), "$.sccs[0].fault_line_edges[0]",
     "fault-line-self-loop"),
    ("duplicate_line", put(K22, f"{L0}.1", {"source": "a1", "target": "b1"}),
     "$.sccs[0].fault_line_edges[1]", "fault-line-duplicate"),
    ("not_one_cut", put(K22, f"{L0}.1", {"source": "b1", "target": "a2"}),
     "$.sccs[0].fault_line_edges", "fault-line-cut"),
    ("budget_iterations", put(CYCLE3, f"{B0}.max_iterations", 3),
     "$.sccs[0].deliberation_budget.max_iterations", "budget"),
    ("budget_agents", put(K22, f"{B0}.agent_count", 1), "$.sccs[0].deliberation_budget.agent_count",
     "budget"),
    ("budget_timeout", put(K22, f"{B0}.timeout_multiplier", 1.5),
     "$.sccs[0].deliberation_budget.timeout_multiplier", "budget"),
    ("budget_confidence", put(CYCLE3, f"{B0}.confidence_threshold", 0.8),
     "$.sccs[0].deliberation_budget.confidence_threshold", "budget"),
    ("kappa_too_big", put(put(CYCLE3, f"{S0}.kappa", 3), L0, [
        {"source": "a", "target": "b"}, {"source": "a", "target": "c"},
        {"source": "b", "target": "c"}]),
     "$.sccs[0].kappa", "kappa-bound"),
    ("approx_kappa_too_big", put(APPROXIMATE, f"{S0}.kappa", 26), "$.sccs[0].kappa", "kappa-bound"),
    ("kappa_float_literal", put(CYCLE3, f"{S0}.kappa", 1.0), "$.sccs[0].kappa", "integer-literal"),
    ("scc_count_float_literal", put(CYCLE3, "scc_count", 1.0), "$.scc_count", "integer-literal"),
    ("unsorted_scc_nodes", put(CYCLE3, f"{S0}.nodes", ["b", "a", "c"]), "$.sccs[0].nodes[1]",
     "ordering"),
    ("unsorted_sccs", put(put(put(TWO_SCCS, "sccs", TWO_SCCS["sccs"][::-1]), "sccs.0.id", "scc-0"),
                          "sccs.1.id", "scc-1"), "$.sccs[1]", "ordering"),
    ("unsorted_lines", put(K22, L0, K22["sccs"][0]["fault_line_edges"][::-1]),
     "$.sccs[0].fault_line_edges[1]", "ordering"),
    ("unsorted_dag", put(TWO_SCCS, "dag_nodes", ["z", "x"]), "$.dag_nodes[1]", "ordering"),
    ("code_point_order", put(CHAIN, "dag_nodes", ["a", "B"]), "$.dag_nodes[1]", "ordering"),
]  # fmt: skip

SEMANTIC_PREVIEW: list[tuple[str, Any, str, str]] = [
    ("delta", put(PREVIEW, "kappa_delta", 2), "$.kappa_delta", "kappa-delta"),
    ("both_flags",
     put(put(PREVIEW_NO_CHANGE, "creates_new_scc", True), "enlarges_existing_scc", True),
     "$.enlarges_existing_scc", "preview-flags"),
    ("new_scc_without_kappa", put(put(PREVIEW, "kappa_after", 0), "kappa_delta", 0),
     "$.creates_new_scc", "preview-flags"),
    ("missed_new_scc", put(PREVIEW, "creates_new_scc", False), "$.creates_new_scc",
     "preview-flags"),
    ("enlarge_nothing", put(put(PREVIEW, "creates_new_scc", False), "enlarges_existing_scc", True),
     "$.enlarges_existing_scc", "preview-flags"),
    ("delta_float_literal", put(PREVIEW, "kappa_delta", 1.0), "$.kappa_delta", "integer-literal"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "doc", "path", "rule"), SEMANTIC, ids=[m[0] for m in SEMANTIC])
def test_semantic_mutations_pass_jsonschema_but_not_our_checker(
    name: str, doc: dict[str, Any], path: str, rule: str
) -> None:
    assert oracle("topology_result").is_valid(doc), "not a purely semantic mutation"
    assert ours_structural(doc, "topology_result") == []
    violations = check_topology(doc)
    assert (path, rule) in {(v.path, v.rule) for v in violations}, violations


@pytest.mark.parametrize(
    ("name", "doc", "path", "rule"), SEMANTIC_PREVIEW, ids=[m[0] for m in SEMANTIC_PREVIEW]
)
def test_semantic_preview_mutations(name: str, doc: dict[str, Any], path: str, rule: str) -> None:
    assert oracle("preview_result").is_valid(doc)
    assert (path, rule) in {(v.path, v.rule) for v in check_preview(doc)}


def test_semantic_messages_are_precise() -> None:
    [count] = check_topology(mutate(CYCLE3, lambda d: d.update(scc_count=2)))
    assert count.message == "must equal the number of entries in sccs (1); got 2"
    [iterations] = check_topology(
        mutate(CYCLE3, lambda d: d["sccs"][0]["deliberation_budget"].update(max_iterations=3))
    )
    assert iterations.message == "must be min(κ + 1, 4) = 2 for κ = 1; got 3"
    [partition] = check_topology(mutate(CYCLE3, lambda d: d.update(dag_nodes=["b"])))
    assert "'b'" in partition.message and "$.sccs[0].nodes[1]" in partition.message


def test_every_problem_is_reported_not_just_the_first() -> None:
    doc = mutate(
        TWO_SCCS,
        lambda d: (
            d.update(scc_count=5, dag_nodes=["z", "x"]),
            d["sccs"][0].update(routing="fast"),
            d["sccs"][1].update(kappa="1"),
        ),
    )
    paths = [v.path for v in check_topology(doc)]
    assert paths == ["$.dag_nodes[1]", "$.scc_count", "$.sccs[0].routing", "$.sccs[1].kappa"]


# --------------------------------------------------------------------------
# Kinds, retrieve_context and reports
# --------------------------------------------------------------------------


def test_detect_kind() -> None:
    assert detect_kind(CYCLE3) == "topology"
    assert detect_kind(PREVIEW) == "preview"
    assert detect_kind({"createsNewSCC": True}) == "preview"
    assert detect_kind({"overall_routing": "fast"}) == "topology"
    assert detect_kind({"status": "ok", "topology": EMPTY}) == "retrieve_context"
    assert detect_kind([]) == "topology"
    assert detect_kind({**CYCLE3, "recommendation": "think"}) == "analyze_topology"
    assert set(DOCUMENT_KINDS) == {
        "auto",
        "topology",
        "analyze_topology",
        "preview",
        "retrieve_context",
    }


def test_analyze_topology_response_is_a_result_plus_recommendation() -> None:
    response = {**CYCLE3, "recommendation": "Deliberate on the fault line a→b before answering."}
    assert check_document(response) == []
    assert check_analyze_topology(response) == []
    [plain] = check_topology(response)
    assert plain.path == "$.recommendation"
    assert "analyze_topology response" in plain.message
    assert [(v.path, v.rule) for v in check_analyze_topology(CYCLE3)] == [
        ("$.recommendation", "required")
    ]
    wrong = {**put(CYCLE3, "max_kappa", 2), "recommendation": ""}
    assert [(v.path, v.rule) for v in check_document(wrong)] == [
        ("$.max_kappa", "max-kappa"),
        ("$.recommendation", "minLength"),
    ]
    assert [v.path for v in check_analyze_topology(None)] == ["$"]


def test_check_document_rejects_unknown_kind() -> None:
    with pytest.raises(ValueError, match="kind must be one of"):
        check_document(EMPTY, "manifest")


def test_retrieve_context_paths_are_prefixed() -> None:
    response = {
        "status": "ok",
        "results": [],
        "topology": mutate(CYCLE3, lambda d: d.update(max_kappa=2)),
    }
    [violation] = check_document(response)
    assert violation.path == "$.topology.max_kappa"
    assert check_retrieve_context({"status": "ok"})[0].path == "$.topology"
    assert check_retrieve_context([])[0].path == "$"


def test_format_report_human_and_json() -> None:
    violations = check_topology(mutate(CYCLE3, lambda d: rename(d, "routing", "overall_routing")))
    text = format_report(violations, kind="topology")
    assert text.splitlines()[0] == "invalid topology document: 2 violations"
    assert "$.overall_routing: unknown key 'overall_routing'" in text
    payload = json.loads(format_report(violations, as_json=True, kind="topology"))
    assert payload["valid"] is False and payload["kind"] == "topology"
    assert payload["violation_count"] == 2
    assert {v["path"] for v in payload["violations"]} == {"$.overall_routing", "$.routing"}
    assert format_report([]) == "valid document: no violations"
    assert json.loads(format_report([], as_json=True)) == {
        "valid": True,
        "violation_count": 0,
        "violations": [],
    }
