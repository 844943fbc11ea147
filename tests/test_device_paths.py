"""The small-device fast paths (issue #20) change no result.

* The pure backend's approximate scores stay 32-bit fields of one big int
  (`embed.index._FieldScores`): its k-th best score and its cut must equal
  those of the plain float list they replace, with removed and delta slots.
* Retrieval on real text (paragraphs of this repository's SPEC.md) is
  byte-identical between the pure and the NumPy path, through rewrites and
  deletions that leave removed slots in the pure columns.
* The entity index is saved with the other derived indexes: a fresh
  process loads it (no extraction) and applies the log after it.
* A cold `graphonomous recall` (its whole argument parser built) imports
  neither the MCP server and its tool sets nor the PULSE, server-memory or
  canvas adapters.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from graphonomous import Graphonomous
from graphonomous.embed import VectorIndex
from graphonomous.embed.index import exact_score, normalized_f32, sparse_scorer
from graphonomous.embed.vectors import NO_NUMPY_ENV, numpy_available
from graphonomous.engine import core as engine_core
from graphonomous.index import Bm25Index
from graphonomous.retrieval import entities
from graphonomous.retrieval import speakers as speakers_module
from graphonomous.retrieval.entities import EntityIndex
from graphonomous.retrieval.speakers import SpeakerIndex

ROOT = Path(__file__).resolve().parents[1]
DIMS = 64


def _reference(index: VectorIndex, query: list[float]) -> list[float]:
    """The float list the pure backend used to build (one score per slot, -inf when
    removed), read slot by slot; each live one within eps of its exact score."""
    backend = index._backend
    approx = backend.approximate(query)  # type: ignore[union-attr]
    values = []
    for slot, node_id in enumerate(backend._ids):  # type: ignore[union-attr]
        value = approx.value(slot)
        if node_id is None:
            assert value == -math.inf
        else:
            stored = index.get(node_id)
            assert stored is not None
            assert abs(value - exact_score(query, stored)) <= approx.eps
        values.append(value)
    return values


@pytest.mark.parametrize("seed", range(6))
def test_field_scores_select_like_the_float_list(seed: int) -> None:
    rng = random.Random(seed)
    index = VectorIndex(DIMS, backend="pure")
    for n in range(400):
        index.add(
            f"n{n:03d}", [rng.gauss(0, 1) if rng.random() < 0.6 else 0.0 for _ in range(DIMS)]
        )
    index.search([1.0] * DIMS, 1)  # builds the columns
    for n in rng.sample(range(400), 40):  # removed built slots, then a delta
        index.remove(f"n{n:03d}")
    for n in range(20):
        index.add(f"n{n:03d}", [rng.gauss(0, 1) for _ in range(DIMS)])
    for _ in range(8):
        query = normalized_f32([rng.gauss(0, 1) for _ in range(DIMS)], DIMS)
        values = _reference(index, query)
        approx = index._backend.approximate(query)  # type: ignore[union-attr]
        assert sum(v == -math.inf for v in values) == len(values) - len(index) >= 40
        for m in (1, 5, 30, 200, len(index)):
            assert approx.kth_largest(m) == sorted(values, reverse=True)[m - 1]
        for cut in (-math.inf, -0.2, 0.0, 0.05, sorted(values)[-7], 0.99, math.inf):
            assert approx.at_least(cut) == [s for s, v in enumerate(values) if cut <= v]


def test_sparse_scorer_equals_exact_score() -> None:
    rng = random.Random(3)
    for nonzero in (0, 1, 2, 17, DIMS):
        query = [0.0] * DIMS
        for dim in rng.sample(range(DIMS), nonzero):
            query[dim] = rng.gauss(0, 1)
        query = normalized_f32(query, DIMS)
        score = sparse_scorer(query)
        for _ in range(20):
            row = normalized_f32([rng.gauss(0, 1) for _ in range(DIMS)], DIMS)
            expected = math.fsum(q * r for q, r in zip(query, row, strict=True)) + 0.0
            assert score(row) == exact_score(query, row) == expected


_RUN = """
import json, sys
from graphonomous import Graphonomous
paragraphs = json.loads(sys.stdin.read())
queries = ["saved indexes generation", "quick_check damaged file doctor", "BM25 postings",
           "retrieval effort expansion", "the", "PostgreSQL migrate checksums"]
