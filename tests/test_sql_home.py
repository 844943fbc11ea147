"""Every SQL statement on nodes and edges lives in `graphonomous/store/`.

Rule (ARCHITECTURE.md "Where each fact lives", issue #11): retrieval,
learning, the engine and the adapters ask the store named, typed questions
(`store/queries.py`, `store/sqlite.py`); none of them spells SQL on the
``nodes`` / ``edges`` tables, a condition on their columns, or a statement
whose table name is formatted in (which could be either table).  Parsed with
stdlib `ast`: every string literal and f-string outside ``store/`` is checked
(docstrings excluded), so SQL built in pieces is caught piece by piece.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Final

PACKAGE: Final = Path(__file__).resolve().parent.parent / "graphonomous"
HOME: Final = PACKAGE / "store"

# SQL touching nodes/edges: a statement naming either table, a statement whose
# table is a formatted name (f"FROM {table}"), or a condition on the columns
# only those tables have in this schema (soft-forget and supersession markers).
SQL_ON_GRAPH: Final = re.compile(
    r"\b(?:FROM|INTO|UPDATE|JOIN|TABLE)\s+(?:(?:nodes|edges)\b|\"?\{\})"
    r"|\b(?:forgotten_at|superseded_by)\s+IS\s+(?:NOT\s+)?NULL\b"
)
PLACEHOLDER: Final = "{}"


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def literals(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every string literal and f-string that is not a docstring;
    an f-string's replacement fields read as ``{}``."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            skip.update(id(part) for part in node.values)
            text = "".join(
                part.value if isinstance(part, ast.Constant) else PLACEHOLDER
                for part in node.values
            )
            yield node.lineno, text
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            yield node.lineno, node.value


def offences(source: str) -> list[tuple[int, str]]:
    return [
        (line, " ".join(text.split())[:100])
        for line, text in literals(source)
        if SQL_ON_GRAPH.search(text)
    ]


def test_no_sql_on_nodes_or_edges_outside_store() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if HOME in path.parents:
            continue
        for line, text in offences(path.read_text(encoding="utf-8")):
            found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {text}")
    assert found == [], "SQL on nodes/edges outside store/:\n" + "\n".join(found)


def test_the_check_sees_each_form() -> None:
    """The detector catches plain, concatenated, formatted and fragment SQL, not prose."""
    caught = [
        'rows = q("SELECT id FROM nodes WHERE x = ?")',
        'q("SELECT e.source_id FROM edges e " "JOIN nodes s ON s.id = e.source_id")',
        'q(f"UPDATE {table} SET {column} = ? WHERE id = ?")',
        "q(f'SELECT 1 FROM \"{table}\"')",
        'where = "forgotten_at IS NULL AND superseded_by IS NULL"',
        "DELETE = 'DELETE FROM edges WHERE strength < ?'",
    ]
    for source in caught:
        assert offences(source), source
    passed = [
        'def f():\n    """Reads FROM nodes WHERE forgotten_at IS NULL (docstring)."""',
        'q("SELECT id FROM goals WHERE node_id = ?")',
        'text = "edges from nodes are walked"',
    ]
    for source in passed:
        assert not offences(source), source
