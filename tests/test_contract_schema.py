"""The generic stdlib JSON Schema interpreter (graphonomous.contract.schema).

`jsonschema` (dev dependency, imported only here and in other tests) is the
oracle: on a schema exercising every supported keyword, both must agree on
valid/invalid for hundreds of generated instances.
"""

from __future__ import annotations

import json
import random
from typing import Any

import jsonschema
import pytest

from graphonomous.contract import SchemaError, SchemaValidator, Violation, json_equal, parse_json
from graphonomous.contract.schema import (
    ANNOTATION_KEYWORDS,
    ASSERTION_KEYWORDS,
    describe,
    index_path,
    key_path,
    path_sort_key,
)

DIALECT = "https://json-schema.org/draft/2020-12/schema"

# Uses every assertion keyword the interpreter supports (and a few annotations).
KITCHEN_SINK: dict[str, Any] = {
    "$schema": DIALECT,
    "$id": "urn:test:kitchen-sink",
    "title": "every supported keyword",
    "type": "object",
    "additionalProperties": False,
    "required": ["kind", "count"],
    "properties": {
        "kind": {"enum": ["retrieve", "act", "custom"]},
        "custom_kind": {"type": "string", "minLength": 2, "maxLength": 8, "pattern": "^[a-z]+$"},
        "count": {"type": "integer", "minimum": 0, "maximum": 10},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "parent": {"type": ["string", "null"], "format": "uri"},
        "tags": {
            "type": "array",
            "items": {"$ref": "#/$defs/tag"},
            "minItems": 1,
            "maxItems": 3,
            "uniqueItems": True,
        },
        "version": {"const": "0.1"},
        "mode": {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 5}]},
        "limit": {"anyOf": [{"type": "null"}, {"type": "integer", "minimum": 1}]},
        "name": {"allOf": [{"type": "string"}, {"not": {"const": "forbidden"}}]},
        "extra": {"type": "object", "additionalProperties": {"type": "boolean"}},
        "anything": True,
        "nothing": False,
    },
    "allOf": [
        {
            "if": {"properties": {"kind": {"const": "custom"}}},
            "then": {"required": ["custom_kind"]},
            "else": {"not": {"required": ["custom_kind"]}},
        }
    ],
    "$defs": {"tag": {"type": "string", "description": "a tag", "minLength": 1}},
}

VALID_SINK = {
    "kind": "custom",
    "custom_kind": "probe",
    "count": 3,
    "ratio": 0.5,
    "parent": None,
    "tags": ["a", "b"],
    "version": "0.1",
    "mode": 2,
    "limit": None,
    "name": "x",
    "extra": {"flag": True},
    "anything": [1, {"x": None}],
}

POOL: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    5,
    11,
    -1,
    2.0,
    5.5,
    0.5,
    1.0,
    "",
    "a",
    "probe",
    "PROBE",
    "0.1",
    "toolongvalue",
    "forbidden",
    "custom",
    "act",
    [],
    ["a"],
    ["a", "a"],
    ["a", "b", "c", "d"],
    [""],
    {},
    {"flag": True},
    {"flag": 1},
]


def _random_instance(rng: random.Random) -> Any:
    doc = json.loads(json.dumps(VALID_SINK))
    for _ in range(rng.randint(1, 3)):
        action = rng.random()
        key = rng.choice([*KITCHEN_SINK["properties"], "unknown"])
        if action < 0.7:
            doc[key] = rng.choice(POOL)
        elif key in doc:
            del doc[key]
    return doc


def test_kitchen_sink_uses_every_supported_assertion_keyword() -> None:
    used: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            used.update(k for k in node if k in ASSERTION_KEYWORDS)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(KITCHEN_SINK)
    assert used == ASSERTION_KEYWORDS


def test_valid_instance_passes_both() -> None:
    jsonschema.Draft202012Validator.check_schema(KITCHEN_SINK)
    assert jsonschema.Draft202012Validator(KITCHEN_SINK).is_valid(VALID_SINK)
    assert SchemaValidator(KITCHEN_SINK).validate(VALID_SINK) == []


def test_agrees_with_jsonschema_on_random_instances() -> None:
    rng = random.Random(7)
    ours = SchemaValidator(KITCHEN_SINK)
    theirs = jsonschema.Draft202012Validator(KITCHEN_SINK)
    verdicts = {True: 0, False: 0}
    for _ in range(1500):
        doc = _random_instance(rng)
        expected = theirs.is_valid(doc)
        assert ours.is_valid(doc) == expected, json.dumps(doc)
        verdicts[expected] += 1
    assert verdicts[True] > 50 and verdicts[False] > 500


