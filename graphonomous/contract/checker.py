"""The canonical κ topology contract: schema plus the rules a schema cannot say.

:func:`check_document` validates a topology result, an edge-impact preview or a
retrieve_context response against ``topology.schema.json`` (structure) and then
applies the semantic rules of seed 000 §A.1 as pinned down in SPEC.md: counts,
routing, the capped deliberation budget, the node partition, fault lines and
canonical ordering.  Every problem is returned as a :class:`Violation` with a
JSON path; nothing stops at the first error.

Where both layers would flag the same location (``"kappa": "2"`` is a type
error; its budget then cannot be checked) only the schema message is kept.
Canonical ordering is an error, not a warning: outputs must be deterministic
and byte-comparable across ports.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from graphonomous.contract.options import DOCUMENT_KINDS as DOCUMENT_KINDS
from graphonomous.contract.schema import (
    SchemaValidator,
    Violation,
    describe,
    index_path,
    key_path,
    load_package_schema,
    path_sort_key,
)

SCHEMA_PACKAGE: Final = "graphonomous.contract"
SCHEMA_FILE: Final = "topology.schema.json"
# The one key an analyze_topology response adds to a topology result (seed 000).
RECOMMENDATION_KEY: Final = "recommendation"

ROUTING_FAST: Final = "fast"
ROUTING_DELIBERATE: Final = "deliberate"

# The capped deliberation budget (seed 000 v2): each value grows with κ up to a cap.
MAX_ITERATIONS_CAP: Final = 4
AGENT_COUNT_CAP: Final = 3
TIMEOUT_MULTIPLIER_CAP: Final = 3.5
CONFIDENCE_THRESHOLD_CAP: Final = 0.95
# Budget floats are compared with this absolute tolerance: ports may evaluate
# 0.7 + 0.05κ with different rounding (0.7999999999999999 versus 0.8).
FLOAT_TOLERANCE: Final = 1e-9

# Names seen in drifted implementations → the canonical key (seed 000 §A.1).
DRIFTED_KEYS: Final[Mapping[str, str]] = {
    "overall_routing": "routing",
    "min_cut_edges": "fault_line_edges",
    "from": "source",
    "to": "target",
    "a": "source",
    "b": "target",
    "source_id": "source",
    "target_id": "target",
}
# Values seen in drifted implementations → the canonical value.
DRIFTED_VALUES: Final[Mapping[str, str]] = {"retrieve": ROUTING_FAST}

_TOPOLOGY_KEYS: Final = frozenset({"sccs", "dag_nodes", "routing", "max_kappa", "scc_count"})
_PREVIEW_KEYS: Final = frozenset(
    {
        "creates_new_scc",
        "enlarges_existing_scc",
        "kappa_before",
        "kappa_after",
        "kappa_delta",
        "description",
    }
)
_SCC_ID: Final = re.compile(r"scc-(0|[1-9][0-9]*)\Z")
_CAMEL_BOUNDARY: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


# --------------------------------------------------------------------------
# Schema access and drift hints
# --------------------------------------------------------------------------


def camel_to_snake(name: str) -> str:
    """``maxKappa`` → ``max_kappa``, ``createsNewSCC`` → ``creates_new_scc``."""
    return _CAMEL_BOUNDARY.sub("_", name).lower()


def drift_hint(rule: str, subject: Any, allowed: tuple[Any, ...]) -> str | None:
    """Advice for a drifted key or value (the :data:`HintHook` of the contract).

    Input: the failing rule, the offending key or value and what is allowed
    there.  Output: "use 'routing' …" or None.  An unknown key is first
    converted from camelCase, then looked up in :data:`DRIFTED_KEYS`.
    """
    if rule == "enum" and isinstance(subject, str) and DRIFTED_VALUES.get(subject) in allowed:
        return (
            f"use {DRIFTED_VALUES[subject]!r}: {subject!r} is the reference implementation's "
            "name, renamed in the canonical schema"
        )
    if rule != "additionalProperties" or not isinstance(subject, str):
        return None
    if subject == RECOMMENDATION_KEY and "sccs" in allowed:
        return "it belongs to an analyze_topology response: check the document as that kind"
    snake = camel_to_snake(subject)
    canonical = DRIFTED_KEYS.get(snake, snake)
    if canonical == subject or canonical not in allowed:
        return None
    if snake != subject:
        return (
            f"use {canonical!r}: network payloads use snake_case keys "
            "(camelCase is for JS-internal objects only)"
        )
    return f"use {canonical!r} (the canonical name in seed 000 §A.1; {subject!r} is a drifted name)"


def topology_schema() -> dict[str, Any]:
    """The contract schema document (a fresh copy, loaded from package data)."""
    return load_package_schema(SCHEMA_PACKAGE, SCHEMA_FILE)


@functools.cache
def contract_validator() -> SchemaValidator:
    """The validator for ``topology.schema.json``, built once (it is immutable)."""
    return SchemaValidator(topology_schema(), hint=drift_hint)


# --------------------------------------------------------------------------
# Public checks
# --------------------------------------------------------------------------


def check_topology(doc: Any, *, path: str = "$") -> list[Violation]:
    """Every violation of a topology result (analyze / analyze_topology output).

    Input: a parsed JSON value; `path` is the path reported for it.
    Output: violations sorted by path (schema first at equal paths).
    Complexity: O(N log N) for N nodes and fault lines in the document.
    Reference: seed 000 §A.1; SPEC.md "Topology contract".
    """
    structural = contract_validator().validate(doc, ref="#/$defs/topology_result", path=path)
    semantic: list[Violation] = []
    if isinstance(doc, dict):
        _check_topology_semantics(doc, path, semantic)
    return _merge(structural, semantic)


def check_preview(doc: Any, *, path: str = "$") -> list[Violation]:
    """Every violation of an edge-impact preview (preview_edge_impact output).

    Input: a parsed JSON value.  Output: violations sorted by path.
    Complexity: O(1).
    """
    structural = contract_validator().validate(doc, ref="#/$defs/preview_result", path=path)
    semantic: list[Violation] = []
    if isinstance(doc, dict):
        _check_preview_semantics(doc, path, semantic)
    return _merge(structural, semantic)


def check_analyze_topology(doc: Any) -> list[Violation]:
    """An analyze_topology tool response: a topology result plus ``recommendation``.

    Input: a parsed JSON value.  Output: violations sorted by path.
    """
    if not isinstance(doc, dict) or RECOMMENDATION_KEY not in doc:
        missing = Violation(
            key_path("$", RECOMMENDATION_KEY),
            f"required key {RECOMMENDATION_KEY!r} is missing",
            "required",
        )
        return _merge([missing] if isinstance(doc, dict) else [], check_topology(doc))
    rest = {key: value for key, value in doc.items() if key != RECOMMENDATION_KEY}
    prose = contract_validator().validate(
        doc[RECOMMENDATION_KEY],
        ref="#/$defs/recommendation",
        path=key_path("$", RECOMMENDATION_KEY),
    )
    return _merge(prose, check_topology(rest))


def check_retrieve_context(doc: Any) -> list[Violation]:
    """Check the ``topology`` field of a retrieve_context response.

    The other fields of the response belong to the MCP layer and are not
    checked here.
    """
    if not isinstance(doc, dict):
        return [
            Violation(
                "$", f"must be an object (a retrieve_context response); got {describe(doc)}", "type"
            )
        ]
    if "topology" not in doc:
        return [Violation("$.topology", "required key 'topology' is missing", "required")]
    return check_topology(doc["topology"], path="$.topology")


def _canonical_keys(doc: Mapping[str, Any]) -> set[str]:
    """The document's keys after undoing drift (camelCase, old names)."""
    keys = set()
    for key in doc:
        snake = camel_to_snake(key)
        keys.add(DRIFTED_KEYS.get(snake, snake))
    return keys


