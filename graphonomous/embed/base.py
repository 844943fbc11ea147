"""The embedder interface and the factory that picks one by name.

Optional providers are imported only when asked for, so
``import graphonomous.embed`` never pulls in a model library (or NumPy).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from graphonomous.embed.hashing import HashingEmbedder
from graphonomous.model import EMBEDDING_DIMENSIONS

EMBEDDER_ENV = "GRAPHONOMOUS_EMBEDDER"
# The seed's name for the same setting: an alias, read only here (both set and
# different is an error naming both, never a silent pick).
EMBEDDER_ALIAS_ENV = "GRAPHONOMOUS_EMBEDDING_MODEL"
DEFAULT_EMBEDDER = "hashing"
MINILM_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
SENTENCE_TRANSFORMERS_PREFIX = "sentence-transformers:"


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
    (all-MiniLM-L6-v2), ``"sentence-transformers:<model>"`` or ``"onnx:<model dir>"``
    (a directory with ``model.onnx`` and ``tokenizer.json``; extra ``onnx``)
    or ``"static:<table file>"`` (a distilled token table, stdlib only;
    `graphonomous.embed.static`).
    Output: an `Embedder`.
    Complexity: O(1) for hashing; a static table loads in well under a
    second; loading a real model takes seconds.
    Raises `ValueError` for an unknown name and `RuntimeError` naming the
    extra to install when an optional provider's package is missing.
    """
    if name is None:
        name = embedder_from_env() or DEFAULT_EMBEDDER
    key = name.strip()
    if key == DEFAULT_EMBEDDER:
        return HashingEmbedder(EMBEDDING_DIMENSIONS)
    if key.startswith("hashing-") and key[len("hashing-") :].isdigit():
        return HashingEmbedder(int(key[len("hashing-") :]))
    if key == "minilm":
        return _sentence_transformer(MINILM_MODEL)
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
        f"'sentence-transformers:<model>', 'onnx:<model dir>' or 'static:<table file>'"
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
