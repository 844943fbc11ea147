"""The v2 MCP surface: five "machines", one tool per phase of the memory loop.

Seed 003 groups the 29 v1 tools by the loop phase an agent is in when it
calls them — retrieve → route → act → learn → consolidate — so a client sees
5 tools instead of 29.  Each machine takes a required ``action`` naming one
v1 tool (seed 003's action tables) and that tool's own arguments, and runs
the *same* v1 spec: validation and handler are the v1 tool's, and the result
is the v1 tool's result, unchanged.

How a machine is generated from its actions (:func:`build_machine`):

* input schema: ``action`` (required enum) plus the union of the actions' v1
  input properties, field names unchanged.  A field several actions share
  keeps its schema when they agree, else the widest one (enum union, loosest
  bounds) or an ``anyOf`` of the variants; its description says which action
  uses it for what.  The only rename: a v1 field itself called ``action``
  (manage_edge, manage_goal, belief_revise) would clash with the machine's,
  so it is spelled ``edge_operation`` / ``goal_operation`` / ``revision_type``
  (upstream Graphonomous' names).  No combinator at the top level.
* validation (:attr:`ToolSpec.argument_check`, after the union schema): a
  field the chosen action does not take is an error naming it; the other
  fields are validated against the v1 tool's own input schema, and the
  violations are reported under the machine's field names.
* the listing is compact (an agent pays for it in every conversation): the
  listed input schema carries each field's type, enum and bounds but no
  per-field prose, omits the upstream alias fields (still accepted), and is
  open — the per-action check rejects fields the action does not take.  The
  tool description lists each action with its arguments (``*`` =
  required); the field reference lives in docs/mcp-tools.md (``mcp/docs.py``, from
  :func:`merge_fields`) and in the v1 tools of the same names.  An action that is
  another machine's action too (``listed_in``: consolidate's stats/query/traverse,
  route's topology/attention_survey are retrieve's) is listed once, there; each
  enum is listed once per tool; ``minLength: 1`` is left to the check.
* replies: ``structuredContent`` is the full result; the text block is the
  compact rendering of ``render.py`` (path:lines, score, snippet).
* no output schema: a machine's result is the v1 tool's result, unchanged
  (its ``structuredContent`` validates against that v1 tool's schema).
* annotations: read-only / idempotent if every action is; destructive /
  open-world if any action is — unless the machine states its own:
  ``retrieve`` is read-only (its actions create, change and delete no
  knowledge; retrieval only records access statistics).  Read actions of
  the destructive machines (stats, query, traverse, topology) are also
  actions of ``retrieve``, so a client never needs approval to read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final

from ..contract.schema import Violation, key_path
from ..model import ValidationError
from .render import compact_text
from .tools import ArgumentCheck, Handler, ToolAnnotations, ToolSpec, obj
from .upstream import machine_preparer
from .v1 import V1_BY_NAME

if TYPE_CHECKING:
    from ..api import Graphonomous

ACTION_FIELD: Final = "action"
# A v1 field whose description starts so is an upstream alias: accepted, not listed.
ALIAS_MARK: Final = "Alias of"
# Schema keywords a merged field may widen (the v1 schema still applies per action).
_LOWER_BOUNDS: Final = ("minimum", "minLength", "minItems")
_UPPER_BOUNDS: Final = ("maximum", "maxLength", "maxItems")


@dataclass(frozen=True)
class MachineAction:
    """One action of a machine: the v1 tool it runs, and the renamed fields.

    `renames` maps a machine field name to the v1 field it stands for (only
    for v1 fields named ``action``, which the machine's own field takes).
    """

    name: str
    tool: ToolSpec
    summary: str
    renames: Mapping[str, str] = field(default_factory=dict)
    # The machine whose listing carries this action's fields (the same action, same
    # fields, listed once: consolidate's stats/query/traverse are retrieve's).  None:
    # listed here.  Only the listing changes; the action's check is its v1 tool's.
    listed_in: str | None = None

    def fields(self) -> dict[str, Any]:
        """The v1 input properties under their machine names, in v1 order."""
        inverse = {v1: machine for machine, v1 in self.renames.items()}
        properties: Mapping[str, Any] = self.tool.input_schema.get("properties", {})
        return {inverse.get(name, name): schema for name, schema in properties.items()}

    def required(self) -> list[str]:
        """The v1 required fields under their machine names."""
        inverse = {v1: machine for machine, v1 in self.renames.items()}
        return [inverse.get(name, name) for name in self.tool.input_schema.get("required", ())]

    def to_v1(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The machine arguments as the v1 tool's arguments (``action`` dropped)."""
        return {
            self.renames.get(name, name): value
            for name, value in arguments.items()
            if name != ACTION_FIELD
        }

    def machine_path(self, path: str) -> str:
        """A violation path of the v1 arguments, spelled with the machine's names."""
        for machine, v1 in self.renames.items():
            prefix = key_path("$", v1)
            if path == prefix or path.startswith((prefix + ".", prefix + "[")):
                return key_path("$", machine) + path[len(prefix) :]
        return path


@dataclass(frozen=True)
class Machine:
    """A v2 machine: its actions and the ToolSpec generated from them."""

    name: str
    title: str
    question: str
    purpose: str
    actions: tuple[MachineAction, ...]
    # Stated hints (module docstring); None: aggregated from the actions.
    hints: ToolAnnotations | None = None
    spec: ToolSpec = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "spec", build_machine(self))

    def action(self, name: str) -> MachineAction:
        """The action called `name`.  Raises ValidationError naming the allowed ones."""
        for action in self.actions:
            if action.name == name:
                return action
        allowed = ", ".join(a.name for a in self.actions)
        raise ValidationError(ACTION_FIELD, f"unknown action {name!r} (allowed: {allowed})")


