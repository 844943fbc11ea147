"""Similarity search inside PostgreSQL (pgvector) returns exactly the SQLite path's results.

The same graph (one SQLite file, copied into PostgreSQL by `migrate`, so the ids are the
same) answers the same queries on both backends: identical ids, scores and order for
`similarity_search` (with and without a node_type filter, tied vectors, a zero query)
and identical top-5 for `retrieve_context`.  Vectors written without their pgvector
column (a bare INSERT, a bare UPDATE of the BLOB) are still found; the HNSW mode builds
its index and answers from it, and a namespace whose vectors are all farther than another
namespace's still gets `limit` of its own (iterative index scan, else the exact scan).
Skips without the PostgreSQL test packages; fails instead when
GRAPHONOMOUS_REQUIRE_POSTGRES=1 (tests/pg_support.py).
"""

from __future__ import annotations

from pathlib import Path

import pg_support
import pytest
from pg_support import Cluster

from graphonomous import Graphonomous, telemetry
from graphonomous.embed import pack_f32
from graphonomous.engine.db_vectors import EXACT_FALLBACK_EVENT, DatabaseVectorIndex
from graphonomous.store import StoreError
from graphonomous.store.migrate import migrate
from graphonomous.store.pgvector import VECTOR_INDEX_ENV_VAR, hnsw_index_name, iterative_scans

globals().update(pg_cluster=pg_support.pg_cluster, pg_url=pg_support.pg_url)

WORDS = (
    "pump",
    "valve",
    "pressure",
    "line",
    "motor",
    "sensor",
    "alarm",
    "leak",
    "temperature",
    "flow",
    "reactor",
    "coolant",
    "turbine",
    "gauge",
    "filter",
    "bearing",
    "shaft",
    "seal",
    "inlet",
    "outlet",
)
QUERIES = (
    "pump pressure",
    "valve leak alarm on line 3",
    "reactor coolant temperature unit 5",
    "bearing seal",
    "",  # the zero query: every score 0.0, the smallest ids
    "zzz qqq",  # shares no word with any node
)


def _build(path: Path, nodes: int = 1500) -> None:
    """Varied short texts, two node types, and 12 identical nodes (exactly tied vectors)."""
    operations = [
        {
            "op": "add_node",
            "node": {
                "id": f"n{i:05d}",
                "content": " ".join(WORDS[(i * j + j) % len(WORDS)] for j in range(1, 2 + i % 6))
                + f" on line {i % 13} unit {i % 37}",
                "node_type": "episodic" if i % 3 == 0 else "semantic",
            },
        }
        for i in range(nodes)
    ] + [
        {"op": "add_node", "node": {"id": f"tie{i:02d}", "content": "pump pressure valve"}}
        for i in range(12)
    ]
    with Graphonomous(path, embedder="hashing") as graph:
        graph.apply_batch(operations)


@pytest.fixture
def pair(pg_cluster: Cluster, tmp_path: Path) -> tuple[str, str]:
    source = tmp_path / "g.db"
    _build(source)
    url = pg_cluster.new_database(empty=True)
    assert migrate(str(source), url)["verified"] is True
    return str(source), url


def _hits(graph: Graphonomous, query: str, node_type: str | None) -> list[tuple[str, float]]:
    found = graph.similarity_search(query, limit=10, node_type=node_type)["results"]
    return [(row["id"], row["similarity"]) for row in found]


def test_similarity_search_equals_sqlite(pair: tuple[str, str], pg_cluster: Cluster) -> None:
    source, url = pair
    with Graphonomous(source, embedder="hashing") as lite, Graphonomous(url) as pg:
        assert isinstance(pg.vector_index(), DatabaseVectorIndex)
        for query in QUERIES:
            for node_type in (None, "episodic"):
                expected = _hits(lite, query, node_type)
                assert len(expected) == 10
                assert _hits(pg, query, node_type) == expected, (query, node_type)
        # The tie: 12 identical vectors, ordered by id on both backends.
        tied = [node_id for node_id, _ in _hits(pg, "pump pressure valve", None)]
        assert tied == [f"tie{i:02d}" for i in range(10)]
    # migrate filled the column of the BLOBs it copied.
    assert pg_cluster.sql(url, "SELECT count(*) FROM node_embeddings WHERE vec IS NULL") == [(0,)]


def test_retrieve_context_top5_equals_sqlite(pair: tuple[str, str]) -> None:
    source, url = pair
    with Graphonomous(source, embedder="hashing") as lite, Graphonomous(url) as pg:
        for query in QUERIES[:4]:
            for effort in (0, 3):
                expected = lite.retrieve_context(query, limit=5, effort=effort)["results"]
                found = pg.retrieve_context(query, limit=5, effort=effort)["results"]
                assert [r["node_id"] for r in found] == [r["node_id"] for r in expected]
                assert [r["score"] for r in found] == [r["score"] for r in expected]


