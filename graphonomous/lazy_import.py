"""Modules loaded at their first use: `lazy_module`.

Rules: standard library only, no graphonomous import (any layer may use it).
A facade that delegates to many modules binds each name to a module object
that loads itself when an attribute is first read (`importlib.util.LazyLoader`),
so a process pays only for the modules its command touches: a cold
``consolidate`` does not load the attention cycle, coverage or deliberation,
and their imports (retriever, topology) stay unloaded.  Type checkers see
the ordinary imports (``if TYPE_CHECKING``) next to each use.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    """The module `name` (absolute), executed when one of its attributes is first read.

    Already imported: that module.  Its parent package is imported now (it is
    needed to find the module); the parent's attribute is set, as a normal
    import does.  Raises `ImportError` when no such module exists.
    """
    found = sys.modules.get(name)
    if found is not None:
        return found
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ImportError(f"no module named {name!r}")
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(importlib.import_module(parent), child, module)
    return module
