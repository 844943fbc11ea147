"""Which backend a --db value names: a libpq URL opens PostgreSQL, anything else SQLite.

Rules of this module: the one place that chooses the backend; psycopg is imported only
when a PostgreSQL URL is opened (store/postgres.py imports it lazily too).
"""

from __future__ import annotations

import os

from ..model import DEFAULT_NAMESPACE
from .postgres import STORAGE_ENV_VAR, URL_ENV_VAR, is_postgres_url
from .sqlite import Store, StoreError


def storage_url_from_env() -> str | None:
    """$DATABASE_URL when $GRAPHONOMOUS_STORAGE=postgres (else None); a missing or
    non-PostgreSQL URL is a StoreError naming the variable."""
    backend = os.environ.get(STORAGE_ENV_VAR, "").strip().lower()
    if backend in {"", "sqlite"}:
        return None
    if backend not in {"postgres", "postgresql"}:
        raise StoreError(f"{STORAGE_ENV_VAR} must be 'sqlite' or 'postgres', not {backend!r}")
    url = os.environ.get(URL_ENV_VAR, "").strip()
    if not is_postgres_url(url):
        raise StoreError(
            f"{STORAGE_ENV_VAR}=postgres needs {URL_ENV_VAR}=postgresql://user@host/db "
            f"(got {url!r})"
        )
    return url


def open_store(path: str, namespace: str = DEFAULT_NAMESPACE, *, read_only: bool = False) -> Store:
    """The store of one --db value (a file path, ":memory:" or a PostgreSQL URL), acting
    in `namespace` (SPEC "Namespaces").  `read_only`: a connection that cannot write,
    bookkeeping included (a caller that may only read, SPEC "Access control")."""
    if is_postgres_url(path):
        from .postgres import PostgresStore

        return PostgresStore(path, namespace, read_only=read_only)
    return Store(path, namespace, read_only=read_only)
