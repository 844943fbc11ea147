"""The pure backend's 24-bit scan (`embed.index`) is exact: its bound holds, its cut loses nothing.

* The error bound ``eps`` of `_PureBackend.approximate` holds for every stored
  vector, including the near-worst case where every component of both vectors
  sits just below a rounding boundary of the 2**-11 grid (the bound is within
  a few per cent of the real error there, so a bound even 10 % too small fails).
* Fields never overflow: a query equal to a stored vector (score 1, the largest
  field) and its negation (the smallest) at many dimensions, up to 4,096.
* `search` equals a brute-force ranking by `exact_score` (itself checked against
  `fractions.Fraction` arithmetic) for many k, with `allow` filters, removed
  built slots, delta rows, duplicates (exact ties), zero vectors and a zero query,
  on hashing vectors of similar texts (many scores within eps of each other).
* ``min_score`` returns exactly the pairs of the unfloored search scoring >= it,
  on both backends, and is validated.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest
from test_embed_index import brute_force

from graphonomous.embed import HashingEmbedder, VectorIndex, exact_score, numpy_available
from graphonomous.embed import index as index_module
from graphonomous.embed.index import MAX_DIMENSIONS, QUANT_BITS, normalized_f32
from graphonomous.model import ValidationError

BACKENDS = ["pure", "numpy"] if numpy_available() else ["pure"]
WORDS = [
    "pump",
    "seal",
    "leak",
    "valve",
    "motor",
    "bearing",
    "shaft",
    "oil",
    "filter",
    "pressure",
    "drop",
    "alarm",
]


def _build(index: VectorIndex) -> None:
    """Put every stored vector into the pure columns (small indexes keep a delta)."""
    index._backend.build()  # type: ignore[union-attr]
    assert index._backend._built == len(index)  # type: ignore[union-attr]


def _check_bound(index: VectorIndex, query: list[float]) -> float:
    """Every slot's approximate score within eps of its exact score; the largest error / eps."""
    backend = index._backend
    approx = backend.approximate(query)  # type: ignore[union-attr]
    worst = 0.0
    for slot, node_id in enumerate(backend._ids):  # type: ignore[union-attr]
        if node_id is None:
            assert approx.value(slot) == -math.inf
            continue
        error = abs(approx.value(slot) - backend.exact(slot, query))
        assert error <= approx.eps, (node_id, error, approx.eps)
        worst = max(worst, error / approx.eps)
    return worst


def test_the_bound_holds_and_is_nearly_tight_at_the_rounding_boundaries() -> None:
    # 1/sqrt(384) * 2**11 = 104.51...: every component of the uniform unit vector
    # rounds up by ~0.49 of a step, in the same direction, for the query and rows.
    dims = 384
    assert 0.5 < (2**QUANT_BITS / math.sqrt(dims)) % 1 < 0.55
    index = VectorIndex(dims, backend="pure")
    uniform = [1.0] * dims
    index.add("uniform", uniform)
    rng = random.Random(4)
    for n in range(50):  # and vectors near it, with a few sign flips
        index.add(f"near{n}", [-1.0 if rng.random() < 0.02 else 1.0 for _ in range(dims)])
    _build(index)
    query = normalized_f32(uniform, dims)
    assert _check_bound(index, query) > 0.9  # the real error is > 90 % of eps here
    assert index.search(uniform, 3) == brute_force(index, uniform, 3)


