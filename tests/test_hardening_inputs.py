"""Input hygiene (issue #12, defect 7): hostile values at the MCP and CLI boundaries.

A generated sweep sends, for every tool of the ``all`` surface and every string
and integer field of its input schema (top level and one level into arrays),
lone surrogates and out-of-range integers; each call must come back as a clean
tool error that names the field (never "Internal error") and leave every table
of the database byte-for-byte unchanged.  Targeted cases cover the other
defects of the issue: wrong field names in errors, silently accepted unknown
ids and out-of-range numbers, and the CLI's JSON readers.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_tool_calls import MEMORY_CALLS, V1_CALLS, Session, call, machine_calls

from graphonomous import Graphonomous
from graphonomous.cli import main
from graphonomous.hygiene import MAX_JSON_INTEGER, loads_strict, problems
from graphonomous.mcp.jsonrpc import parse_message
from graphonomous.mcp.surfaces import SURFACES

HOSTILE_STRINGS: tuple[str, ...] = ("\ud800", "ok\udfff")
HOSTILE_INTEGERS: tuple[Any, ...] = (2**63, 1e20, -(2**63) - 1, 10**30)


def fingerprint(graph: Graphonomous) -> str:
    """A digest of every row of every table: equal digests mean nothing was written."""
    digest = hashlib.sha256()
    tables = [r[0] for r in graph.store.query("SELECT name FROM sqlite_master WHERE type='table'")]
    for table in sorted(tables):
        for row in graph.store.query(f'SELECT * FROM "{table}" ORDER BY rowid'):
            digest.update(repr(tuple(row)).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def base_calls() -> Iterator[tuple[str, dict[str, Any]]]:
    """One valid call per tool of the ``all`` surface (machines: one per action)."""
    yield from V1_CALLS.items()
    for machine, _action, arguments in machine_calls():
        yield machine, arguments
    yield from MEMORY_CALLS


def hostile_variants(
    schema: dict[str, Any], arguments: dict[str, Any]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(field path, arguments) with one string or integer field replaced by a hostile value."""
    for name, sub in schema.get("properties", {}).items():
        kind = sub.get("type")
        if kind == "string":
            for value in HOSTILE_STRINGS:
                yield name, {**arguments, name: value}
        elif kind == "integer":
            for value in (*HOSTILE_INTEGERS, sub["maximum"] + 1):
                yield name, {**arguments, name: value}
        elif kind == "array":
            items = sub.get("items", {})
            if items.get("type") == "string":
                yield name, {**arguments, name: [HOSTILE_STRINGS[0]]}
            elif items.get("type") == "object" and isinstance(arguments.get(name), list):
                for field, inner in items.get("properties", {}).items():
                    if inner.get("type") == "string" and arguments[name]:
                        changed = copy.deepcopy(arguments)
                        changed[name][0][field] = HOSTILE_STRINGS[0]
                        yield f"{name}[0].{field}", changed


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    graph = Graphonomous(tmp_path_factory.mktemp("hostile") / "g.db")
    yield Session(graph, "all")
    graph.close()


def test_every_input_integer_has_bounds() -> None:
    missing = []
    for spec in SURFACES["all"]:
        for name, sub in spec.input_schema.get("properties", {}).items():
            if sub.get("type") == "integer" and ("minimum" not in sub or "maximum" not in sub):
                missing.append(f"{spec.name}.{name}")
    assert missing == []


def test_hostile_values_in_every_field_are_clean_errors_and_change_nothing(
    session: Session,
) -> None:
    failures: list[tuple[str, str, str]] = []
    sent = 0
    for tool, raw in base_calls():
        arguments = session.placeholders_resolve(copy.deepcopy(raw))
        for field, hostile in hostile_variants(session.schemas[tool]["inputSchema"], arguments):
            before = fingerprint(session.graph)
            out = call(session.server, tool, hostile)
            sent += 1
            text = out["content"][0]["text"]
            top = field.split("[")[0]
            if not out.get("isError") or "Internal error" in text or top not in text:
                failures.append((tool, field, text[:160]))
            elif fingerprint(session.graph) != before:
                failures.append((tool, field, "the graph changed"))
    assert sent > 300  # the sweep really covers the surface
    assert failures == []


