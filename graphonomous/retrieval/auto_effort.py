"""The default effort, chosen by evidence (SPEC §10 "Default effort").

Measured (SPEC §10): on conversation memory (LoCoMo) graph support and
expansion (effort 1) beat plain hybrid retrieval (effort 0) — R@5 0.544 vs
0.474 — while on scanned documentation trees effort 0 ranks the right file
first more often — Hit@1 0.84 vs 0.76 (FastAPI docs, 12 languages) and 0.87
vs 0.80 (the PEPs).  So when the caller gives no effort, the corpus the
query lands in decides: if at least DOCUMENT_SHARE of the best `limit`
stage-1 candidates are ingested file chunks or file nodes, the query runs at
effort 0, else at the default effort 1.  An explicit effort (or `deep`)
is always obeyed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final

from ..model import Node
from .provenance import INGESTED_KINDS

# Half or more of the top candidates from files: a documentation question.
DOCUMENT_SHARE: Final = 0.5


def is_document_query(top: Iterable[str], node_of: Callable[[str], Node | None]) -> bool:
    """True when at least DOCUMENT_SHARE of the candidate ids are ingested nodes.  O(len(top))."""
    kinds = []
    for node_id in top:
        node = node_of(node_id)
        if node is not None:
            kinds.append(node.metadata.get("kind") in INGESTED_KINDS)
    return bool(kinds) and sum(kinds) >= DOCUMENT_SHARE * len(kinds)
