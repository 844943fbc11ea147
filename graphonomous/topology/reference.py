"""Reference mode: κ by the seed's exhaustive bipartition enumeration.

This reproduces the behaviour of seed 000's ``kappa_reference.py`` bit for bit
(design/kappa.md): members in the given order, bit i of a mask ↔ i-th member,
A = set bits, masks 1 … 2ⁿ−2, cut = min(e(A→B), e(B→A)), the first mask with
a strictly smaller cut wins; more than 20 members ⇒ κ := size, approximate.

"The first mask with a strictly smaller cut" is the smallest mask attaining
the global minimum, so the masks may be evaluated in any order; we evaluate
them block-wise, which turns the 2ⁿ·n² loop into list operations.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from .types import FaultLine, KappaResult

ENUMERATION_LIMIT: Final = 20
"""Seed 000: SCCs with more members are not enumerated (κ := size, approximate)."""


def _masks(
    adjacency: Mapping[str, Iterable[str]], members: Sequence[str]
) -> tuple[list[int], list[int]]:
    """Out- and in-neighbour bitmasks over member positions (self-loops dropped)."""
    position = {node: i for i, node in enumerate(members)}
    out = [0] * len(members)
    into = [0] * len(members)
    for i, node in enumerate(members):
        for target in adjacency.get(node, ()):
            j = position.get(target)
            if j is not None and j != i:
                out[i] |= 1 << j
                into[j] |= 1 << i
    return out, into


def _subset_tables(out: list[int], into: list[int], count: int) -> tuple[list[int], list[int]]:
    """For every subset A of members 0 … count−1: e(A→rest) and e(rest→A) in the whole SCC.

    Built from the subset without its lowest member, in O(2^count).
    """
    size = 1 << count
    ab = [0] * size
    ba = [0] * size
    for subset in range(1, size):
        i = (subset & -subset).bit_length() - 1
        rest = subset & (subset - 1)
        inner = (out[i] & rest).bit_count() + (into[i] & rest).bit_count()
        ab[subset] = ab[rest] + out[i].bit_count() - inner
        ba[subset] = ba[rest] + into[i].bit_count() - inner
    return ab, ba


def smallest_cut_mask(out: list[int], into: list[int]) -> tuple[int, int]:
    """(min over masks 1 … 2ⁿ−2 of min(e(A→B), e(B→A)), smallest mask attaining it).

    Masks are split into a low half (a list index) and a high half (walked
    depth-first); adding high member j to A changes e(A→B) by
    outdeg(j) − (arcs between j and A), and e(B→A) by indeg(j) − the same.
    O(2ⁿ) list operations and O(2^(n/2)·n) Python steps; n ≥ 2.
    """
    n = len(out)
    shift = n // 2
    high_bits = range(shift, n)
    ab0, ba0 = _subset_tables(out, into, shift)
    low_size = len(ab0)
    # touch[j][lo] = arcs (either direction) between high member j and low subset lo.
    touch = {
        j: [(out[j] & lo).bit_count() + (into[j] & lo).bit_count() for lo in range(low_size)]
        for j in high_bits
    }
    full_high = (1 << len(high_bits)) - 1
    best_value, best_mask = n * n, 0
    # Depth-first over high subsets; each frame: (high local mask, next j, AB row, BA row).
    frames: list[tuple[int, int, list[int], list[int]]] = [(0, high_bits.start, ab0, ba0)]
    while frames:
        high, first_j, ab, ba = frames.pop()
        cut = list(map(min, ab, ba))
        if high == 0:
            cut[0] = n * n  # mask 0: A empty
        if high == full_high:
            cut[-1] = n * n  # all bits: B empty
        value = min(cut)
        mask = (high << shift) | cut.index(value)
        if value < best_value or (value == best_value and mask < best_mask):
            best_value, best_mask = value, mask
        high_global = high << shift
        for j in range(first_j, n):
            fixed = (out[j] & high_global).bit_count() + (into[j] & high_global).bit_count()
            gain_out = out[j].bit_count() - fixed
            gain_in = into[j].bit_count() - fixed
            row = touch[j]
            frames.append(
                (
                    high | (1 << (j - shift)),
                    j + 1,
                    [a + gain_out - c for a, c in zip(ab, row, strict=True)],
                    [b + gain_in - c for b, c in zip(ba, row, strict=True)],
                )
            )
    return best_value, best_mask


def reference_kappa(adjacency: Mapping[str, Iterable[str]], members: Sequence[str]) -> KappaResult:
    """κ of one SCC exactly as the seed's reference computes it.

    Input: the digraph and the SCC's members *in the order given* (analyze
    passes Tarjan's stack-pop order).  Output: KappaResult.  One member or
    none: κ 0.  More than 20: κ = size, approximate, no fault lines.
    Otherwise κ = smallest cut over masks 1 … 2ⁿ−2; the fault lines are the
    crossing arcs of the first best mask, A→B if e(A→B) ≤ e(B→A) else B→A,
    listed source-member-major then target, both in member order;
    `min_cut_partition` is ``[sorted source side, sorted target side]``.
    Complexity: O(2ⁿ) (n ≤ 20).  Reference: seed 000 ``compute_kappa``
    pseudocode and design/kappa.md.
    """
    n = len(members)
    if n <= 1:
        return {"kappa": 0, "approximate": False, "fault_line_edges": [], "min_cut_partition": None}
    if n > ENUMERATION_LIMIT:
        return {"kappa": n, "approximate": True, "fault_line_edges": [], "min_cut_partition": None}
    out, into = _masks(adjacency, members)
    kappa, mask = smallest_cut_mask(out, into)
    side_a = [i for i in range(n) if mask >> i & 1]
    side_b = [i for i in range(n) if not mask >> i & 1]
    ab = sum((out[i] & ~mask).bit_count() for i in side_a)
    ba = sum((out[i] & mask).bit_count() for i in side_b)
    sources, targets = (side_a, side_b) if ab <= ba else (side_b, side_a)
    faults: list[FaultLine] = [
        {"source": members[i], "target": members[j]}
        for i in sources
        for j in targets
        if out[i] >> j & 1
    ]
    return {
        "kappa": kappa,
        "approximate": False,
        "fault_line_edges": faults,
        "min_cut_partition": [
            sorted(members[i] for i in sources),
            sorted(members[j] for j in targets),
        ],
    }