@pytest.mark.parametrize(
    ("patch", "path", "rule", "message"),
    [
        ({"count": True}, "$.count", "type", "must be an integer; got boolean true"),
        ({"count": "3"}, "$.count", "type", 'must be an integer; got string "3"'),
        ({"count": 11}, "$.count", "maximum", "must be <= 10; got 11"),
        ({"count": -1}, "$.count", "minimum", "must be >= 0; got -1"),
        ({"ratio": 1}, "$.ratio", "exclusiveMaximum", "must be < 1; got 1"),
        ({"ratio": 0}, "$.ratio", "exclusiveMinimum", "must be > 0; got 0"),
        ({"parent": 3}, "$.parent", "type", "must be a string or null; got number 3"),
        ({"kind": "learn"}, "$.kind", "enum",
         'must be one of "retrieve", "act", "custom"; got string "learn"'),
        ({"version": "0.2"}, "$.version", "const", 'must be "0.1"; got string "0.2"'),
        ({"custom_kind": "A1"}, "$.custom_kind", "pattern",
         'must match ^[a-z]+$; got string "A1"'),
        ({"custom_kind": "a"}, "$.custom_kind", "minLength", "must be at least 2 characters long"),
        ({"custom_kind": "abcdefghi"}, "$.custom_kind", "maxLength",
         "must be at most 8 characters long"),
        ({"tags": []}, "$.tags", "minItems", "must have at least 1 item; has 0"),
        ({"tags": ["a", "b", "c", "d"]}, "$.tags", "maxItems", "must have at most 3 items; has 4"),
        ({"tags": ["a", "a"]}, "$.tags[1]", "uniqueItems",
         "items must be unique; this repeats item [0]"),
        ({"tags": [""]}, "$.tags[0]", "minLength", "must be at least 1 character long"),
        ({"extra": {"flag": 1}}, "$.extra.flag", "type", "must be a boolean; got number 1"),
        ({"nothing": 1}, "$.nothing", "false", "no value is allowed here"),
        ({"name": "forbidden"}, "$.name", "not", "must not match the schema under 'not'"),
        ({"mode": 6}, "$.mode", "oneOf",
         "must match exactly one of 2 alternatives; matches #0, #1"),
        ({"unknown": 1}, "$.unknown", "additionalProperties",
         "unknown key 'unknown' is not allowed here"),
    ],
)  # fmt: skip
def test_messages_paths_and_rules(
    patch: dict[str, Any], path: str, rule: str, message: str
) -> None:
    violations = SchemaValidator(KITCHEN_SINK).validate({**VALID_SINK, **patch})
    at_path = [v for v in violations if v.path == path]
    assert [v.rule for v in at_path] == [rule]
    assert at_path[0].message.startswith(message)


def test_required_is_reported_at_the_missing_key() -> None:
    doc = {k: v for k, v in VALID_SINK.items() if k != "count"}
    [violation] = SchemaValidator(KITCHEN_SINK).validate(doc)
    assert violation == Violation("$.count", "required key 'count' is missing", "required")


def test_if_then_else() -> None:
    validator = SchemaValidator(KITCHEN_SINK)
    custom_without = {k: v for k, v in VALID_SINK.items() if k != "custom_kind"}
    assert [v.path for v in validator.validate(custom_without)] == ["$.custom_kind"]
    assert [v.rule for v in validator.validate({**VALID_SINK, "kind": "act"})] == ["not"]


def test_any_of_names_the_closest_alternative() -> None:
    [violation] = SchemaValidator(KITCHEN_SINK).validate({**VALID_SINK, "limit": 0})
    assert violation.rule == "anyOf"
    assert "closest is #1, which fails at $.limit: must be >= 1" in violation.message


def test_every_violation_is_returned() -> None:
    doc = {**VALID_SINK, "count": "x", "tags": ["a", 1, 1], "unknown": 0}
    paths = [v.path for v in SchemaValidator(KITCHEN_SINK).validate(doc)]
    assert sorted(paths) == ["$.count", "$.tags[1]", "$.tags[2]", "$.tags[2]", "$.unknown"]


def test_integer_follows_2020_12_and_excludes_bool() -> None:
    validator = SchemaValidator({"type": "integer"})
    assert validator.is_valid(2) and validator.is_valid(2.0) and validator.is_valid(-0.0)
    assert (
        not validator.is_valid(True) and not validator.is_valid(2.5) and not validator.is_valid("2")
    )
    assert not SchemaValidator({"type": "number"}).is_valid(False)


def test_pattern_is_an_unanchored_ascii_search() -> None:
    validator = SchemaValidator({"pattern": r"\d"})
    assert validator.is_valid("ab1") and not validator.is_valid("ab٣")  # Arabic-Indic digit
    assert validator.is_valid(12)  # pattern only applies to strings


def test_keywords_do_not_apply_to_other_types() -> None:
    validator = SchemaValidator({"minLength": 3, "minimum": 2, "minItems": 2, "required": ["a"]})
    for value in (None, True, [1, 2], {"a": 1}, "abc", 5):
        assert validator.is_valid(value)


