"""A static embedding table: semantic vectors with no model at run time (stdlib only).

A table file holds one vector per WordPiece token, distilled once from a
sentence encoder (`graphonomous.embed.distill`, the model2vec recipe:
Tulkens & van Dongen, "Model2Vec", 2024).  A text's vector is the sum of its
tokens' vectors (`graphonomous.embed.wordpiece`; special tokens and [UNK]
skipped, every token counted, no length limit), L2-normalised — the mean up
to scale — then rounded to float32.  A text with no known token maps to the
zero vector, as with the hashing embedder.

File layout (`graphonomous.embed.vectors.pack_sections`): a JSON header
(``format``, ``version``, ``dimensions``, ``tokens``, how it was made) and
three sections: the vocabulary (UTF-8, one token per line, id order), the
rows as ``tokens x dimensions`` signed bytes, and one unsigned 16-bit
little-endian scale per row.  Component j of token t is ``row[t][j] *
scale[t]`` times one table-wide constant, which normalisation cancels — so
a text's sum is an exact integer sum, and the pure-Python and NumPy paths
give the same integers, hence the same floats, by construction.

``name`` is ``static:<file stem>:<sha256 prefix of the file>``: vectors of
another table are another embedder's.
"""

from __future__ import annotations

import functools
import hashlib
import sys
from array import array
from collections.abc import Sequence
from operator import add
from pathlib import Path
from typing import Any, Final

from graphonomous.embed.vectors import (
    l2_normalize,
    numpy_available,
    pack_sections,
    to_float32,
    unpack_sections,
)
from graphonomous.embed.wordpiece import WordPieceTokenizer
from graphonomous.model import ValidationError

TABLE_FORMAT: Final = "graphonomous-static-embedding"
TABLE_VERSION: Final = 1
# Largest row scale (unsigned 16 bits): rows keep 1/65535 of the largest row's magnitude.
SCALE_MAX: Final = 65535
ROW_MAX: Final = 127
NAME_PREFIX: Final = "static:"
_DIGEST_CHARS: Final = 12
# Scaled rows kept as Python ints: 4096 rows x 256 dims is ~10 MB on a device.
_ROW_CACHE_SIZE: Final = 1 << 12


def write_table(
    path: str | Path,
    vocab: Sequence[str],
    rows: Sequence[Sequence[int]],
    scales: Sequence[int],
    info: dict[str, object],
) -> None:
    """Write a table file (module layout).

    Input: the vocabulary, one ``dimensions``-long row of ints in [-127, 127]
    per token, one scale in [0, 65535] per token, and extra header fields
    (how the table was made).  Raises `ValueError` on ragged or out-of-range input.
    """
    dimensions = len(rows[0]) if rows else 0
    if len(rows) != len(vocab) or len(scales) != len(vocab) or dimensions == 0:
        raise ValueError("a table needs one row and one scale per token, rows of equal length")
    flat = array("b")
    for row in rows:
        if len(row) != dimensions:
            raise ValueError("table rows must all have the same length")
        try:
            flat.extend(row)
        except OverflowError as exc:
            raise ValueError(f"table rows hold integers in [-127, 127]: {exc}") from exc
    if any(not 0 <= scale <= SCALE_MAX for scale in scales):
        raise ValueError(f"row scales are integers in [0, {SCALE_MAX}]")
    scale_array = array("H", scales)
    if sys.byteorder == "big":
        scale_array.byteswap()
    header = {
        "format": TABLE_FORMAT,
        "version": TABLE_VERSION,
        "dimensions": dimensions,
        "tokens": len(vocab),
        **info,
    }
    vocab_bytes = "\n".join(vocab).encode("utf-8")
    data = pack_sections(header, [vocab_bytes, flat.tobytes(), scale_array.tobytes()])
    Path(path).write_bytes(data)


def _file_error(path: Path, why: str) -> ValidationError:
    return ValidationError("embedder", f"static table {path}: {why}")


