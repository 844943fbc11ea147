"""Content words of a text: the tokens that name a topic.

Used where learning code needs words rather than vectors: the shared keywords
of an abstraction (consolidation stage 7) and the topics of a coverage query.
Tokens are the embedder's (`graphonomous.embed.tokenize`: NFKC, lower case,
``\\w+`` runs), then a plural "s" is folded away and function words, one- and
two-letter tokens and pure numbers are dropped.
"""

from __future__ import annotations

from typing import Final

from ..embed import tokenize

# Short English function words (a topic is never one of these).  Kept small on
# purpose: domain words must survive, e.g. "valve", "pressure", "deploy".
_STOPWORD_TEXT: Final = """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    few for from further had has have having he her here hers herself him himself his how
    i if in into is it its itself just me more most my myself no nor not now of off on once
    only or other our ours ourselves out over own same she should so some such than that
    the their theirs them themselves then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would you
    your yours yourself yourselves
"""
STOPWORDS: Final = frozenset(_STOPWORD_TEXT.split())
MIN_TOKEN_CHARS: Final = 3


def fold(token: str) -> str:
    """Fold a plural: a trailing "s" goes when the word is long enough and not "-ss"."""
    if len(token) > 4 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def content_words(text: str) -> list[str]:
    """The folded content words of `text`, in text order, repeats kept.

    Input: any string.  Output: tokens of at least `MIN_TOKEN_CHARS`
    characters that are not stopwords and not all digits, plural-folded.
    Complexity: O(len(text)).
    """
    return [
        fold(token)
        for token in tokenize(text)
        if len(token) >= MIN_TOKEN_CHARS and token not in STOPWORDS and not token.isdigit()
    ]


def distinct_words(text: str) -> list[str]:
    """`content_words` without repeats, in first-occurrence order.  O(len(text))."""
    return list(dict.fromkeys(content_words(text)))
