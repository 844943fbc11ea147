"""The scenario registry: ``@scenario(category, name)`` and scenario discovery.

The registry is one explicit module-level table (the point of a decorator
registry); :func:`registered_scenarios` returns an ordered copy of it.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from ..api import Graphonomous

# Seed 004 / seed 003 (v0.3) GraphMemBench category numbering.
CATEGORY_NAMES: Final[Mapping[int, str]] = {
    1: "kappa_activation",
    2: "belief_revision",
    3: "conflict_aware_consolidation",
    4: "two_phase_retrieval",
    5: "intentional_forgetting",
    # Phases 2-3 (../shared/design/graphmembench.md); a category without scenarios yet
    # simply does not appear in a report.
    6: "uncertainty_propagation",
    7: "procedural_retrieval",
    8: "multi_agent_prep",
    9: "integration",
    10: "stress",
    11: "causal_metadata",
    12: "end_to_end_workflows",
    13: "regression_guards",
    14: "competitor_adapters",
    15: "reporting",
}
# Modules holding scenarios: cat<category>_<topic>.py in this package.
SCENARIO_MODULE_PATTERN: Final = re.compile(r"^cat(\d+)_\w+$")

ScenarioFunction = Callable[["Graphonomous"], tuple[bool, str]]


class Skip(Exception):
    """Raised by a scenario whose prerequisite is missing; reported as skipped."""


@dataclass(frozen=True)
class ScenarioSpec:
    """One registered scenario: id ``"<category>.<index>"``, its name and function."""

    category: int
    index: int
    name: str
    function: ScenarioFunction

    @property
    def scenario_id(self) -> str:
        return f"{self.category}.{self.index}"


_REGISTRY: dict[tuple[int, int], ScenarioSpec] = {}
_NAMES: set[tuple[int, str]] = set()


def scenario(category: int, name: str) -> Callable[[ScenarioFunction], ScenarioFunction]:
    """Decorator registering ``function(graph) -> (passed, detail)`` in ``category``.

    The scenario's index is its registration order within the category,
    starting at 1.  Registering the same (category, name) twice is an error
    (it would mean a module was imported under two names).  O(1).
    """
    if category not in CATEGORY_NAMES:
        raise ValueError(f"unknown capability category {category!r}")
    if (category, name) in _NAMES:
        raise ValueError(f"scenario {name!r} is already registered in category {category}")

    def register(function: ScenarioFunction) -> ScenarioFunction:
        index = 1 + sum(1 for cat, _ in _REGISTRY if cat == category)
        _REGISTRY[(category, index)] = ScenarioSpec(category, index, name, function)
        _NAMES.add((category, name))
        return function

    return register


def load_scenarios() -> None:
    """Import every ``cat<N>_*.py`` module of this package (sorted by name), once.

    Importing registers the module's scenarios; re-importing is a no-op
    (Python caches modules).  O(number of modules).
    """
    package = __name__.rsplit(".", 1)[0]
    path = importlib.import_module(package).__path__
    names = sorted(
        info.name for info in pkgutil.iter_modules(path) if SCENARIO_MODULE_PATTERN.match(info.name)
    )
    for name in names:
        importlib.import_module(f"{package}.{name}")


def registered_scenarios(categories: set[int] | None = None) -> list[ScenarioSpec]:
    """Registered scenarios ordered by (category, index), optionally filtered.  O(S log S)."""
    return [
        _REGISTRY[key] for key in sorted(_REGISTRY) if categories is None or key[0] in categories
    ]
