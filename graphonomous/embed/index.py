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
  dimension.  Each dimension's column of 14-bit fixed-point values is kept
  as one Python int holding a 32-bit field per stored vector, so
  ``sum(q_d * column_d)`` computes all N fixed-point dot products in C-speed
  bignum arithmetic.  This skips the query's zero dimensions (hashing
  queries are ~25-50 % non-zero) and costs O(nnz(q) * N) machine-word
  operations instead of O(d * N) interpreted multiplications (SPEC
  "Embeddings" has the measurements).  The fields are never turned into N
  Python floats: the cut is found by counting fields per top byte
  (``bytes.count``) and the candidates at or above it by adding one constant
  to every field and masking a flag bit (`_flags_at_least`), all C-speed
  bytes and big-int operations.  Exact rescoring multiplies only the query's non-zero
  components (`sparse_scorer`; the other products are exact zeros).
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

# Fixed-point scale of the pure backend: values are rounded to multiples of 2**-14.
# 14 bits keep every field sum inside 32 bits (below), which halves the
# columns' memory (4 bytes per vector and dimension: 77 MB at 50K x 384) and
# their big-integer work against 24-bit values in 64-bit fields; the price
# is a wider error bound (eps ~ 1e-3 instead of ~ 6e-8), i.e. a few more
# candidates rescored exactly -- results are exact either way.
QUANT_BITS = 14
_SCALE = 1 << QUANT_BITS
_INV_SCALE_SQ = 2.0 ** (-2 * QUANT_BITS)
# One 32-bit field per stored vector: sum |q_d r_d| <= |q| |r| <= 1, so a field
# sum stays below 2**28 * (1 + 2**-10) (rounding terms included), far from 2**31.
_FIELD_BITS = 32
_FIELD_BYTES = _FIELD_BITS // 8
_FIELD_BIAS = 1 << (_FIELD_BITS - 1)
_FIELD_TYPE: Final = "I"  # an unsigned 32-bit field (4 bytes on every supported platform)
# x*2**14 + 2**31 + 1.5*2**52 is a double whose low 32 IEEE bits are
# 2**31 + round(x*2**14) (ties to even) whenever |x*2**14| < 2**31: float ->
# biased fixed point without a Python-level round() per component.
_MAGIC = 1.5 * 2.0**52 + _FIELD_BIAS
_LOW_HALF = 0 if sys.byteorder == "little" else 1  # which 32-bit half of a double
_TOP_BYTE: Final = _FIELD_BYTES - 1 if sys.byteorder == "little" else 0  # of a field
# Fields lie within _FIELD_BIAS +- 2**29 (below): their top byte is at most 0xA0.
_MAX_TOP: Final = (_FIELD_BIAS + (1 << 29)) >> 24
# _AT_LEAST_TOP[v] maps a top byte >= v to 0x40 and any other to 0 (bytes.translate).
_AT_LEAST_TOP: Final = [bytes(0x40 if top >= v else 0 for top in range(256)) for v in range(257)]
# Columns are rebuilt at search time when more than max(256, main/16) vectors
# were added since the last build, or more than max(256, main/4) were removed.
DELTA_MIN = 256
DELTA_FRACTION = 16
DEAD_FRACTION = 4
# /2: ids and blocks of rows in sections of their own, the pending ids in the header.
_DUMP_FORMAT = "graphonomous-vectors/2"
# Rows per section of a dump: a candidate rescored in a fresh process reads its
# block (48 KB at d = 384), not all rows.
ROW_BLOCK: Final = 32
# Searches answered from a lazily read dump before the rest of it is read at once:
# a one-query process (a CLI `recall`) reads only what its query needs, a server
# stops paying a read per new column or row block from its third search on.
LAZY_SEARCHES: Final = 2
# Sections read at a time when the rest of a lazily read dump is read at once
# (rows: 48 KB each at d = 384; columns: 4 bytes per vector each).
_MATERIALIZE_SECTIONS: Final = 64
# Rows converted at a time by a column build (bounds its temporary memory).
_BUILD_BLOCK: Final = 2_048
# Float slack on top of the proven error bounds (double rounding of the cut itself).
_SLACK = 1e-12


