"""The committed fixtures still match the engine (byte for byte) and the reference."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.jsonio import graph_from_document
from conformance.make_fixtures import FIXTURES, build_fixtures, render
from conformance.parity import canonical_problems
from conformance.reference import analyze_reference
from graphonomous import topology

REQUIRED = {
    "topology/empty-graph.json",
    "topology/linear-chain.json",
    "topology/three-cycle.json",
    "topology/two-independent-cycles.json",
    "topology/mixed-dag-and-scc.json",
    "topology/business-example.json",
    "topology/self-loop-only.json",
    "topology/bipartite-k22-both-directions.json",
    "topology/large-scc-25.json",
    "topology/symmetric-kinds-excluded.json",
    "preview/creates-new-scc.json",
    "preview/enlarges-existing-scc.json",
    "preview/no-change-dag.json",
}


def _committed() -> dict[str, str]:
    return {
        f"{path.parent.name}/{path.name}": path.read_text(encoding="utf-8")
        for folder in ("topology", "preview")
        for path in sorted((FIXTURES / folder).glob("*.json"))
    }


def test_committed_fixtures_are_exactly_what_the_generator_writes() -> None:
    # Regenerating runs the engine and the reference cross-check on every case.
    generated = {path: render(doc) for path, doc in build_fixtures().items()}
    committed = _committed()
    assert sorted(committed) == sorted(generated)
    stale = [path for path in generated if committed[path] != generated[path]]
    assert stale == [], "run `python -m conformance.make_fixtures` and review the diff"


def test_required_cases_and_generated_count() -> None:
    committed = _committed()
    assert committed.keys() >= REQUIRED
    assert sum(p.startswith("topology/generated-") for p in committed) >= 50
    assert (Path(FIXTURES) / "README.md").is_file()


@pytest.mark.parametrize("path", sorted(_committed()))
def test_fixture_shape_and_spot_values(path: str) -> None:
    document = json.loads((FIXTURES / path).read_text(encoding="utf-8"))
    assert list(document) == ["name", "description", "input", "expected", "expected_reference"]
    assert path.endswith(f"/{document['name']}.json")
    if path.startswith("topology/"):
        nodes, arcs = graph_from_document(document["input"])
        reference = analyze_reference(nodes, arcs)
        assert document["expected_reference"] == reference
        adjacency = topology.adjacency_from_json(document["input"])
        assert canonical_problems(document["expected"], adjacency, reference) == []


def test_known_values() -> None:
    def load(name: str) -> Any:
        return json.loads((FIXTURES / name).read_text(encoding="utf-8"))

    business = load("topology/business-example.json")["expected"]
    assert business == {
        "sccs": [
            {
                "id": "scc-0",
                "nodes": [
                    "customer-retention",
                    "market-share",
                    "product-quality",
                    "r-and-d",
                    "revenue",
                ],
                "kappa": 1,
                "approximate": False,
                "fault_line_edges": [{"source": "product-quality", "target": "market-share"}],
                "routing": "deliberate",
                "deliberation_budget": {
                    "max_iterations": 2,
                    "agent_count": 1,
                    "timeout_multiplier": 1.5,
                    "confidence_threshold": 0.75,
                },
            }
        ],
        "dag_nodes": ["ceo-name", "founding-date"],
        "routing": "deliberate",
        "max_kappa": 1,
        "scc_count": 1,
    }
    k22 = load("topology/bipartite-k22-both-directions.json")
    assert k22["expected"]["max_kappa"] == 2
    large = load("topology/large-scc-25.json")
    assert large["expected"]["sccs"][0]["approximate"] is False
    assert large["expected_reference"]["sccs"][0]["kappa"] == 25
    assert large["expected_reference"]["sccs"][0]["approximate"] is True
    for name in ("self-loop-only", "symmetric-kinds-excluded", "empty-graph", "linear-chain"):
        assert load(f"topology/{name}.json")["expected"]["routing"] == "fast"
    created = load("preview/creates-new-scc.json")["expected"]
    assert created["creates_new_scc"] is True and created["kappa_delta"] == 1


def test_contract_runner_accepts_the_python_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # End to end: `graphonomous contract fixtures --run CMD` logic on a few fixtures.
    from graphonomous.contract.fixtures import run_fixtures

    picked = [
        "topology/business-example.json",
        "topology/large-scc-25.json",
        "topology/generated-007.json",
        "preview/merges-two-sccs.json",
    ]
    for relative in picked:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text((FIXTURES / relative).read_text(encoding="utf-8"))
    command = [sys.executable, "-m", "graphonomous", "topology", "-"]
    for mode in ("exact", "semantic"):
        report = run_fixtures(command, tmp_path, mode)
        assert report.ok, report.format()
        assert report.total == len(picked)
