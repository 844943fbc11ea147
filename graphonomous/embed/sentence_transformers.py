"""Optional real embedding model via the `sentence-transformers` package.

Imported only by `graphonomous.embed.base.get_embedder` (names
``"sentence-transformers:<model>"``, and ``"minilm"`` when its model files are not
installed: `graphonomous.embed.minilm`).  The package (and torch) are imported
when an embedder is constructed, never at module import time.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from graphonomous.embed.vectors import to_float32

EXTRA_HINT = (
    "the 'sentence-transformers' package is not installed; install the optional extra with "
    "pip install 'graphonomous[sentence-transformers]' (or: pip install sentence-transformers)"
)


def _load_package() -> Any:
    """The `sentence_transformers` module, or a `RuntimeError` that says what to install."""
    try:
        return importlib.import_module("sentence_transformers")
    except ImportError as exc:
        raise RuntimeError(EXTRA_HINT) from exc


class SentenceTransformerEmbedder:
    """A sentence-transformers model on CPU (e.g. all-MiniLM-L6-v2, 384 dims).

    Vectors are L2-normalised by the model and rounded to float32, the form
    in which they are stored.  Unlike the hashing embedder, results may
    differ in the last bits across machines and library versions.
    """

    # What computes the vectors (`graphonomous.embed.minilm` names its NumPy path "numpy").
    backend = "sentence-transformers"

    def __init__(self, model: str) -> None:
        package = _load_package()
        self._model = package.SentenceTransformer(model, device="cpu")
        self.dimensions = int(self._model.get_sentence_embedding_dimension())
        self.name = f"sentence-transformers:{model}"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed texts.

        Input: a sequence of strings.  Output: one unit-length float32-exact
        vector per text.  Complexity: one batched forward pass of the model.
        """
        if not texts:
            return []
        matrix = self._model.encode(
            list(texts), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return [to_float32(row.tolist()) for row in matrix]

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self.name!r})"
