"""The storage-level and facade-level suites, run again on PostgreSQL.

Every test of the listed modules that needs only a graph (`graph`) or a store (`store`)
plus generic pytest fixtures is collected here a second time with those fixtures bound
to a fresh PostgreSQL database (tests/pg_support.py); the original modules run them on
SQLite.  So both backends pass the same assertions, with no copy of a test to drift.
Tests that inspect the SQLite file itself (PRAGMAs, file bytes, WAL) are listed in
SQLITE_ONLY with the reason.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import pg_support
import pytest

from graphonomous import Graphonomous
from graphonomous.store import Store, open_store

# The session cluster and per-test database fixtures of tests/pg_support.py.
globals().update(pg_cluster=pg_support.pg_cluster, pg_url=pg_support.pg_url)

FACADE_MODULES = (
    "test_api",
    "test_learning_forgetting",
    "test_learning_consolidator",
    "test_learning_goals",
    "test_learning_beliefs",
    "test_learning_conflicts",
    "test_retrieval",
    "test_memory_compat",
    "test_memory_view_store",
    "test_learning_attention",
    "test_learning_abstraction",
    "test_learning_uncertainty",
    "test_learning_coverage",
    "test_retrieval_tools",
    "test_mcp_tools",
)
STORE_MODULES = ("test_store",)
GENERIC_FIXTURES = frozenset({"tmp_path", "monkeypatch", "capsys"})
# module.test → why it is about SQLite itself, not about the graph.
SQLITE_ONLY: dict[str, str] = {
    "test_store.test_fresh_file_is_migrated_to_latest": "reads SQLite PRAGMAs (journal_mode)",
}


def _copies(modules: tuple[str, ...], fixture: str) -> dict[str, Callable[..., Any]]:
    found: dict[str, Callable[..., Any]] = {}
    for name in modules:
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if not attr.startswith("test_") or not inspect.isfunction(value):
                continue
            params = set(inspect.signature(value).parameters)
            if fixture not in params or not params <= GENERIC_FIXTURES | {fixture}:
                continue
            if f"{name}.{attr}" in SQLITE_ONLY:
                continue
            found[f"test_pg__{name.removeprefix('test_')}__{attr.removeprefix('test_')}"] = value
    return found


globals().update(_copies(FACADE_MODULES, "graph"))
globals().update(_copies(STORE_MODULES, "store"))


@pytest.fixture
def graph(pg_url: str) -> Iterator[Graphonomous]:
    with Graphonomous(pg_url, embedder="hashing") as opened:
        yield opened


@pytest.fixture
def store(pg_url: str) -> Iterator[Store]:
    with open_store(pg_url) as opened:
        yield opened
