"""The engine's read cache (engine/read_cache.py): rows retrieval read by earlier calls are
reused while the database is unchanged, and any change -- another connection's (another
process's) write or erase, this connection's write -- is seen by the next retrieval.

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
    texts = ["the kettle whistles", "kettle on the stove", "garden hose", "bicycle chain"]
    with two_connections(texts, "n") as (writer, reader):
        writer.store_edge("n0", "n1", "related", strength=0.6)
        yield writer, reader


def _node_reads(graph: Graphonomous) -> list[str]:
    """SELECTs of node rows or edges on this facade's connection (collected live)."""
    seen: list[str] = []
    connection = graph.store._conn  # the store's own connection (test-only access)

    def trace(sql: str) -> None:
        if sql.lstrip().upper().startswith("SELECT") and (" nodes" in sql or " edges" in sql):
            seen.append(sql)

    connection.set_trace_callback(trace)
    return seen


def _ask(graph: Graphonomous, effort: int = 3) -> dict[str, object]:
    return graph.retrieve_context("kettle whistles", effort=effort)


def _ids(answer: dict[str, object]) -> list[str]:
    results = answer["results"]
    assert isinstance(results, list)
    return [row["node_id"] for row in results]


def test_repeated_retrieval_reads_no_rows_and_answers_the_same(
    pair: tuple[Graphonomous, Graphonomous],
) -> None:
    _, reader = pair
    _ask(reader)  # loads and saves the indexes (a write: the cache starts again)
    first = _ask(reader)
    seen = _node_reads(reader)
    second = _ask(reader)
    assert seen == []  # rows, edges, visibility and kinds all came from the cache
    for answer in (first, second):
        answer["stats"].pop("timings_ms")  # type: ignore[attr-defined]
    assert first == second


def test_access_counters_are_exact_through_the_cache(
    pair: tuple[Graphonomous, Graphonomous],
) -> None:
    _, reader = pair
    for _ in range(3):
        ids = _ids(_ask(reader))
    assert "n0" in ids
    stored = reader.store.get_node("n0")
    cached = reader.engine.read_cache()
    assert cached is not None
    row = cached.table("retrieval.nodes")["n0"]
    assert (row.access_count, row.last_accessed_at) == (
        stored.access_count,
        stored.last_accessed_at,
    )
    assert stored.access_count == 3


def test_another_connections_write_is_seen(pair: tuple[Graphonomous, Graphonomous]) -> None:
    writer, reader = pair
    assert "fresh" not in _ids(_ask(reader))
    writer.store_node("the kettle whistles loudly", node_id="fresh")
    assert "fresh" in _ids(_ask(reader))
    writer.store_edge("fresh", "n3", "related", strength=0.9)
    answer = _ask(reader, effort=3)
    assert "n3" in _ids(answer)  # the new edge was read, not the cached edge list


def test_another_connections_erase_is_seen(pair: tuple[Graphonomous, Graphonomous]) -> None:
    writer, reader = pair
    assert "n0" in _ids(_ask(reader))
    writer.forget_node("n0")
    assert "n0" not in _ids(_ask(reader))
    writer.delete_node("n1")
    assert "n1" not in _ids(_ask(reader))


def test_another_connections_counter_write_is_seen(
    pair: tuple[Graphonomous, Graphonomous],
) -> None:
    writer, reader = pair
    _ask(reader)
    _ask(writer)  # the writer's access counters: a commit on another connection
    _ask(reader)
    cached = reader.engine.read_cache()
    assert cached is not None
    row = cached.table("retrieval.nodes")["n0"]
    assert row.access_count == reader.store.get_node("n0").access_count == 3


def test_no_cache_inside_a_write_transaction(pair: tuple[Graphonomous, Graphonomous]) -> None:
    _, reader = pair
    _ask(reader)
    with reader.engine.write():
        assert reader.engine.read_cache() is None


def test_another_connections_change_to_a_cached_row_is_seen(
    pair: tuple[Graphonomous, Graphonomous],
) -> None:
    writer, reader = pair
    _ask(reader)
    _ask(reader)
    writer.store.update_node("n0", confidence=0.125)
    writer.store_edge("n0", "n2", "related", strength=0.9)
    answer = _ask(reader)
    results = answer["results"]
    assert isinstance(results, list)
    assert [row["confidence"] for row in results if row["node_id"] == "n0"] == [0.125]
    window = reader.engine.read_cache()
    assert window is not None
    touching = window.table("retrieval.touching")["n0"]
    assert {edge.target_id for edge in touching} == {"n1", "n2"}


