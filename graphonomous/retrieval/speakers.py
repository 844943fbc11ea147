"""The speaker index: who said each ``"<Speaker>: ..."`` node, kept current with the database.

Speaker attribution (`attribution`) and the participant scope
(`scope.participant_stage`) ask, for every query, whether it names a
known speaker and, when it does, who said each candidate.  That is a small
table — node id -> label key for the attributed nodes only — so it is its own
derived index, separate from the entity index (`entities`): a query naming no
known speaker reads just this table, never the entity postings (at 50K
nodes of real text loading the saved entity index took 1.5 s of a cold
`recall`; this table loads in a few milliseconds).

Rules of this file:

* Derived state only: built from the nodes' content on first use, kept
  current on every committed write and saved by the engine like the other
  text mirrors (`Engine.text_mirror`, derived index ``mirror/speakers``); a
  GDPR erase drops every saved index, so nothing erased survives here.
* Keys are `entities.entity_key` of the label's words (one home for keys),
  so a speaker key and the entity key of the same name are equal.
* A label is a *speaker* once it opens `attribution.MIN_SPEAKER_PASSAGES`
  live nodes; a query names only speakers.
* Not thread-safe by itself: the facade calls it under its lock.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import Any, Final

from ..engine import Engine
from .attribution import MIN_SPEAKER_PASSAGES, name_mentions, speaker_of
from .entities import entity_key

# The saved copy's layout (`SpeakerIndex.dump`).
_DUMP_FORMAT: Final = "graphonomous-speakers/1"
# The engine's name of this mirror (its saved copy is "mirror/speakers").
MIRROR_NAME: Final = "speakers"


class SpeakerIndex:
    """Node id -> speaker key of the attributed nodes, and speaker key -> the nodes it opens.

    >>> index = SpeakerIndex()
    >>> for i in range(MIN_SPEAKER_PASSAGES):
    ...     index.add(f"m{i}", f"Melanie: turn {i}")
    ...     index.add(f"c{i}", f"Caroline: turn {i}")
    >>> index.add("t", "Atlantis: The Lost Empire")
    >>> index.speakers(), index.speaker("m0"), index.speaker("t")
    (2, 'melani', 'atlantis')
    >>> index.query_speakers("What did Melanie paint?"), index.query_speakers("Atlantis?")
    (['melani'], [])
    """

    def __init__(self) -> None:
        self._speaker: dict[str, str] = {}
        self._authored: dict[str, set[str]] = {}

    def __len__(self) -> int:
        return len(self._speaker)

    def add(self, node_id: str, content: str) -> None:
        """Index (or re-index) one node's content.  O(label length)."""
        self.remove(node_id)
        label = speaker_of(content)
        speaker = entity_key(label) if label else ""
        if speaker:
            self._set(sys.intern(node_id), sys.intern(speaker))

    def add_many(self, items: Iterable[tuple[str, str]]) -> None:
        for node_id, content in items:
            self.add(node_id, content)

    def remove(self, node_id: str) -> None:
        """Forget a node (no-op if unknown).  O(1)."""
        speaker = self._speaker.pop(node_id, None)
        if speaker is not None:
            authored = self._authored[speaker]
            authored.discard(node_id)
            if not authored:
                del self._authored[speaker]

    def _set(self, node_id: str, speaker: str) -> None:
        self._speaker[node_id] = speaker
        self._authored.setdefault(speaker, set()).add(node_id)

    def dump(self) -> bytes:
        """The whole index as bytes (`load` restores it, dict order included).  O(size)."""
        state = {"format": _DUMP_FORMAT, "speaker": list(self._speaker.items())}
        return json.dumps(state, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    @classmethod
    def load(cls, data: bytes) -> SpeakerIndex | None:
        """An index from `dump` bytes; None when they are not a readable dump.  O(size)."""
        try:
            state = json.loads(data.decode("utf-8"))
            if not isinstance(state, dict) or state.get("format") != _DUMP_FORMAT:
                return None
            index = cls()
            intern = sys.intern
            for node, speaker in state["speaker"]:
                if not isinstance(node, str) or not isinstance(speaker, str) or not speaker:
                    return None
                index._set(intern(node), intern(speaker))
        except (UnicodeDecodeError, ValueError, KeyError, TypeError):
            return None
        return index

    def speaker(self, node_id: str) -> str | None:
        """The label key of a ``"<Speaker>: ..."`` node (`attribution`), else None.

        A label opening fewer than `MIN_SPEAKER_PASSAGES` nodes is not a
        speaker of `speakers`/`query_speakers`, so a query never names it.
        """
        return self._speaker.get(node_id)

    def authored(self, key: str) -> frozenset[str]:
        """The nodes a speaker key opens (``"<Speaker>: ..."``), empty if none.  O(its nodes)."""
        return frozenset(self._authored.get(key, ()))

    def speakers(self) -> int:
        """How many labels open >= `MIN_SPEAKER_PASSAGES` nodes (the speakers).  O(labels)."""
        return sum(len(nodes) >= MIN_SPEAKER_PASSAGES for nodes in self._authored.values())

    def query_speakers(self, text: str) -> list[str]:
        """The known speakers a question names by a capitalised name (`attribution`)."""
        found: list[str] = []
        for words in name_mentions(text):
            key = entity_key(words)
            if len(self._authored.get(key, ())) >= MIN_SPEAKER_PASSAGES and key not in found:
                found.append(key)
        return found


def speaker_index(engine: Engine[Any, Any]) -> SpeakerIndex:
    """The speaker index of searchable content, kept current with the database by the
    engine like the BM25 index."""
    index = engine.text_mirror(MIRROR_NAME, SpeakerIndex)
    assert isinstance(index, SpeakerIndex)
    return index


__all__ = ["MIRROR_NAME", "SpeakerIndex", "speaker_index"]
