"""The engine layer: one owner of a graph's state (store, lock, embedder, indexes,
snapshot, hooks, activity clock), fresh across processes.

Layer: below retrieval, learning and the facade; above model, store, embed and
index.  See ARCHITECTURE.md.
"""

from __future__ import annotations

from .core import Engine

__all__ = ["Engine"]