def test_the_counter_write_reads_the_change_log_once(
    pair: tuple[Graphonomous, Graphonomous],
) -> None:
    _, reader = pair
    _ask(reader)
    _ask(reader)
    seen: list[str] = []
    connection = reader.store._conn  # test-only access
    connection.set_trace_callback(
        lambda sql: seen.append(sql) if "FROM node_changes" in sql else None
    )
    _ask(reader)
    # only the counter transaction's own start reads the log: the sync after its
    # commit knows nothing else was committed (engine.neutral_write)
    assert len(seen) == 1


def _window_ids(answer: dict[str, object]) -> set[str]:
    topology = answer["topology"]
    assert isinstance(topology, dict)
    return {node for scc in topology["sccs"] for node in scc["nodes"]} | set(topology["dag_nodes"])


def test_kept_links_are_reused_and_equal_a_fresh_derivation(
    pair: tuple[Graphonomous, Graphonomous],
) -> None:
    _, reader = pair
    _ask(reader, effort=0)
    warm = _ask(reader, effort=0)
    cached = reader.engine.read_cache()
    assert cached is not None
    kept = cached.table("retrieval.kept_links")
    assert (None, "n0") in kept  # the topology window's links came from the table
    assert [link.neighbor for link in kept[(None, "n0")]] == ["n1"]
    # a facade without a warm cache derives the same window
    with Graphonomous(reader.store.path) as cold:
        fresh = _ask(cold, effort=0)
    for answer in (warm, fresh):
        answer["stats"].pop("timings_ms")  # type: ignore[attr-defined]
    assert warm["topology"] == fresh["topology"]
    assert _window_ids(warm) == {"n0", "n1"} | set(_ids(warm))


def test_kept_links_follow_another_connections_forget_and_edge(
    pair: tuple[Graphonomous, Graphonomous],
) -> None:
    writer, reader = pair
    _ask(reader, effort=0)
    assert "n1" in _window_ids(_ask(reader, effort=0))
    writer.forget_node("n1")  # the neighbour leaves every window
    assert "n1" not in _window_ids(_ask(reader, effort=0))
    writer.store_edge("n0", "n3", "related", strength=0.9)
    assert "n3" in _window_ids(_ask(reader, effort=0))


def test_kept_links_are_kept_per_agent(two_connections: Any) -> None:
    with two_connections(["the kettle whistles"], "n") as (writer, reader):
        # only a neighbour of the result (no shared word), visible to no-agent reads only
        writer.store_node("garden hose", node_id="theirs", agent_id="other")
        writer.store_edge("n0", "theirs", "related", strength=0.9)
        reader.retrieve_context("kettle whistles", effort=0)  # loads and saves the indexes
        windows = [
            _window_ids(reader.retrieve_context("kettle whistles", effort=0, agent_id=agent))
            for agent in (None, "default", None, "default")
        ]
    assert windows == [{"n0", "theirs"}, {"n0"}, {"n0", "theirs"}, {"n0"}]


def test_patch_accessed_makes_new_rows_and_leaves_handed_out_ones(
    pair: tuple[Graphonomous, Graphonomous],
) -> None:
    from dataclasses import asdict

    from graphonomous.engine.read_cache import ReadCache
    from graphonomous.retrieval.graph_view import patch_accessed

    _, reader = pair
    row = reader.store.get_node("n0")
    cache = ReadCache()
    cache.table("retrieval.nodes")["n0"] = row
    before = asdict(row)
    patch_accessed(cache, ["n0", "n0", "absent"], "2030-01-01T00:00:00.000Z")
    bumped = cache.table("retrieval.nodes")["n0"]
    assert bumped is not row and type(bumped) is type(row)
    assert asdict(row) == before  # the row handed out earlier is unchanged
    assert asdict(bumped) == {
        **before,
        "access_count": row.access_count + 1,  # once per id, however often listed
        "last_accessed_at": "2030-01-01T00:00:00.000Z",
    }
