"""CI guard (issue "learning that transfers"): learning must not lower unseen-question recall.

Rules of this file:

- The protocol is `benchmarks/eval_learning.py`'s, fixed and small (`GUARD_ARGS`): the
  two *validate* conversations (conv-41, conv-42 — never the tune ones, on which constants
  are picked), their first `SESSIONS` sessions, the first `QUESTIONS` questions of each
  half, both directions, efforts 0 and 3, learning + consolidation, both credit protocols
  (bundle: every outcome cites the five used turns; attributed: a success cites its gold
  turns among them).  It is deterministic: the hashing embedder, hashed splits, a seeded
  bootstrap, and each store's own `ManualClock`, moved one minute per played question
  (`eval_learning.MINUTES_PER_QUESTION`), so decay is the same on every run.
- The bar, per credit and effort: R@5 after ≥ R@5 before − `TOLERANCE`, categories 1–4
  pooled (n = 105 measured questions per cell).  Both credits meet it: an attributed
  success moves its turns' confidence and Q-values in full, and ranking counts what it
  moved only for questions like the one they answered (`retrieval.experience.conditioned_q`,
  `conditioned_confidence`).
- The guard can fail: `test_the_guard_sees_a_sign_flipped_experience_credit` flips the
  sign of the mechanism this protocol exercises and asserts a fall in every cell.  With
  experience off (``experience_gain=0,experience_penalty=0``) the bundle protocol changes
  nothing at all (diff ±0.000 at both efforts): the reward an outcome node carries, read
  by `retrieval.experience.outcome_from_node`, is the whole of what it learns.
"""

from __future__ import annotations

import doctest
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

import pytest

from graphonomous.retrieval import experience

ROOT: Final = Path(__file__).resolve().parents[1]
LOCOMO: Final = ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"

# 12 sessions keep 60 (conv-41) and 76 (conv-42) of their questions; 40 per half caps
# conv-42's larger half, so each conversation plays 28-40 questions per direction.
SESSIONS: Final = 12
QUESTIONS: Final = 40
EFFORTS: Final = (0, 3)
# Exactly 0: no fall.  The sample is small (105 questions a cell) but deterministic, so
# noise cannot make a pass flaky; a fall of even one question's R@5 is a real change of
# what learning does to these questions, and the guard should say so.
TOLERANCE: Final = 0.0
# The intervals are not asserted; 100 rounds keep the summary cheap.
BOOTSTRAP_ROUNDS: Final = 100

GUARD_ARGS: Final = (
    "--data",
    str(LOCOMO),
    "--conversations-split",
    "validate",
    "--sessions",
    str(SESSIONS),
    "--questions",
    str(QUESTIONS),
    "--efforts",
    ",".join(map(str, EFFORTS)),
    "--modes",
    "both",
    "--credit",
    "both",
    "--bootstrap",
    str(BOOTSTRAP_ROUNDS),
    "--tolerance",
    str(TOLERANCE),
    "--check",
    "--quiet",
)

needs_locomo = pytest.mark.skipif(not LOCOMO.exists(), reason=f"LoCoMo dev not at {LOCOMO}")


def run_guard(out: Path) -> tuple[int, dict[str, dict[int, dict[str, float]]]]:
    """The guard protocol's exit code and R@5 before/after/diff per credit and effort."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import eval_learning

    code = eval_learning.main([*GUARD_ARGS, "--json", str(out)])
    summary: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    readings = {
        credit: {effort: _reading(part["cells"][f"{effort}/both"]["1-4"]) for effort in EFFORTS}
        for credit, part in summary["credit"].items()
    }
    print(json.dumps(readings, indent=1))
    return code, readings


def _reading(group: dict[str, Any]) -> dict[str, float]:
    """R@5 before, after, diff (and its interval) of one group, with its n."""
    return {**group["R@5"], "n": group["n"]}


@pytest.fixture(scope="module")
def guard(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any]]:
    return run_guard(tmp_path_factory.mktemp("guard") / "guard.json")


def _falls(readings: dict[int, dict[str, float]]) -> dict[int, float]:
    return {effort: cell["diff"] for effort, cell in readings.items() if cell["diff"] < -TOLERANCE}


def test_the_conversation_split_and_the_credit_rule() -> None:
    """The doctests of `conversation_split` (which dev conversation is where) and
    `cited_turns` (what each credit cites), and the split's partition."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import eval_learning

    assert doctest.testmod(eval_learning).failed == 0
    names = [f"conv-{n}" for n in range(100)]
    tune = {n for n in names if eval_learning.conversation_split(n) == "tune"}
    assert 30 < len(tune) < 70 and "conv-26" in tune and "conv-41" not in tune