# --------------------------------------------------------------------------
# Generating the machine's schemas
# --------------------------------------------------------------------------


def _canonical(schema: Mapping[str, Any]) -> str:
    return json.dumps(schema, sort_keys=True, ensure_ascii=False)


def _without_description(schema: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k != "description"}


def widen(variants: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One schema accepting every value any of `variants` accepts.

    Identical variants: that schema.  Variants differing only in ``enum``
    (united, first-seen order) or bounds (the loosest kept; a bound missing in
    one variant is dropped): the widened schema.  Otherwise ``anyOf`` of the
    distinct variants.  O(total size of the variants).
    """
    distinct: list[dict[str, Any]] = []
    for variant in variants:
        if _canonical(variant) not in {_canonical(d) for d in distinct}:
            distinct.append(dict(variant))
    if len(distinct) == 1:
        return distinct[0]
    merged: dict[str, Any] = {}
    keys = list(dict.fromkeys(key for variant in distinct for key in variant))
    for key in keys:
        present = all(key in variant for variant in distinct)
        values: list[Any] = [variant.get(key) for variant in distinct]
        if present and all(_canonical({"v": v}) == _canonical({"v": values[0]}) for v in values):
            merged[key] = values[0]
        elif key == "enum" and present:
            merged[key] = list(dict.fromkeys(item for value in values for item in value))
        elif key in _LOWER_BOUNDS or key in _UPPER_BOUNDS:
            if present:
                merged[key] = min(values) if key in _LOWER_BOUNDS else max(values)
        else:
            return {"anyOf": distinct}
    return merged


def _field_description(uses: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """``(a, b) text. (c) other text.``: which action uses the field for what."""
    by_text: dict[str, list[str]] = {}
    for action, schema in uses:
        by_text.setdefault(str(schema.get("description", "")).strip(), []).append(action)
    parts = [f"({', '.join(actions)}) {text}".rstrip() for text, actions in by_text.items()]
    return " ".join(parts)


def merge_fields(actions: Sequence[MachineAction]) -> dict[str, Any]:
    """The union of the actions' input properties (see :func:`widen`), first-seen order."""
    uses: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}
    for action in actions:
        for name, schema in action.fields().items():
            uses.setdefault(name, []).append((action.name, schema))
    merged: dict[str, Any] = {}
    for name, found in uses.items():
        schema = widen([_without_description(s) for _, s in found])
        merged[name] = {**schema, "description": _field_description(found)}
    return merged


