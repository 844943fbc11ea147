"""The SQLite → PostgreSQL statement translation, pinned without a server.

`store.postgres.translate` rewrites the store's SQLite statements; these cases are the ones
a running server would refuse if the translation were wrong.
"""

from __future__ import annotations

from graphonomous.store.postgres import translate


def test_an_instr_test_in_a_boolean_position_stays_a_test() -> None:
    """``AND (instr(…) > 0)`` is a condition; only a summed test is an integer (PostgreSQL
    refuses ``AND CAST(… AS INTEGER)``: "argument of AND must be type boolean")."""
    sql = translate("SELECT id FROM nodes WHERE namespace = ? AND (instr(content, ?) > 0)")
    assert "CAST" not in sql and "AND (graphonomous_instr(content, %s) > 0)" in sql


def test_summed_instr_tests_are_integers() -> None:
    sql = translate(
        "SELECT id FROM nodes WHERE ((instr(lower(content), ?) > 0) + "
        "(instr(lower(content), ?) > 0)) >= 2"
    )
    assert sql.count("AS INTEGER") == 2
