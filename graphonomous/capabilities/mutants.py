"""The mutation harness: every capability category must catch a deliberately broken product.

Rules of this file: a mutant is a reversible patch of one module attribute
(restored in ``finally``, so a run leaves the process as it found it); the
scenarios run unchanged against it; the mutant is *caught* when at least one
scenario fails.  ``graphonomous bench capabilities --mutants`` runs them all
and exits 1 if a mutant survives.  Not thread-safe (patches module globals):
run it alone, as the command does.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final

from .runner import run_capabilities

_DIGITS: Final = re.compile(r"\d+")  # the pre-#13 number cue: any digit run


@dataclass(frozen=True)
class Mutant:
    """A named way to break the product: `patches` are (module, attribute, new value) makers."""

    name: str
    description: str
    target_category: int  # the category whose scenarios should catch it
    patches: Callable[[], list[tuple[Any, str, Any]]]


def _kappa_zero() -> list[tuple[Any, str, Any]]:
    from ..topology import analysis

    original = analysis.compute_kappa  # type: ignore[attr-defined]

    def zero(*args: Any, **kwargs: Any) -> Any:
        result = dict(original(*args, **kwargs))
        result.update(kappa=0, fault_line_edges=[], min_cut_partition=None)
        return result

    return [(analysis, "compute_kappa", zero)]


def _settings(**overrides: Any) -> Callable[[], list[tuple[Any, str, Any]]]:
    def patches() -> list[tuple[Any, str, Any]]:
        from ..retrieval import retriever, settings

        # retrieve_context reads the default where it runs: in the retriever's namespace.
        changed = dataclasses.replace(settings.DEFAULT_SETTINGS, **overrides)
        return [(retriever, "DEFAULT_SETTINGS", changed)]

    return patches


def _supersession_ignored() -> list[tuple[Any, str, Any]]:
    from ..retrieval import time_scope

    return [
        *_settings(superseded_factor=1.0)(),
        (time_scope.TimeScope, "admits", lambda self, node: True),
    ]


def _cascade_root_only() -> list[tuple[Any, str, Any]]:
    from ..learning import forgetting

    return [(forgetting, "cascade_set", lambda store, root_id: [root_id])]


def _decay_off() -> list[tuple[Any, str, Any]]:
    from ..learning import retention

    return [(retention, "node_decay_per_day", lambda: {})]


def _cues_off() -> list[tuple[Any, str, Any]]:
    from ..learning import beliefs, conflicts

    def none(first: str, second: str) -> list[str]:
        return []

    return [(beliefs, "contradiction_cues", none), (conflicts, "contradiction_cues", none)]


def _revision_keeps_confidence() -> list[tuple[Any, str, Any]]:
    # One home: beliefs.supersede serves revise and consolidation's conflicts.
    from ..learning import beliefs

    return [(beliefs, "REVISION_CONFIDENCE_FACTOR", 1.0)]


def _goal_outcomes_off() -> list[tuple[Any, str, Any]]:
    from ..learning import goals

    return [(goals, "apply_outcome", lambda graph, goal_id, outcome: None)]


def _identifier_topics_off() -> list[tuple[Any, str, Any]]:
    from ..learning import coverage

    return [(coverage, "is_identifier", lambda topic: False)]


def _number_cue_loose() -> list[tuple[Any, str, Any]]:
    from ..learning import cues

    def loose(first: str, second: str) -> bool:
        a, b = set(_DIGITS.findall(first)), set(_DIGITS.findall(second))
        return bool(a and b and a != b)

    return [(cues, "_number_cue", loose)]


def _precondition_boost_off() -> list[tuple[Any, str, Any]]:
    from ..retrieval import lookups

    return [(lookups, "PRECONDITION_BOOST", 0.0)]


def _steps_unparsed() -> list[tuple[Any, str, Any]]:
    from ..retrieval import lookups

    return [(lookups, "extract_steps", lambda content, metadata: [content])]


def _propagation_off() -> list[tuple[Any, str, Any]]:
    from ..learning import uncertainty

    return [(uncertainty, "_rests_on", lambda store: {})]


def _wald_interval() -> list[tuple[Any, str, Any]]:
    """The textbook mistake Wilson's interval fixes: the normal (Wald) approximation."""
    import math

    from ..learning import uncertainty

    def wald(successes: float, trials: float, z: float = 1.96) -> tuple[float, float]:
        if trials <= 0:
            return 0.0, 1.0
        p = successes / trials
        half = z * math.sqrt(p * (1 - p) / trials)
        return max(0.0, p - half), min(1.0, p + half)

    return [(uncertainty, "wilson_interval", wald)]


