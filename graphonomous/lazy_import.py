"""Modules loaded at their first use: `lazy_module`, and packages' lazy exports: `export_from`.

Rules: standard library only, no graphonomous import (any layer may use it).
A facade that delegates to many modules binds each name to a stand-in that
imports the real module when an attribute is first read, so a process pays
only for the modules its command touches: a cold ``consolidate`` does not
load the attention cycle, coverage or deliberation, and their imports
(retriever, topology) stay unloaded.  Type checkers see the ordinary imports
(``if TYPE_CHECKING``) next to each use.

Thread-safe: the stand-in goes through `importlib.import_module` (the import
system's per-module locks) on every read and keeps no copy, so concurrent first
uses (the HTTP server's threads, the consolidation timer) and monkeypatching the
real module both behave as with a plain import.  (`importlib.util.LazyLoader`
is not thread-safe before Python 3.12.)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from types import ModuleType
from typing import Any


class _LazyModule(ModuleType):
    """Stands in for the module of its name; every attribute is read from the real one."""

    def __getattr__(self, name: str) -> Any:
        # Only reached for names the stand-in lacks: everything but ModuleType's own.
        return getattr(importlib.import_module(self.__name__), name)

    def __dir__(self) -> list[str]:
        return dir(importlib.import_module(self.__name__))


def lazy_module(name: str) -> ModuleType:
    """A stand-in for module `name` (absolute) that imports it at the first attribute read.

    Already imported: the module itself.  Nothing is imported now, so a wrong
    name fails at first use (with the usual `ModuleNotFoundError`).
    """
    loaded = sys.modules.get(name)
    return loaded if loaded is not None else _LazyModule(name)


def export_from(
    package: str, table: Mapping[str, str], namespace: dict[str, Any], name: str
) -> Any:
    """A package's PEP 562 ``__getattr__``: the export `name`, imported from the module
    `table` names for it (relative to `package`), and kept in the package's `namespace`
    so later reads skip the hook.  Unknown names raise `AttributeError` as Python would.

    >>> table = {"sqrt": "math"}
    >>> namespace: dict[str, Any] = {}
    >>> export_from("pkg", table, namespace, "sqrt")(9.0), "sqrt" in namespace
    (3.0, True)
    """
    module = table.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, package), name)
    namespace[name] = value
    return value
