"""Graphonomous: a continual-learning knowledge graph for LLM agents, served over MCP.

Pure Python, standard library only.  Start with `Graphonomous` (the facade
whose methods are the MCP tools) or the `graphonomous` command.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .api import Graphonomous
from .model import GraphonomousError, NotFoundError, ValidationError
from .store import StoreError

__all__ = [
    "Graphonomous",
    "GraphonomousError",
    "NotFoundError",
    "StoreError",
    "ValidationError",
    "__version__",
]