out = []
with Graphonomous(":memory:") as graph:
    for number, text in enumerate(paragraphs):
        graph.store_node(text, node_type="semantic", node_id=f"p{number:04d}")
    for effort in (0, 3):
        for query in queries:
            out.append(graph.retrieve_context(query, effort=effort))
    for number in range(0, len(paragraphs), 7):  # deletions and re-adds: removed slots
        graph.delete_node(f"p{number:04d}")
        if number % 2:
            graph.store_node(paragraphs[number] + " again", node_type="semantic",
                             node_id=f"r{number:04d}")
    for effort in (0, 3, 6):
        for query in queries:
            out.append(graph.retrieve_context(query, effort=effort))
for result in out:
    result["stats"].pop("timings_ms")
    for row in result["results"] + result.get("directives", []):
        row.pop("last_accessed_at", None)
        row.pop("created_at", None)  # this process's clock: the two runs differ
print(json.dumps(out, sort_keys=True))
"""


def _paragraphs() -> list[str]:
    text = (ROOT / "SPEC.md").read_text(encoding="utf-8")
    blocks = [" ".join(block.split()) for block in text.split("\n\n")]
    return [block for block in blocks if len(block) >= 80][:400]


def _retrieve(no_numpy: bool) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop(NO_NUMPY_ENV, None)
    if no_numpy:
        env[NO_NUMPY_ENV] = "1"
    done = subprocess.run(
        [sys.executable, "-c", _RUN],
        input=json.dumps(_paragraphs()),
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    return done.stdout


@pytest.mark.skipif(not numpy_available(), reason="needs NumPy for the comparison")
def test_pure_and_numpy_retrieval_are_byte_identical_on_real_text() -> None:
    pure, numpy = _retrieve(True), _retrieve(False)
    assert json.loads(pure)[0]["results"]  # the queries find something
    # Compare digests first: pytest's diff of two long unequal strings takes minutes.
    same = hashlib.sha256(pure.encode()).digest() == hashlib.sha256(numpy.encode()).digest()
    assert same, _first_difference(json.loads(pure), json.loads(numpy))


def _first_difference(pure: list[dict[str, Any]], numpy: list[dict[str, Any]]) -> str:
    """Where two runs' results first differ (retrieval number, key), for the message."""
    for number, (a, b) in enumerate(zip(pure, numpy, strict=True)):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                left, right = str(a.get(key))[:200], str(b.get(key))[:200]
                return f"retrieval {number}, key {key!r}: {left} != {right}"
    return "same results, different text"