def is_alias(schema: Mapping[str, Any]) -> bool:
    """An upstream alias field (accepted by the v1 tool, not listed by the machine)."""
    return str(schema.get("description", "")).startswith(ALIAS_MARK)


def _terse(schema: Any) -> Any:
    """A schema without its prose (descriptions) and without ``minLength: 1`` (the
    per-action check rejects empty strings and names the field), recursively."""
    if isinstance(schema, dict):
        types = _type_list(schema)
        if types is not None:
            return {"type": types}
        return {
            k: _terse(v)
            for k, v in schema.items()
            if k != "description" and not (k == "minLength" and v == 1)
        }
    if isinstance(schema, list):
        return [_terse(item) for item in schema]
    return schema


def _type_list(schema: Mapping[str, Any]) -> list[str] | None:
    """``{"anyOf": [{"type": "object"}, {"type": "string"}]}`` as the equivalent, shorter
    ``["object", "string"]``; None for any other schema."""
    variants = schema.get("anyOf")
    if set(schema) != {"anyOf"} or not isinstance(variants, list):
        return None
    if not all(isinstance(v, dict) and set(v) == {"type"} for v in variants):
        return None
    types = [v["type"] for v in variants]
    return types if all(isinstance(t, str) for t in types) else None


def listed_fields(actions: Sequence[MachineAction]) -> dict[str, Any]:
    """The fields the listing shows: merged, without prose, and without the
    fields that are an alias in every action using them."""
    listed = [a for a in actions if a.listed_in is None]
    real = {n for a in listed for n, schema in a.fields().items() if not is_alias(schema)}
    fields = {name: _terse(s) for name, s in merge_fields(listed).items() if name in real}
    return _enums_once(fields)


def _enums_once(fields: dict[str, Any]) -> dict[str, Any]:
    """An array field whose item enum another field already lists shows only its item
    type (``relationships`` next to ``relationship``): each enum is listed once."""
    seen = {_canonical({"e": f["enum"]}) for f in fields.values() if "enum" in f}
    out: dict[str, Any] = {}
    for name, schema in fields.items():
        items = schema.get("items")
        if isinstance(items, dict) and "enum" in items and _canonical({"e": items["enum"]}) in seen:
            schema = {**schema, "items": {k: v for k, v in items.items() if k != "enum"}}
        out[name] = schema
    return out


def _action_line(action: MachineAction) -> str:
    """``context(query*, limit): summary`` for the tool description (* = required);
    an action listed in another machine: ``stats: as in retrieve``."""
    if action.listed_in is not None:
        return f"{action.name}: as in {action.listed_in}"
    needs = set(action.required())
    args = [
        name + ("*" if name in needs else "")
        for name, schema in action.fields().items()
        if not is_alias(schema)
    ]
    return f"{action.name}({', '.join(args)}): {action.summary}"


def _annotations(actions: Sequence[MachineAction]) -> ToolAnnotations:
    hints = [action.tool.annotations for action in actions]
    return ToolAnnotations(
        read_only=all(h.read_only for h in hints),
        destructive=any(h.destructive for h in hints),
        idempotent=all(h.idempotent for h in hints),
        open_world=any(h.open_world for h in hints),
    )