def test_blob_changed_without_its_column_is_searched_as_stored(
    pair: tuple[str, str], pg_cluster: Cluster
) -> None:
    _, url = pair
    with Graphonomous(url) as pg:
        (vector,) = pg.embed_texts(["turbine gauge filter bearing shaft"])
        before = _hits(pg, "turbine gauge filter bearing shaft", None)
        assert before[0][0] != "n00002"
        # Another writer changes the BLOB only (as an older server would).
        pg.store.execute(
            "UPDATE node_embeddings SET embedding = ? WHERE node_id = ?",
            (pack_f32(vector), "n00002"),
        )
        stale = "SELECT vec IS NULL FROM node_embeddings WHERE node_id = 'n00002'"
        assert pg_cluster.sql(url, stale) == [(True,)]
        # Inside a write transaction the column is not filled: the SQL decoding answers.
        with pg.lock, pg.store.transaction():
            assert _hits(pg, "turbine gauge filter bearing shaft", None)[0] == ("n00002", 1.0)
        assert pg_cluster.sql(url, stale) == [(True,)]
        assert _hits(pg, "turbine gauge filter bearing shaft", None)[0] == ("n00002", 1.0)
        assert pg_cluster.sql(url, stale) == [(False,)]  # filled by the search outside


def test_hnsw_mode_builds_and_uses_its_index(
    pair: tuple[str, str], pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, url = pair
    monkeypatch.setenv(VECTOR_INDEX_ENV_VAR, "hnsw")
    with Graphonomous(source, embedder="hashing") as lite, Graphonomous(url) as pg:
        index = pg.vector_index()
        assert isinstance(index, DatabaseVectorIndex) and index.approximate
        overlap = 0
        for query in QUERIES[:4]:
            exact = {node_id for node_id, _ in _hits(lite, query, None)}
            found = _hits(pg, query, None)
            assert len(found) == 10
            overlap += len(exact & {node_id for node_id, _ in found})
        name = hnsw_index_name(pg.embedding_model, pg.embedder.dimensions)
        built = f"SELECT count(*) FROM pg_indexes WHERE indexname = '{name}'"
        assert pg_cluster.sql(url, built) == [(1,)]
    # Approximate, but on 1.5K nodes it finds nearly all of the exact top 10.
    assert overlap >= 36
    monkeypatch.setenv(VECTOR_INDEX_ENV_VAR, "ivf")
    with pytest.raises(StoreError, match=VECTOR_INDEX_ENV_VAR):
        Graphonomous(url)


# -- vectors per embedding model (migration 8) ---------------------------------------------

MODEL_A, MODEL_B = "hashing-384", "hashing-128"
NOTES = ("pump seal leaks under pressure", "valve sticks when cold", "turbine bearing hums")


def _top(graph: Graphonomous, query: str) -> str:
    return str(graph.similarity_search(query, limit=1)["results"][0]["id"])


def test_two_embedders_share_a_database_and_erase_removes_both(
    pg_url: str, pg_cluster: Cluster
) -> None:
    with Graphonomous(pg_url, embedder=MODEL_A) as a, Graphonomous(pg_url, embedder=MODEL_B) as b:
        for i, text in enumerate(NOTES):
            a.store_node(text, node_id=f"m{i}")
        assert _top(a, "pump seal") == _top(b, "pump seal") == "m0"  # B embeds its own
        assert a.graph_stats()["embedding_models"] == {MODEL_A: 3, MODEL_B: 3}
        generation = a.engine.generation
        b.store_node("the kettle whistles", node_id="kettle")  # B's vector only
        assert _top(a, "kettle whistles") == "kettle"  # A embeds the one it lacks
        assert a.engine.generation > generation
        rows = "SELECT model, count(*) FROM node_embeddings GROUP BY model ORDER BY model"
        assert pg_cluster.sql(pg_url, rows) == [(MODEL_B, 4), (MODEL_A, 4)]
        logged = "SELECT count(*) FROM node_changes WHERE model = 'hashing-128'"
        assert pg_cluster.sql(pg_url, logged) == [(4,)]
        a.gdpr_erase("m0", "request")
        gone = "SELECT count(*) FROM node_embeddings WHERE node_id = 'm0'"
        assert pg_cluster.sql(pg_url, gone) == [(0,)]
        assert "m0" not in {r["id"] for r in b.similarity_search("pump seal", 5)["results"]}


def test_a_version_7_database_upgrades_keeping_its_vectors(
    pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphonomous.store import postgres

    url = pg_cluster.new_database(empty=True)
    with monkeypatch.context() as old:
        old.setattr(postgres, "SCHEMA_VERSION", 7)
        postgres.PostgresStore(url).close()
    assert pg_cluster.sql(url, "SELECT max(version) FROM graphonomous_schema") == [(7,)]
    with Graphonomous(":memory:", embedder=MODEL_A) as fresh:
        blob = pack_f32(fresh.embed_texts([NOTES[0]])[0])
    pg_cluster.sql(
        url,
        "INSERT INTO nodes (id, node_type, content, created_at, updated_at) "
        f"VALUES ('m0', 'semantic', '{NOTES[0]}', 't', 't')",
    )
    pg_cluster.sql(
        url,
        "INSERT INTO node_embeddings (node_id, embedding, model) "
        f"VALUES ('m0', '\\x{blob.hex()}', '{MODEL_A}')",
    )
    with Graphonomous(url, embedder=MODEL_B) as b, Graphonomous(url, embedder=MODEL_A) as a:
        version = pg_cluster.sql(url, "SELECT max(version) FROM graphonomous_schema")
        assert version == [(postgres.SCHEMA_VERSION,)]  # every migration since 7 ran
        assert a.store.get_embedding("m0", MODEL_A) == blob  # kept, with its model
        assert _top(b, "pump seal") == "m0"  # B adds its own vector beside A's
        assert a.store.embedding_counts() == {MODEL_B: 1, MODEL_A: 1}
        assert _top(a, "pump seal") == "m0"
    stale = "SELECT count(*) FROM node_embeddings WHERE vec IS NULL"
    assert pg_cluster.sql(url, stale) == [(0,)]  # the rebuilt column was filled


def test_time_runs_the_same_on_postgres(pg_url: str) -> None:
    """Decay, fading, tomorrow's count, recall by a time cue and supersession through the
    PostgreSQL dialect (the decay SQL's julianday/exp forms), on a manual clock."""
    from graphonomous.clock import ManualClock

    clock = ManualClock("2026-02-02T09:00:00Z")
    with Graphonomous(pg_url, clock=clock) as graph:
        episode = graph.store_node("Fixed the greenhouse sensor cable", "episodic")["node"]["id"]
        old = graph.store_node("The staging database runs PostgreSQL 16.")["node"]["id"]
        clock.advance(days=3)
        assert graph.retention_status()["fading_next_day"] == 1  # the episode, at 3.5 days
        new = graph.store_node("The staging database now runs PostgreSQL 17.")
        assert new["updates"][0]["supersedes"] == old
        clock.advance(days=6)
        graph.run_consolidation()
        node = graph.get_node(episode, include_forgotten=True)["node"]
        assert node["forgotten_at"] is not None and node["forgotten_reason"] == "faded"
        assert graph.get_node(old)["node"]["confidence"] > 0.3  # slow tier: barely decayed
        answer = graph.retrieve_context("what did I fix in the greenhouse last week", limit=5)
        assert answer["stats"]["time"]["recalled"] == [episode]


# -- HNSW mode and namespaces ---------------------------------------------------------------

# The other namespace's nodes repeat the query's words (cosine near 1); the small ones share
# one or two of them, so every one of the big namespace's vectors is nearer the query than any
# of theirs: a filter applied after a plain HNSW scan (ef_search rows) would keep none of them.
NEAR_QUERY = "pump pressure valve alarm"
SMALL, MID, BIG = 30, 300, 3000


def _far_ops(prefix: str, count: int) -> list[dict[str, object]]:
    return [
        {
            "op": "add_node",
            "node": {
                "id": f"{prefix}{i:04d}",
                "content": f"{WORDS[i % 4]} {WORDS[4 + i % 16]} {WORDS[4 + (i * 7) % 16]} "
                f"unit {i % 11}",
            },
        }
        for i in range(count)
    ]


def _near_ops(count: int) -> list[dict[str, object]]:
    return [
        {"op": "add_node", "node": {"id": f"b{i:05d}", "content": f"{NEAR_QUERY} unit b{i}"}}
        for i in range(count)
    ]


@pytest.fixture(scope="module")
def namespace_pair(pg_cluster: Cluster) -> tuple[str, str]:
    """Two databases holding namespaces `small` (30 nodes) and `mid` (300): one beside `big`
    (3,000 nodes, all nearer NEAR_QUERY than any of theirs), one without it."""
    beside, alone = pg_cluster.new_database(), pg_cluster.new_database()
    for url in (beside, alone):
        # The plan of a large database: at this size the planner would sort the namespace's
        # rows (an exact answer) instead of scanning the index, unless sorting costs more.
        (name,) = pg_cluster.sql(url, "SELECT current_database()")[0]
        pg_cluster.sql(url, f"ALTER DATABASE {name} SET enable_sort = off")
        for namespace, ops in (("small", _far_ops("s", SMALL)), ("mid", _far_ops("m", MID))):
            with Graphonomous(url, embedder="hashing", namespace=namespace) as graph:
                graph.apply_batch(ops)
    with Graphonomous(beside, embedder="hashing", namespace="big") as graph:
        graph.apply_batch(_near_ops(BIG))
    return beside, alone


def _answers(url: str, namespace: str, limit: int) -> tuple[list[tuple[str, float]], list[str]]:
    with Graphonomous(url, embedder="hashing", namespace=namespace) as graph:
        hits = _hits_limit(graph, NEAR_QUERY, limit)
        found = graph.retrieve_context(NEAR_QUERY, limit=5, effort=0)["results"]
        return hits, [row["node_id"] for row in found]


def _hits_limit(graph: Graphonomous, query: str, limit: int) -> list[tuple[str, float]]:
    found = graph.similarity_search(query, limit=limit)["results"]
    return [(row["id"], row["similarity"]) for row in found]


def test_hnsw_small_namespace_beside_a_large_one_answers_as_alone(
    namespace_pair: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A namespace smaller than the first fetch: the filtered index scan comes back short,
    so the exact scan answers: the same ids, scores and order as the exact mode, beside
    `big` or not (an approximate answer could not promise that)."""
    beside, alone = namespace_pair
    exact = _answers(alone, "small", 10)
    assert len(exact[0]) == 10 and all(node_id.startswith("s") for node_id, _ in exact[0])
    monkeypatch.setenv(VECTOR_INDEX_ENV_VAR, "hnsw")
    assert _answers(beside, "small", 10) == exact
    assert _answers(alone, "small", 10) == exact


def test_hnsw_mid_namespace_gets_limit_candidates_through_the_index(
    namespace_pair: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A namespace larger than the fetch, every one of its vectors farther than 3,000 of
    another namespace's: the iterative index scan still yields `limit` of its own, nearly
    the exact top 10 (approximate, so compared as sets), without falling back."""
    beside, alone = namespace_pair
    exact_ids = {node_id for node_id, _ in _answers(alone, "mid", 10)[0]}
    monkeypatch.setenv(VECTOR_INDEX_ENV_VAR, "hnsw")
    with Graphonomous(beside, embedder="hashing", namespace="mid") as graph:
        index = graph.vector_index()
        assert isinstance(index, DatabaseVectorIndex) and index.approximate
        found = _hits_limit(graph, NEAR_QUERY, 10)
        assert len(found) == 10 and all(node_id.startswith("m") for node_id, _ in found)
        assert index.exact_fallbacks == 0
        assert len(exact_ids & {node_id for node_id, _ in found}) >= 8
    # The small namespace's search fell back to the exact scan, and says so.
    before = telemetry.counters()["events"].get(EXACT_FALLBACK_EVENT, 0)
    with Graphonomous(beside, embedder="hashing", namespace="small") as graph:
        index = graph.vector_index()
        assert isinstance(index, DatabaseVectorIndex)
        assert len(_hits_limit(graph, NEAR_QUERY, 10)) == 10
        assert index.exact_fallbacks == 1
    assert telemetry.counters()["events"].get(EXACT_FALLBACK_EVENT, 0) == before + 1


def test_hnsw_mode_needs_iterative_scans(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """pgvector before 0.8 has no iterative scan: hnsw mode refuses it, naming the variable
    (exact mode is fine)."""
    from graphonomous.store import pgvector

    with Graphonomous(pg_url, embedder="hashing") as graph:
        graph.store_node("pump seal leaks", node_id="p")
    monkeypatch.setattr(pgvector, "pgvector_version", lambda store: "0.7.4")
    monkeypatch.setenv(VECTOR_INDEX_ENV_VAR, "hnsw")
    refused = f"{VECTOR_INDEX_ENV_VAR}=hnsw needs pgvector >= 0.8"
    with Graphonomous(pg_url, embedder="hashing") as g, pytest.raises(StoreError, match=refused):
        g.similarity_search("pump seal", 1)
    monkeypatch.delenv(VECTOR_INDEX_ENV_VAR)
    with Graphonomous(pg_url, embedder="hashing") as graph:
        assert _top(graph, "pump seal") == "p"
    assert [iterative_scans(v) for v in ("0.7.4", "0.8.0", "0.8.6", "0.10.1", "1.0", "")] == [
        False,
        True,
        True,
        True,
        True,
        False,
    ]
