"""Stage 2 of `retrieve_context`: graph support among the candidates, then the seeds.

Rules of this file: a candidate joined to other candidates gains from them — score =
own ⊕ support (noisy-OR, `fusion.combine_evidence`), support = the best neighbour's
own score × `transfer` of the edge, or through a shared whole (``part_of``
siblings) × `sibling_factor`.  Only own (stage-1) evidence is passed on: a node
found through the graph has nothing to vouch with.  The best `limit` scored nodes
are then the *seeds* of the later stages (`choose_seeds`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from .fusion import combine_evidence
from .graph_view import EDGE_KIND_WEIGHTS, STRUCTURAL_RELATIONSHIPS, Link
from .run import Run


def transfer(link: Link, gain: float, decay: float) -> float:
    """Share of a node's score an edge passes on: decay × min(1, gain × strength × kind weight).

    ``decay`` (`HOP_DECAY`) keeps a neighbour strictly below the node that
    vouches for it, as in expansion.  O(1).
    """
    return decay * min(1.0, gain * link.strength * EDGE_KIND_WEIGHTS[link.relationship])


def support_scores(
    own: Mapping[str, float],
    links_of: Callable[[str], Sequence[Link]],
    gain: float,
    decay: float,
    sibling_factor: float,
) -> dict[str, float]:
    """Graph support of every candidate from the other candidates.

    Input: stage-1 scores ``own`` of the candidates, their links (visible
    neighbours), the transfer gain and the factor of the two-hop path
    through a shared whole.  For candidate v:

        support(v) = max( max over links v–u to a candidate u of own(u) · τ(v–u),
                          max over wholes P with v part_of P and another
                              candidate w part_of P of
                              own(w) · τ(w→P) · τ(v→P) · sibling_factor )

    with τ = `transfer`.  Only candidates pass support (a node with no own
    evidence has nothing to vouch with), so only links among candidates and
    from candidates to their wholes matter (`GraphReader.links_among`).
    Output: ``{candidate: support > 0}``.  Complexity: O(links of the
    candidates + candidates × log).
    """
    best: dict[str, float] = {}

    def offer(node_id: str, value: float) -> None:
        if value > best.get(node_id, 0.0):
            best[node_id] = value

    wholes: dict[str, dict[str, float]] = {}
    for node_id in sorted(own):
        for link in links_of(node_id):
            share = transfer(link, gain, decay)
            if link.neighbor in own and link.neighbor != node_id:
                offer(node_id, own[link.neighbor] * share)
            if link.outgoing and link.relationship in STRUCTURAL_RELATIONSHIPS:
                parts = wholes.setdefault(link.neighbor, {})
                parts[node_id] = max(parts.get(node_id, 0.0), share)
    if sibling_factor > 0.0:
        for parts in wholes.values():
            if len(parts) < 2:
                continue
            ranked = sorted(parts, key=lambda part: (-own[part] * parts[part], part))
            for part, share in parts.items():
                other = ranked[0] if ranked[0] != part else ranked[1]
                offer(part, own[other] * parts[other] * share * sibling_factor)
    return best


def graph_support(run: Run) -> None:
    """Stage 2: candidates connected to other strong candidates gain score (noisy-OR)."""
    settings = run.settings
    own = {node_id: entry.own for node_id, entry in run.entries.items() if entry.own > 0.0}
    links = run.reader.links_among(own)
    support = support_scores(
        own,
        lambda node_id: links.get(node_id, []),
        settings.support_gain,
        settings.hop_decay,
        settings.sibling_factor,
    )
    for node_id, value in support.items():
        entry = run.entries[node_id]
        entry.score = combine_evidence(entry.own, value)
    run.stats["supported"] = len(support)


def support_stage(run: Run) -> None:
    """Stage 2 (effort >= 1): candidates joined to other candidates gain from them.

    Input: ``run.entries`` with their own scores.  Output: their scores =
    own ⊕ support (`graph_support`), ``stats.supported`` (0 when the plan has no
    support or there are no candidates).
    """
    run.stats["supported"] = 0
    if run.plan.support and run.entries:
        graph_support(run)
        run.mechanisms.append("support")


def choose_seeds(run: Run) -> None:
    """The seeds: the best `limit` scored nodes (score desc, id asc) start the graph stages.

    Input: ``run.entries`` after support.  Output: ``run.seeds``, ``stats.seeds``.
    """
    ranked = sorted(run.entries.values(), key=lambda e: (-e.score, e.node_id))
    run.seeds = [entry.node_id for entry in ranked[: run.stats["limit"]]]
    run.stats["seeds"] = len(run.seeds)