def test_boolean_schemas() -> None:
    assert SchemaValidator(True).is_valid({"anything": 1})
    assert SchemaValidator(False).validate(1) == [
        Violation("$", "no value is allowed here", "false")
    ]


def test_validate_a_subschema_by_reference_with_a_base_path() -> None:
    validator = SchemaValidator(KITCHEN_SINK)
    [violation] = validator.validate(["ok", ""], ref="#/properties/tags", path="$.x")
    assert violation.path == "$.x[1]"
    assert validator.is_valid("t", ref="#/$defs/tag")


def test_hint_hook_adds_advice() -> None:
    def hint(rule: str, subject: Any, allowed: tuple[Any, ...]) -> str | None:
        return f"did you mean {allowed[0]!r}?" if rule == "additionalProperties" else None

    schema = {"type": "object", "properties": {"routing": {}}, "additionalProperties": False}
    [violation] = SchemaValidator(schema, hint=hint).validate({"overall_routing": 1})
    assert (
        violation.message
        == "unknown key 'overall_routing' is not allowed here; did you mean 'routing'?"
    )


# --------------------------------------------------------------------------
# Schemas the interpreter refuses
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "fragment"),
    [
        ({"patternProperties": {"^x": {}}}, "unsupported keyword 'patternProperties'"),
        (
            {"properties": {"a": {"unevaluatedProperties": False}}},
            "#/properties/a/unevaluatedProperties",
        ),
        ({"$defs": {"x": {"dependentRequired": {}}}}, "unsupported keyword 'dependentRequired'"),
        ({"prefixItems": [{}]}, "unsupported keyword 'prefixItems'"),
        ({"items": [{}]}, "array-form items"),
        ({"$ref": "#/$defs/missing"}, "does not resolve"),
        ({"$ref": "https://example.com/schema.json"}, "only same-document references"),
        ({"$ref": "#anchor"}, "anchors are not supported"),
        ({"$schema": "http://json-schema.org/draft-07/schema#"}, "only the 2020-12 dialect"),
        ({"pattern": "("}, "invalid regular expression"),
        ({"type": "int"}, "must be one of null, boolean"),
        ({"minItems": -1}, "non-negative integer"),
        ({"required": "a"}, "array of strings"),
        ({"anyOf": []}, "non-empty array of schemas"),
        ({"properties": {"a": 3}}, "a schema must be an object or a boolean"),
    ],
)
def test_unsupported_or_malformed_schemas_raise(schema: dict[str, Any], fragment: str) -> None:
    with pytest.raises(SchemaError, match=None) as caught:
        SchemaValidator(schema)
    assert fragment in str(caught.value)


def test_annotations_are_accepted_and_ignored() -> None:
    schema = {
        keyword: "x" for keyword in ANNOTATION_KEYWORDS if keyword not in ("$schema", "$defs")
    }
    schema["$defs"] = {}
    assert SchemaValidator(schema).is_valid(42)


# --------------------------------------------------------------------------
# Paths, values and strict parsing
# --------------------------------------------------------------------------


def test_paths() -> None:
    assert key_path("$", "sccs") == "$.sccs"
    assert index_path("$.sccs", 3) == "$.sccs[3]"
    assert key_path("$", "odd key") == '$["odd key"]'
    assert key_path("$", "$schema") == '$["$schema"]'
    assert key_path("$", "2x") == '$["2x"]'
    paths = ["$.sccs[10]", "$.sccs[2].kappa", "$.sccs[2]", "$.dag_nodes", '$["a b"]', "$"]
    assert sorted(paths, key=path_sort_key) == [
        "$",
        '$["a b"]',
        "$.dag_nodes",
        "$.sccs[2]",
        "$.sccs[2].kappa",
        "$.sccs[10]",
    ]


def test_json_equal_and_describe() -> None:
    assert json_equal(1, 1.0) and json_equal({"a": [1, None]}, {"a": [1.0, None]})
    assert not json_equal(True, 1) and not json_equal(0, False) and not json_equal("1", 1)
    assert not json_equal([1], [1, 2]) and not json_equal({"a": 1}, {"b": 1})
    assert describe(None) == "null" and describe(True) == "boolean true"
    assert describe("x" * 100).endswith('…"') and describe([1]) == "array of 1 item"


def test_parse_json_reports_duplicate_keys_with_paths() -> None:
    value, violations = parse_json('{"a": 1, "b": [{"k": 1, "k": 2}], "a": 3}')
    assert value == {"a": 3, "b": [{"k": 2}]}
    assert sorted(v.path for v in violations) == ["$.a", "$.b[0].k"]
    assert {v.rule for v in violations} == {"duplicate-key"}


def test_parse_json_rejects_non_json_numbers_and_syntax_errors() -> None:
    for text in ('{"a": NaN}', "[Infinity]", "[-Infinity]"):
        with pytest.raises(ValueError, match="not valid JSON"):
            parse_json(text)
    with pytest.raises(json.JSONDecodeError):
        parse_json("{'a': 1}")