def _agent_filter_ignored() -> list[tuple[Any, str, Any]]:
    from ..retrieval import candidates, retriever

    allowed, reader = candidates.allowed_ids, getattr(retriever, "GraphReader")  # noqa: B009

    def any_agent(run: Any, node_type: str | None, agent_id: str | None) -> Any:
        return allowed(run, node_type, None)

    def unscoped_reader(*args: Any, **kwargs: Any) -> Any:
        return reader(*args, **{**kwargs, "agent_id": None})

    return [(retriever, "allowed_ids", any_agent), (retriever, "GraphReader", unscoped_reader)]


def _export_nodes_only() -> list[tuple[Any, str, Any]]:
    from .. import portable

    original = portable.export_lines

    def nodes_only(graph: Any, **kwargs: Any) -> Iterator[str]:
        return (line for line in original(graph, **kwargs) if '"table": "edges"' not in line)

    return [(portable, "export_lines", nodes_only)]


def _kappa_capped() -> list[tuple[Any, str, Any]]:
    """An approximation that saturates: κ never exceeds 2 (wrong on dense SCCs)."""
    from ..topology import analysis

    original = analysis.compute_kappa  # type: ignore[attr-defined]

    def capped(*args: Any, **kwargs: Any) -> Any:
        result: dict[str, Any] = dict(original(*args, **kwargs))
        result["kappa"] = min(int(result["kappa"]), 2)
        return result

    return [(analysis, "compute_kappa", capped)]


def _causal_edges_frozen() -> list[tuple[Any, str, Any]]:
    from ..learning import outcomes

    return [(outcomes, "_update_causal_edges", lambda store, ids, step, entry, now: [])]


def _erase_is_soft() -> list[tuple[Any, str, Any]]:
    from ..learning import forgetting

    def soft(graph: Any, node_id: str, reason: str | None, wait_s: float) -> Any:
        return forgetting.forget_node(graph, node_id, "soft", reason)

    return [(forgetting, "gdpr_erase", soft)]


def _expansion_off() -> list[tuple[Any, str, Any]]:
    from ..retrieval import expansion

    return [(expansion, "expand", lambda run, hops, neighbors_per_node: None)]


def _bm25_remove_noop() -> list[tuple[Any, str, Any]]:
    from ..index.bm25 import Bm25Index

    return [(Bm25Index, "remove", lambda self, doc_id: False)]


def _eigen_no_iteration() -> list[tuple[Any, str, Any]]:
    """The pure eigensolver stops after tridiagonalisation (returns the diagonal)."""
    from ..algorithms import spectral

    return [(spectral, "tridiagonal_eigenvalues", lambda diagonal, off: sorted(diagonal))]


def _mermaid_without_edges() -> list[tuple[Any, str, Any]]:
    # retrieval.mermaid.result_mermaid (the facade's retrieval_mermaid) calls it there.
    from ..retrieval import mermaid

    original = mermaid.to_mermaid
    return [(mermaid, "to_mermaid", lambda result, edges: original(result, []))]


