"""GraphMemBench v2 tiers: deterministic, independent oracles, targets met, able to fail."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest

from graphonomous.api import Graphonomous
from graphonomous.bench import graphmembench as gmb
from graphonomous.cli import main


def test_brute_force_kappa_on_known_digraphs() -> None:
    ring = ["a", "b", "c", "d"]
    one_way = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")]
    assert gmb.brute_force_kappa(ring, one_way) == 1
    both = one_way + [(v, u) for u, v in one_way]
    assert gmb.brute_force_kappa(ring, both) == 2
    complete = [(u, v) for u in ring for v in ring if u != v]
    assert gmb.brute_force_kappa(ring, complete) == 3


def test_generation_is_deterministic_and_codes_unique() -> None:
    first = gmb.generate(4, 30, 7)
    second = gmb.generate(4, 30, 7)
    assert [(s.nodes, s.edges, s.expected_kappa) for s in first] == [
        (s.nodes, s.edges, s.expected_kappa) for s in second
    ]
    assert len({gmb.code_word(i) for i in range(1728)}) == 1728
    ladder = gmb.generate(6, 10, 1)
    assert sorted({s.expected_kappa for s in ladder}) == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("tier", gmb.TIERS)
def test_every_tier_meets_its_targets(tier: int) -> None:
    result = gmb.run_tier(tier, questions=12)
    failed = [name for name, ok in result["targets"].items() if not ok and name != "p50_under_50ms"]
    assert failed == [], result


class KappaBlind(Graphonomous):
    """A mutant: retrieval's topology always empty (κ forced 0)."""

    def retrieve_context(self, query: str, **kwargs: Any) -> dict[str, Any]:
        answer = super().retrieve_context(query, **kwargs)
        empty = {"sccs": [], "dag_nodes": [], "routing": "fast", "max_kappa": 0, "scc_count": 0}
        return {**answer, "topology": empty}


class OrderBlind(Graphonomous):
    """A mutant: evidence paths come back reversed."""

    def trace_evidence_path(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        answer = super().trace_evidence_path(*args, **kwargs)
        for path in answer["paths"]:
            path["nodes"] = path["nodes"][::-1]
        return answer


@pytest.mark.parametrize(("tier", "mutant"), [(3, KappaBlind), (6, KappaBlind), (7, OrderBlind)])
def test_tiers_catch_mutants(tier: int, mutant: type[Graphonomous]) -> None:
    result = gmb.run_tier(tier, questions=6, graph_factory=lambda: mutant(db=":memory:"))
    assert not all(result["targets"].values())


def test_cli_json_report(monkeypatch: pytest.MonkeyPatch) -> None:
    out = StringIO()
    code = main(["bench", "graphmembench", "--tier", "3", "--questions", "5", "--json", "-"], out)
    report = json.loads(out.getvalue())
    assert report["tiers"][0]["tier"] == "T3" and report["questions_per_tier"] == 5
    assert code == (1 if report["summary"]["failed"] else 0)
    assert main(["bench", "graphmembench", "--tier", "9"], StringIO()) == 2
