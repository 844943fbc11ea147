"""Competitor adapters: one interface, real implementations, a stated reason when unavailable."""

from __future__ import annotations

import pytest

from graphonomous.api import Graphonomous
from graphonomous.capabilities import adapters
from graphonomous.capabilities.adapters import (
    AdapterUnavailable,
    Bm25Adapter,
    GraphonomousAdapter,
    find_server_memory,
)

ITEMS = [
    ("a", "the boiler feeds hall B"),
    ("b", "the chiller cools hall C"),
    ("c", "the night shift starts at ten"),
    ("d", "the coffee machine is descaled on Fridays"),
    ("e", "the loading dock closes at noon"),
]


@pytest.mark.parametrize("make", ["graphonomous", "bm25"])
def test_interface_round_trip(make: str) -> None:
    graph = Graphonomous(":memory:", embedder="hashing")
    try:
        adapter = GraphonomousAdapter(graph) if make == "graphonomous" else Bm25Adapter()
        adapter.ingest(ITEMS, [("a", "b")])
        assert adapter.retrieve("boiler hall", 1) == ["a"]
        adapter.forget("a")
        assert "a" not in adapter.retrieve("boiler hall", 2)
        assert adapter.stats()["items"] == len(ITEMS) - 1
        adapter.close()
    finally:
        graph.close()


def test_server_memory_unavailable_reasons(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adapters.shutil, "which", lambda name: None)
    with pytest.raises(AdapterUnavailable, match="node is not installed"):
        find_server_memory()
    monkeypatch.setattr(adapters.shutil, "which", lambda name: "/usr/bin/node")
    monkeypatch.setattr(adapters, "SERVER_MEMORY_ROOTS", ("/nonexistent-root",))
    monkeypatch.setenv(adapters.SERVER_MEMORY_ENV, "/nonexistent/index.js")
    with pytest.raises(AdapterUnavailable, match=adapters.SERVER_MEMORY_ENV):
        find_server_memory()