def test_a_cold_cli_imports_no_server_adapter() -> None:
    probe = (
        "import sys, graphonomous.cli; graphonomous.cli.build_parser(); "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('graphonomous.'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", "import json; " + probe],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = set(json.loads(done.stdout))
    for heavy in (
        "graphonomous.mcp.server",
        "graphonomous.mcp.surfaces",
        "graphonomous.mcp.stdio",
        "graphonomous.pulse",
        "graphonomous.server_memory",
        "graphonomous.ui.server",
    ):
        assert heavy not in loaded
    assert "graphonomous.mcp.names" in loaded


_TURNS = [
    "Caroline: I went to the Adoption Agency in New York last Friday.",
    "Melanie: My pottery class meets at the Lakeside Studio, room E-47.",
    'Caroline: The "Rainbow Support Group" helped me a lot in 2022.',
    "Melanie: We camped near Lake Tahoe with the kids for 5 km hikes.",
    "Caroline: Dr. Alvarez at the Adoption Agency called back.",
]


def _entity_state(index: EntityIndex) -> tuple[object, ...]:
    """What the multi-hop walk reads, independent of dict insertion order."""
    nodes = sorted(index._entities)
    keys = sorted(index._postings)
    return (
        {node: index.entities_of(node) for node in nodes},
        {key: dict(sorted(index.mentions(key).items())) for key in keys},
    )


def _speaker_state(index: SpeakerIndex) -> tuple[object, ...]:
    """What speaker attribution and the participant scope read, order-free."""
    nodes = sorted(index._speaker)
    return (
        {node: index.speaker(node) for node in nodes},
        {key: index.authored(key) for key in sorted(set(index._speaker.values()))},
        index.speakers(),
    )


def test_the_entity_index_is_saved_and_a_fresh_process_loads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "entities.db"
    with Graphonomous(db) as graph:
        for number, text in enumerate(_TURNS):
            graph.store_node(text, node_type="episodic", node_id=f"t{number}")
        built = _entity_state(graph.entity_index())
        assert graph.store.load_derived("mirror/entities", "") is not None
    # another process: loads the copy, extracts nothing
    with Graphonomous(db) as graph, monkeypatch.context() as patch:
        patch.setattr(entities, "extract_entities", _no_extraction)
        assert _entity_state(graph.entity_index()) == built
    erased = _follows_the_log_and_erase(
        db, "entities", EntityIndex, _entity_state, Graphonomous.entity_index, ("t9", "t1", "t0")
    )
    assert isinstance(erased, EntityIndex) and "t0" not in erased._entities


def _follows_the_log_and_erase(
    db: Path,
    name: str,
    factory: type[EntityIndex] | type[SpeakerIndex],
    state: Any,
    index_of: Any,
    ids: tuple[str, str, str],
) -> object:
    """A saved text mirror plus the log after it equals one built from the rows; a GDPR
    erase drops its copy.  `ids`: a node to add, one to delete, one to erase.  Returns
    the mirror after the erase."""
    added, deleted, erased = ids
    with Graphonomous(db) as graph:
        graph.store_node("Melanie: Lake Tahoe again, with Caroline.", node_id=added)
        graph.delete_node(deleted)
        changed = state(index_of(graph))
    fresh = factory()
    with Graphonomous(db) as graph:
        fresh.add_many(graph.store.live_texts())
        assert changed == state(fresh)
        assert state(index_of(graph)) == changed  # the copy + the log after it
        graph.gdpr_erase(erased)
        assert graph.store.load_derived(f"mirror/{name}", "") is None
        return index_of(graph)


def _no_extraction(text: str) -> dict[str, int]:
    raise AssertionError("the saved entity index should have been loaded, not rebuilt")


def test_an_entity_dump_round_trips_exactly() -> None:
    index = EntityIndex()
    for number, text in enumerate(_TURNS):
        index.add(f"t{number}", text)
    index.remove("t2")
    index.add("t2", _TURNS[2])
    loaded = EntityIndex.load(index.dump())
    assert loaded is not None and loaded.dump() == index.dump()
    assert _entity_state(loaded) == _entity_state(index)
    assert EntityIndex.load(b"not json") is None
    assert EntityIndex.load(b'{"format": "other"}') is None


def test_an_old_entity_dump_with_its_speaker_list_still_loads() -> None:
    index = EntityIndex()
    for number, text in enumerate(_TURNS):
        index.add(f"t{number}", text)
    state = json.loads(index.dump())
    state["speaker"] = [["t0", "carolin"]]  # the layout before the speaker index was its own
    loaded = EntityIndex.load(json.dumps(state).encode())
    assert loaded is not None and _entity_state(loaded) == _entity_state(index)


def test_a_speaker_dump_round_trips_exactly() -> None:
    index = SpeakerIndex()
    for number, text in enumerate(_TURNS):
        index.add(f"t{number}", text)
    index.add("doc", "No label here.")
    index.remove("t2")
    index.add("t2", _TURNS[2])
    loaded = SpeakerIndex.load(index.dump())
    assert loaded is not None and loaded.dump() == index.dump()
    assert _speaker_state(loaded) == _speaker_state(index)
    assert loaded.speaker("doc") is None and len(loaded) == len(_TURNS)
    assert SpeakerIndex.load(b"not json") is None
    assert SpeakerIndex.load(b'{"format": "other"}') is None
    assert SpeakerIndex.load(b'{"format": "graphonomous-speakers/1", "speaker": [[1, 2]]}') is None


def _no_entity_load(data: bytes) -> EntityIndex | None:
    raise AssertionError("a query below effort 5 must not load the entity index")


def test_a_fresh_process_answers_below_effort_five_from_the_speaker_table_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The participant scope needs who said what, not the entity postings: at 50K nodes
    loading those was 1.5 s of a cold recall (issue #20)."""
    db = tmp_path / "speakers.db"
    query = "What did Melanie paint at the lake?"
    with Graphonomous(db) as graph:
        for name, pair in (("mc", ("Melanie", "Caroline")), ("jg", ("Jon", "Gina"))):
            graph.store_node(f"Session {name}", node_id=f"{name}-session")
            for i in range(8):
                node_id = f"{name}-{i}"
                graph.store_node(f"{pair[i % 2]}: I painted the lake {i}.", node_id=node_id)
                graph.store_edge(node_id, f"{name}-session", "part_of")
        graph.store_node("A paragraph of documentation about lakes.", node_id="doc")
        expected = {effort: graph.retrieve_context(query, effort=effort) for effort in (0, 3)}
        graph.entity_index()
        built = _speaker_state(graph.speaker_index())
        assert graph.store.load_derived("mirror/speakers", "") is not None
    for effort in (0, 3):
        with Graphonomous(db) as graph, monkeypatch.context() as patch:
            patch.setattr(EntityIndex, "load", classmethod(lambda cls, data: _no_entity_load(data)))
            patch.setattr(speakers_module, "speaker_of", _no_speaker_parse)
            found = graph.retrieve_context(query, effort=effort)
            assert [(r["node_id"], r["score"]) for r in found["results"]] == [
                (r["node_id"], r["score"]) for r in expected[effort]["results"]
            ]
            assert "participant_scope" in found["stats"]["mechanisms"]
            assert _speaker_state(graph.speaker_index()) == built
    erased = _follows_the_log_and_erase(
        db,
        "speakers",
        SpeakerIndex,
        _speaker_state,
        Graphonomous.speaker_index,
        ("mc-9", "jg-1", "mc-0"),
    )
    assert isinstance(erased, SpeakerIndex) and erased.speaker("mc-0") is None


def _no_speaker_parse(content: str) -> list[str] | None:
    raise AssertionError("the saved speaker index should have been loaded, not rebuilt")


def test_a_writer_that_never_searched_leaves_the_indexes_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bulk writer (`scan`, `apply_batch`) closes with the vector and BM25 indexes saved:
    the next process's first recall reads them, it does not tokenize or embed the graph."""
    monkeypatch.setattr(engine_core, "RESAVE_AFTER_CHANGES", 5)
    db = tmp_path / "written.db"
    # Episodes: a batch of state knowledge would search for what it updates.
    ops = [
        {
            "op": "add_node",
            "node": {
                "id": f"n{i}",
                "content": f"Paragraph {i} about lakes.",
                "node_type": "episodic",
            },
        }
        for i in range(12)
    ]
    with Graphonomous(db) as graph:
        graph.apply_batch(ops)
        assert graph.store.load_derived("bm25", "") is None  # nothing searched yet
    with Graphonomous(db) as graph:
        assert graph.store.load_derived("bm25", "") is not None
        assert graph.store.derived_nonce("vectors", graph.embedding_model) is not None
        with monkeypatch.context() as patch:
            patch.setattr(Bm25Index, "add_many", _no_build)
            patch.setattr(VectorIndex, "bulk_load", _no_build)
            found = graph.retrieve_context("lakes paragraph 3", effort=0)
        assert "n3" in [r["node_id"] for r in found["results"]]
    half = tmp_path / "half.db"
    with Graphonomous(half) as graph:  # the vector index was loaded, BM25 never was
        graph.vector_index()
        graph.apply_batch(ops)
    with Graphonomous(half) as graph:
        assert graph.store.load_derived("bm25", "") is not None
    small = tmp_path / "small.db"
    with Graphonomous(small) as graph:  # a few writes: closing builds nothing
        graph.apply_batch(ops[:2])
    with Graphonomous(small) as graph:
        assert graph.store.load_derived("bm25", "") is None


def _no_build(*args: object) -> None:
    raise AssertionError("the writer's saved index should have been loaded, not rebuilt")