@pytest.mark.parametrize("dims", [8, 384, 4096])
def test_no_field_overflows_at_the_extreme_scores(dims: int) -> None:
    rng = random.Random(dims)
    index = VectorIndex(dims, backend="pure")
    spike = [0.0] * dims
    spike[dims // 2] = 1.0
    rows = {"spike": spike, "uniform": [1.0] * dims, "minus": [-1.0] * dims}
    rows.update({f"r{n}": [rng.gauss(0, 1) for _ in range(dims)] for n in range(20)})
    for node_id, row in rows.items():
        index.add(node_id, row)
    _build(index)
    for node_id in ("spike", "uniform", "minus", "r0"):
        stored = index.get(node_id)
        assert stored is not None
        for query in (stored, [-x for x in stored]):  # score +1 and -1 with itself
            _check_bound(index, normalized_f32(query, dims))
            for k in (1, 2, 5, len(rows)):
                assert index.search(query, k) == brute_force(index, query, k)
        assert index.search(stored, 1) == [(node_id, exact_score(stored, stored))]
        # the best field (score 1 with itself) is at or below the search's top level
        approx = index._backend.approximate(normalized_f32(stored, dims))  # type: ignore[union-attr]
        assert max(approx._levels) <= index_module.top_level(dims) < 255
    # at one dimension the bound is tight: the only non-zero vector scores 1 with itself
    single = VectorIndex(1, backend="pure")
    single.add("one", [1.0])
    _build(single)
    assert max(single._backend.approximate([1.0])._levels) == index_module.top_level(1)  # type: ignore[union-attr]


def test_dimensions_beyond_the_field_width_are_refused() -> None:
    with pytest.raises(ValidationError, match="dimensions"):
        VectorIndex(MAX_DIMENSIONS + 1, backend="pure")


def test_exact_score_is_the_exact_dot_product_rounded_once() -> None:
    rng = random.Random(9)
    for _ in range(30):
        q = normalized_f32([rng.gauss(0, 1) if rng.random() < 0.4 else 0.0 for _ in range(64)], 64)
        r = normalized_f32([rng.gauss(0, 1) for _ in range(64)], 64)
        exact = sum((Fraction(a) * Fraction(b) for a, b in zip(q, r, strict=True)), Fraction(0))
        assert exact_score(q, r) == float(exact)


def _texts(rng: random.Random, count: int) -> list[str]:
    texts = []
    for _ in range(count):
        words = rng.sample(WORDS, rng.randint(2, 6))
        texts.append(" ".join(words))
    return texts + texts[: count // 10]  # exact duplicates: exact ties


@pytest.mark.parametrize("seed", range(4))
def test_search_equals_brute_force_through_edits(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_module, "DELTA_MIN", 40)  # a delta that is not rebuilt at once
    rng = random.Random(seed)
    embedder = HashingEmbedder(384)
    texts = _texts(rng, 500)
    vectors = embedder.embed(texts)
    indexes = [VectorIndex(384, backend=backend) for backend in BACKENDS]
    items = [(f"n{i:04d}", vector) for i, vector in enumerate(vectors)]
    items.append(("zero", [0.0] * 384))
    for index in indexes:
        index.bulk_load(items)
        index.search(vectors[0], 1)  # builds the pure columns
    removed = rng.sample(range(len(items) - 1), 60)  # removed built slots
    added = embedder.embed(_texts(rng, 30))  # then delta rows, one replacing a removed id
    for index in indexes:
        for n in removed:
            index.remove(f"n{n:04d}")
        for i, vector in enumerate(added):
            index.add(f"d{i:03d}", vector)
        index.add(f"n{removed[0]:04d}", added[0])
    queries = embedder.embed(["pump seal", "oil filter pressure", "alarm", "bearing"])
    queries += [vectors[3], [0.0] * 384]
    modulus = rng.randint(2, 5)

    def allow(node_id: str) -> bool:
        return sum(map(ord, node_id)) % modulus == 0

    pure = indexes[0]
    for query in queries:
        if any(query):
            _check_bound(pure, normalized_f32(query, 384))
        for k in (1, 2, 7, 30, 100, len(pure), len(pure) + 5):
            for restriction in (None, allow):
                expected = brute_force(pure, query, k, restriction)
                for index in indexes:
                    assert index.search(query, k, allow=restriction) == expected


def test_cuts_at_every_field_value_and_level_boundary() -> None:
    rng = random.Random(21)
    embedder = HashingEmbedder(64)
    index = VectorIndex(64, backend="pure")
    index.bulk_load((f"n{i:03d}", v) for i, v in enumerate(embedder.embed(_texts(rng, 300))))
    query = normalized_f32(embedder.embed(["pump pressure alarm"])[0], 64)
    index.search(query, 1)
    approx = index._backend.approximate(query)  # type: ignore[union-attr]
    values = [approx.value(slot) for slot in range(len(index))]
    bias, unit = 1 << 23, 2.0 ** (-2 * QUANT_BITS)
    boundaries = [((level << 16) - bias) * unit for level in range(60, 200, 3)]
    for cut in sorted(set(values))[::7] + boundaries:
        for probe in (cut, math.nextafter(cut, math.inf), math.nextafter(cut, -math.inf)):
            assert approx.at_least(probe) == [s for s, v in enumerate(values) if probe <= v]
    ordered = sorted(values, reverse=True)
    for m in (1, 2, 3, 10, 31, 100, len(values)):
        assert approx.kth_largest(m) == ordered[m - 1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_min_score_keeps_exactly_the_pairs_at_or_above_it(backend: str) -> None:
    rng = random.Random(6)
    embedder = HashingEmbedder(384)
    vectors = embedder.embed(_texts(rng, 300))
    index = VectorIndex(384, backend=backend)
    index.bulk_load((f"n{i:03d}", v) for i, v in enumerate(vectors))
    index.remove("n007")

    def allow(node_id: str) -> bool:
        return node_id[-1] in "02468"

    for query in [vectors[1], vectors[5], embedder.embed(["valve motor"])[0], [0.0] * 384]:
        for restriction in (None, allow):
            for k in (1, 9, 50):
                plain = index.search(query, k, allow=restriction)
                scores = sorted({score for _, score in plain})
                for floor in [-1.0, 0.0, 0.3, 0.75, 0.99, 1.0, 2.0, *scores]:
                    floored = index.search(query, k, allow=restriction, min_score=floor)
                    assert floored == [pair for pair in plain if pair[1] >= floor]
    for bad in (math.nan, math.inf, "0.5", True):
        with pytest.raises(ValidationError, match="min_score"):
            index.search(vectors[0], 3, min_score=bad)  # type: ignore[arg-type]


def test_a_dump_of_another_field_layout_is_refused() -> None:
    index = VectorIndex(8, backend="pure")
    index.bulk_load((f"n{i}", [float(i + j) for j in range(8)]) for i in range(40))
    header, sections = index.dump_sections()
    assert header["field_bits"] == 24 and header["quant_bits"] == QUANT_BITS
    loaded = VectorIndex.load(index_module.pack_sections(header, sections), 8, backend="pure")
    assert loaded is not None and loaded.search([1.0] * 8, 5) == index.search([1.0] * 8, 5)
    for key, old in (("field_bits", 32), ("quant_bits", 14), ("format", "graphonomous-vectors/2")):
        stale = index_module.pack_sections({**header, key: old}, sections)
        assert VectorIndex.load(stale, 8, backend="pure") is None
