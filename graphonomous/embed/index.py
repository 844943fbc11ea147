"""Exact in-memory top-k cosine similarity index (pure Python or NumPy).

Every vector is stored L2-normalised and rounded to float32 (zero vectors
stay zero).  The score of a stored vector r for a query q is the *exact*
dot product of the two float32 vectors, rounded once to double
(`math.fsum` of the products, which are exact in double).  That value is
unique, so both backends return bit-identical scores and — ordering by
(score descending, node_id ascending) — identical results.

Both backends use the same two-stage exact method:

1. compute an *approximate* score for every stored vector together with a
   rigorous bound ``eps`` on its error;
2. take the k-th best approximate score T among allowed vectors; every
   vector that can belong to the exact top k has approximate score
   ``>= T - 2*eps``, so only those candidates are rescored exactly.

Approximate scores:

* NumPy: a float32 matrix-vector product (error <= about d * 2**-24).
* Pure Python: one *big-integer* multiply-add per non-zero query
  dimension.  Each dimension's column of 11-bit fixed-point values is kept
  as one Python int holding a 24-bit field per stored vector, so
  ``sum(q_d * column_d)`` computes all N fixed-point dot products in C-speed
  bignum arithmetic.  This skips the query's zero dimensions (hashing
  queries are ~25-50 % non-zero) and costs O(nnz(q) * N) machine-word
  operations instead of O(d * N) interpreted multiplications (SPEC
  "Embeddings" has the measurements).  The fields are never turned into N
  Python floats: their top bytes (levels, 1/64 of a score apart) are one
  bytes value, the cut is found by counting levels (``bytes.count`` on a
  window cut out by ``bytes.translate``) and the candidates at or above it
  by translating levels to marks, all C-speed bytes operations; only the
  fields of the cut's own level are compared one by one.  The error bound
  (`_PureBackend.approximate`) is proven there.  Exact rescoring multiplies
  only the query's non-zero components (`sparse_scorer`; the other products
  are exact zeros).
  Vectors added after the last column build sit in a small "delta" list
  scored exactly; columns are rebuilt lazily when the delta or the number of
  removed vectors grows too large.
"""

from __future__ import annotations

import heapq
import json
import math
import sys
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import compress
from operator import itemgetter, mul
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeAlias

from graphonomous.embed.vectors import (
    BytesDump,
    DumpReader,
    StaleDumpError,
    l2_normalize,
    numpy_available,
    pack_sections,
    unpack_f32,
)
from graphonomous.model import EMBEDDING_DIMENSIONS, ValidationError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

VectorLike: TypeAlias = "Sequence[float] | bytes"
# The stored vector (or None) of each id, for rebuilding a lazily read copy that vanished.
Fallback: TypeAlias = "Callable[[Sequence[str | None]], list[bytes | None]]"

BACKENDS = ("pure", "numpy")

# Fixed-point scale of the pure backend: stored components and query weights are
# rounded to multiples of 2**-11.  11 bits keep every field sum inside a 24-bit
# field (below): 3 bytes per vector and dimension (58 MB of columns at 50K x 384,
# 4 bytes with the former 14-bit values in 32-bit fields) and a third less
# big-integer work per query dimension (CPython adds 30-bit digits: 0.8 of a
# digit per vector instead of 1.07).  The price is a wider error bound (eps ~ 4e-3
# instead of ~ 9e-4 for a hashing query), i.e. a few more candidates rescored
# exactly (top 30 at 10K nodes: 31 -> ~36) -- results are exact either way.
QUANT_BITS = 11
_SCALE = 1 << QUANT_BITS
_INV_SCALE_SQ = 2.0 ** (-2 * QUANT_BITS)
# One 24-bit field per stored vector holding _FIELD_BIAS + sum_d q~_d r~_d.  By
# Cauchy-Schwarz |sum| <= |q~|_2 |r~|_2 <= (S (1 + 1e-6) + sqrt(D) / 2)**2, below
# _FIELD_BIAS - 2**16 for every D <= MAX_DIMENSIONS: every field lies in (2**16, 2**24),
# so no field borrows from or carries into its neighbour and a live field's top
# byte is never 0 (the mark of a removed slot, `_FieldScores`).
_FIELD_BITS = 24
_FIELD_BYTES = _FIELD_BITS // 8
_FIELD_BIAS = 1 << (_FIELD_BITS - 1)
# Top byte of a field = _FIELD_BIAS >> 16 + floor(score * 64): levels 1/64 of a score apart.
_LEVEL_SHIFT: Final = _FIELD_BITS - 8
_LEVEL_SCALE: Final = 2.0 ** (2 * QUANT_BITS - _LEVEL_SHIFT)
# x*2**11 + 2**23 + 1.5*2**52 is a double whose low 24 IEEE bits are
# 2**23 + round(x*2**11) (ties to even) whenever |x*2**11| < 2**23: float ->
# biased fixed point without a Python-level round() per component.
_MAGIC = 1.5 * 2.0**52 + _FIELD_BIAS
# Where the low, middle and high byte of those 24 bits sit in a native double.
_LOW_BYTES: Final = (0, 1, 2) if sys.byteorder == "little" else (7, 6, 5)
# Columns and field totals are little-endian integers on every platform (byte i of
# `total.to_bytes(3n, "little")` is byte i % 3 of slot i // 3's field).
_ORDER: Final = "little"
_TOP_BYTE: Final = _FIELD_BYTES - 1
# _AT_LEAST_TOP[v] maps a top byte >= v to 0x40 and any other to 0 (bytes.translate).
# (v zero bytes then 0x40s: built at C speed, ~0.1 ms at import instead of ~30 ms by generator)
_AT_LEAST_TOP: Final = [bytes(v) + b"\x40" * (256 - v) for v in range(257)]
# _BELOW[v]: the byte values < v (`bytes.translate(None, _BELOW[v])` keeps those >= v).
_BELOW: Final = [bytes(range(v)) for v in range(257)]
# Levels a k-th-best search widens its window by (`_mth_level`): 1/4 of a score.
_LEVEL_STEP: Final = 16
# Largest dimension count the 24-bit fields hold (sqrt(D) / 2 <= 724, see above).
MAX_DIMENSIONS: Final = 1 << 21
# Columns are rebuilt at search time when more than max(256, main/16) vectors
# were added since the last build, or more than max(256, main/4) were removed.
DELTA_MIN = 256
DELTA_FRACTION = 16
DEAD_FRACTION = 4
# /2: ids and blocks of rows in sections of their own, the pending ids in the header;
# /3: 11-bit values in 24-bit little-endian fields.
_DUMP_FORMAT = "graphonomous-vectors/3"
# Rows per section of a dump: a candidate rescored in a fresh process reads its
# block (48 KB at d = 384), not all rows.
ROW_BLOCK: Final = 32
# Searches answered from a lazily read dump before the rest of it is read at once:
# a one-query process (a CLI `recall`) reads only what its query needs, a server
# stops paying a read per new column or row block from its third search on.
LAZY_SEARCHES: Final = 2
# Sections read at a time when the rest of a lazily read dump is read at once
# (rows: 48 KB each at d = 384; columns: 3 bytes per vector each).
_MATERIALIZE_SECTIONS: Final = 64
# Rows converted at a time by a column build (bounds its temporary memory).
_BUILD_BLOCK: Final = 2_048
# Bytes of column fields a `RowSpool` builds per pass over its spooled fields: 8 MB
# keeps a streamed save's peak a few MB above its caller's (a 72K-row index is
# 36 of 384 dimensions per pass, 11 passes over the 83 MB file, C-speed slicing).
_COLUMN_GROUP_BYTES: Final = 8 << 20
# Dimensions converted at a time by the NumPy backend's columns for a dump (its
# temporary doubles: 8 bytes x N x this, 12.8 MB at 50K vectors).
_COLUMN_BLOCK: Final = 32
# Float slack on top of the proven error bounds (double rounding of the cut itself).
_SLACK = 1e-12


