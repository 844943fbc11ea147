"""The engine's freshness shortcut: while `Store.fingerprint` and the generation are unchanged,
an index access does not read the change log; any commit — another connection's (another
process's), this connection's, raw SQL — makes the next access read it again.

Two facades on one file stand for two processes (two connections: the same
`PRAGMA data_version` path as separate processes).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from graphonomous import Graphonomous


@pytest.fixture
def pair(two_connections: Any) -> Iterator[tuple[Graphonomous, Graphonomous]]:
    texts = ["morning coffee", "garden hose", "bicycle chain", "old map"]
    with two_connections(texts, "f") as opened:
        yield opened


def _log_reads(graph: Graphonomous) -> list[str]:
    """Statements reading the change log on this facade's connection (collected live)."""
    seen: list[str] = []
    connection = graph.store._conn  # the store's own connection (test-only access)
    connection.set_trace_callback(lambda sql: seen.append(sql) if "node_changes" in sql else None)
    return seen


def _keyword(graph: Graphonomous, query: str) -> list[str]:
    return [doc for doc, _ in graph.text_index().search(query, 5)]


def test_unchanged_database_is_not_read_again(pair: tuple[Graphonomous, Graphonomous]) -> None:
    _, reader = pair
    reader.text_index()
    reader.vector_index()
    seen = _log_reads(reader)
    for _ in range(3):
        reader.text_index()
        reader.vector_index()
    assert seen == []


def test_another_connections_commit_is_seen(pair: tuple[Graphonomous, Graphonomous]) -> None:
    writer, reader = pair
    assert _keyword(reader, "kettle whistles") == []
    seen = _log_reads(reader)
    writer.store_node("the kettle whistles at the boil", node_id="kettle")
    assert _keyword(reader, "kettle whistles")[0] == "kettle"
    assert seen  # the log was read because data_version moved
    writer.forget_node("kettle")
    assert "kettle" not in _keyword(reader, "kettle whistles")


def test_own_and_raw_writes_are_seen(pair: tuple[Graphonomous, Graphonomous]) -> None:
    writer, _ = pair
    assert _keyword(writer, "lantern") == []
    writer.store_node("a lantern on the porch", node_id="lantern")
    assert _keyword(writer, "lantern") == ["lantern"]
    with writer.store.transaction():  # raw SQL through the same connection
        writer.store.execute("UPDATE nodes SET content = ? WHERE id = ?", ("a candle", "lantern"))
    assert _keyword(writer, "lantern") == []
    assert _keyword(writer, "candle") == ["lantern"]
