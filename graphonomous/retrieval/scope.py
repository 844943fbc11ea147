"""The stages for a query that names a speaker: participant scope, attribution, content.

Rules of this file: each stage runs only when the query names (capitalised) a
speaker of the speaker index and the index knows at least two (`attribution`,
`speakers`); otherwise it changes nothing.

* `participant_stage` (stage 1b, every effort): a query naming a speaker is
  answered from the conversations that speaker took part in — candidates,
  keyword statistics and normalisation as in a memory holding only those;
  other conversations' turns stay, × `absent_participant_factor`.
* `speaker_stage` (stage 4c, walk efforts): candidates said by a speaker the
  query does not name × `other_speaker_factor`, unless one says more of the
  question than the named speakers did (`SAID_IT_RATIO`: the question may
  name the wrong person).
* `content_stage` (stage 4d, walk efforts): the name matches every turn of
  that speaker, so her candidates gain from name-free BM25 over her turns and
  every candidate is scaled by how much of the *rest* of the question it holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from .bm25 import bm25_tokens
from .candidates import hybrid_candidates
from .entities import FUNCTION_WORDS, entity_key
from .fusion import SCORE_FUSION, combine_evidence
from .run import Run
from .speakers import speaker_index


def participant_stage(
    run: Run,
    text: str,
    vector: list[float] | None,
    tokens: list[str],
    pool: int,
    allowed: set[str] | None,
) -> None:
    """Stage 1b: turns from conversations no named speaker took part in × the factor.

    Runs when the query names a known speaker and the index knows at least two
    (`attribution`).  The conversations a speaker took part in are the wholes
    (``part_of`` targets) of the turns she said; a candidate said by another
    speaker whose wholes are known and none of them is such a conversation is
    *out of context*.  When any candidate is, the candidates are searched
    again so that they do not take the places of the question's own
    conversations' candidates, and then scaled by `absent_participant_factor`
    before graph support (they pass less support on and seed nothing).
    With `context_statistics` (score fusion) the second search takes each
    channel's top (k + the number out of context) among the ids `_in_context`
    accepts — a superset of the pool a memory holding only the named
    speakers' conversations would have — plus the first pool's candidates it
    rejects, weighs keywords with those conversations' BM25 statistics (kept
    for the later keyword stages) and normalises the channels and the best
    score over the candidates in context: the context's candidates score as
    in a memory holding it alone, and none of them loses its pool place.
    Without it (or with RRF) the second search is the first widened by the
    number out of context (fused scores do not depend on the pool's size).
    Unattributed candidates and parts of no whole are untouched.
    O(out-edges of the named speakers' turns and of the candidates + the
    context's distinct terms) + one candidate search when any is out.
    Input: ``run.entries`` from stage 1 and the query (text, vector, tokens,
    pool, filter).  Output: ``run.entries`` (searched again when any is out of
    context), ``run.out_of_context``, ``run.keywords``,
    ``stats.absent_participant_demoted``.
    """
    factor = run.settings.absent_participant_factor
    run.stats["absent_participant_demoted"] = 0
    if (factor >= 1.0 and not run.settings.context_statistics) or not run.entries:
        return
    demoted = _absent(run, text, run.entries)
    if not demoted:
        return
    # Each candidate is checked once: the first pool's are known.
    first = sorted(run.entries)
    outside = _out_of_context(run, text, first=set(first), known=demoted)
    run.entries.clear()
    run.aids = 0
    if run.settings.context_statistics and run.settings.fusion == SCORE_FUSION:
        context = _context(run, text)
        run.keywords = run.graph.text_index().within(context)
        within = _in_context(run, text, context)
        extra = [node_id for node_id in first if not within(node_id)]
        hybrid_candidates(run, vector, tokens, pool + len(demoted), allowed, outside, extra, within)
    elif run.settings.context_statistics:
        run.keywords = run.graph.text_index().within(_context(run, text))
        hybrid_candidates(run, vector, tokens, pool + len(demoted), allowed, outside=outside)
    else:
        hybrid_candidates(run, vector, tokens, pool + len(demoted), allowed)
    run.out_of_context = outside(sorted(run.entries))
    demoted = run.out_of_context if factor < 1.0 else set()
    for node_id in sorted(demoted):
        entry = run.entries[node_id]
        entry.own *= factor
        entry.score *= factor
    if demoted:
        run.mechanisms.append("participant_scope")
    run.stats["absent_participant_demoted"] = len(demoted)
    if run.keywords is not None:
        run.mechanisms.append("context_statistics")


def _out_of_context(
    run: Run, text: str, first: set[str], known: set[str]
) -> Callable[[list[str]], set[str]]:
    """`ids` -> those of them out of the query's context (`_absent`), each id checked once.

    `first` were checked already and `known` are those of them found out.
    """
    checked = set(first)
    out = set(known)

    def outside(ids: list[str]) -> set[str]:
        fresh = [node_id for node_id in ids if node_id not in checked]
        out.update(_absent(run, text, fresh))
        checked.update(fresh)
        return out.intersection(ids)

    return outside


def _context(run: Run, text: str) -> set[str]:
    """The conversations the query's named speakers spoke in: those wholes (computed
    by `_absent`) and all their parts.  O(edges touching the wholes)."""
    named = tuple(speaker_index(run.graph).query_speakers(text))
    wholes = run.joined[named]
    return wholes.union(*run.reader.parts_of(wholes).values())


def _in_context(run: Run, text: str, context: set[str]) -> Callable[[str], bool]:
    """A filter keeping the query's context out of the other conversations' turns.

    It accepts the `context` ids, the named speakers' nodes and every
    unattributed node (documents, facts, sessions: a session outside the
    context is still found out by `_absent` and set aside).  So it rejects
    only turns `_absent` calls out of context.  O(1) per id.
    """
    index = speaker_index(run.graph)
    named = set(index.query_speakers(text))

    def accept(node_id: str) -> bool:
        if node_id in context:
            return True
        speaker = index.speaker(node_id)
        return speaker is None or speaker in named

    return accept


def _absent(run: Run, text: str, node_ids: Iterable[str]) -> set[str]:
    """The `node_ids` of conversations no speaker `text` names took part in.

    Those are turns said by others whose wholes are all outside the wholes the
    named speakers spoke in, and such wholes themselves (an unattributed node
    with attributed parts: another conversation's session).  Empty when
    `text` names no known speaker or the index knows fewer than two.  The
    wholes each named group spoke in are computed once per retrieval.
    O(out-edges of the named speakers' turns and of `node_ids` + in-edges
    of the unattributed `node_ids`).
    """
    index = speaker_index(run.graph)
    named = tuple(index.query_speakers(text))
    if not named or index.speakers() < 2:
        return set()
    ids = sorted(set(node_ids))
    others = [
        node_id
        for node_id in ids
        if (speaker := index.speaker(node_id)) is not None and speaker not in named
    ]
    joined = run.joined.get(named)
    if joined is None:
        theirs = {node_id for key in named for node_id in index.authored(key)}
        wholes_of = run.reader.wholes_of(theirs)
        joined = run.joined[named] = {whole for wholes in wholes_of.values() for whole in wholes}
    if not joined:
        return set()
    out = {
        node_id
        for node_id, wholes in run.reader.wholes_of(others).items()
        if joined.isdisjoint(wholes)
    }
    unattributed = [n for n in ids if index.speaker(n) is None and n not in joined]
    if unattributed:
        for whole, parts in run.reader.parts_of(unattributed).items():
            if any(index.speaker(part) is not None for part in parts):
                out.add(whole)
    return out


def speaker_stage(run: Run, text: str) -> None:
    """Stage 4c: candidates said by a speaker the query does not name × `other_speaker_factor`.

    Runs only when the query names (capitalised) a speaker of the speaker
    index and the index knows at least two speakers (`attribution`).  A
    candidate of another speaker that says more of the question than the
    named speakers did (`_said_by_someone_else`) is kept as it is.
    Input: ``run.entries`` and the query text.  Output: their scores,
    ``stats.other_speaker_demoted`` and ``stats.other_speaker_kept``.
    """
    factor = run.settings.other_speaker_factor
    run.stats["other_speaker_demoted"] = 0
    run.stats["other_speaker_kept"] = 0
    if factor >= 1.0 or not run.entries:
        return
    index = speaker_index(run.graph)
    named = set(index.query_speakers(text))
    if not named or index.speakers() < 2:
        return
    others = [
        node_id
        for node_id in sorted(run.entries)
        if (speaker := index.speaker(node_id)) is not None and speaker not in named
    ]
    kept = _said_by_someone_else(run, text, named, others)
    for node_id in others:
        if node_id not in kept:
            run.entries[node_id].score *= factor
    run.mechanisms.append("speaker_attribution")
    run.stats["other_speaker_demoted"] = len(others) - len(kept)
    run.stats["other_speaker_kept"] = len(kept)


def _said_by_someone_else(run: Run, text: str, named: set[str], others: Sequence[str]) -> set[str]:
    """The `others` whose coverage beats `said_it_ratio` × the named speakers' best coverage.

    Coverage of a candidate = Σ idf of the distinct query terms it contains,
    the words of the named speakers' keys left out (every turn of a speaker
    opens with her name, so the name says nothing about *what* was said).
    Term presence, not BM25: a short reply ("Wow, pottery!") must not out-say
    a longer turn that holds the same words.  O(postings of the query terms).
    """
    names = {word for key in named for word in key.split()}
    tokens = [token for token in bm25_tokens(text) if entity_key([token]) not in names]
    if not tokens or not others:
        return set()
    coverage = _coverage(run, tokens)
    index = speaker_index(run.graph)
    said = max(
        (coverage.get(node_id, 0.0) for node_id in run.entries if index.speaker(node_id) in named),
        default=0.0,
    )
    bar = run.settings.said_it_ratio * said
    return {node_id for node_id in others if coverage.get(node_id, 0.0) > bar}


def _coverage(run: Run, tokens: Sequence[str]) -> dict[str, float]:
    """Candidate -> Σ idf (the BM25 index's) of the distinct `tokens` it contains.

    Term presence, not BM25 (no length normalisation).  O(postings of the tokens).
    """
    text_index = run.text_index()
    coverage: dict[str, float] = {}
    for term, token in sorted(dict(zip(text_index.terms(tokens), tokens, strict=True)).items()):
        idf = text_index.idf(term)
        for node_id in text_index.scores([token], allow=run.entries.__contains__):
            coverage[node_id] = coverage.get(node_id, 0.0) + idf
    return coverage


def content_stage(run: Run, text: str) -> None:
    """Stage 4d: the named speaker's content, when the query names a speaker.

    Input: ``run.entries`` and the query text.  Output: their scores.
    Query tokens here are those that are neither a named speaker's name nor
    a function word (`entities.FUNCTION_WORDS`).  First `_speaker_focus`
    (her candidates gain from name-free BM25 over her turns), then every
    candidate × (floor + (1 − floor) × c / max c), c = `_coverage` of those
    tokens.  Same gate as `speaker_stage` (a named speaker, >= 2 speakers)
    and a query token left; the scaling does nothing when no candidate holds
    one.  Adds ``"speaker_content"`` to the mechanisms; ``stats.content_scaled`` counts
    the scaled candidates, ``stats.speaker_focused`` the lifted ones.
    """
    floor = run.settings.content_floor
    run.stats["content_scaled"] = 0
    run.stats["speaker_focused"] = 0
    if (floor >= 1.0 and run.settings.speaker_focus_gain <= 0.0) or not run.entries:
        return
    index = speaker_index(run.graph)
    named = set(index.query_speakers(text))
    if not named or index.speakers() < 2:
        return
    names = {word for key in named for word in key.split()}
    tokens = [
        token
        for token in bm25_tokens(text)
        if entity_key([token]) not in names and token not in FUNCTION_WORDS
    ]
    if not tokens:
        return
    run.mechanisms.append("speaker_content")
    if run.settings.speaker_focus_gain > 0.0:
        run.stats["speaker_focused"] = _speaker_focus(run, text, named, tokens)
    coverage = _coverage(run, tokens) if floor < 1.0 else {}
    best = max(coverage.values(), default=0.0)
    scaled = 0
    for node_id, entry in run.entries.items():
        share = coverage.get(node_id, 0.0) / best if best > 0.0 else 1.0
        if share < 1.0:
            entry.score *= floor + (1.0 - floor) * share
            scaled += 1
    run.stats["content_scaled"] = scaled


def _speaker_focus(run: Run, text: str, named: set[str], tokens: Sequence[str]) -> int:
    """Her candidates ⊕ gain × best score × name-free BM25 / its best; returns how many gained.

    BM25 of `tokens` over the candidates said by a named speaker only.
    Skipped (0) when `_said_by_someone_else` keeps some other speaker's
    candidate: that question may name the wrong person.  O(postings of the tokens).
    """
    index = speaker_index(run.graph)
    others = [
        node_id
        for node_id in sorted(run.entries)
        if (speaker := index.speaker(node_id)) is not None and speaker not in named
    ]
    if _said_by_someone_else(run, text, named, others):
        return 0
    hers = run.text_index().scores(
        tokens, allow=lambda node_id: node_id in run.entries and index.speaker(node_id) in named
    )
    top = max(hers.values(), default=0.0)
    if top <= 0.0:
        return 0
    lift = run.settings.speaker_focus_gain * max(entry.score for entry in run.entries.values())
    for node_id, value in hers.items():
        entry = run.entries[node_id]
        entry.score = combine_evidence(entry.score, lift * value / top)
    return len(hers)
