"""The optional ONNX embedder (graphonomous.embed.onnx).

onnxruntime and tokenizers are replaced by small fakes, so the pooling,
masking, batching and error paths are tested without them.  A real
all-MiniLM-L6-v2 check runs only when $GRAPHONOMOUS_ONNX_MODEL_DIR names a
directory with tokenizer.json + model.onnx and both packages are installed.
"""

from __future__ import annotations

import importlib.util
import math
import os
import sys
import types
from pathlib import Path
from typing import Any, ClassVar

import pytest

from graphonomous.embed.onnx import EXTRA_HINT, OnnxEmbedder

np = pytest.importorskip("numpy")

PAD_GARBAGE = 1000.0  # what the fake model emits at padded positions; masking must hide it


class FakeEncoding:
    def __init__(self, ids: list[int], mask: list[int]) -> None:
        self.ids = ids
        self.attention_mask = mask


class FakeTokenizer:
    """Word i becomes id len(word); [CLS] = 101, [SEP] = 102; pads to the longest text."""

    def __init__(self) -> None:
        self.truncation: int | None = None
        self.padding: dict[str, Any] | None = None

    @classmethod
    def from_file(cls, path: str) -> FakeTokenizer:
        assert path.endswith("tokenizer.json")
        return cls()

    def enable_truncation(self, max_length: int) -> None:
        self.truncation = max_length

    def enable_padding(self, **options: Any) -> None:
        self.padding = options

    def encode_batch(self, texts: list[str]) -> list[FakeEncoding]:
        rows = [[101, *(len(w) for w in t.split()), 102] for t in texts]
        width = max(len(r) for r in rows)
        return [
            FakeEncoding(r + [0] * (width - len(r)), [1] * len(r) + [0] * (width - len(r)))
            for r in rows
        ]


class FakeSession:
    """Hidden state of token t = (id, 1, 0); padding positions are garbage."""

    feeds: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, path: str, sess_options: Any, providers: list[str]) -> None:
        assert path.endswith("model.onnx") and providers == ["CPUExecutionProvider"]

    def get_inputs(self) -> list[Any]:
        return [
            types.SimpleNamespace(name=n) for n in ("input_ids", "attention_mask", "token_type_ids")
        ]

    def get_outputs(self) -> list[Any]:
        return [types.SimpleNamespace(name="last_hidden_state", shape=["batch", "seq", 3])]

    def run(self, names: list[str], feeds: dict[str, Any]) -> list[Any]:
        FakeSession.feeds.append(feeds)
        ids = feeds["input_ids"].astype(np.float32)
        mask = feeds["attention_mask"][:, :, None]
        hidden = np.stack([ids, np.ones_like(ids), np.zeros_like(ids)], axis=-1)
        return [np.where(mask == 1, hidden, PAD_GARBAGE)]


@pytest.fixture
def model_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "tokenizer.json").write_text("{}", encoding="utf-8")
    (tmp_path / "model.onnx").write_bytes(b"weights")
    (tmp_path / "sentence_bert_config.json").write_text('{"max_seq_length": 77}')
    runtime = types.ModuleType("onnxruntime")
    runtime.SessionOptions = lambda: types.SimpleNamespace(intra_op_num_threads=0)  # type: ignore[attr-defined]
    runtime.InferenceSession = FakeSession  # type: ignore[attr-defined]
    tokenizers = types.ModuleType("tokenizers")
    tokenizers.Tokenizer = FakeTokenizer  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "onnxruntime", runtime)
    monkeypatch.setitem(sys.modules, "tokenizers", tokenizers)
    FakeSession.feeds = []
    return tmp_path


def expected(text: str) -> list[float]:
    ids = [101, *(len(w) for w in text.split()), 102]
    pooled = [sum(ids) / len(ids), 1.0, 0.0]
    norm = math.sqrt(sum(x * x for x in pooled))
    return [x / norm for x in pooled]


def test_mean_pooling_ignores_padding_and_keeps_input_order(model_dir: Path) -> None:
    embedder = OnnxEmbedder(model_dir, batch_size=2)
    texts = ["a much longer text here", "hi", "", "mid size"]
    vectors = embedder.embed(texts)
    assert len(vectors) == 4
    for text, vector in zip(texts, vectors, strict=True):
        assert vector == pytest.approx(expected(text), rel=1e-6)
        assert math.isclose(math.sqrt(sum(x * x for x in vector)), 1.0, rel_tol=1e-6)
    # Two batches, shortest texts first; token_type_ids are zeros.
    assert len(FakeSession.feeds) == 2
    assert all(not f["token_type_ids"].any() for f in FakeSession.feeds)
    assert embedder.embed([]) == []


def test_name_dimensions_and_tokenizer_settings(model_dir: Path) -> None:
    embedder = OnnxEmbedder(model_dir)
    assert embedder.dimensions == 3
    assert (
        embedder.name.startswith(f"onnx:{model_dir.name}:")
        and len(embedder.name.split(":")[2]) == 12
    )
    assert embedder._tokenizer.truncation == 77  # from sentence_bert_config.json
    assert embedder._tokenizer.padding == {"pad_id": 0, "pad_token": "[PAD]"}


def test_missing_files_and_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match=r"model\.onnx does not exist"):
        OnnxEmbedder(tmp_path)
    (tmp_path / "tokenizer.json").write_text("{}", encoding="utf-8")
    (tmp_path / "model.onnx").write_bytes(b"weights")
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # makes the import fail
    with pytest.raises(RuntimeError) as caught:
        OnnxEmbedder(tmp_path)
    assert str(caught.value) == EXTRA_HINT


@pytest.mark.skipif(
    not os.environ.get("GRAPHONOMOUS_ONNX_MODEL_DIR")
    or importlib.util.find_spec("onnxruntime") is None
    or importlib.util.find_spec("tokenizers") is None,
    reason="set GRAPHONOMOUS_ONNX_MODEL_DIR and install onnxruntime + tokenizers",
)
def test_real_minilm() -> None:
    embedder = OnnxEmbedder(os.environ["GRAPHONOMOUS_ONNX_MODEL_DIR"])
    a, b, c = embedder.embed(
        [
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "The girl is carrying a baby.",
        ]
    )
    assert embedder.dimensions == 384
    related = sum(x * y for x, y in zip(a, b, strict=True))
    unrelated = sum(x * y for x, y in zip(a, c, strict=True))
    # sentence-transformers reports about 0.75 and -0.1 for these pairs (int8 weights: ±0.03).
    assert related == pytest.approx(0.75, abs=0.03)
    assert unrelated < 0.1
