"""Stage 5 of `retrieve_context`: what use taught — Q-values, experience, supersession.

Rules of this file: score' = (1 − α)·score + α·q (seed 004's blend, α =
`utility_weight`) when some candidate in the query's context has outcomes, q
conditioned on the query for a node whose Q was earned with a known query
(`experience.conditioned_q`); then similar earlier outcomes vouch for or object
to the nodes they used (`experience.experienced_score`); then superseded nodes ×
`superseded_factor` (not for an `as_of` retrieval).  Stage 1's confidence follows
the same rule (`ranking_confidence`): one rule for both learned signals.  The
experience index is brought up to date before it speaks, and says nothing
without a query vector.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from .experience import (
    ExperienceIndex,
    Lexical,
    conditioned_confidence,
    conditioned_q,
    experience_index,
    experienced_score,
    unrelated_similarity,
)
from .run import Run


def _fresh_experience(
    run: Run, vector: list[float] | None, candidates: Collection[str] | None = None
) -> ExperienceIndex | None:
    """The graph's experience index brought up to date, or None when it cannot speak
    (no query vector, no candidates — `candidates`, else the run's entries — no
    outcome with a query)."""
    graph = run.graph
    if vector is None or not (run.entries if candidates is None else candidates):
        return None
    graph.vector_index()  # brings the engine up to date first
    experience = experience_index(graph)
    experience.refresh(graph.store, graph.generation)
    return experience if len(experience) else None


def _experience_floor(run: Run) -> float:
    """The query similarity at or below which an earlier query says nothing."""
    floor = run.settings.experience_floor
    return unrelated_similarity(run.graph.embedder.name) if floor is None else floor


def _utility_match(
    run: Run, vector: list[float] | None, candidates: Sequence[str] | None = None
) -> dict[str, float]:
    """Per candidate (`candidates`, else the run's entries) with Q-moving outcomes of a
    known query: how far they match this query (`ExperienceIndex.utility_match`);
    empty when experience cannot speak."""
    pool = list(run.entries) if candidates is None else candidates
    experience = _fresh_experience(run, vector, pool)
    if experience is None or vector is None:
        return {}
    return experience.utility_match(
        vector,
        run.graph.vector_index().dimensions,
        pool,
        run.graph.embed_texts,
        _experience_floor(run),
    )


def ranking_confidence(
    run: Run, vector: list[float] | None, candidates: Sequence[str]
) -> dict[str, float]:
    """Stage 1's confidence for the candidates whose confidence attributions with a
    known query moved: `conditioned_confidence` with the `utility_match` that
    conditions their Q (one rule for both learned signals).  Others are absent:
    they rank by their stored confidence.  Loaded rows only; a candidate that never
    learned from an attribution (q_update_count 0) is not looked at.
    Complexity: O(candidates) + `ExperienceIndex.utility_match` over the learned ones.
    """
    rows = {node_id: run.reader.node(node_id) for node_id in candidates}
    learned = [n for n, node in rows.items() if node is not None and node.q_update_count > 0]
    experience = _fresh_experience(run, vector, learned) if learned else None
    if experience is None:
        return {}
    moved = experience.learned_confidence(learned)
    if not moved:
        return {}
    match = _utility_match(run, vector, sorted(moved))
    out = {}
    for node_id, step in moved.items():
        node = rows[node_id]
        assert node is not None
        out[node_id] = conditioned_confidence(
            node.confidence, node.base_confidence, step, match.get(node_id, 1.0)
        )
    return out


def _experience(run: Run, vector: list[float] | None, tokens: Sequence[str]) -> int:
    """Similar earlier outcomes vouch for (or object to) the nodes they used.

    score' = (score ⊕ gain · support · r) × (1 − penalty · objection), with ⊕ the
    noisy-OR of `combine_evidence`, r the candidate's score over the best
    candidate's (`experienced_score`), and support/objection from
    `ExperienceIndex.evidence` (objections through the BM25 index's view of
    which words matched).  The words' weights and the best candidate are
    those of the candidates in the query's context (the participant scope's
    others, set aside, change nothing about how these compare), unless every
    candidate is out of it.  Returns the number of entries changed.
    """
    graph = run.graph
    experience = _fresh_experience(run, vector)
    if experience is None or vector is None:
        return 0
    peers = [n for n in sorted(run.entries) if n not in run.out_of_context] or sorted(run.entries)
    found = experience.evidence(
        vector,
        graph.vector_index().dimensions,
        run.entries,
        graph.embed_texts,
        _experience_floor(run),
        Lexical.of(graph.text_index(), tokens, peers),
    )
    gain, penalty = run.settings.experience_gain, run.settings.experience_penalty
    best = max(run.entries[node_id].score for node_id in peers)
    for node_id, evidence in found.items():
        entry = run.entries[node_id]
        entry.score = experienced_score(entry.score, evidence, gain, penalty, best)
    return len(found)


def utility_rerank(run: Run, vector: list[float] | None, tokens: Sequence[str]) -> None:
    """Stage 5: Q-values (seed 004's blend), experience, superseded nodes demoted.

    score' = (1 − α)·score + α·q when some candidate in the query's context has
    outcomes (Q-values move by attributions only, `learning.outcomes`; another
    conversation's learned turn set aside by the participant scope does not
    switch the blend on for this one's).  q is the node's q_value, conditioned on
    the query for a node whose Q was earned by outcomes with a known query
    (`conditioned_q` with `ExperienceIndex.utility_match`: a node that answered
    one question is lifted for questions like it, at the prior 0.5 for others);
    a node without outcomes, or whose outcomes name no query, blends its q_value
    as seed 004 says.  Then `_experience` (query-dependent), then ×
    `superseded_factor` for superseded nodes.  Input: ``run.entries``, the
    query vector and tokens.  Output: their scores; ``stats.utility_rerank``,
    ``stats.experience``, ``stats.superseded_demoted``.
    """
    run.reader.load_nodes(run.entries)
    alpha = run.settings.utility_weight
    rows = {node_id: run.reader.node(node_id) for node_id in run.entries}
    learned = any(
        node is not None and node.q_update_count > 0 and node_id not in run.out_of_context
        for node_id, node in rows.items()
    )
    match = _utility_match(run, vector) if learned else {}
    demoted = 0
    for node_id, entry in run.entries.items():
        node = rows[node_id]
        if node is None:
            continue
        if learned:
            q = conditioned_q(node.q_value, match.get(node_id, 1.0))
            entry.score = (1.0 - alpha) * entry.score + alpha * q
        if node.superseded_by is not None and run.answers_now:
            entry.score *= run.settings.superseded_factor
            demoted += 1
    if learned:
        run.mechanisms.append("utility_rerank")
    experienced = _experience(run, vector, tokens)
    if experienced:
        run.mechanisms.append("experience")
    run.stats["utility_rerank"] = learned
    run.stats["experience"] = experienced
    run.stats["superseded_demoted"] = demoted