def is_contract_document(doc: Any) -> bool:
    """Whether `doc` has a key of some contract kind (after undoing drift).

    Used where a value may or may not be a contract document (an MCP result
    whose tool is unknown); :func:`detect_kind` then names its kind.
    """
    if not isinstance(doc, dict):
        return False
    keys = _canonical_keys(doc)
    return bool(keys & (_TOPOLOGY_KEYS | _PREVIEW_KEYS)) or "topology" in keys


def detect_kind(doc: Any) -> str:
    """Guess the document kind: "topology", "analyze_topology", "preview" or "retrieve_context".

    Keys are compared after undoing drift (camelCase, old names), so a
    drifted preview is still recognised as a preview.  Anything else is
    treated as a topology result, whose check then reports what is missing.
    """
    if not isinstance(doc, dict):
        return "topology"
    keys = _canonical_keys(doc)
    if keys & _TOPOLOGY_KEYS:
        return "analyze_topology" if RECOMMENDATION_KEY in keys else "topology"
    if keys & _PREVIEW_KEYS:
        return "preview"
    if "topology" in keys:
        return "retrieve_context"
    return "topology"


def check_document(doc: Any, kind: str = "auto") -> list[Violation]:
    """Check `doc` as `kind` (one of :data:`DOCUMENT_KINDS`; "auto" detects it)."""
    if kind not in DOCUMENT_KINDS:
        raise ValueError(f"kind must be one of {', '.join(DOCUMENT_KINDS)}; got {kind!r}")
    chosen = detect_kind(doc) if kind == "auto" else kind
    checks: Mapping[str, Callable[[Any], list[Violation]]] = {
        "topology": check_topology,
        "analyze_topology": check_analyze_topology,
        "preview": check_preview,
        "retrieve_context": check_retrieve_context,
    }
    return checks[chosen](doc)


