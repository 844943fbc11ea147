"""Small, deterministic vector helpers shared by the embedders and the index.

Every function here is plain Python and returns the same bits on every
platform, Python version and install (with or without NumPy):

* sums of squares are taken left to right in index order (never the builtin
  `sum`, which became compensated in Python 3.12);
* `dot` is the correctly rounded value of the exact dot product
  (`math.fsum`), so it does not depend on evaluation order at all;
* the stored/transported form of a vector is little-endian float32.

NumPy is optional.  `numpy_available` decides once per process whether the
NumPy code paths (used by `graphonomous.embed.index.VectorIndex`) may be
used; NumPy itself is imported lazily, never when this module is imported.
Single-vector helpers stay pure on purpose: for one 384-dim vector the
list -> ndarray conversion costs more than the arithmetic it would speed up,
and a second path would make results depend on the install.
"""

from __future__ import annotations

import functools
import json
import math
import os
import sys
from array import array
from collections import deque
from collections.abc import Mapping, Sequence
from itertools import accumulate
from operator import mul
from typing import Any, Protocol

from graphonomous.model import ValidationError

NO_NUMPY_ENV = "GRAPHONOMOUS_NO_NUMPY"


@functools.lru_cache(maxsize=1)
def numpy_available() -> bool:
    """Whether the optional NumPy paths may be used in this process.

    Input: none (reads the environment variable ``GRAPHONOMOUS_NO_NUMPY``;
    any value other than empty or ``"0"`` forces the pure-Python paths).
    Output: True when NumPy imports and is not disabled.
    Complexity: one import attempt, then cached for the life of the process
    (``numpy_available.cache_clear()`` re-evaluates, for tests).
    """
    if os.environ.get(NO_NUMPY_ENV, "") not in ("", "0"):
        return False
    try:
        import numpy  # noqa: F401  (imported only to probe availability)
    except ImportError:
        return False
    return True


def to_float32(vec: Sequence[float]) -> list[float]:
    """Round every component to the nearest float32 (ties to even).

    Input: a sequence of floats.  Output: a list of Python floats that are
    exactly representable as float32, i.e. exactly what `pack_f32` stores.
    Complexity: O(d) in C.
    """
    return array("f", vec).tolist()


def pack_f32(vec: Sequence[float]) -> bytes:
    """Encode a vector as little-endian IEEE-754 float32 bytes (4 bytes/component).

    Input: a sequence of floats (rounded to float32, ties to even).
    Output: ``4 * len(vec)`` bytes, identical on little- and big-endian hosts.
    Complexity: O(d) in C.
    """
    buf = array("f", vec)
    if sys.byteorder == "big":
        buf.byteswap()
    return buf.tobytes()


def unpack_f32(blob: bytes | bytearray | memoryview) -> list[float]:
    """Decode bytes written by `pack_f32` back into a list of floats.

    Input: a bytes-like object whose length is a multiple of 4.
    Output: the float32 values as Python floats (exact).
    Complexity: O(d) in C.  Raises `ValidationError` on a ragged length.
    """
    if len(blob) % 4:
        raise ValidationError("embedding", f"blob length {len(blob)} is not a multiple of 4")
    buf = array("f")
    buf.frombytes(blob)
    if sys.byteorder == "big":
        buf.byteswap()
    return buf.tolist()


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    """Dot product, correctly rounded.

    Input: two sequences of equal length.  Output: the exact sum of the
    float products rounded once (`math.fsum`); for float32 inputs the products
    are exact too, so the result is the true dot product rounded to double.
    Complexity: O(d).  Raises `ValidationError` on a length mismatch.
    """
    if len(a) != len(b):
        raise ValidationError("vector", f"length mismatch: {len(a)} != {len(b)}")
    return math.fsum(map(mul, a, b)) + 0.0  # + 0.0 turns -0.0 into 0.0


def l2_norm(vec: Sequence[float]) -> float:
    """Euclidean norm with a fixed evaluation order (portable, bit-exact).

    Input: a sequence of floats.  Output: ``sqrt(((x0*x0 + x1*x1) + x2*x2) ...)``
    summed left to right in double precision.  Complexity: O(d).
    """
    # accumulate() adds left to right in C: the same operations, bit for bit,
    # as ``total += x * x`` from 0.0 (0.0 + a == a for a >= 0), ~5x faster.
    last = deque(accumulate(map(mul, vec, vec)), maxlen=1)
    return math.sqrt(last[0]) if last else 0.0