def _check_dimensions(dimensions: int) -> int:
    if isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 1:
        raise ValidationError("dimensions", f"must be a positive integer, got {dimensions!r}")
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
    """Approximate scores of the pure backend, left as biased 32-bit fields of one big int.

    The built slots' scores are ``(field - _FIELD_BIAS) * 2**-28``: exact doubles,
    so comparing fields is comparing scores.  Nothing is converted to a Python
    float per slot: `at_least` finds the slots at or above a cut with four
    big-integer operations (see `_flags_at_least`), `value` reads one field,
    `kth_largest` selects among integers.  Slots after the built ones (the
    delta) carry exact float scores in `extra`; removed built slots score -inf.
    """

    def __init__(
        self,
        total: int,
        built: int,
        ones: int,
        removed: tuple[int, frozenset[int]] | None,
        extra: list[float],
        eps: float,
    ) -> None:
        self.eps = eps
        self._total = total  # one field per slot: _FIELD_BIAS + fixed-point score
        self._built = built
        self._ones = ones  # 1 in every field
        # (bit 30 set in the fields of live slots, the removed slots); None: all live
        self._removed = removed
        self._raw = total.to_bytes(_FIELD_BYTES * built, sys.byteorder)
        self._fields = array(_FIELD_TYPE)
        self._fields.frombytes(self._raw)
        self._extra = extra

    def value(self, slot: int) -> float:
        if slot >= self._built:
            return self._extra[slot - self._built]
        if self._removed is not None and slot in self._removed[1]:
            return -math.inf
        return (self._fields[slot] - _FIELD_BIAS) * _INV_SCALE_SQ

    def kth_largest(self, m: int) -> float:
        # Count fields by their top byte (C-speed `bytes.count`), best byte first,
        # until m are reached; only the fields of those bytes are compared.
        built, fields = self._built, self._fields
        best: list[float] = []
        if built:
            raw = self._raw
            if self._removed is not None:  # zero the removed slots' fields
                live = self._total & (self._removed[0] >> 30) * 0xFFFFFFFF
                raw = live.to_bytes(_FIELD_BYTES * built, sys.byteorder)
            tops = raw[_TOP_BYTE::_FIELD_BYTES]
            seen, top = 0, _MAX_TOP
            while seen < m and top > 0:  # removed slots' fields are zeroed: top byte 0
                seen += tops.count(top)
                top -= 1
            above = tops.translate(_AT_LEAST_TOP[top + 1])
            chosen = [fields[slot] for slot in _positions(above)]
            best = [(f - _FIELD_BIAS) * _INV_SCALE_SQ for f in heapq.nlargest(m, chosen)]
        pool = best + self._extra
        if len(pool) < m:  # the rest are removed slots
            pool += [-math.inf] * (m - len(pool))
        return heapq.nlargest(m, pool)[-1]

    def at_least(self, cut: float) -> list[int]:
        built = self._built
        if cut == -math.inf:
            slots = list(range(built))  # removed slots too, as -inf >= -inf
        elif built == 0 or cut == math.inf:
            slots = []
        else:
            flags = _flags_at_least(self._total, self._ones, cut)
            if self._removed is not None:
                flags &= self._removed[0]
            slots = _flagged(flags, built)
        slots += [built + at for at, value in enumerate(self._extra) if cut <= value]
        return slots


