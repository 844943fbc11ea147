"""Dev/test halves, explicit paired comparisons and the peer script's availability report."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import eval_peers  # noqa: E402
import evalkit  # noqa: E402


def _queries(n: int) -> list[evalkit.Query]:
    return [evalkit.Query(f"q{i}", "text", ("u",), "x") for i in range(n)]


def test_halves_partition_the_questions_stably() -> None:
    queries = _queries(200)
    dev = evalkit.split_queries(queries, "dev")
    test = evalkit.split_queries(queries, "test")
    assert {q.qid for q in dev}.isdisjoint(q.qid for q in test)
    assert len(dev) + len(test) == 200 and 60 < len(dev) < 140
    assert evalkit.split_queries(queries, "all") == queries
    assert [q.qid for q in dev] == [q.qid for q in queries if evalkit.split_of(q.qid) == "dev"]
    # sha256("q0")[0] = 52 is even: q0 is dev on every machine.
    assert evalkit.split_of("q0") == "dev"
    with pytest.raises(ValueError, match="split"):
        evalkit.split_queries(queries, "train")


def test_split_line_says_the_rule_and_counts() -> None:
    line = evalkit.split_line("dev", 3, 7)
    assert line.startswith("split: dev (3 of 7 questions;") and "sha256" in line


def test_pairs_parse_and_score() -> None:
    systems = ["e3", "engine[effort=6,s.entity_gain=0]", "e6"]
    pairs = evalkit.parse_pairs("e6>e3, e6>engine[effort=6,s.entity_gain=0]", systems)
    assert pairs == [("e6", "e3"), ("e6", "engine[effort=6,s.entity_gain=0]")]
    with pytest.raises(ValueError, match="ROW>BASELINE"):
        evalkit.parse_pairs("e9>e3", systems)
    scores = {
        "e6": [{"R@5": 1.0}, {"R@5": 0.5}],
        "e3": [{"R@5": 0.5}, {"R@5": 0.5}],
    }
    table = evalkit.explicit_pairs(scores, {"all": [0, 1]}, [("e6", "e3")], ["R@5"], 50, 0)
    assert table[0]["groups"]["all"]["R@5"]["diff"] == pytest.approx(0.25)
    assert "e6" in evalkit.pair_lines(table, "R@5")[0]


def test_peer_availability_names_the_reason() -> None:
    missing = eval_peers.availability(["basic-memory", "mcp-memory-service-lite", "e0"])
    assert set(missing) == {"basic-memory", "mcp-memory-service-lite"}
    assert "3.12" in missing["basic-memory"]


def test_peer_model_and_executable_problems_are_named(tmp_path: Path) -> None:
    assert "--peer-model-dir" in str(eval_peers.mms_model_problem(None))
    (tmp_path / "tokenizer.json").write_text("{}", encoding="utf-8")
    assert "model.onnx" in str(eval_peers.mms_model_problem(tmp_path))
    (tmp_path / "model.onnx").write_bytes(b"")
    assert eval_peers.mms_model_problem(tmp_path) is None
    missing = eval_peers.availability(["basic-memory"], basic_memory=tmp_path / "absent")
    assert "--basic-memory" in missing["basic-memory"]