@needs_locomo
def test_bundle_credit_learning_does_not_lower_unseen_recall(
    guard: tuple[int, dict[str, Any]],
) -> None:
    _, readings = guard
    assert set(readings) == {"bundle", "attributed"}
    assert all(cell["n"] == 105 for cell in readings["bundle"].values())
    assert _falls(readings["bundle"]) == {}, readings["bundle"]


@needs_locomo
def test_attributed_credit_learning_does_not_lower_unseen_recall(
    guard: tuple[int, dict[str, Any]],
) -> None:
    code, readings = guard
    assert _falls(readings["attributed"]) == {}, readings["attributed"]
    assert code == 0


@needs_locomo
def test_the_guard_sees_a_sign_flipped_experience_credit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = experience.outcome_from_node

    def flipped(metadata: Any, causal_ids: Any) -> experience.Outcome | None:
        """A success read as a failure and a failure as a success (reward 1 − r)."""
        outcome = real(metadata, causal_ids)
        if outcome is None:
            return None
        return replace(outcome, reward=1.0 - outcome.reward)

    monkeypatch.setattr(experience, "outcome_from_node", flipped)
    code, readings = run_guard(tmp_path / "flipped.json")
    assert code == 1
    for credit, cells in readings.items():
        assert set(_falls(cells)) == set(EFFORTS), (credit, cells)
        assert all(cell["after"] < cell["before"] for cell in cells.values())


@needs_locomo
def test_the_eval_runs_on_its_own_clock_moved_only_by_play() -> None:
    """Each store of the eval has a `ManualClock` at `CLOCK_START`; play moves it by
    `MINUTES_PER_QUESTION` per question, measuring not at all, so every timestamp (and
    so decay) is the same on every run and machine."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import eval_learning
    import eval_locomo

    from graphonomous.clock import ManualClock
    from graphonomous.model import parse_time

    conversation = eval_learning.truncated(eval_locomo.load_locomo(LOCOMO)[0], 2)
    queries = eval_learning.halves_of(conversation, 3)["A"]
    store = eval_learning.open_store(
        conversation, eval_learning.evalkit.make_embedder("hashing", None)
    )
    clock = store.graph.clock
    assert isinstance(clock, ManualClock)
    start = parse_time(eval_learning.CLOCK_START)
    assert clock.now() == start
    eval_learning.measure(store, queries, 0)
    assert clock.now() == start
    eval_learning.play(store, queries, 0, "learn", credit="attributed")
    minutes = eval_learning.MINUTES_PER_QUESTION * len(queries)
    assert (clock.now() - start).total_seconds() == pytest.approx(60.0 * minutes)
    outcomes = store.graph.store.list_nodes(node_type="outcome")
    stamps = sorted((parse_time(node.created_at) - start).total_seconds() for node in outcomes)
    assert stamps == [60.0 * eval_learning.MINUTES_PER_QUESTION * i for i in range(len(queries))]
    store.graph.close()


def test_the_no_forgetting_run_reads_the_days_its_consolidations_decayed() -> None:
    """`decay_days` reads the decay stage's ``elapsed_days`` (what the stage reports), so
    the no-forgetting run's ``decay_days_between`` says how much time decay covered."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import eval_learning

    from graphonomous.api import Graphonomous
    from graphonomous.clock import ManualClock

    clock = ManualClock(eval_learning.CLOCK_START)
    graph = Graphonomous(db=":memory:", clock=clock)
    graph.store_node("Caroline went to the support group on 7 May.")
    clock.advance(days=1.5)
    assert eval_learning.decay_days(graph.run_consolidation()) == pytest.approx(1.5)
    clock.advance(days=0.25)
    assert eval_learning.decay_days(graph.run_consolidation()) == pytest.approx(0.25)
    graph.close()