def l2_normalize(vec: Sequence[float]) -> list[float]:
    """Scale a vector to unit Euclidean length.

    Input: a sequence of finite floats.  Output: ``[x / l2_norm(vec)]``; the
    zero vector (norm 0, including underflow) is returned as all zeros.
    Complexity: O(d).  Raises `ValidationError` when a component or the norm
    is not finite (NaN, infinity, or squares that overflow).
    """
    norm = l2_norm(vec)
    if not math.isfinite(norm):
        raise ValidationError("vector", "components must be finite and below 1e154 in magnitude")
    if norm == 0.0:
        return [0.0] * len(vec)
    return list(map(norm.__rtruediv__, vec))  # x / norm for each x (same IEEE division)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity ``dot(a, b) / (|a| * |b|)``.

    Input: two sequences of equal length.  Output: a float in about [-1, 1];
    0.0 when either vector is zero.  Complexity: O(d).
    """
    denominator = l2_norm(a) * l2_norm(b)
    if denominator == 0.0:
        return 0.0
    return dot(a, b) / denominator


def pack_sections(header: Mapping[str, object], blobs: Sequence[bytes | memoryview]) -> bytes:
    """One bytes value holding a JSON header and raw sections (saved derived indexes).

    Layout: 8-byte little-endian header length, the UTF-8 JSON header (with
    the section lengths added as ``"blobs"``), then the sections.  O(size).
    """
    return b"".join(section_parts(header, blobs))


def section_parts(
    header: Mapping[str, object], blobs: Sequence[bytes | memoryview]
) -> list[bytes | memoryview]:
    """The pieces whose concatenation is `pack_sections` (the sections themselves, not
    copied): a writer that stores them one by one never holds the joined value."""
    return [section_head(header, [memoryview(blob).nbytes for blob in blobs]), *blobs]


def section_head(header: Mapping[str, object], sizes: Sequence[int]) -> bytes:
    """The bytes of `pack_sections` before its sections, for sections of `sizes` bytes."""
    meta = json.dumps({**header, "blobs": list(sizes)}).encode("utf-8")
    return len(meta).to_bytes(8, "little") + meta


def unpack_sections(data: bytes) -> tuple[dict[str, Any], list[memoryview]] | None:
    """The header and sections of `pack_sections` bytes; None when malformed.

    The sections are views into `data` (no copy).  O(header size).
    """
    view = memoryview(data)
    try:
        size = int.from_bytes(view[:8], "little")
        header = json.loads(bytes(view[8 : 8 + size]).decode("utf-8"))
        lengths = header.pop("blobs")
        start = 8 + size
        blobs = []
        for length in lengths:
            blobs.append(view[start : start + int(length)])
            start += int(length)
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
        return None
    if start != len(view):
        return None
    return header, blobs


class StaleDumpError(Exception):
    """The saved copy a lazily loaded index reads from was replaced or removed."""


class DumpReader(Protocol):
    """A saved index read section by section (`pack_sections` layout, or one
    database row per section).

    ``header`` is the dump's JSON header; `read_sections` returns whole
    sections by index, all from the copy first opened, or raises
    `StaleDumpError` when that copy was replaced or removed; `check` raises
    it too (one small read).
    """

    @property
    def header(self) -> dict[str, Any]: ...

    def read_sections(self, indices: Sequence[int]) -> list[memoryview]: ...

    def check(self) -> None: ...


class BytesDump:
    """A `DumpReader` over `pack_sections` bytes in memory (never stale).

    Raises `ValueError` when the bytes are not such a value.
    """

    def __init__(self, data: bytes) -> None:
        unpacked = unpack_sections(data)
        if unpacked is None:
            raise ValueError("not a pack_sections value")
        self._header, self._sections = unpacked
        self._header["sections"] = len(self._sections)

    @property
    def header(self) -> dict[str, Any]:
        return self._header

    def read_sections(self, indices: Sequence[int]) -> list[memoryview]:
        return [self._sections[index] for index in indices]

    def check(self) -> None:
        """In memory: always current."""