def _ones(count: int) -> int:
    """1 in each of `count` fields: sum of 2**(24 i) for i < count."""
    return ((1 << (_FIELD_BITS * count)) - 1) // ((1 << _FIELD_BITS) - 1)


def _check_dimensions(dimensions: int) -> int:
    if isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 1:
        raise ValidationError("dimensions", f"must be a positive integer, got {dimensions!r}")
    if dimensions > MAX_DIMENSIONS:
        raise ValidationError("dimensions", f"must be at most {MAX_DIMENSIONS}, got {dimensions}")
    return dimensions


def normalized_f32(vector: VectorLike, dimensions: int) -> list[float]:
    """The stored form of a vector: unit length (or zero), every component float32.

    Input: a sequence of floats, or little-endian float32 bytes (`pack_f32`).
    Output: ``to_float32(l2_normalize(vector))`` as a list.
    Complexity: O(d).  Raises `ValidationError` on a wrong length or
    non-finite components.
    """
    values = unpack_f32(vector) if isinstance(vector, (bytes, bytearray, memoryview)) else vector
    if len(values) != dimensions:
        raise ValidationError("vector", f"expected {dimensions} components, got {len(values)}")
    return array("f", l2_normalize(values)).tolist()


def exact_score(query: Sequence[float], row: Sequence[float]) -> float:
    """The index score: the exact dot product of two float32 vectors, rounded once.

    Input: two equal-length sequences of float32-exact floats.
    Output: ``math.fsum`` of the (exact) products; -0.0 is returned as 0.0.
    Only the query's non-zero components are multiplied: the other products
    are exact zeros, which change neither the exact sum nor its rounding.
    Complexity: O(d) selection + O(nnz(query)) products.
    """
    return math.fsum(map(mul, compress(query, query), compress(row, query))) + 0.0


def sparse_scorer(query: Sequence[float]) -> Callable[[Sequence[float]], float]:
    """``exact_score(query, row)`` as a function of the row, prepared once per query.

    The non-zero positions of the query are picked out of each row in C
    (`operator.itemgetter`), so scoring C candidates costs O(C * nnz(query))
    instead of O(C * d) -- hashing queries are ~30 % non-zero.  Same value as
    `exact_score` (the dropped products are exact zeros).
    """
    positions = [dim for dim, weight in enumerate(query) if weight]
    weights = [query[dim] for dim in positions]
    if not positions:
        return lambda row: 0.0
    if len(positions) == 1:  # itemgetter of one position returns a scalar, not a tuple
        (only,), (weight,) = positions, weights
        return lambda row: math.fsum((weight * row[only],)) + 0.0
    pick = itemgetter(*positions)
    return lambda row: math.fsum(map(mul, weights, pick(row))) + 0.0


class _Scores(Protocol):
    """Approximate scores by slot, each within ``eps`` of its exact score."""

    eps: float

    def value(self, slot: int) -> float: ...

    def kth_largest(self, m: int) -> float: ...

    def at_least(self, cut: float) -> list[int]: ...


class _FieldScores:
    """Approximate scores of the pure backend, left as biased 24-bit fields of one big int.

    The built slots' scores are ``(field - _FIELD_BIAS) * 2**-22``: exact doubles,
    so comparing fields is comparing scores.  Nothing is converted to a Python
    float per slot.  The fields' top bytes (*levels*, 1/64 of a score apart;
    0 marks a removed slot) are one bytes value of N bytes, and both selections
    work on it with C-speed bytes operations: `kth_largest` finds the level of
    the m-th best (`_mth_level`) and compares only the fields at or above it;
    `at_least` takes every slot above the cut's level (`bytes.translate`) and
    compares the fields of the cut's own level one by one.  Slots after the
    built ones (the delta) carry exact float scores in `extra`; removed built
    slots score -inf.
    """

    def __init__(
        self,
        total: int,
        built: int,
        removed: tuple[int, frozenset[int]] | None,
        extra: list[float],
        eps: float,
        top: int = 255,
    ) -> None:
        self.eps = eps
        self._top = top  # no level is above it (`top_level`)
        self._built = built
        # (0xFF in the level byte of every live built slot, the removed built slots)
        self._removed = removed
        self._raw = total.to_bytes(_FIELD_BYTES * built, _ORDER)
        levels = self._raw[_TOP_BYTE::_FIELD_BYTES]
        if removed is not None:  # removed slots get level 0
            levels = (int.from_bytes(levels, _ORDER) & removed[0]).to_bytes(built, _ORDER)
        self._levels = levels
        self._extra = extra

    def _field(self, slot: int) -> int:
        at = _FIELD_BYTES * slot
        return int.from_bytes(self._raw[at : at + _FIELD_BYTES], _ORDER)

    def value(self, slot: int) -> float:
        if slot >= self._built:
            return self._extra[slot - self._built]
        if self._removed is not None and slot in self._removed[1]:
            return -math.inf
        return (self._field(slot) - _FIELD_BIAS) * _INV_SCALE_SQ

    def kth_largest(self, m: int) -> float:
        best: list[float] = []
        if self._built:
            level = _mth_level(self._levels, m, self._top)
            chosen = [self._field(slot) for slot in _positions(self._levels, level)]
            best = [(f - _FIELD_BIAS) * _INV_SCALE_SQ for f in heapq.nlargest(m, chosen)]
        pool = best + self._extra
        if len(pool) < m:  # the rest are removed slots
            pool += [-math.inf] * (m - len(pool))
        return heapq.nlargest(m, pool)[-1]

    def at_least(self, cut: float) -> list[int]:
        """Slots whose approximate score is >= cut, ascending (delta slots last).

        A built slot passes when its field f >= t = _FIELD_BIAS + ceil(cut * 2**22)
        (its score is exactly (f - bias) * 2**-22).  Levels order fields: every
        field of a level above t's passes, none below does, and those of t's
        own level are compared.  t is clamped into [2**16, 2**24], where every
        live field lies (`_FIELD_BITS`), so a removed slot (level 0) never passes.
        """
        built = self._built
        if cut == -math.inf:
            slots = list(range(built))  # removed slots too, as -inf >= -inf
        elif built == 0 or cut == math.inf:
            slots = []
        else:
            # |score| < 2 for every field, so clamping the cut to +-4 changes no verdict.
            offset = math.ceil(max(-4.0, min(4.0, cut)) * _FULL)
            threshold = max(1 << _LEVEL_SHIFT, min(1 << _FIELD_BITS, _FIELD_BIAS + offset))
            level = threshold >> _LEVEL_SHIFT
            slots = _positions(self._levels, level + 1)
            same = [s for s in _positions_of(self._levels, level) if self._field(s) >= threshold]
            if same:
                slots = sorted(slots + same)
        slots += [built + at for at, value in enumerate(self._extra) if cut <= value]
        return slots


# 2**22: a field's fixed-point unit (S**2), a score times this is its field offset.
_FULL: Final = float(1 << (2 * QUANT_BITS))


def top_level(dimensions: int) -> int:
    """The highest level a field can have at `dimensions`: every field sum is at most
    (S (1 + 1e-6) + sqrt(D) / 2)**2 (`_FIELD_BITS`), 192 at D = 384.  O(1)."""
    most = (_SCALE * (1 + 1e-6) + math.sqrt(dimensions) / 2) ** 2
    return min(255, (_FIELD_BIAS + math.ceil(most)) >> _LEVEL_SHIFT)


