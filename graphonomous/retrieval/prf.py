"""Pseudo-relevance feedback: RM3-style expansion terms from the first-stage results.

Rules of this file: pure functions over texts, weights and an idf function;
no store access; deterministic (ties broken by the term).

RM3 (Lavrenko & Croft, "Relevance-Based Language Models", SIGIR 2001;
Abdul-Jaleel et al., "UMass at TREC 2004") estimates a relevance model from
the top documents, P(t|R) ∝ Σ_d P(t|d) · w(d), and interpolates it with the
query.  Here P(t|d) = tf(t, d) / |d| over `bm25.bm25_tokens`, w(d) = the
document's first-stage score, and each term is further weighted by its idf
so that words common to the whole store ("the", a speaker's name on every
turn) cannot be chosen; query terms are excluded (they are already in the
query).  The caller runs BM25 with the chosen terms and blends the result in
with weight ``prf_weight`` — the interpolation of RM3.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from .bm25 import bm25_tokens

# Tokens shorter than this are never expansion terms (initials, "s" of "'s").
MIN_TERM_CHARS = 3


def expansion_terms(
    documents: Iterable[tuple[str, float]],
    query_tokens: Sequence[str],
    count: int,
    term_of: Callable[[str], str],
    idf: Callable[[str], float],
) -> list[str]:
    """The `count` best expansion tokens of the feedback documents (module docstring).

    Input: (text, weight > 0) pairs, the query's raw tokens, how many terms,
    the index's token -> term map (stemming) and its idf of a term.  Tokens
    of one term are merged (the first-seen spelling is returned).  Output:
    raw tokens, best first.  O(total tokens of the documents).
    """
    excluded = {term_of(token) for token in query_tokens}
    mass: dict[str, float] = {}
    spelling: dict[str, str] = {}
    for text, weight in documents:
        tokens = bm25_tokens(text)
        if not tokens or weight <= 0.0:
            continue
        share = weight / len(tokens)
        for token in tokens:
            if len(token) < MIN_TERM_CHARS or token.isdigit():
                continue
            term = term_of(token)
            if term in excluded:
                continue
            spelling.setdefault(term, token)
            mass[term] = mass.get(term, 0.0) + share
    scored = {term: value * idf(term) for term, value in mass.items()}
    best = sorted((term for term in scored if scored[term] > 0.0), key=lambda t: (-scored[t], t))
    return [spelling[term] for term in best[:count]]


__all__ = ["expansion_terms"]
