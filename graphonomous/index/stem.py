"""A light, deterministic English suffix stripper for the BM25 index.

BM25 matches words exactly, so "activities" misses "activity" and "painted"
misses "painting".  A full stemmer (Porter 1980, five steps, dozens of
suffixes) also conflates words that mean different things ("university" /
"universe"); this one only undoes inflection — plural / third person ``-s``,
past ``-ed``, progressive ``-ing``, adverbial ``-ly`` — and spells a final
``y`` as ``i`` so that "study", "studies" and "studied" meet.  Rules, applied
in this order to one lower-cased token (the output of `embed.tokenize`):

0. Tokens shorter than `MIN_STEM_INPUT` (3) characters, or with any
   non-letter (digits, ``_``), are returned unchanged.
1. Plural: ``-ies`` → ``-i``; ``-sses``, ``-xes``, ``-ches``, ``-shes``,
   ``-zzes`` lose ``-es``; any other final ``s`` is dropped unless the token
   ends in ``ss``, ``us`` or ``is`` (class, status, analysis).
2. Then at most one of: ``-ied`` → ``-i``; ``-ed`` / ``-ing`` are dropped
   when what remains has a vowel (a e i o u y) — words ending in ``-eed``
   keep it (need, agreed) — and the stem is then repaired: a final double
   consonant other than l, s, z is halved (stopped → stop), else a stem of
   the shape consonants–one vowel–one consonant (not w, x, y) gets its ``e``
   back (liked → like, making → make; Porter's "*o" rule);
   ``-ly`` is dropped when at least `MIN_LY_STEM` (4) characters remain and
   the last of them is not a, i, o, u or y (really → real, lovely → love,
   family stays).
3. A final ``ie`` becomes ``i``, and a final ``y`` after a consonant becomes
   ``i`` (movie → movi, happy → happi).

No rule applies if its result would be shorter than `MIN_STEM` (3)
characters.  Known misses, accepted for simplicity: dance / danced ("danc"),
change / changed, add / added ("ad").  Complexity: O(len(token)).
Reference for the repair rules: M. F. Porter, "An algorithm for suffix
stripping", Program 14(3), 1980 (step 1 only, simplified).
"""

from __future__ import annotations

import re
from typing import Final

MIN_STEM_INPUT: Final = 3
MIN_STEM: Final = 3
MIN_LY_STEM: Final = 4
VOWELS: Final = frozenset("aeiouy")
PLURAL_ES_ENDINGS: Final = ("sses", "xes", "ches", "shes", "zzes")
KEEP_S_ENDINGS: Final = ("ss", "us", "is")
UNDOUBLED_EXCEPTIONS: Final = frozenset("lsz")
# "-ly" stays after these letters: "family", "happily", "only" are not adverbs of "fami"...
LY_KEEPERS: Final = frozenset("aiouy")
# consonants, exactly one vowel, one consonant other than w, x, y: "lik", "mak", "writ"
SHORT_STEM: Final = re.compile(r"[^aeiou]*[aeiou][^aeiouwxy]")


def _strip_plural(token: str) -> str:
    if token.endswith("ies"):
        return _shorter(token, token[:-3] + "i")
    if token.endswith(PLURAL_ES_ENDINGS):
        return _shorter(token, token[:-2])
    if token.endswith("s") and not token.endswith(KEEP_S_ENDINGS):
        return _shorter(token, token[:-1])
    return token


def _repair(stem: str) -> str:
    """Undo the spelling change of adding -ed / -ing (Porter step 1b, simplified)."""
    last = stem[-1]
    if (
        len(stem) >= 2
        and stem[-2] == last
        and last not in VOWELS
        and last not in UNDOUBLED_EXCEPTIONS
    ):
        return stem[:-1]
    if SHORT_STEM.fullmatch(stem):
        return stem + "e"
    return stem


def _strip_inflection(token: str) -> str:
    if token.endswith("ied"):
        return _shorter(token, token[:-3] + "i")
    if token.endswith("eed"):
        return token
    for suffix in ("ed", "ing"):
        if token.endswith(suffix):
            stem = token[: -len(suffix)]
            if len(stem) >= MIN_STEM and VOWELS.intersection(stem):
                return _repair(stem)
            return token
    if token.endswith("ly"):
        stem = token[:-2]
        if len(stem) >= MIN_LY_STEM and stem[-1] not in LY_KEEPERS:
            return stem
    return token


def _final_i(token: str) -> str:
    if token.endswith("ie"):
        return _shorter(token, token[:-1])
    if token.endswith("y") and len(token) >= 2 and token[-2] not in VOWELS:
        return _shorter(token, token[:-1] + "i")
    return token


def _shorter(token: str, result: str) -> str:
    """`result`, unless it would be shorter than `MIN_STEM` characters."""
    return result if len(result) >= MIN_STEM else token


def light_stem(token: str) -> str:
    """The stem of one lower-cased token (module docstring has the rules).

    Input: a token as produced by `embed.tokenize`.  Output: its stem; the
    same input always gives the same output.  Complexity: O(len(token)).
    """
    if len(token) < MIN_STEM_INPUT or not token.isalpha():
        return token
    return _final_i(_strip_inflection(_strip_plural(token)))


__all__ = ["light_stem"]
