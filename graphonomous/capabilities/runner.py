"""Running capability scenarios and reporting them (pass table and JSON).

Report shape (JSON-ready)::

    {
      "scenarios": [{"id": "2.1", "category": 2, "category_name": "belief_revision",
                     "name": "...", "status": "passed" | "failed" | "skipped",
                     "detail": "...", "duration_ms": 1.234}, ...],
      "categories": {"2": {"name": "belief_revision", "passed": 8, "failed": 0,
                           "skipped": 0, "total": 8}, ...},
      "summary": {"passed": 24, "failed": 0, "skipped": 0, "total": 24}
    }

Categories appear in the report in ascending order; scenarios by id.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any, Final

from .registry import CATEGORY_NAMES, ScenarioSpec, Skip, load_scenarios, registered_scenarios

STATUSES: Final = ("passed", "failed", "skipped")
# Durations are reported with microsecond resolution.
DURATION_DIGITS: Final = 3
TABLE_NAME_WIDTH: Final = 70


def run_scenario(spec: ScenarioSpec) -> dict[str, Any]:
    """Run one scenario on a fresh in-memory graph; never raises.

    Output: one report row (module docstring).  A scenario that raises
    :class:`Skip` is "skipped"; any other exception is "failed" with
    ``"<ExceptionType>: <message>"`` as detail.  The graph is always closed.
    """
    from ..api import Graphonomous  # deferred: the facade imports the learning modules

    started = time.perf_counter()
    graph = Graphonomous(":memory:", embedder="hashing")
    try:
        passed, detail = spec.function(graph)
        status = "passed" if passed else "failed"
    except Skip as skip:
        status, detail = "skipped", str(skip)
    except Exception as exc:  # a crashing scenario is a failed scenario, not a crashed run
        status, detail = "failed", f"{type(exc).__name__}: {exc}"
    finally:
        graph.close()
    return {
        "id": spec.scenario_id,
        "category": spec.category,
        "category_name": CATEGORY_NAMES[spec.category],
        "name": spec.name,
        "status": status,
        "detail": str(detail),
        "duration_ms": round((time.perf_counter() - started) * 1000.0, DURATION_DIGITS),
    }


def run_capabilities(categories: Iterable[int] | None = None) -> dict[str, Any]:
    """Run every registered scenario of the given categories (None: all).

    Input: category numbers (unknown numbers raise ValueError).
    Output: the report (module docstring).  Complexity: the sum of the
    scenarios' own costs; each builds its own in-memory graph.
    """
    wanted = None if categories is None else set(categories)
    if wanted is not None:
        unknown = sorted(wanted - set(CATEGORY_NAMES))
        if unknown:
            raise ValueError(f"unknown capability categories: {unknown}")
    load_scenarios()
    rows = [run_scenario(spec) for spec in registered_scenarios(wanted)]
    per_category: dict[str, dict[str, Any]] = {}
    for category in sorted({row["category"] for row in rows}):
        mine = [row for row in rows if row["category"] == category]
        per_category[str(category)] = {
            "name": CATEGORY_NAMES[category],
            **_counts(mine),
        }
    return {"scenarios": rows, "categories": per_category, "summary": _counts(rows)}


def _counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    counts = {status: sum(1 for row in rows if row["status"] == status) for status in STATUSES}
    return {**counts, "total": len(rows)}


def format_table(report: dict[str, Any]) -> str:
    """The report as a plain-text pass table: one line per scenario, then totals."""
    lines = []
    marks = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP"}
    for row in report["scenarios"]:
        name = row["name"]
        if len(name) > TABLE_NAME_WIDTH:
            name = name[: TABLE_NAME_WIDTH - 1] + "…"
        lines.append(f"{row['id']:>5}  {marks[row['status']]}  {name:<{TABLE_NAME_WIDTH}}")
        if row["status"] != "passed":
            lines.append(f"{'':>5}        {row['detail']}")
    lines.append("")
    for key, cat in report["categories"].items():
        lines.append(
            f"category {key} {cat['name']}: {cat['passed']}/{cat['total']} passed"
            + (f", {cat['skipped']} skipped" if cat["skipped"] else "")
        )
    total = report["summary"]
    lines.append(
        f"total: {total['passed']}/{total['total']} passed, {total['failed']} failed, "
        f"{total['skipped']} skipped"
    )
    return "\n".join(lines) + "\n"
