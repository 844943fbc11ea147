"""The data model of ``@modelcontextprotocol/server-memory`` over our graph.

* :mod:`.view` — :class:`MemoryView`: entities and relations as server-memory's
  tools see them, read from and written to our nodes and edges (get one with
  :func:`memory_view`);
* :mod:`.jsonl` — server-memory's JSONL memory file, for ``import-memory``.

The MCP tools with server-memory's names and texts are in
:mod:`graphonomous.mcp.memory_compat`; they only adapt this package.
"""

from __future__ import annotations

from .jsonl import MemoryFile, MemoryFileError, parse_memory_jsonl
from .view import (
    ENTITY_NODE_TYPE,
    MEMORY_AGENT_ID,
    RELATION_TABLE,
    Entity,
    Link,
    MemoryToolError,
    MemoryView,
    entity_content,
    memory_view,
    normalize_relation_type,
    relationship_for,
)

__all__ = [
    "ENTITY_NODE_TYPE",
    "MEMORY_AGENT_ID",
    "RELATION_TABLE",
    "Entity",
    "Link",
    "MemoryFile",
    "MemoryFileError",
    "MemoryToolError",
    "MemoryView",
    "entity_content",
    "memory_view",
    "normalize_relation_type",
    "parse_memory_jsonl",
    "relationship_for",
]