class StaticEmbedder:
    """Token-table embedder read from a file written by `write_table` (stdlib only).

    Raises `ValidationError` (field ``embedder``) when the file is missing or
    not a table of this format.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise _file_error(self.path, f"cannot be read ({exc.strerror or exc})") from exc
        unpacked = unpack_sections(data)
        if unpacked is None or len(unpacked[1]) != 3:
            raise _file_error(self.path, "is not a static embedding table")
        header, (vocab_bytes, row_bytes, scale_bytes) = unpacked
        if header.get("format") != TABLE_FORMAT or header.get("version") != TABLE_VERSION:
            raise _file_error(self.path, f"expected format {TABLE_FORMAT} v{TABLE_VERSION}")
        self.header = header
        self.dimensions = int(header["dimensions"])
        vocab = bytes(vocab_bytes).decode("utf-8").split("\n")
        if len(vocab) != int(header["tokens"]) or len(row_bytes) != len(vocab) * self.dimensions:
            raise _file_error(self.path, "section sizes do not match the header")
        self.tokenizer = WordPieceTokenizer(vocab)
        self._rows = array("b")
        self._rows.frombytes(bytes(row_bytes))
        self._scales = array("H")
        self._scales.frombytes(bytes(scale_bytes))
        if sys.byteorder == "big":
            self._scales.byteswap()
        digest = hashlib.sha256(data).hexdigest()[:_DIGEST_CHARS]
        self.name = f"{NAME_PREFIX}{self.path.stem}:{digest}"
        self._skip = self.tokenizer.special_ids
        self._row = functools.lru_cache(maxsize=_ROW_CACHE_SIZE)(self._scaled_row)
        self._matrix: Any = None

    def _scaled_row(self, token: int) -> tuple[int, ...]:
        """Token `token`'s row times its scale (exact ints)."""
        start = token * self.dimensions
        scale = self._scales[token]
        return tuple(value * scale for value in self._rows[start : start + self.dimensions])

    def token_ids(self, text: str) -> list[int]:
        """The ids that make up `text`'s vector (specials and [UNK] dropped), in text order."""
        return [token for token in self.tokenizer.encode(text) if token not in self._skip]

    def integer_sum(self, text: str) -> list[int]:
        """The exact integer sum of `text`'s scaled token rows (pure Python)."""
        total = [0] * self.dimensions
        counts: dict[int, int] = {}
        for token in self.token_ids(text):
            counts[token] = counts.get(token, 0) + 1
        for token, count in counts.items():
            row = self._row(token)
            total = list(map(add, total, row if count == 1 else [v * count for v in row]))
        return total

    def _integer_sums_numpy(self, texts: Sequence[str]) -> list[list[int]]:
        """`integer_sum` of each text through NumPy int64 (exact: the same integers)."""
        import numpy as np

        if self._matrix is None:
            rows = np.frombuffer(self._rows.tobytes(), dtype=np.int8).astype(np.int64)
            scales = np.asarray(self._scales, dtype=np.int64)
            self._matrix = rows.reshape(-1, self.dimensions) * scales[:, None]
        sums: list[list[int]] = []
        for text in texts:
            ids = self.token_ids(text)
            if not ids:
                sums.append([0] * self.dimensions)
            else:
                sums.append(self._matrix[np.asarray(ids, dtype=np.int64)].sum(axis=0).tolist())
        return sums

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed texts.

        Input: a sequence of strings.  Output: one float32-exact vector per
        text, unit length or all zeros (no known token).  The NumPy path
        (when `numpy_available`) returns the same bits.  Complexity: O(total
        text length + tokens x dimensions).  Raises `ValidationError` on a bare string.
        """
        if isinstance(texts, str):
            raise ValidationError("texts", "expected a sequence of strings, got one string")
        if numpy_available():
            sums = self._integer_sums_numpy(texts)
        else:
            sums = [self.integer_sum(text) for text in texts]
        return [to_float32(l2_normalize([float(value) for value in total])) for total in sums]

    def __repr__(self) -> str:
        return f"StaticEmbedder({str(self.path)!r})"


def quantise_rows(vectors: Sequence[Sequence[float]]) -> tuple[list[list[int]], list[int]]:
    """Signed-byte rows and 16-bit scales of float rows (the table's stored form).

    Row t becomes ``round(v / m_t * 127)`` with ``m_t`` its largest
    magnitude, and its scale ``round(m_t / M * 65535)`` with ``M`` the
    largest ``m_t``; an all-zero row stays zero with scale 0.  O(size).
    """
    peaks = [max((abs(value) for value in row), default=0.0) for row in vectors]
    top = max(peaks, default=0.0)
    rows: list[list[int]] = []
    scales: list[int] = []
    for row, peak in zip(vectors, peaks, strict=True):
        if peak == 0.0 or top == 0.0:
            rows.append([0] * len(row))
            scales.append(0)
            continue
        rows.append([round(value / peak * ROW_MAX) for value in row])
        scales.append(max(1, round(peak / top * SCALE_MAX)))
    return rows, scales
