"""Stage 4 of `retrieve_context` (effort >= 5): the graph walk and the entity walk.

Rules of this file: the seeds' scores spread over the graph by Personalized
PageRank with symmetric degree normalisation (`spread`; restart `ppr_restart`, edge
weights `graph_view.EDGE_KIND_WEIGHTS` × strength), over the radius-`local_radius`
ball around them (effort 5–7) or the whole graph (8–10), saturated at the best seed
(`saturate`) and halved outside the Louvain communities of the ball that hold a
seed (`graph_walk`).  Then the entity walk (`entity_stage`, `multihop.entity_walk`):
passages sharing entities with the seeds and the query gain evidence.  A node the
walks find keeps its best score; new ones join as neighbours of a seed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence

from ..algorithms import louvain_communities
from ..algorithms.push import ppr_push
from .entities import entity_index
from .fusion import combine_evidence
from .graph_view import (
    WALK_MIN_DEGREE,
    Link,
    WeightedGraph,
    leaky_transitions,
    walk_degrees,
    weighted_graph,
)
from .multihop import entity_walk
from .run import Run, elapsed_ms
from .settings import ENTITY_PUSH_EPSILON


def _ball(run: Run) -> tuple[list[str], dict[str, tuple[int, str | None]]]:
    """Nodes within `local_radius` hops of the seeds (at most `local_max_nodes`).

    Output: the ball's node ids (sorted) and ``{node: (hops, parent)}`` of its
    BFS tree (seeds first, parents by score, links strongest first).
    One query per layer.
    """
    tree: dict[str, tuple[int, str | None]] = {seed: (0, None) for seed in run.seeds}
    frontier = list(run.seeds)
    cap = run.settings.local_max_nodes
    for depth in range(1, run.settings.local_radius + 1):
        if not frontier or len(tree) >= cap:
            break
        run.reader.load_links(frontier)
        layer: list[str] = []
        for parent in frontier:
            for link in run.reader.links(parent):
                if link.neighbor not in tree and len(tree) < cap:
                    tree[link.neighbor] = (depth, parent)
                    layer.append(link.neighbor)
        frontier = layer
    return sorted(tree), tree


def _bfs_tree(
    links_of: Callable[[str], Sequence[Link]], sources: Sequence[str], targets: set[str]
) -> dict[str, tuple[int, str | None]]:
    """BFS parents from `sources` until every target is reached (or the graph ends).  O(V + E)."""
    tree: dict[str, tuple[int, str | None]] = {source: (0, None) for source in sources}
    frontier = list(sources)
    missing = set(targets) - set(tree)
    depth = 0
    while frontier and missing:
        depth += 1
        layer: list[str] = []
        for parent in frontier:
            for link in links_of(parent):
                if link.neighbor not in tree:
                    tree[link.neighbor] = (depth, parent)
                    missing.discard(link.neighbor)
                    layer.append(link.neighbor)
        frontier = layer
    return tree


def _walk(
    run: Run, ball: list[str], personalization: Mapping[str, float]
) -> tuple[dict[str, float], WeightedGraph, str]:
    """Walk evidence from the seeds (`spread`) and the ball's weighted graph (for Louvain).

    Local (effort 5–7): over the ball's edges, push tolerance
    `local_push_epsilon`.  Full (8–10): over every live node (of the agent),
    on the cached whole-graph snapshot, tolerance `ppr_push_epsilon`.
    """
    settings = run.settings
    if run.plan.walk == "local":
        ball_graph = weighted_graph(ball, run.graph.store.list_edges_between(ball))
        degrees = walk_degrees(ball_graph)
        transitions = leaky_transitions(ball_graph, degrees)
        epsilon, mechanism = settings.local_push_epsilon, "ppr_local"
    else:
        snapshot = run.graph.graph_snapshot()
        agent = run.stats.get("agent_id")
        if agent is None:
            transitions, degrees = snapshot.walk()
        else:
            owned = {node for node, owner in snapshot.agent.items() if owner == agent}
            mine = _restrict(snapshot.weighted(), owned)
            degrees = walk_degrees(mine)
            transitions = leaky_transitions(mine, degrees)
        ball_graph = _restrict(snapshot.weighted(), ball)
        epsilon, mechanism = settings.ppr_push_epsilon, "ppr_full"
    evidence = spread(transitions, degrees, personalization, settings.ppr_restart, epsilon)
    return evidence, ball_graph, mechanism


def spread(
    transitions: Mapping[str, Sequence[tuple[str, float]]],
    degrees: Mapping[str, float],
    scores: Mapping[str, float],
    restart: float,
    epsilon: float,
) -> dict[str, float]:
    """Seed scores spread over the walk graph with symmetric degree normalisation.

    With W the walk weights, D̃ = `walk_degrees` and S = D̃^-½ W D̃^-½, the
    spread activation is z = Σ_k (1 − restart)^k S^k s (label spreading,
    Zhou et al., "Learning with Local and Global Consistency", NIPS 2004):
    each hop multiplies by w(u, v) / √(D̃(u) D̃(v)) and by 0.85, so an edge of
    weight 0.3 (strength 0.3, a neutral kind) between two nodes with weaker
    neighbourhoods than one full edge passes 0.85 × 0.3 of a score (the
    expansion formula), and a hub neither collects nor emits more than its
    share.  Computed as Personalized PageRank: with restart weights
    p(s) = s × √D̃(s) and x = PPR(p / Σp) on the transitions w / D̃(u)
    (`leaky_transitions`), z = Σp · D̃^-½ x / restart.  Output: the part
    that arrived by walking, ``{v: z(v) − s(v) > 0}``.
    Complexity: one `ppr_push`, O(1 / (epsilon × restart)).
    """
    roots = {node: math.sqrt(degrees.get(node, WALK_MIN_DEGREE)) for node in scores}
    personalization = {node: max(score, 0.0) * roots[node] for node, score in scores.items()}
    total = sum(personalization.values())
    if total <= 0.0:
        return {}
    ranks = ppr_push(transitions, personalization, alpha_restart=restart, epsilon=epsilon)
    out = {}
    for node, rank in ranks.items():
        value = total * rank / (restart * math.sqrt(degrees[node])) - max(
            scores.get(node, 0.0), 0.0
        )
        if value > 0.0:
            out[node] = value
    return out


def saturate(value: float, ceiling: float) -> float:
    """ceiling × (1 − exp(−value / ceiling)): ≈ value when small, never above ceiling.

    Walk evidence is a *sum* over paths, so a hub next to many seeds would
    collect more than any seed has; this is the noisy-OR of many small
    contributions (1 − Π(1 − x_i) ≈ 1 − exp(−Σ x_i)) on the scale of the best
    seed.  O(1).
    """
    if ceiling <= 0.0:
        return 0.0
    return ceiling * -math.expm1(-value / ceiling)


def graph_walk(run: Run) -> None:
    """Stage 4: PageRank from the seeds, weighted by Louvain community membership.

    Every node v of the walk graph gets g(v) = `saturate`(`spread`(seeds)(v),
    S) × c(v), S = the best seed score, c(v) = 1 inside a community (Louvain
    on the ball) that holds a seed, else `out_of_community_factor`.  Scored
    nodes keep max(score, g); of the rest the `pool` best are added as
    neighbours (hops and via from the BFS tree of the ball, or of the whole
    graph for nodes outside it).  Input: ``run.seeds`` and their scores.
    Output: ``run.entries`` raised or joined; ``stats.ppr_nodes``,
    ``stats.communities``, the ``ppr`` and ``louvain`` timings.
    """
    settings = run.settings
    if not run.seeds:
        run.stats.update(ppr_nodes=0, communities=0)
        return
    started = time.perf_counter()
    ball, tree = _ball(run)
    personalization = {seed: max(run.entries[seed].score, 0.0) for seed in run.seeds}
    evidence, ball_graph, mechanism = _walk(run, ball, personalization)
    run.mechanisms.append(mechanism)
    run.timings["ppr"] = elapsed_ms(started)
    started = time.perf_counter()
    communities = louvain_communities(
        ball_graph, resolution=settings.louvain_resolution, seed=settings.louvain_seed
    )
    run.mechanisms.append("louvain")
    run.timings["louvain"] = elapsed_ms(started)
    seeds = set(run.seeds)
    inside = {node for members in communities if seeds & set(members) for node in members}
    ceiling = max(personalization.values())
    graph_scores = {
        node: saturate(value, ceiling)
        * (1.0 if node in inside else settings.out_of_community_factor)
        for node, value in evidence.items()
    }
    ranked = sorted(graph_scores, key=lambda node: (-graph_scores[node], node))
    for node in ranked:
        if node in run.entries:
            run.raise_score(node, graph_scores[node])
    fresh = [node for node in ranked if node not in run.entries]
    fresh = fresh[: run.stats["candidates"]["pool_size"]]
    run.reader.load_nodes(fresh)
    fresh = [node for node in fresh if run.reader.visible(node)]
    outside_ball = {node for node in fresh if node not in tree}
    if outside_ball:  # whole-graph walk only: find a path back to a seed
        links = run.graph.graph_snapshot().links()
        tree = {**_bfs_tree(lambda n: links.get(n, []), run.seeds, outside_ball), **tree}
    offered = 0
    for node in fresh:
        hops, via = tree[node]
        offered += run.offer(node, graph_scores[node], hops, via)
    run.stats.update(ppr_nodes=offered, communities=len(communities))


def _restrict(graph: WeightedGraph, nodes: Iterable[str]) -> WeightedGraph:
    keep = set(nodes)
    return {u: {v: w for v, w in graph[u].items() if v in keep} for u in sorted(keep) if u in graph}


def entity_stage(run: Run, text: str) -> None:
    """Stage 4b: the entity walk (`multihop.entity_walk`) from the seeds and the query's entities.

    Evidence e(p) = `entity_gain` × best seed score × relative mass m(p);
    a scored passage gets combine_evidence(score, e), a new one e (source
    "neighbor", hops 2, via the best seed sharing an entity with it).
    Input: ``run.seeds`` and the query text.  Output: ``run.entries``,
    ``stats.entity_nodes``, the ``entity_walk`` timing.
    """
    settings = run.settings
    if not run.seeds or settings.entity_gain <= 0.0:
        run.stats["entity_nodes"] = 0
        return
    started = time.perf_counter()
    index = entity_index(run.graph)
    seeds = {seed: run.entries[seed].score for seed in run.seeds}
    mass = entity_walk(
        index,
        seeds,
        index.query_entities(text),
        max_df=settings.entity_max_df,
        query_weight=settings.entity_query_weight,
        restart=settings.entity_restart,
        epsilon=ENTITY_PUSH_EPSILON,
    )
    best = max(seeds.values())
    evidence = {node: settings.entity_gain * best * m for node, m in mass.items()}
    for node, value in evidence.items():
        if node in run.entries:
            entry = run.entries[node]
            entry.score = combine_evidence(entry.score, value)
    fresh = sorted((n for n in evidence if n not in run.entries), key=lambda n: (-evidence[n], n))
    fresh = fresh[: run.stats["candidates"]["pool_size"]]
    run.reader.load_nodes(fresh)
    seed_keys = {seed: set(index.entities_of(seed)) for seed in run.seeds}
    added = 0
    for node in fresh:
        row = run.reader.node(node)
        if row is None or not run.returnable(row):
            continue
        keys = set(index.entities_of(node))
        via = next((seed for seed in run.seeds if seed_keys[seed] & keys), None)
        added += run.offer(node, evidence[node], 2 if via is not None else 1, via)
    run.mechanisms.append("entity_walk")
    run.stats["entity_nodes"] = added
    run.timings["entity_walk"] = elapsed_ms(started)