def _checker(machine: Machine) -> ArgumentCheck:
    def check(arguments: dict[str, Any]) -> list[Violation]:
        action = machine.action(arguments[ACTION_FIELD])
        allowed = action.fields()
        unused = [
            Violation(
                key_path("$", name),
                f"is not used by action {action.name} (it takes: {', '.join(allowed)})",
                "additionalProperties",
            )
            for name in sorted(arguments)
            if name != ACTION_FIELD and name not in allowed
        ]
        if unused:
            return unused
        found = action.tool.check_arguments(action.to_v1(arguments))
        return [Violation(action.machine_path(v.path), v.message, v.rule) for v in found]

    return check


def _dispatcher(machine: Machine) -> Handler:
    def handler(graph: Graphonomous, arguments: dict[str, Any]) -> dict[str, Any]:
        action = machine.action(str(arguments.get(ACTION_FIELD)))
        try:
            return action.tool.handler(graph, action.to_v1(arguments))
        except ValidationError as exc:
            # Name the field the caller sent (the machine's name for a renamed v1 field).
            inverse = {v1: name for name, v1 in action.renames.items()}
            if exc.field not in inverse:
                raise
            raise ValidationError(inverse[exc.field], exc.message) from exc

    handler.__name__ = handler.__qualname__ = f"{machine.name}_machine"
    handler.__doc__ = f"Machine `{machine.name}`: run the v1 tool its action names."
    return handler


def _open_object(properties: Mapping[str, Any]) -> dict[str, Any]:
    """The machine's input schema: open (JSON Schema's default, so no
    ``additionalProperties`` is listed), ``action`` required."""
    schema = obj(properties, (ACTION_FIELD,), closed=False)
    schema.pop("additionalProperties", None)
    return schema


def build_machine(machine: Machine) -> ToolSpec:
    """The ToolSpec of a machine, generated from its actions (module docstring).

    Complexity: O(total size of the actions' schemas), once at import.
    """
    names = [a.name for a in machine.actions]
    if len(set(names)) != len(names):
        raise ValueError(f"machine {machine.name}: duplicate actions in {names}")
    fields = listed_fields(machine.actions)
    if ACTION_FIELD in merge_fields(machine.actions):
        raise ValueError(f"machine {machine.name}: a v1 field named {ACTION_FIELD} is not renamed")
    description = (
        f"{machine.question} {machine.purpose} Actions (* = required): "
        + "; ".join(_action_line(a) for a in machine.actions)
        + "."
    )
    action = {"type": "string", "enum": names}
    return ToolSpec(
        name=machine.name,
        title=machine.title,
        description=description,
        input_schema=_open_object({ACTION_FIELD: action, **fields}),
        output_schema=None,
        annotations=machine.hints or _annotations(machine.actions),
        handler=_dispatcher(machine),
        render_text=compact_text,
        argument_check=_checker(machine),
    )


# --------------------------------------------------------------------------
# The five machines (seed 003's action tables)
# --------------------------------------------------------------------------


def _act(name: str, tool: str, summary: str, **renames: str) -> MachineAction:
    return MachineAction(name, V1_BY_NAME[tool], summary, renames)


def _shared(name: str, tool: str, summary: str, listed_in: str) -> MachineAction:
    """An action whose fields another machine's listing carries (see MachineAction)."""
    return MachineAction(name, V1_BY_NAME[tool], summary, {}, listed_in)


