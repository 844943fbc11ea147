"""VectorIndex: exact top-k, identical on the pure and NumPy backends."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphonomous.embed import HashingEmbedder, VectorIndex, exact_score, numpy_available, pack_f32
from graphonomous.embed import index as index_module
from graphonomous.embed.index import normalized_f32
from graphonomous.model import ValidationError

BACKENDS = ["pure", "numpy"] if numpy_available() else ["pure"]
needs_numpy = pytest.mark.skipif(not numpy_available(), reason="NumPy not installed")


def brute_force(
    index: VectorIndex, query: list[float], k: int, allow: object = None
) -> list[tuple[str, float]]:
    """Reference: score every stored vector exactly, order by (-score, id)."""
    vector = normalized_f32(query, index.dimensions)
    scored = []
    for node_id in index.ids():
        if allow is None or allow(node_id):  # type: ignore[operator]
            stored = index.get(node_id)
            assert stored is not None
            scored.append((-exact_score(vector, stored), node_id))
    scored.sort()
    return [(node_id, -negated + 0.0) for negated, node_id in scored[:k]]


@pytest.mark.parametrize("backend", BACKENDS)
def test_basic_operations(backend: str) -> None:
    index = VectorIndex(3, backend=backend)
    assert index.backend == backend
    assert len(index) == 0 and index.search([1.0, 0.0, 0.0], 5) == []
    index.add("a", [1.0, 0.0, 0.0])
    index.add("b", [0.0, 2.0, 0.0])
    index.add("c", [1.0, 1.0, 0.0])
    assert len(index) == 3 and "b" in index and "z" not in index and 5 not in index
    assert index.get("b") == [0.0, 1.0, 0.0]  # stored normalised
    assert index.get("z") is None
    top = index.search([1.0, 0.0, 0.0], 2)
    assert [node_id for node_id, _ in top] == ["a", "c"]
    assert top[0][1] == 1.0 and math.isclose(top[1][1], math.sqrt(0.5), rel_tol=1e-6)
    assert index.search([1.0, 0.0, 0.0], 0) == []
    assert [n for n, _ in index.search([1.0, 0.0, 0.0], 10)] == ["a", "c", "b"]
    assert index.search([0.0, 1.0, 0.0], 2, allow=lambda n: n != "b")[0][0] == "c"
    index.add("a", [0.0, 0.0, 5.0])  # replace
    assert len(index) == 3 and index.get("a") == [0.0, 0.0, 1.0]
    assert index.search([0.0, 0.0, 1.0], 1) == [("a", 1.0)]
    assert index.remove("a") is True and index.remove("a") is False
    assert index.ids() == ["b", "c"]
    assert index.search([0.0, 0.0, 1.0], 3) == [("b", 0.0), ("c", 0.0)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_ties_zero_vectors_and_zero_query(backend: str) -> None:
    index = VectorIndex(2, backend=backend)
    for node_id in ("d", "b", "c", "a"):
        index.add(node_id, [1.0, 1.0])
    index.add("zero", [0.0, 0.0])
    assert index.get("zero") == [0.0, 0.0]
    top = index.search([2.0, 2.0], 3)
    assert [n for n, _ in top] == ["a", "b", "c"]  # equal scores: id ascending
    assert index.search([-1.0, -1.0], 5)[-1][0] == "d"
    assert ("zero", 0.0) in index.search([-1.0, -1.0], 5)
    assert index.search([0.0, 0.0], 2) == [("a", 0.0), ("b", 0.0)]
    assert index.search([0.0, 0.0], 9, allow=lambda n: n > "b") == [
        ("c", 0.0),
        ("d", 0.0),
        ("zero", 0.0),
    ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_input(backend: str) -> None:
    index = VectorIndex(3, backend=backend)
    with pytest.raises(ValidationError):
        index.add("a", [1.0, 2.0])
    with pytest.raises(ValidationError):
        index.add("a", [math.nan, 0.0, 0.0])
    with pytest.raises(ValidationError):
        index.add(7, [1.0, 0.0, 0.0])  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        index.bulk_load([("a", [1.0, 0.0, 0.0]), ("b", b"\x00" * 8)])
    index.add("a", [1.0, 0.0, 0.0])
    with pytest.raises(ValidationError):
        index.search([1.0, 0.0, 0.0], -1)
    with pytest.raises(ValidationError):
        index.search([1.0, 0.0], 1)
    with pytest.raises(ValidationError):
        VectorIndex(0)
    with pytest.raises(ValidationError):
        VectorIndex(3, backend="faiss")


@pytest.mark.parametrize("backend", BACKENDS)
def test_bytes_and_bulk_load(backend: str) -> None:
    embedder = HashingEmbedder()
    texts = [f"note {n}: the pump number {n % 7} needs a new seal" for n in range(60)]
    vectors = embedder.embed(texts)
    index = VectorIndex(backend=backend)
    index.bulk_load((f"n{i:02d}", pack_f32(v)) for i, v in enumerate(vectors))
    index.bulk_load([("n00", vectors[1]), ("n00", vectors[2])])  # later pair wins
    assert len(index) == 60
    assert index.get("n00") == normalized_f32(vectors[2], 384)
    (query,) = embedder.embed(["which pump needs a seal? number 3"])
    assert index.search(pack_f32(query), 5) == index.search(query, 5)
    assert index.search(query, 5) == brute_force(index, query, 5)


@needs_numpy
def test_stored_forms_are_bit_identical_between_backends() -> None:
    rng = random.Random(7)
    rows = [[rng.gauss(0, 1) * rng.choice([0, 1, 1e-3, 1e3]) for _ in range(24)] for _ in range(50)]
    pure, fast = VectorIndex(24, backend="pure"), VectorIndex(24, backend="numpy")
    pure.bulk_load((str(i), row) for i, row in enumerate(rows))
    fast.bulk_load((str(i), row) for i, row in enumerate(rows))
    single = VectorIndex(24, backend="numpy")
    for i, row in enumerate(rows):
        single.add(str(i), row)
    for i in range(len(rows)):
        assert pure.get(str(i)) == fast.get(str(i)) == single.get(str(i))


@pytest.mark.parametrize("backend", BACKENDS)
def test_approximate_scores_respect_their_error_bound(backend: str) -> None:
    rng = random.Random(11)
    dims = 384
    index = VectorIndex(dims, backend=backend)
    for n in range(300):
        index.add(
            f"n{n:03d}", [rng.gauss(0, 1) if rng.random() < 0.5 else 0.0 for _ in range(dims)]
        )
    inner = index._backend
    for _ in range(5):
        query = normalized_f32([rng.gauss(0, 1) for _ in range(dims)], dims)
        approx = inner.approximate(query)
        assert approx.eps < 8e-3  # pure: 11-bit fixed point (embed.index QUANT_BITS)
        for slot in range(len(index)):
            exact = inner.exact(slot, query)
            assert abs(approx.value(slot) - exact) <= approx.eps


def test_pure_backend_rebuilds_after_many_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_module, "DELTA_MIN", 3)
    rng = random.Random(5)
    index = VectorIndex(8, backend="pure")
    for _ in range(200):
        node_id = f"n{rng.randrange(60):02d}"
        if rng.random() < 0.25:
            index.remove(node_id)
        else:
            index.add(node_id, [rng.choice([0.0, 1.0, -0.5, rng.random()]) for _ in range(8)])
        query = [rng.gauss(0, 1) for _ in range(8)]
        assert index.search(query, 4) == brute_force(index, query, 4)


vector_entries = st.lists(
    st.one_of(
        st.just(0.0),
        st.just(1.0),
        st.just(-1.0),
        st.floats(-10.0, 10.0, allow_nan=False, allow_infinity=False),
    ),
    min_size=12,
    max_size=12,
)
operations = st.lists(
    st.tuples(st.sampled_from(["add", "add", "add", "remove"]), st.integers(0, 40), vector_entries),
    min_size=1,
    max_size=80,
)


@settings(max_examples=60, deadline=None)
@given(
    operations=operations,
    queries=st.lists(vector_entries, min_size=1, max_size=4),
    k=st.integers(0, 12),
    modulus=st.integers(1, 4),
    delta_min=st.sampled_from([2, 256]),
)
def test_backends_agree_with_brute_force(
    operations: list[tuple[str, int, list[float]]],
    queries: list[list[float]],
    k: int,
    modulus: int,
    delta_min: int,
) -> None:
    # Scores are bit-identical by construction (exact rescoring), so results are
    # compared exactly; no rounding of near-ties is needed.
    index_module.DELTA_MIN, saved = delta_min, index_module.DELTA_MIN
    try:
        indexes = [VectorIndex(12, backend=backend) for backend in BACKENDS]
        bulk = [(f"b{n}", vector) for _, n, vector in operations[:5]]
        for index in indexes:
            index.bulk_load(bulk)
        for position, (action, number, vector) in enumerate(operations):
            node_id = f"n{number:02d}"
            for index in indexes:
                if action == "add":
                    index.add(node_id, vector)
                else:
                    index.remove(node_id)
            if position % 7 == 0:
                for index in indexes:  # searches in between exercise delta/rebuild paths
                    index.search(vector, 3)

        def allow(node_id: str) -> bool:
            return sum(map(ord, node_id)) % modulus == 0

        for query in queries:
            for restriction in (None, allow):
                expected = brute_force(indexes[0], query, k, restriction)
                for index in indexes:
                    assert index.search(query, k, allow=restriction) == expected
        assert all(index.ids() == indexes[0].ids() for index in indexes)
    finally:
        index_module.DELTA_MIN = saved


@pytest.mark.parametrize("backend", BACKENDS)
def test_similarities_score_each_query_with_its_own_vector(backend: str) -> None:
    """The scorer kept for the last query is never used for another one."""
    embedder = HashingEmbedder(64)
    texts = ["pump seal leak", "valve motor", "bearing shaft oil", "seal valve", "oil leak"]
    index = VectorIndex(64, backend=backend)
    for number, vector in enumerate(embedder.embed(texts)):
        index.add(f"n{number}", vector)
    ids = [f"n{number}" for number in range(len(texts))]
    for query in embedder.embed(["pump leak", "motor oil", "pump leak"]):
        index.search(query, 2)
        stored = normalized_f32(query, 64)
        expected = {node_id: exact_score(stored, index.get(node_id) or []) for node_id in ids}
        assert index.similarities(query, ids) == expected