def _mth_level(levels: bytes, m: int, top: int = 255) -> int:
    """The highest level v >= 1 with at least m levels >= v (1 when fewer live slots).

    No level is above `top` (`top_level`).  The best level present is found
    from there down with `in` (memchr), a window of
    `_LEVEL_STEP` levels below it is cut out with one `bytes.translate` (only
    bytes >= its floor kept, widened until m are in it), and that short copy
    is counted level by level.  O(N) per widening; one or two in practice.
    """
    while top > 1 and top not in levels:
        top -= 1
    floor = top
    while True:
        floor = max(1, floor - _LEVEL_STEP)
        window = levels.translate(None, _BELOW[floor])
        if len(window) >= m or floor == 1:
            break
    seen = 0
    for level in range(top, floor - 1, -1):
        seen += window.count(level)
        if seen >= m:
            return level
    return floor


def _positions(levels: bytes, at_least: int) -> list[int]:
    """Slots whose level is >= at_least (1..256), ascending."""
    if at_least > 255:
        return []
    marks = levels.translate(_AT_LEAST_TOP[at_least])
    found, at = [], marks.find(0x40)
    while at >= 0:
        found.append(at)
        at = marks.find(0x40, at + 1)
    return found


def _positions_of(levels: bytes, level: int) -> list[int]:
    """Slots whose level is exactly `level` (none when it is 256), ascending."""
    if level > 255:
        return []
    found, at = [], levels.find(level)
    while at >= 0:
        found.append(at)
        at = levels.find(level, at + 1)
    return found


class _ArrayScores:
    """Approximate scores in a float64 NumPy array (NumPy backend)."""

    def __init__(self, values: npt.NDArray[np.float64], eps: float) -> None:
        self.values = values
        self.eps = eps

    def value(self, slot: int) -> float:
        return float(self.values[slot])

    def kth_largest(self, m: int) -> float:
        import numpy as np

        size = self.values.shape[0]
        return float(np.partition(self.values, size - m)[size - m])

    def at_least(self, cut: float) -> list[int]:
        import numpy as np

        slots: list[int] = np.flatnonzero(self.values >= cut).tolist()
        return slots


class _LazySource:
    """Where a lazily loaded pure index finds what it has not read yet."""

    def __init__(
        self, reader: DumpReader, row_block: int, first_column: int, fallback: Fallback
    ) -> None:
        self.reader = reader
        self.row_block = row_block  # rows per section; row blocks are sections 1, 2, ...
        self.first_column = first_column  # the section of column 0
        self.fallback = fallback


def _no_fallback(ids: Sequence[str | None]) -> list[bytes | None]:
    raise StaleDumpError(f"the saved copy of {len(ids)} vectors vanished and no fallback given")


