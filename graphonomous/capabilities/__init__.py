"""Capability scenarios (GraphMemBench "Phase 1", seed 004): small end-to-end checks.

Framework API (for everyone adding scenarios)
---------------------------------------------

A scenario is a function that receives a fresh, empty in-memory
``Graphonomous`` (hashing embedder), acts on it, and returns
``(passed, detail)`` — a bool and a one-line string saying what was measured::

    from graphonomous.capabilities import Skip, scenario

    @scenario(2, "Expand: new belief without contradiction is a clean expansion")
    def expand_clean(graph: Graphonomous) -> tuple[bool, str]:
        result = graph.belief_revise("expand", content="Valve V2 is rated to 10 bar")
        return result["contradictions"] == [], f"{len(result['contradictions'])} contradictions"

- ``@scenario(category, name)`` registers the function under ``category`` (an
  int, see :data:`CATEGORY_NAMES`).  Scenario ids are ``"<category>.<n>"``,
  ``n`` counting registrations within the category from 1 (so keep one module
  per category and declare scenarios in the order of the seed's list).
- Put scenarios in a module named ``cat<N>_<topic>.py`` inside this package;
  :func:`load_scenarios` imports every such module (sorted by file name).
- Raise :class:`Skip` (``raise Skip("needs retrieve_context")``) when a
  prerequisite is missing; any other exception counts as a failure whose
  detail is the exception text.  Scenarios must be deterministic and fast
  (well under a second each) and must not touch files outside a
  ``tempfile.TemporaryDirectory`` they create themselves.
- :func:`run_capabilities` (``categories=None`` means all) runs the selected
  scenarios, each on its own graph, and returns the report (a JSON-ready
  dict, see :mod:`graphonomous.capabilities.runner`); :func:`format_table`
  renders it as the pass table printed by ``graphonomous bench capabilities``.
"""

from __future__ import annotations

from .registry import (
    CATEGORY_NAMES,
    ScenarioFunction,
    ScenarioSpec,
    Skip,
    load_scenarios,
    registered_scenarios,
    scenario,
)
from .runner import format_table, run_capabilities, run_scenario

__all__ = [
    "CATEGORY_NAMES",
    "ScenarioFunction",
    "ScenarioSpec",
    "Skip",
    "format_table",
    "load_scenarios",
    "registered_scenarios",
    "run_capabilities",
    "run_scenario",
    "scenario",
]