def _flags_at_least(total: int, ones: int, cut: float) -> int:
    """Bit 30 of field i set exactly when field i's score is >= cut (all others clear).

    A field f passes when f >= t = _FIELD_BIAS + ceil(cut * 2**28) (the score is
    exactly (f - bias) * 2**-28).  Fields lie within _FIELD_BIAS +- 2**29, so with
    t clamped to that range u = f - t + 2**30 lies in [0, 2**31): adding the
    constant 2**30 - t to every field never carries into a neighbour, and bit 30
    of u is set exactly when u >= 2**30, i.e. f >= t.  O(N) word operations.
    """
    limit = 1 << 29
    step = math.ceil(cut * _SCALE * _SCALE)
    threshold = _FIELD_BIAS + max(-limit, min(limit, step))
    return (total + ones * ((1 << 30) - threshold)) & (ones << 30)


def _flagged(flags: int, count: int) -> list[int]:
    """Fields (of `count`) whose bit 30 is set in `flags`, ascending.

    Fields are laid out in native byte order (as the columns are built), so
    bit 30 is in the field's top byte: its last byte on little-endian machines.
    """
    return _positions(flags.to_bytes(_FIELD_BYTES * count, sys.byteorder)[_TOP_BYTE::_FIELD_BYTES])


def _positions(marks: bytes) -> list[int]:
    """Positions of the non-zero bytes of `marks` (each 0 or 0x40), ascending."""
    found, at = [], marks.find(0x40)
    while at >= 0:
        found.append(at)
        at = marks.find(0x40, at + 1)
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
                        column = int.from_bytes(blob, sys.byteorder, signed=True)
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
            self._columns[dim] = int.from_bytes(blob, sys.byteorder, signed=True)
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
        """Take a dump's ids, rows and (signed, native-endian) column bytes."""
        self._ids = list(ids)
        self._flat = array("f")
        self._flat.frombytes(rows)
        self._slots = {node_id: slot for slot, node_id in enumerate(ids)}
        self._source, self._lazy, self._lazy_columns, self._row_cache = None, 0, bytearray(), {}
        self._alive_cache = None
        if columns is not None and len(columns) == self.dimensions and ids:
            ones = ((1 << (_FIELD_BITS * len(ids))) - 1) // ((1 << _FIELD_BITS) - 1)
            self._columns = [int.from_bytes(c, sys.byteorder, signed=True) for c in columns]
            self._bias_ones = _FIELD_BIAS * ones
            self._built, self._dead_built = len(ids), 0
        else:
            self._columns, self._bias_ones, self._built, self._dead_built = [], 0, 0, 0

    def restore_lazy(self, ids: list[str], source: _LazySource) -> None:
        """Take a dump's ids; rows and columns stay in the dump until read."""
        count = len(ids)
        self._ids = list(ids)
        self._flat = array("f")
        self._slots = {node_id: slot for slot, node_id in enumerate(ids)}
        ones = ((1 << (_FIELD_BITS * count)) - 1) // ((1 << _FIELD_BITS) - 1)
        self._columns, self._bias_ones = [0] * self.dimensions, _FIELD_BIAS * ones
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
        order, step = sys.byteorder, 2 * dims
        # Each dimension's fields, gathered block by block of rows: the doubles of
        # one block at a time (not one Python float per component of the whole
        # index: ~600 MB at 50K x 384) plus the fields themselves (4 bytes each).
        fields = [bytearray() for _ in range(dims)]
        for start in range(0, count, _BUILD_BLOCK):
            end = min(count, start + _BUILD_BLOCK)
            block = self._flat[start * dims : end * dims]
            # Row-major doubles whose low halves are _FIELD_BIAS + fixed-point value.
            doubles = array("d", [x * scale + magic for x in block])
            halves = memoryview(doubles).cast("B").cast("I")
            for d in range(dims):
                fields[d] += halves[2 * d + _LOW_HALF :: step].tobytes()
        ones = ((1 << (_FIELD_BITS * count)) - 1) // ((1 << _FIELD_BITS) - 1)
        bias_ones = _FIELD_BIAS * ones
        columns: list[int] = []
        for d in range(dims):
            columns.append(int.from_bytes(fields[d], order) - bias_ones)
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
        """Approximate score per slot (-inf for removed slots) and its error bound."""
        if self._batch_depth == 0:
            self._count_search()
        if self._needs_build():
            self.build()
        total = self._column_total(query) if self._built else 0
        extra: list[float] = []
        if len(self._ids) > self._built:
            score = sparse_scorer(query)
            for slot in range(self._built, len(self._ids)):
                alive = self._ids[slot] is not None
                extra.append(score(self._row(slot)) if alive else -math.inf)
        # |q.r - qq.rq / S^2| <= (|q|_1 + |r|_1) / 2S + d / 4S^2, with |r|_1 <= sqrt(d) |r|_2.
        dims = self.dimensions
        l1 = math.fsum(map(abs, query))
        eps = (l1 + math.sqrt(dims) * (1 + 1e-6)) / (2 * _SCALE) + dims / (4 * _SCALE * _SCALE)
        ones = self._bias_ones >> (_FIELD_BITS - 1)
        return _FieldScores(total, self._built, ones, self._removed(), extra, eps + _SLACK)

    def _removed(self) -> tuple[int, frozenset[int]] | None:
        """(bit 30 set in the field of every live built slot, the removed built slots),
        None when none was removed; cached until a slot is removed or columns change."""
        if not self._dead_built:
            return None
        if self._alive_cache is None:
            dead = frozenset(slot for slot in range(self._built) if self._ids[slot] is None)
            field = bytearray(_FIELD_BYTES)
            field[_TOP_BYTE] = 0x40
            flags = bytearray(bytes(field) * self._built)
            for slot in dead:
                flags[_FIELD_BYTES * slot + _TOP_BYTE] = 0
            self._alive_cache = (int.from_bytes(flags, sys.byteorder), dead)
        return self._alive_cache

    def _column_total(self, query: list[float]) -> int:
        """One big int whose 32-bit field i is _FIELD_BIAS + the fixed-point score of slot i."""
        # Sum columns that share a fixed-point weight magnitude first: hashing
        # queries have ~9 distinct magnitudes among ~116 non-zeros, so most
        # big-int multiplications become additions.
        if self._lazy_columns:
            self._load_columns([dim for dim, weight in enumerate(query) if weight])
        groups: dict[int, int] = {}
        for weight, column in zip(query, self._columns, strict=True):
            if weight:
                step = round(weight * _SCALE)
                if step > 0:
                    groups[step] = groups.get(step, 0) + column
                else:
                    groups[-step] = groups.get(-step, 0) - column
        total = self._bias_ones
        for step, column_sum in groups.items():
            total += step * column_sum
        return total

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
        count = len(self._ids)
        return list(self._ids), self._matrix[:count].astype("=f4").tobytes(), None

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
        # The last query's bytes and its `normalized_f32` form: one retrieval searches,
        # then scores the BM25 hits, with the same query (normalised once, O(d) to check).
        self._last_query: tuple[bytes, list[float]] | None = None

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
        score = sparse_scorer(self._normalized(query))
        backend.prefetch(found.values())
        return {node_id: score(backend.row_values(slot)) for node_id, slot in found.items()}

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
        backend builds its columns lazily at the first search.
        """
        ids: list[str] = []
        vectors: list[VectorLike] = []
        for node_id, vector in items:
            _check_id(node_id)
            ids.append(node_id)
            vectors.append(vector)
        backend = self._backend
        # Two identical-looking calls: each backend's rows have their own type.
        if isinstance(backend, _NumpyBackend):
            backend.put_many(ids, backend.normalize_many(vectors))
        else:
            backend.put_many(ids, backend.normalize_many(vectors))

    def remove(self, node_id: str) -> bool:
        """Forget a node's vector.  Output: whether it was present.  O(1) (+ O(d) NumPy)."""
        return self._backend.remove(node_id)

    def memory_bytes(self) -> dict[str, int]:
        """Bytes held per structure: packed rows, pure columns, id maps."""
        return self._backend.memory_bytes()

    def dump_sections(self, *, pending: Sequence[str] = ()) -> tuple[dict[str, Any], list[bytes]]:
        """The index as a header and sections (`load` restores it; either backend reads it).

        Sections: the ids (JSON), the stored rows (native float32) in blocks of
        `ROW_BLOCK` rows and, from the pure backend, its fixed-point columns, so
        a fresh process needs neither normalisation nor a column build and can
        read a few rows or columns without the rest.  `pending` (ids known to
        lack a vector, for the engine) goes into the header.  O(N * d).
        """
        ids, rows, columns = self._backend.state()
        count = len(ids)
        width = 4 * self.dimensions * ROW_BLOCK
        sections = [json.dumps(ids).encode("utf-8")]
        sections += [rows[start : start + width] for start in range(0, len(rows), width)]
        if columns is not None and count:
            field = _FIELD_BYTES * count
            sections += [column.to_bytes(field, sys.byteorder, signed=True) for column in columns]
        header = {
            "format": _DUMP_FORMAT,
            "byteorder": sys.byteorder,
            "dimensions": self.dimensions,
            "quant_bits": QUANT_BITS,
            "field_bits": _FIELD_BITS,
            "count": count,
            "row_block": ROW_BLOCK,
            "pending": sorted(pending),
        }
        return header, sections

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
    ) -> list[tuple[str, float]]:
        """The k stored vectors most similar to ``query``.

        Input: a query vector (normalised and rounded to float32 like stored
        vectors), ``k``, and an optional predicate ``allow(node_id)`` that a
        result must satisfy.
        Output: up to k ``(node_id, score)`` pairs, score = `exact_score`
        (cosine of the stored forms; zero vectors score 0.0), sorted by score
        descending then node_id ascending.  A zero query scores every vector
        0.0 and so returns the k smallest allowed ids.
        Complexity: pure — O(nnz(q) * N) big-integer word operations plus
        O(N) to read the scores; NumPy — one O(N * d) float32 mat-vec; both
        plus O(C * d) for the C candidates rescored exactly (C ~ k unless many
        scores are within 2*eps of the k-th).  ``allow`` is called at most
        once per id examined.
        """
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ValidationError("k", f"must be a non-negative integer, got {k!r}")
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
            ids = backend.live_ids() if allow is None else list(filter(allow, backend.live_ids()))
            return [(node_id, 0.0) for node_id in heapq.nsmallest(k, ids)]
        approx = backend.approximate(vector)
        if allow is None:  # every live vector is allowed: no search for k allowed ones
            cut = approx.kth_largest(k) - 2.0 * approx.eps if k < live else -math.inf
        else:
            cut = _candidate_cut(approx, k, live, allowed)
        candidates = [slot for slot in approx.at_least(cut) if allowed(slot)]
        backend.prefetch(candidates)
        score = sparse_scorer(vector)
        scored = sorted(
            (-score(backend.row_values(slot)), _id_of(backend, slot)) for slot in candidates
        )
        return [(node_id, -negated + 0.0) for negated, node_id in scored[:k]]


def _candidate_cut(approx: _Scores, k: int, live: int, allowed: Callable[[int], bool]) -> float:
    """Lowest approximate score a true top-k vector can have.

    Look at the m best approximate scores (m = 2k, growing 4x) until k of
    them are allowed; with T the k-th best allowed approximate score, k
    vectors score exactly >= T - eps, so any vector of the exact top k has
    approximate score >= T - 2*eps.  -inf when fewer than k are allowed.
    """
    m = min(live, max(2 * k, 32))
    while True:
        floor = approx.kth_largest(m)
        best = [approx.value(slot) for slot in approx.at_least(floor) if allowed(slot)]
        if len(best) >= k:
            return heapq.nlargest(k, best)[-1] - 2.0 * approx.eps
        if m >= live:
            return -math.inf
        m = min(live, 4 * m)


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