def format_report(
    violations: Sequence[Violation], as_json: bool = False, *, kind: str | None = None
) -> str:
    """Render violations for people (one per line) or machines (a JSON object)."""
    if as_json:
        payload: dict[str, Any] = {"valid": not violations}
        if kind is not None:
            payload["kind"] = kind
        payload["violation_count"] = len(violations)
        payload["violations"] = [violation.to_dict() for violation in violations]
        return json.dumps(payload, indent=2, ensure_ascii=False)
    subject = f"{kind} document" if kind else "document"
    if not violations:
        return f"valid {subject}: no violations"
    count = len(violations)
    lines = [f"invalid {subject}: {count} violation{'' if count == 1 else 's'}"]
    lines += [f"  {violation}  [{violation.rule}]" for violation in violations]
    return "\n".join(lines)


def expected_budget(kappa: int) -> dict[str, int | float]:
    """The capped deliberation budget for κ (seed 000 v2)."""
    return {
        "max_iterations": min(kappa + 1, MAX_ITERATIONS_CAP),
        "agent_count": min(kappa, AGENT_COUNT_CAP),
        "timeout_multiplier": min(1.0 + 0.5 * kappa, TIMEOUT_MULTIPLIER_CAP),
        "confidence_threshold": min(0.7 + 0.05 * kappa, CONFIDENCE_THRESHOLD_CAP),
    }


def expected_routing(kappa: int) -> str:
    """Routing for a κ: deliberate exactly when there is a feedback loop."""
    return ROUTING_DELIBERATE if kappa > 0 else ROUTING_FAST


# --------------------------------------------------------------------------
# Semantic rules: topology result
# --------------------------------------------------------------------------

_BUDGET_FORMULAS: Final[Mapping[str, str]] = {
    "max_iterations": "min(κ + 1, 4)",
    "agent_count": "min(κ, 3)",
    "timeout_multiplier": "min(1 + 0.5κ, 3.5)",
    "confidence_threshold": "min(0.7 + 0.05κ, 0.95)",
}