RETRIEVE: Final = Machine(
    name="retrieve",
    title="Retrieve: what do I know?",
    question="Loop phase 1 — what do I know?",
    purpose="Call it for context before reasoning or acting.",
    actions=(
        _act("context", "retrieve_context", "κ-aware ranked retrieval with topology"),
        _act("episodic", "retrieve_episodic", "episodes in a time range"),
        _act("procedural", "retrieve_procedural", "procedures for a task, with steps"),
        _act("coverage", "coverage_query", "is knowledge enough? act / learn_first / escalate"),
        _act("trace_evidence", "trace_evidence_path", "most credible paths between two nodes"),
        _act("frontier", "epistemic_frontier", "where evidence is most uncertain (Wilson)"),
        _act("topology", "topology_analyze", "SCC/κ analysis: fast or deliberate"),
        _act("stats", "graph_stats", "counts, distributions, confidence"),
        _act("query", "query_graph", "list / get nodes and edges, similarity search"),
        _act("traverse", "graph_traverse", "breadth-first walk from a node"),
        _act("attention_survey", "attention_survey", "what needs attention across goals"),
    ),
    hints=ToolAnnotations(read_only=True, destructive=False, idempotent=False, open_world=False),
)
ROUTE: Final = Machine(
    name="route",
    title="Route: what should I do?",
    question="Loop phase 2 — what should I do?",
    purpose="Call it to decide whether to act, learn, deliberate or escalate.",
    actions=(
        _shared("topology", "topology_analyze", "SCC/κ analysis: fast or deliberate", "retrieve"),
        _act("deliberate", "deliberate", "plans for reasoning through feedback loops"),
        _shared("attention_survey", "attention_survey", "what needs attention", "retrieve"),
        _act("attention_cycle", "attention_run_cycle", "triage and dispatch an attention cycle"),
        _act("review_goal", "review_goal", "act / learn_first / escalate for a goal"),
    ),
)
ACT: Final = Machine(
    name="act",
    title="Act: change the graph",
    question="Loop phase 3 — do it.",
    purpose="Call it to write to the knowledge graph.",
    actions=(
        _act("store_node", "store_node", "store a knowledge node"),
        _act("store_edge", "store_edge", "store a relationship edge"),
        _act("delete_node", "delete_node", "delete a node with its edges"),
        _act(
            "manage_edge",
            "manage_edge",
            "get / list / update / delete edges",
            edge_operation="action",
        ),
        _act(
            "manage_goal",
            "manage_goal",
            "goal CRUD and lifecycle transitions",
            goal_operation="action",
        ),
        _act(
            "belief_revise",
            "belief_revise",
            "expand / revise / contract a belief",
            revision_type="action",
        ),
        _act("forget_node", "forget_node", "hide (soft) or delete (hard, cascade) a node"),
        _act("restore_node", "restore_node", "bring back a soft-forgotten (faded) node"),
        _act("forget_policy", "forget_by_policy", "forget low-priority nodes to fit a budget"),
        _act("gdpr_erase", "gdpr_erase", "erase a node and every trace of it"),
    ),
)
LEARN: Final = Machine(
    name="learn",
    title="Learn: did it work?",
    question="Loop phase 4 — did it work?",
    purpose="Call it after acting, to close the feedback loop.",
    actions=(
        _act(
            "from_outcome", "learn_from_outcome", "credit or blame the knowledge behind an action"
        ),
        _act("from_feedback", "learn_from_feedback", "positive / negative / correction on a node"),
        _act("detect_novelty", "learn_detect_novelty", "is a text new to the graph?"),
        _act(
            "from_interaction", "learn_from_interaction", "store a conversation turn and its claims"
        ),
        _act("contradictions", "belief_contradictions", "find beliefs that conflict"),
    ),
)
CONSOLIDATE: Final = Machine(
    name="consolidate",
    title="Consolidate: clean up",
    question="Loop phase 5 — clean up.",
    purpose="Call it to maintain the graph, typically at session boundaries.",
    actions=(
        _act("run", "run_consolidation", "decay, prune, strengthen, merge, summarise"),
        _shared("stats", "graph_stats", "counts, distributions, confidence", "retrieve"),
        _shared("query", "query_graph", "list / get nodes and edges", "retrieve"),
        _shared("traverse", "graph_traverse", "breadth-first walk from a node", "retrieve"),
    ),
)

MACHINES: Final[tuple[Machine, ...]] = (RETRIEVE, ROUTE, ACT, LEARN, CONSOLIDATE)
# Upstream names are accepted on every machine too (mcp/upstream.py).
MACHINE_TOOLS: Final[tuple[ToolSpec, ...]] = tuple(
    replace(machine.spec, prepare=machine_preparer(machine)) for machine in MACHINES
)
