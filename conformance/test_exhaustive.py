"""Quick-size pieces of the exhaustive run, plus proof that it catches broken engines.

The full 1,926,351-object run is ``python -m conformance`` (not a pytest test).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from conformance import exhaustive
from conformance.__main__ import main
from conformance.engine import Adjacency, Engine, product_engine


def test_object_counts_match_kappa_md() -> None:
    digraphs = sum(exhaustive.object_count("digraph", n) for n in exhaustive.DIGRAPH_SIZES)
    maps = sum(exhaustive.object_count("map", n) for n in exhaustive.MAP_SIZES)
    assert (digraphs, maps, digraphs + maps) == (1_052_740, 873_611, 1_926_351)
    tasks = exhaustive.make_tasks(exhaustive.DIGRAPH_SIZES, exhaustive.MAP_SIZES)
    assert sum(t.stop - t.start for t in tasks) == 1_926_351


def _run(kind: str, sizes: Sequence[int], engine: Engine) -> list[exhaustive.TaskResult]:
    tasks = (
        exhaustive.make_tasks(sizes, ()) if kind == "digraph" else exhaustive.make_tasks((), sizes)
    )
    return [exhaustive.run_task(task, engine) for task in tasks]


@pytest.mark.parametrize(("kind", "sizes"), [("digraph", (2, 3, 4)), ("map", (2, 3, 4, 5, 6))])
def test_quick_sizes_have_no_counterexamples(kind: str, sizes: Sequence[int]) -> None:
    results = _run(kind, sizes, product_engine())
    assert sum(r.failures for r in results) == 0, [e for r in results for e in r.examples]
    assert sum(r.checked for r in results) == sum(exhaustive.object_count(kind, n) for n in sizes)
    for n in sizes:
        of_size = [r for r in results if r.task.n == n]
        zero = sum(r.kappa_counts[0] for r in of_size)
        strong = sum(r.strongly_connected for r in of_size)
        assert exhaustive.census_problems(kind, n, zero, strong) == []


def test_cli_quick_prints_one_summary_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--quick", "--workers", "1", "--no-parity"]) == 0
    out, err = capsys.readouterr()
    assert out == "54232 objects, 0 counterexamples\n"
    assert "κ histogram" in err


# --------------------------------------------------------------------------
# Mutants: each deliberately broken engine must be caught
# --------------------------------------------------------------------------


def _kappa_plus_one_on_triangles(adj: Adjacency, members: Sequence[str]) -> dict[str, Any]:
    result = dict(product_engine().compute_kappa(adj, members))
    if len(members) == 3:
        result["kappa"] += 1
    return result


def _reversed_fault_lines(adj: Adjacency, members: Sequence[str]) -> dict[str, Any]:
    result = dict(product_engine().compute_kappa(adj, members))
    result["fault_line_edges"] = [
        {"source": e["target"], "target": e["source"]} for e in result["fault_line_edges"]
    ]
    return result


def _min_degree_kappa(adj: Adjacency, members: Sequence[str]) -> dict[str, Any]:
    # A plausible wrong κ: min(out-degree, in-degree) is only an upper bound.
    inside = set(members)
    degrees = [len(adj[v] & inside) for v in members]
    degrees += [sum(v in adj[u] for u in members) for v in members]
    kappa = min(degrees) if len(members) > 1 else 0
    return {"kappa": kappa, "approximate": False, "fault_line_edges": [], "min_cut_partition": None}


def _tarjan_dropping_a_node(adj: Adjacency) -> list[list[str]]:
    return product_engine().tarjan_scc(adj)[1:]


def _tarjan_merging_trivial(adj: Adjacency) -> list[list[str]]:
    components = product_engine().tarjan_scc(adj)
    trivial = [c for c in components if len(c) == 1]
    if len(trivial) >= 2:
        components = [c for c in components if len(c) > 1] + [trivial[0] + trivial[1], *trivial[2:]]
    return components


MUTANTS = {
    "κ+1 on 3-node SCCs": (None, _kappa_plus_one_on_triangles),
    "fault lines reversed": (None, _reversed_fault_lines),
    "κ = min degree": (None, _min_degree_kappa),
    "SCC dropped": (_tarjan_dropping_a_node, None),
    "trivial SCCs merged": (_tarjan_merging_trivial, None),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_engines_are_caught(name: str) -> None:
    tarjan, kappa = MUTANTS[name]
    real = product_engine()
    engine = Engine(tarjan or real.tarjan_scc, kappa or real.compute_kappa)
    failures: Counter[str] = Counter()
    for kind, sizes in (("digraph", (2, 3, 4)), ("map", (3, 4))):
        for result in _run(kind, sizes, engine):
            failures[kind] += result.failures
            assert len(result.examples) == min(result.failures, exhaustive.MAX_EXAMPLES)
    assert failures["digraph"] > 0
    if name != "κ = min degree":  # a cycle's degrees are 1, which happens to be its κ
        assert failures["map"] > 0