def _as_int(value: Any) -> int | None:
    """The integer a JSON value denotes (2 and 2.0), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _list_member(obj: Mapping[str, Any], key: str) -> list[Any] | None:
    value = obj.get(key)
    return value if isinstance(value, list) else None


def _string_list(value: Any) -> list[str] | None:
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    return None


def _check_integer_literal(
    obj: Mapping[str, Any], key: str, path: str, out: list[Violation]
) -> None:
    # JSON Schema accepts 2.0 as an integer, but consumers in typed ports
    # (Elixir, Python) would see a float: the contract wants the literal 2.
    value = obj.get(key)
    if isinstance(value, float) and value.is_integer():
        out.append(
            Violation(
                key_path(path, key),
                f"must be written as a JSON integer ({int(value)}), not {json.dumps(value)}",
                "integer-literal",
            )
        )


def _check_topology_semantics(doc: Mapping[str, Any], path: str, out: list[Violation]) -> None:
    for key in ("max_kappa", "scc_count"):
        _check_integer_literal(doc, key, path, out)
    sccs_path = key_path(path, "sccs")
    sccs = _list_member(doc, "sccs")
    kappas: list[int] | None = [] if sccs is not None else None
    for index, scc in enumerate(sccs or []):
        kappa = (
            _check_scc(scc, index, index_path(sccs_path, index), out)
            if isinstance(scc, dict)
            else None
        )
        if kappa is None or kappas is None:
            kappas = None
        else:
            kappas.append(kappa)

    scc_count = _as_int(doc.get("scc_count"))
    if sccs is not None and scc_count is not None and scc_count != len(sccs):
        out.append(
            Violation(
                key_path(path, "scc_count"),
                f"must equal the number of entries in sccs ({len(sccs)}); got {scc_count}",
                "scc-count",
            )
        )
    max_kappa = _as_int(doc.get("max_kappa"))
    if kappas is not None and max_kappa is not None and max_kappa != max(kappas, default=0):
        out.append(
            Violation(
                key_path(path, "max_kappa"),
                "must be the largest κ over sccs (0 when there are none), "
                f"{max(kappas, default=0)}; got {max_kappa}",
                "max-kappa",
            )
        )
    routing = doc.get("routing")
    if max_kappa is not None and routing in (ROUTING_FAST, ROUTING_DELIBERATE):
        wanted = expected_routing(max_kappa)
        if routing != wanted:
            out.append(
                Violation(
                    key_path(path, "routing"),
                    f"must be {wanted!r} because max_kappa is {max_kappa} "
                    f"({'> 0' if max_kappa > 0 else '0'}); got {routing!r}",
                    "routing",
                )
            )
    _check_node_partition(doc, path, out)
    _check_scc_order(sccs or [], sccs_path, out)
    dag_nodes = _string_list(doc.get("dag_nodes"))
    if dag_nodes is not None:
        _check_sorted(dag_nodes, key_path(path, "dag_nodes"), "dag_nodes", out)


def _check_scc(scc: Mapping[str, Any], index: int, path: str, out: list[Violation]) -> int | None:
    """Rules local to one SCC entry.  Returns its κ (None if unusable)."""
    _check_integer_literal(scc, "kappa", path, out)
    scc_id = scc.get("id")
    if isinstance(scc_id, str) and _SCC_ID.match(scc_id) and scc_id != f"scc-{index}":
        out.append(
            Violation(
                key_path(path, "id"),
                f"must be 'scc-{index}': ids number the SCCs scc-0, scc-1, … consecutively "
                f"in list order; got {scc_id!r}",
                "scc-id",
            )
        )
    kappa = _as_int(scc.get("kappa"))
    nodes = _string_list(scc.get("nodes"))
    if nodes is not None:
        _check_sorted(nodes, key_path(path, "nodes"), "SCC nodes", out)
    if kappa is None:
        return None
    routing = scc.get("routing")
    if routing in (ROUTING_FAST, ROUTING_DELIBERATE) and routing != expected_routing(kappa):
        out.append(
            Violation(
                key_path(path, "routing"),
                f"must be {expected_routing(kappa)!r} because this SCC's κ is {kappa}; "
                f"got {routing!r}",
                "routing",
            )
        )
    approximate = scc.get("approximate")
    if nodes is not None and isinstance(approximate, bool):
        _check_kappa_bound(kappa, len(nodes), approximate, key_path(path, "kappa"), out)
    _check_fault_lines(scc, kappa, nodes, path, out)
    budget = scc.get("deliberation_budget")
    if isinstance(budget, dict):
        _check_budget(budget, kappa, key_path(path, "deliberation_budget"), out)
    return kappa


def _check_kappa_bound(
    kappa: int, size: int, approximate: bool, path: str, out: list[Violation]
) -> None:
    # Exact: κ ≤ min out-degree ≤ n − 1.  Approximate: an upper bound, at most n (seed 000).
    limit = size if approximate else size - 1
    if kappa > limit:
        why = (
            "an approximate κ is an upper bound no larger than the SCC size"
            if approximate
            else "κ cannot exceed n − 1 (a node has at most n − 1 out-neighbours)"
        )
        out.append(
            Violation(
                path, f"κ = {kappa} is impossible for an SCC of {size} nodes: {why}", "kappa-bound"
            )
        )


def _check_fault_lines(
    scc: Mapping[str, Any], kappa: int, nodes: list[str] | None, path: str, out: list[Violation]
) -> None:
    raw = scc.get("fault_line_edges")
    if not isinstance(raw, list):
        return
    lines_path = key_path(path, "fault_line_edges")
    approximate = scc.get("approximate")
    if approximate is True and raw:
        out.append(
            Violation(
                lines_path,
                "must be empty when approximate is true: an approximate κ is only an upper bound, "
                "so there is no exact minimum cut to report",
                "approximate-fault-lines",
            )
        )
    elif approximate is False and len(raw) != kappa:
        out.append(
            Violation(
                lines_path,
                f"an exact SCC with κ = {kappa} must list exactly {kappa} fault-line edge"
                f"{'' if kappa == 1 else 's'} (the arcs of one minimum cut); got {len(raw)}",
                "fault-line-count",
            )
        )
    arcs = [
        (index, item["source"], item["target"])
        for index, item in enumerate(raw)
        if isinstance(item, dict)
        and isinstance(item.get("source"), str)
        and isinstance(item.get("target"), str)
    ]
    member = set(nodes) if nodes is not None else None
    seen: dict[tuple[str, str], int] = {}
    for index, source, target in arcs:
        arc_path = index_path(lines_path, index)
        if member is not None:
            for end, node in (("source", source), ("target", target)):
                if node not in member:
                    out.append(
                        Violation(
                            key_path(arc_path, end),
                            f"{node!r} is not a node of this SCC; "
                            "fault lines join two of its nodes",
                            "fault-line-endpoint",
                        )
                    )
        if source == target:
            out.append(
                Violation(
                    arc_path,
                    "a fault line cannot be a self-loop (κ ignores self-loops)",
                    "fault-line-self-loop",
                )
            )
        if (source, target) in seen:
            out.append(
                Violation(
                    arc_path,
                    f"repeats fault_line_edges[{seen[(source, target)]}]; each arc is counted once",
                    "fault-line-duplicate",
                )
            )
        seen.setdefault((source, target), index)
    # All fault lines leave one side A of a cut: sources in A, targets in B.
    both = sorted({source for _, source, _ in arcs} & {target for _, _, target in arcs})
    if both:
        listed = ", ".join(repr(node) for node in both)
        out.append(
            Violation(
                lines_path,
                "fault lines must all cross one cut in the same direction, but "
                f"{listed} {'is' if len(both) == 1 else 'are'} both a source and a target",
                "fault-line-cut",
            )
        )
    if len(arcs) == len(raw):
        pairs = [(source, target) for _, source, target in arcs]
        for index in range(1, len(pairs)):
            if pairs[index] < pairs[index - 1]:
                out.append(
                    Violation(
                        index_path(lines_path, index),
                        "not in canonical order: fault lines are sorted by (source, target), "
                        f"but {pairs[index]} comes after {pairs[index - 1]}",
                        "ordering",
                    )
                )
                break


def _check_budget(budget: Mapping[str, Any], kappa: int, path: str, out: list[Violation]) -> None:
    expected = expected_budget(kappa)
    for key in ("max_iterations", "agent_count"):
        _check_integer_literal(budget, key, path, out)
    for key, wanted in expected.items():
        value = budget.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue  # missing or mistyped: the schema reports it
        if isinstance(wanted, int):
            wrong = value != wanted
        else:
            wrong = not math.isfinite(value) or abs(value - wanted) > FLOAT_TOLERANCE
        if wrong:
            shown = wanted if isinstance(wanted, int) else round(wanted, 10)
            out.append(
                Violation(
                    key_path(path, key),
                    f"must be {_BUDGET_FORMULAS[key]} = {shown} for κ = {kappa}; "
                    f"got {json.dumps(value)}",
                    "budget",
                )
            )


def _check_node_partition(doc: Mapping[str, Any], path: str, out: list[Violation]) -> None:
    """Each node is in exactly one place: one SCC, or dag_nodes; never twice."""
    owner: dict[str, tuple[int | None, str]] = {}  # node → (SCC index or None for dag, path)
    for index, scc in enumerate(_list_member(doc, "sccs") or []):
        nodes = _string_list(scc.get("nodes")) if isinstance(scc, dict) else None
        nodes_path = key_path(index_path(key_path(path, "sccs"), index), "nodes")
        for position, node in enumerate(nodes or []):
            here = index_path(nodes_path, position)
            if node not in owner:
                owner[node] = (index, here)
                continue
            first_index, first_path = owner[node]
            if first_index == index:
                message, rule = (
                    f"duplicate node {node!r} (already at {first_path})",
                    "duplicate-node",
                )
            else:
                message = (
                    f"node {node!r} is already in another SCC at {first_path}; SCCs are disjoint"
                )
                rule = "node-partition"
            out.append(Violation(here, message, rule))
    dag_path = key_path(path, "dag_nodes")
    for position, node in enumerate(_string_list(doc.get("dag_nodes")) or []):
        here = index_path(dag_path, position)
        if node not in owner:
            owner[node] = (None, here)
            continue
        first_index, first_path = owner[node]
        if first_index is None:
            message, rule = f"duplicate node {node!r} (already at {first_path})", "duplicate-node"
        else:
            message = (
                f"node {node!r} is also in an SCC (at {first_path}); dag_nodes lists only "
                "nodes outside every SCC"
            )
            rule = "node-partition"
        out.append(Violation(here, message, rule))


def _check_scc_order(sccs: list[Any], path: str, out: list[Violation]) -> None:
    previous: str | None = None
    for index, scc in enumerate(sccs):
        nodes = _string_list(scc.get("nodes")) if isinstance(scc, dict) else None
        if not nodes:
            previous = None
            continue
        smallest = min(nodes)
        if previous is not None and smallest < previous:
            out.append(
                Violation(
                    index_path(path, index),
                    "not in canonical order: SCCs are sorted by their smallest node id, "
                    f"but this SCC's {smallest!r} sorts before {previous!r} of the SCC before it",
                    "ordering",
                )
            )
        previous = smallest


def _check_sorted(items: list[str], path: str, what: str, out: list[Violation]) -> None:
    for index in range(1, len(items)):
        if items[index] < items[index - 1]:
            out.append(
                Violation(
                    index_path(path, index),
                    f"not in canonical order: {what} are sorted by Unicode code point, "
                    f"but {items[index]!r} comes after {items[index - 1]!r}",
                    "ordering",
                )
            )
            return


# --------------------------------------------------------------------------
# Semantic rules: preview
# --------------------------------------------------------------------------


def _check_preview_semantics(doc: Mapping[str, Any], path: str, out: list[Violation]) -> None:
    for key in ("kappa_before", "kappa_after", "kappa_delta"):
        _check_integer_literal(doc, key, path, out)
    before = _as_int(doc.get("kappa_before"))
    after = _as_int(doc.get("kappa_after"))
    delta = _as_int(doc.get("kappa_delta"))
    creates = doc.get("creates_new_scc")
    enlarges = doc.get("enlarges_existing_scc")
    if before is not None and after is not None and delta is not None and delta != after - before:
        out.append(
            Violation(
                key_path(path, "kappa_delta"),
                f"must equal kappa_after − kappa_before = {after} − {before} = "
                f"{after - before}; got {delta}",
                "kappa-delta",
            )
        )
    if creates is True and enlarges is True:
        out.append(
            Violation(
                key_path(path, "enlarges_existing_scc"),
                "cannot be true together with creates_new_scc: one new arc changes exactly "
                "one SCC, which is either new or grown from an existing one",
                "preview-flags",
            )
        )
    if creates is True and after == 0:
        out.append(
            Violation(
                key_path(path, "creates_new_scc"),
                "cannot be true when kappa_after is 0: a new SCC has κ ≥ 1",
                "preview-flags",
            )
        )
    if creates is False and before == 0 and after is not None and after > 0:
        out.append(
            Violation(
                key_path(path, "creates_new_scc"),
                f"must be true: kappa_before = 0 means there was no SCC and kappa_after = {after} "
                "means there is one now",
                "preview-flags",
            )
        )
    if enlarges is True and before == 0:
        out.append(
            Violation(
                key_path(path, "enlarges_existing_scc"),
                "cannot be true when kappa_before is 0: there was no SCC to enlarge",
                "preview-flags",
            )
        )


def _merge(structural: list[Violation], semantic: list[Violation]) -> list[Violation]:
    """Schema violations plus semantic ones at paths the schema did not flag, sorted by path."""
    flagged = {violation.path for violation in structural}
    merged = structural + [violation for violation in semantic if violation.path not in flagged]
    return sorted(merged, key=lambda violation: path_sort_key(violation.path))
