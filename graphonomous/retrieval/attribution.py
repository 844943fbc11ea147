"""Speaker attribution: who said a passage, and whom a question is about.

Rules of this file: pure functions, no store access, no I/O, deterministic.

Conversation memories are usually written as ``"<Speaker>: <text>"``
(a chat export, a transcript, the LoCoMo turns).  A question that names a
person ("What activities does Melanie partake in?") is mostly answered by
what *that person* said — the other speaker's turns that merely address her
("Wow, Melanie, ...") share her name and the topic words but not the facts.
Entity hubs (a speaker's name is on every other turn) are useless as walk
edges (`multihop`), but as an *attribution* they are precise.

* `speaker_of`: the leading attribution of a content — 1 to
  `MAX_SPEAKER_WORDS` capitalised words, then ``":"`` and a space, at the very
  start.  A code, a URL (``"https://"``: no space after the colon) or a
  lower-case label is not a speaker.
* `name_mentions`: the names a question may use for a speaker — each
  capitalised word of the question (possessive ``'s`` dropped) and each run
  of 2 to `MAX_SPEAKER_WORDS` consecutive capitalised words.  Lower-case words never count: "note"
  in "take a note" is not the speaker "Note".

A label is a speaker only when it opens `MIN_SPEAKER_PASSAGES` passages.
Both functions return word lists; `speakers.SpeakerIndex` keys them with
`entities.entity_key` (one home for keys) and keeps speaker -> passages current.
"""

from __future__ import annotations

import re
from typing import Final

# A speaker label has at most this many words ("Dr Jane Smith").
MAX_SPEAKER_WORDS: Final = 3
# A label counts as a speaker once it opens at least this many passages: a
# person in a conversation speaks many turns, while a titled paragraph
# ("Atlantis: The Lost Empire") opens one or two (measured on the MuSiQue and
# HotpotQA corpora: every such label opens exactly one).
MIN_SPEAKER_PASSAGES: Final = 3
_NAME_WORD: Final = r"[A-Z][\w'’.-]*"
_SPEAKER: Final = re.compile(rf"\s*({_NAME_WORD}(?: {_NAME_WORD}){{0,{MAX_SPEAKER_WORDS - 1}}}):\s")
_WORD: Final = re.compile(r"[^\W\d_][\w'’-]*", re.UNICODE)
_POSSESSIVE: Final = re.compile(r"['’]s?$")


def speaker_of(content: str) -> list[str] | None:
    """The speaker label's words of a ``"<Speaker>: <text>"`` content, else None."""
    match = _SPEAKER.match(content)
    return match.group(1).split() if match is not None else None


def name_mentions(text: str) -> list[list[str]]:
    """Capitalised words and runs of them in `text`, first-seen order (module docstring)."""
    found: list[list[str]] = []
    run: list[str] = []
    for word in [*_WORD.findall(text), ""]:
        name = _POSSESSIVE.sub("", word)
        if name[:1].isupper():
            run.append(name)
            found.append([name])
            continue
        found.extend(  # every sub-run: a sentence-initial "Did" must not hide "Jane Smith"
            run[start : start + size]
            for size in range(2, min(len(run), MAX_SPEAKER_WORDS) + 1)
            for start in range(len(run) - size + 1)
        )
        run = []
    return found


__all__ = ["MAX_SPEAKER_WORDS", "MIN_SPEAKER_PASSAGES", "name_mentions", "speaker_of"]
