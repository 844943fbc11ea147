"""Shared fixtures: one in-memory graph per test, or two facades on one file.

`graph` is the facade (what tools, the CLI and MCP call); `engine` is the
same graph's engine, what the retrieval and learning modules take — a test
of a learning or retrieval function passes `engine`, never the facade.
`two_connections` opens two facades on one database file: they stand for two
processes (two connections take the same `PRAGMA data_version` path as
separate processes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

from graphonomous import Graphonomous
from graphonomous.retrieval.graph_view import GraphEngine


@pytest.fixture
def graph() -> Iterator[Graphonomous]:
    """A fresh in-memory graph with the hashing embedder (deterministic, no model files)."""
    with Graphonomous(":memory:", embedder="hashing") as opened:
        yield opened


@pytest.fixture
def engine(graph: Graphonomous) -> GraphEngine:
    """The engine of the `graph` fixture (the same database)."""
    return graph.engine


Pair = tuple[Graphonomous, Graphonomous]


@pytest.fixture
def two_connections(tmp_path: Path) -> Callable[[list[str], str], AbstractContextManager[Pair]]:
    """Opens (writer, reader) on one file; the writer stores `texts` as prefix0, prefix1, …"""

    @contextmanager
    def open_pair(texts: list[str], prefix: str) -> Iterator[Pair]:
        db = tmp_path / "g.db"
        with Graphonomous(db) as writer, Graphonomous(db) as reader:
            for i, text in enumerate(texts):
                writer.store_node(text, node_id=f"{prefix}{i}")
            yield writer, reader

    return open_pair
