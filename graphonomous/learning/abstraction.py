"""Consolidation stage 7: semantic summaries of clusters of related episodes.

Seed 003's "generate_abstractions: create semantic nodes from episodic
clusters", done extractively (no language model):

- **Episodes** considered: live episodic nodes not yet abstracted — an
  episode is abstracted once a consolidation summary points at it with a
  ``derived_from`` edge.  Those edges never decay, so a cluster is never
  summarised twice.
- **Clusters**: connected components over two kinds of links between such
  episodes — an edge of any kind except ``contradicts``/``supersedes``/
  ``superseded_by``, and a near pair of this run with similarity >=
  ``abstraction_similarity``.  Components with ``abstraction_min_cluster``
  to ``abstraction_max_cluster`` members are summarised (a bigger component
  is a whole topic, not one pattern), smallest member id first, at most
  ``max_abstractions_per_run`` per run.
- **Summary**: the first sentence of the cluster's medoid (the member whose
  vector has the largest summed cosine to the others; ties: smaller id) and
  the cluster's shared keywords (content words found in at least half of the
  members, most frequent first, at most `MAX_KEYWORDS`).  It is stored as a
  semantic node (creation_source ``consolidation``, confidence = the mean
  member confidence, ``metadata.abstraction_of`` = member ids) with a
  ``derived_from`` edge to every member.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final

from ..model import Node
from ..records import node_from_fields
from ..retrieval.experience import SUMMARY_MEMBERS_KEY, SUMMARY_SOURCE
from ..retrieval.keywords import distinct_words
from .conflicts import EPISODE_TYPE, JUDGED_RELATIONSHIPS
from .similarity import NearPair
from .writes import insert_node, link

if TYPE_CHECKING:
    from ..retrieval.graph_view import GraphEngine
    from .consolidation_config import ConsolidationConfig

SUMMARY_TYPE: Final = "semantic"
# SUMMARY_SOURCE (a member of model.CREATION_SOURCES) and SUMMARY_MEMBERS_KEY
# live in retrieval.experience, which treats summaries as retrieval aids.
GROUNDING_RELATIONSHIP: Final = "derived_from"
# Grounding edges are the record of what was abstracted: they never fade.
GROUNDING_DECAY_RATE: Final = 0.0
GROUNDING_STRENGTH: Final = 0.5
MAX_KEYWORDS: Final = 5
MAX_SENTENCE_CHARS: Final = 200
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+")


class _Components:
    """Union-find over node ids (path halving, union by smaller id as root)."""

    def __init__(self, items: Iterable[str]) -> None:
        self.parent = {item: item for item in items}

    def find(self, item: str) -> str:
        parent = self.parent
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def groups(self) -> list[list[str]]:
        grouped: dict[str, list[str]] = {}
        for item in sorted(self.parent):
            grouped.setdefault(self.find(item), []).append(item)
        return sorted(grouped.values())


def unabstracted_episodes(graph: GraphEngine) -> set[str]:
    """Ids of live episodic nodes that no consolidation summary is derived from.  One query."""
    return graph.store.unabstracted_nodes(EPISODE_TYPE, GROUNDING_RELATIONSHIP, SUMMARY_SOURCE)


def episode_clusters(
    graph: GraphEngine,
    episodes: set[str],
    pairs: Iterable[NearPair],
    config: ConsolidationConfig,
) -> tuple[list[list[str]], int]:
    """Components of the episode link graph in the size window, and how many were too big."""
    components = _Components(episodes)
    for source, target in graph.store.edges_within_type(EPISODE_TYPE, JUDGED_RELATIONSHIPS):
        if source in episodes and target in episodes:
            components.union(source, target)
    for pair in pairs:
        if (
            pair.similarity >= config.abstraction_similarity
            and pair.a in episodes
            and pair.b in episodes
        ):
            components.union(pair.a, pair.b)
    groups = [g for g in components.groups() if len(g) >= config.abstraction_min_cluster]
    fitting = [g for g in groups if len(g) <= config.abstraction_max_cluster]
    return fitting, len(groups) - len(fitting)


def medoid(members: Sequence[str], vectors: dict[str, list[float]]) -> str:
    """The member with the largest summed cosine to the other members (ties: smaller id).

    With unit vectors, Σ_j≠i cos(v_i, v_j) = v_i · S − v_i · v_i where S = Σ_j v_j,
    so one pass over the members suffices: O(m·d).  Sums are `math.fsum`
    (exact, so the choice does not depend on the summation order).
    """
    present = [m for m in sorted(members) if m in vectors]
    if not present:
        return min(members)
    total = [math.fsum(column) for column in zip(*(vectors[m] for m in present), strict=True)]

    def score(member: str) -> float:
        own = vectors[member]
        return math.fsum(a * (b - a) for a, b in zip(own, total, strict=True))

    best, best_score = present[0], score(present[0])
    for member in present[1:]:
        value = score(member)
        if value > best_score:  # strictly: on a tie the smaller id stays
            best, best_score = member, value
    return best


def first_sentence(text: str) -> str:
    sentence = _SENTENCE_END.split(" ".join(text.split()), maxsplit=1)[0]
    if len(sentence) > MAX_SENTENCE_CHARS:
        sentence = sentence[: MAX_SENTENCE_CHARS - 1].rstrip() + "…"
    return sentence


def shared_keywords(texts: Sequence[str]) -> list[str]:
    """Content words in at least half of `texts`, most frequent first, then alphabetical."""
    counts: dict[str, int] = {}
    for text in texts:
        for word in distinct_words(text):
            counts[word] = counts.get(word, 0) + 1
    needed = (len(texts) + 1) // 2
    common = [word for word, count in counts.items() if count >= needed]
    common.sort(key=lambda word: (-counts[word], word))
    return common[:MAX_KEYWORDS]


def summary_text(members: Sequence[Node], vectors: dict[str, list[float]]) -> tuple[str, list[str]]:
    """The extractive summary of a cluster and its keywords (module docstring)."""
    by_id = {node.id: node for node in members}
    center = by_id[medoid([node.id for node in members], vectors)]
    keywords = shared_keywords([node.content for node in members])
    text = f"Summary of {len(members)} related episodes: {first_sentence(center.content)}"
    if keywords:
        text += f" (shared: {', '.join(keywords)})"
    return text, keywords


def abstract_episodes(
    graph: GraphEngine,
    pairs: Iterable[NearPair],
    config: ConsolidationConfig,
    now: str,
) -> dict[str, Any]:
    """Stage 7 (module docstring), inside the run's transaction.

    Output: ``{"clusters_found", "clusters_too_large", "abstractions_created",
    "summaries": [{"node_id", "members"}]}``.  Complexity: O(V_e + E_e) over
    the episodic subgraph, plus O(m² d) per summarised cluster of m members.
    """
    clusters, too_large = episode_clusters(graph, unabstracted_episodes(graph), pairs, config)
    chosen = clusters[: config.max_abstractions_per_run]
    episodes = graph.store.get_nodes([m for members in chosen for m in members])
    index = graph.vector_index()
    summaries = []
    texts = []
    for members in chosen:
        vectors = {m: v for m in members if (v := index.get(m)) is not None}
        texts.append(summary_text([episodes[m] for m in members], vectors))
    embedded = graph.embed_texts([text for text, _ in texts]) if texts else []
    for members, (text, keywords), vector in zip(chosen, texts, embedded, strict=True):
        confidence = sum(episodes[m].confidence for m in members) / len(members)
        node = node_from_fields(
            {
                "node_type": SUMMARY_TYPE,
                "content": text,
                "metadata": {SUMMARY_MEMBERS_KEY: list(members), "keywords": keywords},
                "confidence": min(1.0, max(0.0, confidence)),
                "creation_source": SUMMARY_SOURCE,
            },
            now=now,
        )
        insert_node(graph, node, vector)
        for member in members:
            edge_id, _ = link(
                graph.store,
                node.id,
                member,
                GROUNDING_RELATIONSHIP,
                now,
                strength=GROUNDING_STRENGTH,
            )
            graph.store.update_edge(edge_id, decay_rate=GROUNDING_DECAY_RATE)
        summaries.append({"node_id": node.id, "members": list(members)})
    return {
        "clusters_found": len(clusters),
        "clusters_too_large": too_large,
        "abstractions_created": len(summaries),
        "summaries": summaries,
    }