def test_lone_surrogate_on_the_wire_is_a_clean_error(session: Session) -> None:
    raw = (
        '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"store_node",'
        '"arguments":{"content":"\\ud800 secret"}}}'
    )
    (reply,) = session.server.handle(parse_message(raw))
    result = reply.result  # type: ignore[union-attr]
    assert result["isError"] is True
    assert "content" in result["content"][0]["text"]
    assert "surrogate" in result["content"][0]["text"]


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        ("store_node", {"content": "x", "node_id": "a" * 300}, "node_id"),
        ("store_node", {"content": "x", "source": "s" * 1_140_000}, "source"),
        ("store_edge", {"source_id": "fact", "target_id": "pump", "decay_rate": 1.5}, "decay_rate"),
        (
            "store_edge",
            {"source_id": "fact", "target_id": "pump", "decay_rate": 1e300},
            "decay_rate",
        ),
        ("query_graph", {"operation": "list_nodes", "offset": 2**63}, "offset"),
        ("query_graph", {"operation": "list_nodes", "offset": 1e20}, "offset"),
        ("belief_contradictions", {"content": "x", "limit": 1e20}, "limit"),
        (
            "learn_from_outcome",
            {
                "action_id": "a",
                "status": "success",
                "confidence": 0.5,
                "causal_node_ids": ["proc"],
                "goal_id": "no-such-goal",
            },
            "goal_id",
        ),
        (
            "create_entities",
            {"entities": [{"name": "", "entityType": "person", "observations": []}]},
            "name",
        ),
    ],
)
def test_bad_values_are_rejected_naming_the_field(
    session: Session, tool: str, arguments: dict[str, Any], field: str
) -> None:
    before = fingerprint(session.graph)
    text = session.error(tool, arguments)
    assert field in text and "Internal error" not in text
    assert f"'{field}'" in text or f"{field}:" in text or f".{field}:" in text
    assert fingerprint(session.graph) == before


def test_belief_revise_names_node_id(session: Session) -> None:
    session.ok(
        "belief_revise", {"action": "revise", "node_id": "fact", "new_content": "Two shifts"}
    )
    text = session.error(
        "belief_revise", {"action": "revise", "node_id": "fact", "new_content": "One shift"}
    )
    assert "'node_id'" in text and "old_id" not in text


def test_manage_edge_update_with_a_mismatched_endpoint_is_rejected(session: Session) -> None:
    edges = session.ok("manage_edge", {"action": "list", "node_id": "valve", "direction": "out"})
    edge = edges["edges"][0]
    before = fingerprint(session.graph)
    text = session.error(
        "manage_edge",
        {"action": "update", "edge_id": edge["id"], "source_id": "fact", "strength": 0.9},
    )
    assert "'source_id'" in text
    assert fingerprint(session.graph) == before


# -- hygiene functions --------------------------------------------------------------


def test_problems_name_the_path() -> None:
    assert problems({"a": [1, "\ud800"]}) == [
        ("$.a[1]", "contains a lone surrogate (not valid Unicode)")
    ]
    assert problems({"n": MAX_JSON_INTEGER}) == []
    assert problems({"n": MAX_JSON_INTEGER + 1})[0][0] == "$.n"
    assert problems([[[[1]]]]) == []


def test_loads_strict_rejects_every_hostile_document() -> None:
    for text in ('{"a": NaN}', "[" * 100_000 + "]" * 100_000, "9" * 100_000, '["\\udcff"]'):
        with pytest.raises(ValueError):
            loads_strict(text)


# -- the CLI ------------------------------------------------------------------------


