"""benchmarks/eval_learning_docs.py: the roles, the paraphrases and the play rules.

Rules of this file:

- The data checks need no fetched tree: every played gold question has exactly one
  paraphrase, no held one has any, a paraphrase takes its original's gold and split,
  and its wording is its own (not the original's text; under half the words shared).
- The play rules are checked on a small tree written here (no mirrors, no network):
  a success cites the results holding the gold lines under ``attributed`` credit and
  the used five under ``bundle``; a failure cites the used results.
- The whole protocol over the three fetched trees is a benchmark run, not a test.
"""

from __future__ import annotations

import doctest
import json
import re
import sys
from pathlib import Path
from typing import Any, Final

import pytest

ROOT: Final = Path(__file__).resolve().parents[1]
DATA: Final = ROOT / "benchmarks" / "data" / "docs"
# A paraphrase shares under this share of its words (Jaccard of lower-cased \w+) with
# the question it rewords: the written ones are 0.18 on average, 0.5 at most.
MAX_SHARED_WORDS: Final = 0.5

sys.path.insert(0, str(ROOT / "benchmarks"))

import eval_docs  # noqa: E402
import eval_learning_docs as eld  # noqa: E402


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def test_doctests() -> None:
    assert doctest.testmod(eld).failed == 0


def test_every_played_question_has_one_paraphrase_with_its_gold() -> None:
    gold = eval_docs.load_gold(DATA, None)
    paraphrases = eld.load_paraphrases(DATA, gold)
    originals = {q["id"]: q for entry in gold.values() for q in entry["questions"]}
    played = sorted(i for i in originals if eld.role_of(i) == "played")
    assert sorted(p["of"] for p in paraphrases) == played
    assert 80 <= len(played) <= 100  # about two in three of the 132
    for p in paraphrases:
        original = originals[p["of"]]
        assert (p["path"], p["lines"], p["split"]) == (
            original["path"],
            original["lines"],
            original["split"],
        )
        a, b = _words(p["question"]), _words(original["question"])
        assert p["question"] != original["question"]
        assert len(a & b) / len(a | b) <= MAX_SHARED_WORDS, p["id"]


def test_a_paraphrase_of_a_held_question_is_refused(tmp_path: Path) -> None:
    gold = eval_docs.load_gold(DATA, ["rbe"])
    held = next(q["id"] for q in gold["rbe"]["questions"] if eld.role_of(q["id"]) == "held")
    (tmp_path / eld.PARAPHRASES).write_text(
        json.dumps({"id": "x", "of": held, "question": "anything"}) + "\n", encoding="utf-8"
    )
    with pytest.raises(ValueError, match="held"):
        eld.load_paraphrases(tmp_path, gold)


class _Graph:
    """Records the outcomes play reports; consolidation and the clock do nothing."""

    def __init__(self) -> None:
        self.outcomes: list[dict[str, Any]] = []

        class _Clock:
            def advance(self, minutes: float) -> None:
                pass

        self.clock = _Clock()

    def learn_from_outcome(self, **fields: Any) -> None:
        self.outcomes.append(fields)

    def run_consolidation(self) -> None:
        pass


def _result(node_id: str, path: str, start: int, end: int) -> dict[str, Any]:
    return {"node_id": node_id, "path": path, "start": start, "end": end}


@pytest.mark.parametrize(
    ("credit", "cited"),
    [("attributed", ["n2"]), ("bundle", ["n1", "n2", "n3", "n4", "n5"])],
)
def test_play_cites_by_the_credit_rule(credit: str, cited: list[str]) -> None:
    ranked = [_result(f"n{i}", "a.md" if i == 2 else "b.md", 1, 10) for i in range(1, 8)]
    questions = [
        {"id": "hit", "question": "q1", "path": "a.md", "lines": [5, 6]},
        {"id": "miss", "question": "q2", "path": "c.md", "lines": [1, 2]},
    ]
    graph = _Graph()
    played = eld.play(graph, lambda _: ranked, questions, credit)
    assert [o["status"] for o in graph.outcomes] == ["success", "failure"]
    assert graph.outcomes[0]["causal_node_ids"] == cited
    assert graph.outcomes[1]["causal_node_ids"] == ["n1", "n2", "n3", "n4", "n5"]
    assert played["counts"] == {"success": 1, "failure": 1, "consolidations": 0}
    assert played["credited_files"] == ["a.md", "b.md"]
