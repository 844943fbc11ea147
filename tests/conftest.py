"""Shared fixtures: one in-memory graph per test.

`graph` is the facade (what tools, the CLI and MCP call); `engine` is the
same graph's engine, what the retrieval and learning modules take — a test
of a learning or retrieval function passes `engine`, never the facade.
"""

from __future__ import annotations

from collections.abc import Iterator

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