def run_cli(args: list[str], stdin: str) -> tuple[int, str]:
    """The CLI in a subprocess (stdin and argv are real bytes): (exit code, stderr)."""
    done = subprocess.run(
        [sys.executable, "-m", "graphonomous", *args],
        input=stdin.encode("utf-8", "surrogatepass"),
        capture_output=True,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stderr.decode("utf-8", "replace")


DEEP = "[" * 100_000 + "]" * 100_000
ENTITY = '{"type":"entity","name":"a","entityType":"x","observations":[],"extra":%s}'


def test_contract_check_reports_a_deep_but_parseable_document_as_a_violation(
    tmp_path: Path,
) -> None:
    # The checker's job is to report what is wrong with a document: an array nested
    # 900 deep parses, and is simply not a topology document (exit 1, a violation).
    code, err = run_cli(["contract", "check", "-"], "[" * 900 + "]" * 900)
    assert code == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    ("command", "stdin"),
    [
        (
            ["topology", "-"],
            '{"nodes":["a","b"],"edges":[{"source":"a","target":"b","weight":NaN}]}',
        ),
        (["topology", "-"], '{"nodes":["\\udcff","b"],"edges":[]}'),
        (["topology", "-"], DEEP),
        (["contract", "check", "-"], DEEP),
        (["import-memory", "-"], ENTITY % ("9" * 100_000)),
        (["import-memory", "-"], ENTITY % DEEP),
        (["import-memory", "-"], ENTITY % '"\\ud800"'),
        (["batch", "-"], DEEP),
        (
            ["batch", "-"],
            '[{"op": "add_node", "node": {"content": "x", "confidence": %s}}]' % ("9" * 5000),
        ),
        (["batch", "-"], '[{"op": "add_node", "node": {"content": "\\ud800"}}]'),
        (["batch", "-"], '{"op": "add_node"}\n[' + "[" * 100_000 + "\n"),
    ],
)
def test_cli_hostile_json_is_exit_2(tmp_path: Path, command: list[str], stdin: str) -> None:
    code, err = run_cli(["--db", str(tmp_path / "g.db"), *command], stdin)
    assert code == 2, err
    assert "internal error" not in err and "Traceback" not in err


def test_cli_argument_that_is_not_utf8_is_exit_2(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "graphonomous",
            "--db",
            str(tmp_path / "g.db"),
            "remember",
            b"\xff\xfe",
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert b"--content" in done.stderr and b"Traceback" not in done.stderr


def test_cli_batch_file_that_is_not_utf8_is_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'[{"op": "add_node", "node": {"content": "\xff\xfe"}}]')
    code, err = run_cli(["--db", str(tmp_path / "g.db"), "batch", str(bad)], "")
    assert code == 2 and "not UTF-8" in err and "internal error" not in err


@pytest.mark.parametrize(
    "argv",
    [["ui", "--port", "70000"], ["serve", "--transport", "http", "--port", "-1"]],
)
def test_cli_port_out_of_range_is_exit_2(tmp_path: Path, argv: list[str]) -> None:
    code, err = run_cli(["--db", str(tmp_path / "g.db"), *argv], "")
    assert code == 2 and "--port" in err and "internal error" not in err


def test_cli_db_path_too_long_is_exit_2_with_a_short_message(tmp_path: Path) -> None:
    code, err = run_cli(["--db", str(tmp_path / ("a" * 5000)), "node", "add", "hello"], "")
    assert code == 2 and "File name too long" in err and "internal error" not in err
    assert len(err) < 300


def test_cli_json_output_is_strict(tmp_path: Path) -> None:
    out = io.StringIO()
    db = str(tmp_path / "g.db")
    assert main(["--db", db, "remember", "caf\u00e9 notes", "--json"], out) == 0
    json.loads(out.getvalue(), parse_constant=lambda name: pytest.fail(name))
    out.getvalue().encode("utf-8")


def test_contract_check_of_a_file_name_that_is_not_utf8_is_exit_2(tmp_path: Path) -> None:
    # The non-UTF-8 byte arrives as a lone surrogate in argv; the operand is named as
    # --help shows it (FILE), not by its internal dest (once "--operands[0]").
    done = subprocess.run(
        [sys.executable, "-m", "graphonomous", "contract", "check", b"\xed\xa0\x80.json"],
        capture_output=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr
    assert b"invalid FILE[0]:" in done.stderr and b"surrogate" in done.stderr
    assert b"--operands" not in done.stderr  # the name --help shows, not the dest
    assert b"Traceback" not in done.stderr and b"internal error" not in done.stderr