class _PureBackend:
    """Rows packed in one `array('f')`; approximate scores through big-integer columns."""

    name = "pure"

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions
        self._ids: list[str | None] = []  # slot -> node id (None: removed)
        self._flat = array("f")  # slot s holds components [s*d, (s+1)*d)
        self._slots: dict[str, int] = {}
        self._built = 0  # slots [0, _built) are in the columns, the rest is the delta
        self._dead_built = 0  # removed slots below _built
        self._alive_cache: tuple[int, frozenset[int]] | None = None  # `_removed`
        self._columns: list[int] = []
        self._bias_ones = 0  # _FIELD_BIAS in every field: makes all fields non-negative
        # A loaded dump read lazily (`restore_lazy`): the rows of slots [0, _lazy)
        # and the columns flagged in `_lazy_columns` are still in the dump; `_flat`
        # then holds the rows of slots [_lazy, len(_ids)).
        self._source: _LazySource | None = None
        self._lazy = 0
        self._lazy_columns = bytearray()
        self._row_cache: dict[int, array[float]] = {}
        self._lazy_searches = 0
        self._batch_depth = 0  # inside `batch`: searches count once (`begin_batch`)

    # -- storage ----------------------------------------------------------
    def __len__(self) -> int:
        return len(self._slots)

    def slot_of(self, node_id: str) -> int | None:
        return self._slots.get(node_id)

    def id_at(self, slot: int) -> str | None:
        return self._ids[slot]

    def _row(self, slot: int) -> array[float]:
        if slot < self._lazy:
            row = self._row_cache.get(slot)
            if row is not None:
                return row
            self.prefetch([slot])
            if slot < self._lazy:  # (a stale dump was replaced by stored vectors)
                return self._row_cache[slot]
        dims = self.dimensions
        at = slot - self._lazy
        return self._flat[at * dims : (at + 1) * dims]

    def row(self, slot: int) -> list[float]:
        return self._row(slot).tolist()

    def prefetch(self, slots: Iterable[int]) -> None:
        """Read the rows of these slots still in the dump, in one read."""
        needed = sorted({s for s in slots if s < self._lazy and s not in self._row_cache})
        if not needed:
            return
        source = self._source
        assert source is not None
        block = source.row_block
        blocks = sorted({slot // block for slot in needed})
        blobs = self._read([1 + number for number in blocks])
        if blobs is None:
            return
        width = 4 * self.dimensions
        found = dict(zip(blocks, blobs, strict=True))
        for slot in needed:
            at = (slot % block) * width
            row = array("f")
            row.frombytes(found[slot // block][at : at + width])
            self._row_cache[slot] = row

    def _read(self, sections: list[int]) -> list[memoryview] | None:
        """Sections of the dump, or None after a stale dump was replaced (`_recover`)."""
        source = self._source
        assert source is not None
        try:
            return source.reader.read_sections(sections)
        except StaleDumpError:
            self._recover()
            return None

    def source_current(self) -> bool:
        """False when the dump still read from was replaced (the caller reloads)."""
        if self._source is None:
            return True
        try:
            self._source.reader.check()
        except StaleDumpError:
            return False
        return True

    def _recover(self) -> None:
        """The dump vanished mid-use: take the rows still in it from the stored
        vectors (`fallback`) and rebuild the columns in place (same slots).
        O(N * d); only when another process replaced the copy between the
        engine's check and this read."""
        source = self._source
        assert source is not None
        lazy, dims = self._lazy, self.dimensions
        blobs = source.fallback(self._ids[:lazy])
        flat = array("f")
        for slot in range(lazy):
            cached = self._row_cache.get(slot)
            blob = blobs[slot]
            if cached is not None:
                flat.extend(cached)
            elif blob is None or self._ids[slot] is None:
                flat.extend([0.0] * dims)
            else:
                flat.extend(normalized_f32(blob, dims))
        flat.extend(self._flat)
        self._flat, self._lazy, self._row_cache = flat, 0, {}
        self._source, self._lazy_columns = None, bytearray()
        self._build_columns(self._built)

    def _materialize(self) -> None:
        """Read everything still in the dump (rows and columns) and let it go.

        Sections are read `_MATERIALIZE_SECTIONS` at a time into rows allocated
        once, so the peak is the index plus one chunk, not the index twice
        (≈ 150 MB less at 50K x 384).  A copy replaced meanwhile is caught by the
        nonce of the next chunk (`_read` then rebuilds from the stored vectors).
        """
        source = self._source
        if source is None:
            return
        dims, lazy = self.dimensions, self._lazy
        columns = [d for d in range(dims) if self._lazy_columns and self._lazy_columns[d]]
        blocks = -(-lazy // source.row_block)
        sections = [1 + number for number in range(blocks)]
        sections += [source.first_column + d for d in columns]
        saved_bytes, block_bytes = 4 * lazy * dims, 4 * dims * source.row_block
        rows = array("f", [0.0]) * (lazy * dims + len(self._flat))
        loaded: dict[int, int] = {}
        view = memoryview(rows)
        target = view.cast("B")
        try:
            for start in range(0, len(sections), _MATERIALIZE_SECTIONS):
                chunk = sections[start : start + _MATERIALIZE_SECTIONS]
                blobs = self._read(chunk)
                if blobs is None:
                    return  # the copy was replaced: `_recover` rebuilt the index
                for section, blob in zip(chunk, blobs, strict=True):
                    if section >= source.first_column:
                        column = int.from_bytes(blob, _ORDER, signed=True)
                        loaded[section - source.first_column] = column
                        continue
                    offset = (section - 1) * block_bytes
                    take = min(len(blob), saved_bytes - offset)
                    target[offset : offset + take] = blob[:take]
            target[saved_bytes:] = self._flat.tobytes()
        finally:
            target.release()
            view.release()
        for dim, column in loaded.items():
            self._columns[dim] = column
        self._flat, self._lazy, self._row_cache = rows, 0, {}
        self._source, self._lazy_columns = None, bytearray()

    def _load_columns(self, dims: list[int]) -> None:
        needed = [d for d in dims if self._lazy_columns and self._lazy_columns[d]]
        if not needed:
            return
        source = self._source
        assert source is not None
        blobs = self._read([source.first_column + d for d in needed])
        if blobs is None:
            return
        for dim, blob in zip(needed, blobs, strict=True):
            self._columns[dim] = int.from_bytes(blob, _ORDER, signed=True)
            self._lazy_columns[dim] = 0

    def live_ids(self) -> list[str]:
        return list(self._slots)

    def put(self, node_id: str, row: list[float]) -> None:
        # Replacing appends a new slot: built columns are never edited in place.
        self.remove(node_id)
        self._slots[node_id] = len(self._ids)
        self._ids.append(node_id)
        self._flat.extend(row)

    def put_many(self, ids: list[str], rows: list[list[float]]) -> None:
        for node_id, row in zip(ids, rows, strict=True):
            self.put(node_id, row)

    def normalize_many(self, vectors: list[VectorLike]) -> list[list[float]]:
        return [normalized_f32(vector, self.dimensions) for vector in vectors]

    def remove(self, node_id: str) -> bool:
        slot = self._slots.pop(node_id, None)
        if slot is None:
            return False
        self._ids[slot] = None
        if slot < self._built:
            self._dead_built += 1
            self._alive_cache = None
        return True

    def memory_bytes(self) -> dict[str, int]:
        cached = sum(row.buffer_info()[1] * row.itemsize for row in self._row_cache.values())
        return {
            "rows": self._flat.buffer_info()[1] * self._flat.itemsize + cached,
            "columns": sum(sys.getsizeof(column) for column in self._columns),
            "ids": sys.getsizeof(self._ids) + sys.getsizeof(self._slots),
        }

    def state(self) -> tuple[list[str], bytes, list[int] | None]:
        """Compacted ids, packed rows and (when built) the columns, for `VectorIndex.dump`."""
        self._materialize()
        if len(self._ids) != self._built or self._dead_built:
            self.build()
        return [i for i in self._ids if i is not None], self._flat.tobytes(), self._columns

    def restore(
        self, ids: list[str], rows: bytes, columns: Sequence[bytes | memoryview] | None
    ) -> None:
        """Take a dump's ids, rows and (signed, little-endian) column bytes."""
        self._ids = list(ids)
        self._flat = array("f")
        self._flat.frombytes(rows)
        self._slots = {node_id: slot for slot, node_id in enumerate(ids)}
        self._source, self._lazy, self._lazy_columns, self._row_cache = None, 0, bytearray(), {}
        self._alive_cache = None
        if columns is not None and len(columns) == self.dimensions and ids:
            self._columns = [int.from_bytes(c, _ORDER, signed=True) for c in columns]
            self._bias_ones = _FIELD_BIAS * _ones(len(ids))
            self._built, self._dead_built = len(ids), 0
        else:
            self._columns, self._bias_ones, self._built, self._dead_built = [], 0, 0, 0

    def restore_lazy(self, ids: list[str], source: _LazySource) -> None:
        """Take a dump's ids; rows and columns stay in the dump until read."""
        count = len(ids)
        self._ids = list(ids)
        self._flat = array("f")
        self._slots = {node_id: slot for slot, node_id in enumerate(ids)}
        self._columns, self._bias_ones = [0] * self.dimensions, _FIELD_BIAS * _ones(count)
        self._built, self._dead_built = count, 0
        self._source, self._lazy, self._row_cache = source, count, {}
        self._lazy_columns = bytearray(b"\x01" * self.dimensions)
        self._alive_cache = None

    # -- column build -------------------------------------------------------
    def _needs_build(self) -> bool:
        main = self._built
        delta = len(self._ids) - main
        return delta > max(DELTA_MIN, main // DELTA_FRACTION) or self._dead_built > max(
            DELTA_MIN, main // DEAD_FRACTION
        )

    def build(self) -> None:
        """Compact slots and rebuild one fixed-point column int per dimension.

        Complexity: O(N * d) once (about 0.1 ms per vector); queries then
        cost O(nnz(q) * N) word operations.
        """
        self._materialize()
        live = [slot for slot, node_id in enumerate(self._ids) if node_id is not None]
        if len(live) != len(self._ids):
            flat = array("f")
            for slot in live:
                flat.extend(self._row(slot))
            self._flat = flat
        live_ids: list[str | None] = [self._ids[slot] for slot in live]
        self._ids = live_ids
        self._slots = {str(node_id): slot for slot, node_id in enumerate(live_ids)}
        count = len(live_ids)
        self._built, self._dead_built = count, 0
        self._build_columns(count)

    def _build_columns(self, count: int) -> None:
        """The columns of the first `count` slots' rows (all in `_flat`)."""
        self._alive_cache = None
        if count == 0:
            self._columns, self._bias_ones = [], 0
            return
        dims = self.dimensions
        scale, magic = float(_SCALE), _MAGIC
        stride = 8 * dims
        # Each dimension's little-endian 24-bit fields, filled block by block of
        # rows: the doubles of one block at a time (not one Python float per
        # component of the whole index: ~600 MB at 50K x 384) plus the fields
        # themselves (3 bytes each).
        fields = [bytearray(_FIELD_BYTES * count) for _ in range(dims)]
        for start in range(0, count, _BUILD_BLOCK):
            end = min(count, start + _BUILD_BLOCK)
            block = self._flat[start * dims : end * dims]
            # Row-major doubles whose low 24 bits are _FIELD_BIAS + fixed-point value.
            raw = array("d", [x * scale + magic for x in block]).tobytes()
            first, last = _FIELD_BYTES * start, _FIELD_BYTES * end
            for d in range(dims):
                target = fields[d]
                for position, at in enumerate(_LOW_BYTES):
                    target[first + position : last : _FIELD_BYTES] = raw[8 * d + at :: stride]
        bias_ones = _FIELD_BIAS * _ones(count)
        columns: list[int] = []
        for d in range(dims):
            columns.append(int.from_bytes(fields[d], _ORDER) - bias_ones)
            fields[d] = bytearray()  # freed as we go
        self._columns = columns
        self._bias_ones = bias_ones

    # -- scoring ------------------------------------------------------------
    def _count_search(self) -> None:
        """One more search answered from a lazily read dump; past `LAZY_SEARCHES`
        (a long-lived process) the rest of the dump is read at once."""
        if self._source is not None:
            self._lazy_searches += 1
            if self._lazy_searches > LAZY_SEARCHES:
                self._materialize()

    def begin_batch(self) -> None:
        """The searches until `end_batch` count as one (`_count_search`): a batch
        (consolidation's neighbour searches) reads only the columns and row
        blocks its queries need, as a single search does."""
        if self._batch_depth == 0:
            self._count_search()
        self._batch_depth += 1

    def end_batch(self) -> None:
        self._batch_depth -= 1

    def approximate(self, query: list[float]) -> _FieldScores:
        """Approximate score per slot (-inf for removed slots) and its error bound.

        With S = 2**11, q~ = round(q S), r~ = round(r S), alpha = q - q~/S and
        beta = r - r~/S (|beta_d| <= 1/2S), the field holds s~ = q~.r~ and

            q.r - s~/S**2 = (q~/S).beta + alpha.r,
            |(q~/S).beta| <= |q~|_1 / 2S**2,   |alpha.r| <= |alpha|_2 |r|_2,

        with |r|_2 <= 1 + 1e-6 (a float32-rounded unit vector).  |q~|_1 is an
        exact integer; |alpha|_2 is computed from exact squares (q_d S - q~_d
        is exact in double) by `math.fsum` and `sqrt`, each rounded once, and
        the factor 1 + 1e-9 covers both roundings and the sum of the terms.
        """
        if self._batch_depth == 0:
            self._count_search()
        if self._needs_build():
            self.build()
        total, l1, residue = self._column_total(query) if self._built else (0, 0, 0.0)
        extra: list[float] = []
        if len(self._ids) > self._built:
            score = sparse_scorer(query)
            for slot in range(self._built, len(self._ids)):
                alive = self._ids[slot] is not None
                extra.append(score(self._row(slot)) if alive else -math.inf)
        alpha = math.sqrt(residue) / _SCALE
        eps = (l1 * (0.5 * _INV_SCALE_SQ) + alpha * (1 + 1e-6)) * (1 + 1e-9)
        top = top_level(self.dimensions)
        return _FieldScores(total, self._built, self._removed(), extra, eps + _SLACK, top)

    def _removed(self) -> tuple[int, frozenset[int]] | None:
        """(0xFF in the level byte of every live built slot as a little-endian int,
        the removed built slots), None when none was removed; cached until a slot
        is removed or the columns change."""
        if not self._dead_built:
            return None
        if self._alive_cache is None:
            dead = frozenset(slot for slot in range(self._built) if self._ids[slot] is None)
            marks = bytearray(b"\xff" * self._built)
            for slot in dead:
                marks[slot] = 0
            self._alive_cache = (int.from_bytes(marks, _ORDER), dead)
        return self._alive_cache

    def _column_total(self, query: list[float]) -> tuple[int, int, float]:
        """(one big int whose 24-bit field i is _FIELD_BIAS + q~.r~_i, |q~|_1, |alpha S|_2**2).

        Dimensions whose weight rounds to 0 add nothing (their weight is all
        residue); their columns are not even read from a saved copy.
        """
        # Sum columns that share a fixed-point weight magnitude first: hashing
        # queries have ~9 distinct magnitudes among ~116 non-zeros, so most
        # big-int multiplications become additions.
        scale = float(_SCALE)
        steps = {dim: round(weight * scale) for dim, weight in enumerate(query) if weight}
        residue = math.fsum((query[dim] * scale - step) ** 2 for dim, step in steps.items())
        used = {dim: step for dim, step in steps.items() if step}
        if self._lazy_columns:
            self._load_columns(list(used))
        groups: dict[int, int] = {}
        columns = self._columns
        for dim, step in used.items():
            if step > 0:
                groups[step] = groups.get(step, 0) + columns[dim]
            else:
                groups[-step] = groups.get(-step, 0) - columns[dim]
        total = self._bias_ones
        for step, column_sum in groups.items():
            total += step * column_sum
        return total, sum(map(abs, used.values())), residue

    def exact(self, slot: int, query: list[float]) -> float:
        return exact_score(query, self._row(slot))

    def row_values(self, slot: int) -> Sequence[float]:
        """The stored row of a slot, as the packed array itself (no list)."""
        return self._row(slot)


class _NumpyBackend:
    """Rows in one contiguous float32 matrix; approximate scores by BLAS."""

    name = "numpy"

    def __init__(self, dimensions: int) -> None:
        import numpy as np

        self._np = np
        self.dimensions = dimensions
        self._matrix: npt.NDArray[np.float32] = np.zeros((16, dimensions), dtype=np.float32)
        self._ids: list[str] = []  # slot -> node id, slots 0..n-1 all live
        self._slots: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._ids)

    def slot_of(self, node_id: str) -> int | None:
        return self._slots.get(node_id)

    def id_at(self, slot: int) -> str | None:
        return self._ids[slot]

    def row(self, slot: int) -> list[float]:
        values: list[float] = self._matrix[slot].tolist()
        return values

    def live_ids(self) -> list[str]:
        return list(self._ids)

    def _reserve(self, extra: int) -> None:
        needed = len(self._ids) + extra
        capacity = self._matrix.shape[0]
        if needed <= capacity:
            return
        while capacity < needed:
            capacity *= 2  # geometric growth: amortised O(d) per add
        grown = self._np.zeros((capacity, self.dimensions), dtype=self._np.float32)
        grown[: len(self._ids)] = self._matrix[: len(self._ids)]
        self._matrix = grown

    def put(self, node_id: str, row: list[float]) -> None:
        slot = self._slots.get(node_id)
        if slot is None:
            self._reserve(1)
            slot = len(self._ids)
            self._ids.append(node_id)
            self._slots[node_id] = slot
        self._matrix[slot] = row

    def put_many(self, ids: list[str], rows: npt.NDArray[np.float32]) -> None:
        fresh = len(set(ids)) == len(ids) and not any(node_id in self._slots for node_id in ids)
        if not fresh:
            for position, node_id in enumerate(ids):
                self.put(node_id, rows[position])
            return
        self._reserve(len(ids))
        start = len(self._ids)
        self._matrix[start : start + len(ids)] = rows
        self._ids.extend(ids)
        self._slots.update((node_id, start + offset) for offset, node_id in enumerate(ids))

    def normalize_many(self, vectors: list[VectorLike]) -> npt.NDArray[np.float32]:
        """Vectorised `normalized_f32`, bit-identical to it (same operation order)."""
        np = self._np
        dims = self.dimensions
        rows: list[Any] = []
        for vector in vectors:
            if isinstance(vector, (bytes, bytearray, memoryview)):
                if len(vector) % 4:
                    raise ValidationError(
                        "embedding", f"blob length {len(vector)} is not a multiple of 4"
                    )
                vector = np.frombuffer(vector, dtype="<f4")
            if len(vector) != dims:
                raise ValidationError("vector", f"expected {dims} components, got {len(vector)}")
            rows.append(vector)
        block = np.array(rows, dtype=np.float64).reshape(len(rows), dims)
        squares = block * block
        total = np.zeros(len(rows), dtype=np.float64)
        for column in range(dims):  # left to right, exactly like vectors.l2_norm
            total += squares[:, column]
        norms = np.sqrt(total)
        if not np.all(np.isfinite(norms)):
            raise ValidationError("vector", "components must be finite and below 1e154")
        nonzero = norms > 0.0
        block[nonzero] /= norms[nonzero, None]
        block[~nonzero] = 0.0
        return _as_f32(block)

    def remove(self, node_id: str) -> bool:
        slot = self._slots.pop(node_id, None)
        if slot is None:
            return False
        last = len(self._ids) - 1
        if slot != last:  # swap-with-last keeps the live rows contiguous
            moved = self._ids[last]
            self._matrix[slot] = self._matrix[last]
            self._ids[slot] = moved
            self._slots[moved] = slot
        self._ids.pop()
        return True

    def memory_bytes(self) -> dict[str, int]:
        return {
            "rows": int(self._matrix.nbytes),
            "columns": 0,
            "ids": sys.getsizeof(self._ids) + sys.getsizeof(self._slots),
        }

    def state(self) -> tuple[list[str], bytes, list[int] | None]:
        """Ids, packed rows and the pure backend's columns of these rows (so a pure
        process reading the dump needs no column build)."""
        count = len(self._ids)
        rows = self._matrix[:count]
        return list(self._ids), rows.astype("=f4").tobytes(), self._columns(rows)

    def _columns(self, rows: npt.NDArray[np.float32]) -> list[int]:
        """`_PureBackend._build_columns` of `rows`, equal int for int: round(x S)
        ties to even (`rint`, as the magic-number addition), biased into 24-bit
        little-endian fields, minus the bias.  Blocks of dimensions bound the
        temporary doubles.  O(N * d)."""
        np = self._np
        count = len(rows)
        if count == 0:
            return []
        bias_ones = _FIELD_BIAS * _ones(count)
        columns: list[int] = []
        for start in range(0, self.dimensions, _COLUMN_BLOCK):
            block = rows[:, start : start + _COLUMN_BLOCK].astype(np.float64) * float(_SCALE)
            biased = (np.rint(block).astype(np.int64) + _FIELD_BIAS).astype("<u4")
            fields = np.ascontiguousarray(biased.T).view(np.uint8).reshape(len(biased.T), count, 4)
            for column in fields[:, :, :_FIELD_BYTES]:
                columns.append(int.from_bytes(column.tobytes(), _ORDER) - bias_ones)
        return columns

    def restore(
        self, ids: list[str], rows: bytes, columns: Sequence[bytes | memoryview] | None
    ) -> None:
        np = self._np
        del columns  # the NumPy backend scores with BLAS
        matrix = np.frombuffer(rows, dtype="=f4").reshape(len(ids), self.dimensions)
        self._matrix = np.zeros((max(16, len(ids)), self.dimensions), dtype=np.float32)
        self._matrix[: len(ids)] = matrix
        self._ids = list(ids)
        self._slots = {node_id: slot for slot, node_id in enumerate(ids)}

    def restore_blocks(self, ids: list[str], reader: DumpReader, blocks: int) -> bool:
        """Take a dump's ids and its row blocks (sections 1..blocks), read
        `_MATERIALIZE_SECTIONS` at a time straight into the matrix: the peak is
        the matrix plus one chunk, not the rows joined and then copied (≈ 150 MB
        less at 50K x 384).  False when the rows do not fill the ids exactly."""
        np = self._np
        count = len(ids)
        matrix = np.zeros((max(16, count), self.dimensions), dtype=np.float32)
        target = matrix.reshape(-1).view(np.uint8)
        filled, size = 0, 4 * count * self.dimensions
        for start in range(1, 1 + blocks, _MATERIALIZE_SECTIONS):
            chunk = list(range(start, min(1 + blocks, start + _MATERIALIZE_SECTIONS)))
            for blob in reader.read_sections(chunk):
                if filled + len(blob) > size:
                    return False
                target[filled : filled + len(blob)] = np.frombuffer(blob, dtype=np.uint8)
                filled += len(blob)
        if filled != size:
            return False
        self._matrix = matrix
        self._ids = list(ids)
        self._slots = {node_id: slot for slot, node_id in enumerate(ids)}
        return True

    def approximate(self, query: list[float]) -> _ArrayScores:
        np = self._np
        vector = np.asarray(query, dtype=np.float32)
        approx = (self._matrix[: len(self._ids)] @ vector).astype(np.float64)
        # Any float32 summation order errs by <= d*u/(1-d*u) * sum|q_d r_d|, u = 2**-24,
        # and sum|q_d r_d| <= |q| |r| ~ 1; a factor 2 covers the output rounding.
        return _ArrayScores(approx, 2.0 * self.dimensions * 2.0**-24 + _SLACK)

    def exact(self, slot: int, query: list[float]) -> float:
        return exact_score(query, self._matrix[slot].tolist())

    def row_values(self, slot: int) -> Sequence[float]:
        """The stored row of a slot as Python floats."""
        row: list[float] = self._matrix[slot].tolist()
        return row

    def prefetch(self, slots: Iterable[int]) -> None:
        """Rows are all in memory (nothing to read)."""
        del slots

    def source_current(self) -> bool:
        return True

    def begin_batch(self) -> None:
        """Rows are all in memory (no read policy)."""

    def end_batch(self) -> None:
        """Rows are all in memory (no read policy)."""


class VectorIndex:
    """Exact top-k cosine similarity over vectors keyed by node id.

    ``backend`` is ``"pure"``, ``"numpy"`` or None (NumPy when
    `numpy_available()`, else pure).  Both backends return identical results.
    """

    def __init__(self, dimensions: int = EMBEDDING_DIMENSIONS, *, backend: str | None = None):
        self.dimensions = _check_dimensions(dimensions)
        if backend is None:
            backend = "numpy" if numpy_available() else "pure"
        if backend not in BACKENDS:
            raise ValidationError("backend", f"expected one of {BACKENDS}, got {backend!r}")
        self._backend: _PureBackend | _NumpyBackend = (
            _NumpyBackend(dimensions) if backend == "numpy" else _PureBackend(dimensions)
        )
        # Set by `load`: the ids the dump's writer knew to lack a vector (`dump(pending=)`).
        self.saved_pending: list[str] | None = None
        # Set by `load`: the pure backend read a copy without its fixed-point columns (one
        # the NumPy backend wrote), so it builds them before its first search, O(N * d):
        # saving the index again spares every later process that build (the engine does).
        self.columns_missing_from_copy = False
        # The last query's bytes and its `normalized_f32` form: one retrieval searches,
        # then scores the BM25 hits, with the same query (normalised once, O(d) to check).
        self._last_query: tuple[bytes, list[float]] | None = None
        # `sparse_scorer` of the last normalised query (`_scorer`): a retrieval
        # searches and then rescores a few more ids with the same query
        self._last_scorer: tuple[list[float], Callable[[Sequence[float]], float]] | None = None

    @property
    def backend(self) -> str:
        """Which implementation answers queries: ``"pure"`` or ``"numpy"``."""
        return self._backend.name

    def __len__(self) -> int:
        return len(self._backend)

    def __contains__(self, node_id: object) -> bool:
        return isinstance(node_id, str) and self._backend.slot_of(node_id) is not None

    def ids(self) -> list[str]:
        """Stored node ids, sorted.  O(N log N)."""
        return sorted(self._backend.live_ids())

    def get(self, node_id: str) -> list[float] | None:
        """The stored (normalised, float32) vector of a node, or None.  O(d)."""
        slot = self._backend.slot_of(node_id)
        return None if slot is None else self._backend.row(slot)

    def similarities(self, query: VectorLike, node_ids: Iterable[str]) -> dict[str, float]:
        """The index score (`exact_score` of the stored forms) of each stored id.

        Input: a query vector (normalised like `search` does) and ids; ids
        without a vector are left out.  Output: ``{node_id: score}`` in the
        order given.  Rows still in a saved copy are read in one go.
        Complexity: O(d + C * nnz(query)) for C ids.
        """
        backend = self._backend
        slots = {node_id: backend.slot_of(node_id) for node_id in node_ids}
        found = {node_id: slot for node_id, slot in slots.items() if slot is not None}
        if not found:
            return {}
        score = self._scorer(self._normalized(query))
        backend.prefetch(found.values())
        return {node_id: score(backend.row_values(slot)) for node_id, slot in found.items()}

    def _scorer(self, vector: list[float]) -> Callable[[Sequence[float]], float]:
        """`sparse_scorer(vector)` for a `_normalized` result, kept for the last one
        (the same list object: `_normalized` returns its cached list for a repeat)."""
        last = self._last_scorer
        if last is not None and last[0] is vector:
            return last[1]
        score = sparse_scorer(vector)
        self._last_scorer = (vector, score)
        return score

    def _normalized(self, query: VectorLike) -> list[float]:
        """`normalized_f32(query)`, remembered for the last query (compared byte for byte,
        so -0.0 and 0.0 differ).  Callers must not change the returned list."""
        try:
            key = (
                bytes(query)
                if isinstance(query, (bytes, bytearray, memoryview))
                else b"d" + array("d", query).tobytes()
            )
        except (TypeError, ValueError, OverflowError):
            return normalized_f32(query, self.dimensions)  # raises the field's error
        last = self._last_query
        if last is not None and last[0] == key:
            return last[1]
        vector = normalized_f32(query, self.dimensions)
        self._last_query = (key, vector)
        return vector

    def add(self, node_id: str, vector: VectorLike) -> None:
        """Store (or replace) the vector of ``node_id``.

        Input: a node id and a vector of ``dimensions`` floats (or its
        `pack_f32` bytes).  The vector is normalised and rounded to float32.
        Complexity: O(d) amortised.  Raises `ValidationError` on bad input.
        """
        _check_id(node_id)
        self._backend.put(node_id, normalized_f32(vector, self.dimensions))

    def bulk_load(self, items: Iterable[tuple[str, VectorLike]]) -> None:
        """Add many vectors at once (e.g. every stored embedding when a store opens).

        Input: ``(node_id, vector or pack_f32 bytes)`` pairs; a later pair for
        the same id replaces an earlier one.  Output: none.
        Complexity: O(N * d), vectorised on the NumPy backend; the pure
        backend builds its columns lazily at the first search.  Memory: the
        pure backend takes one row at a time (a Python float per component of
        every vector was ≈ 0.9 GB at 50K × 256), NumPy the items as given.
        """
        backend = self._backend
        if not isinstance(backend, _NumpyBackend):
            for node_id, vector in items:
                _check_id(node_id)
                backend.put(node_id, normalized_f32(vector, self.dimensions))
            return
        ids: list[str] = []
        vectors: list[VectorLike] = []
        for node_id, vector in items:
            _check_id(node_id)
            ids.append(node_id)
            vectors.append(vector)
        backend.put_many(ids, backend.normalize_many(vectors))

    def remove(self, node_id: str) -> bool:
        """Forget a node's vector.  Output: whether it was present.  O(1) (+ O(d) NumPy)."""
        return self._backend.remove(node_id)

    def memory_bytes(self) -> dict[str, int]:
        """Bytes held per structure: packed rows, pure columns, id maps."""
        return self._backend.memory_bytes()

    def dump_sections(
        self, *, pending: Sequence[str] = ()
    ) -> tuple[dict[str, Any], list[bytes | memoryview]]:
        """The index as a header and sections (`load` restores it; either backend reads it).

        Sections: the ids (JSON), the stored rows (native float32) in blocks of
        `ROW_BLOCK` rows and the pure backend's fixed-point columns (the NumPy
        backend computes the same bytes), so a fresh process of either backend
        needs neither normalisation nor a column build and can
        read a few rows or columns without the rest.  `pending` (ids known to
        lack a vector, for the engine) goes into the header.  O(N * d).
        """
        ids, rows, columns = self._backend.state()
        count = len(ids)
        width = 4 * self.dimensions * ROW_BLOCK
        sections: list[bytes | memoryview] = [json.dumps(ids).encode("utf-8")]
        view = memoryview(rows)  # the row blocks are views: no second copy of the rows
        sections += [view[start : start + width] for start in range(0, len(rows), width)]
        if columns is not None and count:
            field = _FIELD_BYTES * count
            sections += [column.to_bytes(field, _ORDER, signed=True) for column in columns]
        return _dump_header(self.dimensions, count, pending), sections

    def dump(self, *, pending: Sequence[str] = ()) -> bytes:
        """`dump_sections` as one bytes value (`pack_sections`).  O(N * d)."""
        header, sections = self.dump_sections(pending=pending)
        return pack_sections(header, sections)

    @classmethod
    def load(
        cls,
        data: bytes | DumpReader,
        dimensions: int,
        *,
        backend: str | None = None,
        fallback: Fallback | None = None,
    ) -> VectorIndex | None:
        """An index from `dump` bytes or a `DumpReader` of `dump_sections`; None when
        unreadable, stale or of another layout (dimensions, byte order, fixed point).

        The pure backend reads lazily: the ids now, a column when a query first
        needs it, a block of rows when a candidate in it is rescored -- so a
        fresh process reads the query's non-zero dimensions, not the whole copy.
        `fallback(ids)` gives the stored vectors (blob or None per id) should
        the copy be replaced while still read (it is then rebuilt from them).
        NumPy reads the rows at once.  O(N) now (+ O(N * d) copying for NumPy).
        """
        try:
            reader = data if not isinstance(data, (bytes, bytearray, memoryview)) else None
            source = reader or BytesDump(bytes(data))  # type: ignore[arg-type]
            return cls._load(source, dimensions, backend, fallback)
        except (StaleDumpError, ValueError):
            return None

    @classmethod
    def _load(
        cls, reader: DumpReader, dimensions: int, backend: str | None, fallback: Fallback | None
    ) -> VectorIndex | None:
        header = reader.header
        expected = (_DUMP_FORMAT, sys.byteorder, dimensions, QUANT_BITS, _FIELD_BITS)
        found = tuple(
            header.get(key)
            for key in ("format", "byteorder", "dimensions", "quant_bits", "field_bits")
        )
        count, pending, block = header.get("count"), header.get("pending"), header.get("row_block")
        if found != expected or not isinstance(pending, list):
            return None
        if not isinstance(count, int) or not isinstance(block, int) or block < 1:
            return None
        blocks = -(-count // block)
        sections = reader.header.get("sections")
        if not isinstance(sections, int) or sections not in (1 + blocks, 1 + blocks + dimensions):
            return None
        with_columns = sections == 1 + blocks + dimensions and count > 0
        ids = [str(i) for i in json.loads(bytes(reader.read_sections([0])[0]).decode("utf-8"))]
        if len(ids) != count:
            return None
        index = cls(dimensions, backend=backend)
        index.saved_pending = [str(i) for i in pending]
        target = index._backend
        if isinstance(target, _PureBackend) and with_columns:
            lazy = _LazySource(reader, block, 1 + blocks, fallback or _no_fallback)
            target.restore_lazy(ids, lazy)
        elif isinstance(target, _NumpyBackend):
            if not target.restore_blocks(ids, reader, blocks):
                return None
        else:  # a copy without columns
            rows = b"".join(reader.read_sections(list(range(1, 1 + blocks))))
            if len(rows) != 4 * dimensions * count:
                return None
            target.restore(ids, rows, None)
            index.columns_missing_from_copy = isinstance(target, _PureBackend) and count > 0
        return index

    def source_current(self) -> bool:
        """False when the saved copy a lazily loaded index reads from was replaced
        (the engine then loads the newer copy).  One small read; True when none."""
        return self._backend.source_current()

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Searches inside the block count as one search for the lazy reading of a
        saved copy (`LAZY_SEARCHES`): a one-shot process running a few searches
        (a cold ``consolidate``) reads what they need, not the whole copy.
        Results are unchanged.  Nests."""
        self._backend.begin_batch()
        try:
            yield
        finally:
            self._backend.end_batch()

    def search(
        self,
        query: VectorLike,
        k: int,
        *,
        allow: Callable[[str], bool] | None = None,
        min_score: float | None = None,
    ) -> list[tuple[str, float]]:
        """The k stored vectors most similar to ``query``.

        Input: a query vector (normalised and rounded to float32 like stored
        vectors), ``k``, an optional predicate ``allow(node_id)`` that a
        result must satisfy, and an optional floor ``min_score``.
        Output: up to k ``(node_id, score)`` pairs, score = `exact_score`
        (cosine of the stored forms; zero vectors score 0.0), sorted by score
        descending then node_id ascending.  A zero query scores every vector
        0.0 and so returns the k smallest allowed ids.  With ``min_score``
        the result is exactly the pairs of the search without it whose score
        is >= min_score (every pair of that search ranks above any vector
        it left out), found by rescoring only vectors whose approximate
        score is >= min_score - eps: a high floor (consolidation's 0.75)
        leaves a candidate or two to read and rescore instead of ~k.
        Complexity: pure — O(nnz(q) * N) big-integer word operations plus
        O(N) to read the scores; NumPy — one O(N * d) float32 mat-vec; both
        plus O(C * d) for the C candidates rescored exactly (C ~ k unless many
        scores are within 2*eps of the k-th).  ``allow`` is called at most
        once per id examined.
        """
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ValidationError("k", f"must be a non-negative integer, got {k!r}")
        floor = check_min_score(min_score)
        vector = self._normalized(query)
        backend = self._backend
        live = len(backend)
        if k == 0 or live == 0:
            return []
        verdicts: dict[int, bool] = {}

        def allowed(slot: int) -> bool:
            verdict = verdicts.get(slot)
            if verdict is None:
                node_id = backend.id_at(slot)
                verdict = node_id is not None and (allow is None or allow(node_id))
                verdicts[slot] = verdict
            return verdict

        if not any(vector):
            if floor > 0.0:
                return []
            ids = backend.live_ids() if allow is None else list(filter(allow, backend.live_ids()))
            return [(node_id, 0.0) for node_id in heapq.nsmallest(k, ids)]
        approx = backend.approximate(vector)
        # A vector scoring >= floor exactly has approximate score >= floor - eps.
        lowest = floor - approx.eps if floor > -math.inf else -math.inf
        if allow is None:  # every live vector is allowed: no search for k allowed ones
            cut = approx.kth_largest(k) - 2.0 * approx.eps if k < live else -math.inf
        else:
            cut = _candidate_cut(approx, k, live, allowed, lowest)
        candidates = [slot for slot in approx.at_least(max(cut, lowest)) if allowed(slot)]
        backend.prefetch(candidates)
        score = self._scorer(vector)
        scored = sorted(
            (-score(backend.row_values(slot)), _id_of(backend, slot)) for slot in candidates
        )
        return [(node_id, -negated + 0.0) for negated, node_id in scored[:k] if -negated >= floor]


def _dump_header(dimensions: int, count: int, pending: Sequence[str]) -> dict[str, Any]:
    """The header of a dump of `count` rows (`VectorIndex.dump_sections`, `RowSpool`)."""
    return {
        "format": _DUMP_FORMAT,
        "byteorder": sys.byteorder,
        "dimensions": dimensions,
        "quant_bits": QUANT_BITS,
        "field_bits": _FIELD_BITS,
        "count": count,
        "row_block": ROW_BLOCK,
        "pending": sorted(pending),
    }


class RowSpool:
    """`VectorIndex.dump_sections` without the index in memory: rows are spooled.

    Rows go in as they are read (`add_many`, in the order a `bulk_load` would
    take them); each is normalised and rounded to float32 and written to an
    anonymous temporary file, its fixed-point fields (row-major) to a second
    one.  `sections` then yields the dump's sections one at a time: the ids,
    the row blocks read back from the first file, and the columns built
    `_COLUMN_GROUP_BYTES` of fields per pass over the second.  The bytes equal
    those of `dump_sections` of an index `bulk_load`-ed with the same rows
    (either backend).  Memory: the ids plus one pass's fields, not O(N * d);
    disk: 7 bytes per component, freed on `close`.
    """

    def __init__(self, dimensions: int) -> None:
        import tempfile  # here, not at import: only a streamed save spools

        self.dimensions = _check_dimensions(dimensions)
        self.ids: list[str] = []
        self._rows = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close / __exit__)
        self._fields = tempfile.TemporaryFile()  # noqa: SIM115

    def __enter__(self) -> RowSpool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._rows.close()
        self._fields.close()

    def add_many(self, items: Iterable[tuple[str, VectorLike]]) -> None:
        """Append rows (``(node_id, vector or pack_f32 bytes)``; ids unique, in order)."""
        scale, magic = float(_SCALE), _MAGIC
        block = array("f")
        for node_id, vector in items:
            _check_id(node_id)
            self.ids.append(node_id)
            block.extend(normalized_f32(vector, self.dimensions))
        # Exactly `_build_columns`'s doubles, whose low 24 bits are the biased fields.
        raw = array("d", [x * scale + magic for x in block]).tobytes()
        fields = bytearray(_FIELD_BYTES * len(block))
        for position, at in enumerate(_LOW_BYTES):
            fields[position::_FIELD_BYTES] = raw[at::8]
        self._rows.write(block.tobytes())
        self._fields.write(fields)

    def sections(self, pending: Sequence[str] = ()) -> tuple[dict[str, Any], int, Iterator[bytes]]:
        """(header, number of sections, the sections): `dump_sections`'s, streamed."""
        count, dims = len(self.ids), self.dimensions
        blocks = -(-count // ROW_BLOCK)
        total = 1 + blocks + (dims if count else 0)
        return _dump_header(dims, count, pending), total, self._stream(blocks)

    def _stream(self, blocks: int) -> Iterator[bytes]:
        yield json.dumps(self.ids).encode("utf-8")
        self._rows.flush()
        self._rows.seek(0)
        width = 4 * self.dimensions * ROW_BLOCK
        for _ in range(blocks):
            yield self._rows.read(width)
        if self.ids:
            yield from self._columns()

    def _columns(self) -> Iterator[bytes]:
        """Each dimension's column bytes, `_build_columns` then `dump_sections` exactly."""
        count, dims = len(self.ids), self.dimensions
        field, row_bytes = _FIELD_BYTES * count, _FIELD_BYTES * dims
        bias_ones = _FIELD_BIAS * _ones(count)
        group = max(1, _COLUMN_GROUP_BYTES // field)
        self._fields.flush()
        for first_dim in range(0, dims, group):
            dims_here = range(first_dim, min(dims, first_dim + group))
            columns = [bytearray(field) for _ in dims_here]
            self._fields.seek(0)
            for start in range(0, count, _BUILD_BLOCK):
                end = min(count, start + _BUILD_BLOCK)
                chunk = self._fields.read(row_bytes * (end - start))
                first, last = _FIELD_BYTES * start, _FIELD_BYTES * end
                for target, d in zip(columns, dims_here, strict=True):
                    for position in range(_FIELD_BYTES):
                        target[first + position : last : _FIELD_BYTES] = chunk[
                            _FIELD_BYTES * d + position :: row_bytes
                        ]
            for at, fields in enumerate(columns):
                column = int.from_bytes(fields, _ORDER) - bias_ones
                columns[at] = bytearray()  # freed as we go
                yield column.to_bytes(field, _ORDER, signed=True)


def _candidate_cut(
    approx: _Scores,
    k: int,
    live: int,
    allowed: Callable[[int], bool],
    lowest: float = -math.inf,
) -> float:
    """Lowest approximate score a true top-k vector can have.

    Look at the m best approximate scores (m = 2k, growing 4x) until k of
    them are allowed; with T the k-th best allowed approximate score, k
    vectors score exactly >= T - eps, so any vector of the exact top k has
    approximate score >= T - 2*eps.  -inf when fewer than k are allowed.
    The caller discards approximate scores below `lowest` anyway, so once
    the m-th best is below it the search stops (returning `lowest`).
    """
    m = min(live, max(2 * k, 32))
    while True:
        floor = approx.kth_largest(m)
        best = [approx.value(slot) for slot in approx.at_least(floor) if allowed(slot)]
        if len(best) >= k:
            return heapq.nlargest(k, best)[-1] - 2.0 * approx.eps
        if m >= live:
            return -math.inf
        if floor < lowest:
            return lowest
        m = min(live, 4 * m)


def check_min_score(min_score: object) -> float:
    """`search`'s floor as a float (-inf when None); a finite real number or ValidationError."""
    if min_score is None:
        return -math.inf
    if (
        isinstance(min_score, bool)
        or not isinstance(min_score, (int, float))
        or not math.isfinite(min_score)
    ):
        raise ValidationError("min_score", f"must be a finite number, got {min_score!r}")
    return float(min_score)


def _as_f32(block: npt.NDArray[np.float64]) -> npt.NDArray[np.float32]:
    import numpy as np

    converted: npt.NDArray[np.float32] = block.astype(np.float32)
    return converted


def _id_of(backend: _PureBackend | _NumpyBackend, slot: int) -> str:
    node_id = backend.id_at(slot)
    assert node_id is not None
    return node_id


def _check_id(node_id: object) -> None:
    if not isinstance(node_id, str):
        raise ValidationError("node_id", f"must be a string, got {type(node_id).__name__}")