MUTANTS: Final[tuple[Mutant, ...]] = (
    Mutant("kappa_forced_zero", "every SCC reports κ = 0", 1, _kappa_zero),
    Mutant("cues_off", "no contradiction cue is ever found", 2, _cues_off),
    Mutant(
        "revision_keeps_confidence",
        "a superseded belief keeps its confidence",
        3,
        _revision_keeps_confidence,
    ),
    Mutant("q_ignored", "the utility (Q) rerank weight is 0", 4, _settings(utility_weight=0.0)),
    Mutant(
        "supersession_ignored",
        "superseded nodes are neither left out nor demoted",
        13,
        _supersession_ignored,
    ),
    Mutant("cascade_root_only", "cascade forgetting deletes only the root", 5, _cascade_root_only),
    Mutant("decay_off", "consolidation never decays node confidence", 4, _decay_off),
    Mutant("precondition_boost_off", "met preconditions do not boost", 7, _precondition_boost_off),
    Mutant("steps_unparsed", "a procedure's text is one step", 7, _steps_unparsed),
    Mutant("goal_outcomes_off", "outcomes never move their goal", 13, _goal_outcomes_off),
    Mutant(
        "identifier_topics_off", "codes like E-47 are matched as words", 13, _identifier_topics_off
    ),
    Mutant(
        "number_cue_loose",
        "any differing digits are a contradiction (the old cue)",
        13,
        _number_cue_loose,
    ),
    Mutant("propagation_off", "evidence is never lent along edges", 6, _propagation_off),
    Mutant("wald_interval", "the normal approximation replaces Wilson's", 6, _wald_interval),
    Mutant("agent_filter_ignored", "agent_id no longer scopes retrieval", 8, _agent_filter_ignored),
    Mutant("export_nodes_only", "the JSONL export drops every edge", 9, _export_nodes_only),
    Mutant("kappa_capped", "κ saturates at 2 on dense SCCs", 10, _kappa_capped),
    Mutant(
        "causal_edges_frozen",
        "outcomes never update causal edge metadata",
        11,
        _causal_edges_frozen,
    ),
    Mutant("erase_is_soft", "gdpr_erase only hides the node", 12, _erase_is_soft),
    Mutant("expansion_off", "retrieval never follows edges to neighbours", 15, _expansion_off),
    Mutant("bm25_remove_noop", "the BM25 index never drops a document", 14, _bm25_remove_noop),
    Mutant(
        "eigen_no_iteration",
        "the pure eigensolver skips the QL iterations",
        15,
        _eigen_no_iteration,
    ),
    Mutant("mermaid_without_edges", "the Mermaid view drops the edges", 15, _mermaid_without_edges),
)


@contextmanager
def applied(mutant: Mutant) -> Iterator[None]:
    """Apply the mutant's patches for the duration of the block, then restore them."""
    patches = mutant.patches()
    saved = [(module, name, getattr(module, name)) for module, name, _ in patches]
    try:
        for module, name, value in patches:
            setattr(module, name, value)
        yield
    finally:
        for module, name, value in reversed(saved):
            setattr(module, name, value)


def run_mutants(
    categories: Iterable[int] | None = None, *, targets_only: bool = False
) -> dict[str, Any]:
    """Run the scenarios against every mutant.

    Input: the categories to run (None: all); with ``targets_only`` each
    mutant runs only its own target category (within `categories`, when
    given) — the quick check that every category catches its mutants.
    Output: ``{"mutants": [{"name", "description", "target_category", "caught",
    "failed": [scenario ids], "failed_in_target": int}], "summary": {"mutants",
    "caught", "survived"}, "baseline_failed": [ids failing without a mutant]}``.
    Complexity: one scenario run per mutant (plus the baseline).
    """
    chosen = None if categories is None else set(categories)
    mutants = [
        m for m in MUTANTS if not targets_only or chosen is None or m.target_category in chosen
    ]
    if targets_only:
        chosen = {m.target_category for m in mutants}
    baseline = run_capabilities(chosen)
    baseline_failed = [r["id"] for r in baseline["scenarios"] if r["status"] == "failed"]
    rows = []
    for mutant in mutants:
        scope = {mutant.target_category} if targets_only else chosen
        with applied(mutant):
            report = run_capabilities(scope)
        failed = [r["id"] for r in report["scenarios"] if r["status"] == "failed"]
        new = [i for i in failed if i not in baseline_failed]
        rows.append(
            {
                "name": mutant.name,
                "description": mutant.description,
                "target_category": mutant.target_category,
                "caught": bool(new),
                "failed": new,
                "failed_in_target": sum(
                    1 for i in new if i.split(".")[0] == str(mutant.target_category)
                ),
            }
        )
    caught = sum(1 for r in rows if r["caught"])
    return {
        "mutants": rows,
        "summary": {"mutants": len(rows), "caught": caught, "survived": len(rows) - caught},
        "baseline_failed": baseline_failed,
    }


def format_mutants(report: dict[str, Any]) -> str:
    """One line per mutant: caught or SURVIVED, and by which scenarios."""
    lines = []
    for row in report["mutants"]:
        status = "caught" if row["caught"] else "SURVIVED"
        which = ", ".join(row["failed"][:8]) + (" …" if len(row["failed"]) > 8 else "")
        lines.append(f"{row['name']:<28} {status:<9} {row['description']}  [{which}]")
    s = report["summary"]
    lines.append(f"mutants: {s['caught']}/{s['mutants']} caught, {s['survived']} survived")
    return "\n".join(lines) + "\n"
