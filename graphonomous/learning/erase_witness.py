"""What a later process needs to look for erased bytes again without knowing them.

Rules of this module (SPEC.md, "GDPR erase", the witness):
- An erase whose physical scrub is not proven leaves a *witness* beside the
  database, ``<db>-erase-pending`` (JSON, stdlib only): per erased text (whole
  content and each sentence of at least ``MIN_QUOTE_CHARS``), its UTF-8
  length, a keyed digest (BLAKE2b), and an *anchor* — the byte offset of one of
  its words and a 16-bit keyed tag of that word.  The key is random per file.
  It holds no text: the digest confirms only a guess of the whole text, the
  16-bit tag matches thousands of words of any vocabulary.  It also keeps the
  ids of the nodes found quoting the text, each with the keyed digest of its
  content then: such a node still quotes while its content is unchanged.
- :func:`find` reads files in chunks, tags every distinct word of each chunk,
  and at each occurrence of a word whose tag matches an anchor compares the
  digest of the bytes the text would span: an exact byte search in O(file
  size + candidate occurrences).  A hit returns the bytes found — the erased
  text, recovered from the file itself, so the caller can name the nodes
  still holding it.
- The witness is removed once a scrub is proven; a crash leaves it, and the
  next ``erase --finish`` (or consolidation) looks again.
- Limits: the anchor word is interior to the text when the text has three
  words or more; a text of one or two words is found only where its first
  word is not glued to letters before it.  Text SQLite split over overflow
  pages (a content longer than a page, ≈ 4 KB) is found only where it is
  contiguous — the same limit as the in-memory byte search.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac  # compare_digest: a constant-time comparison
import json
import os
import re
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

WITNESS_SUFFIX: Final = "-erase-pending"
_FORMAT: Final = "graphonomous-erase-witness/1"
# A word for anchoring: bytes of letters, digits and any non-ASCII UTF-8 byte, so the
# file and the text are tokenised alike whatever their script.
_WORD: Final = re.compile(rb"[0-9A-Za-z_\x80-\xff]+")
# Bytes of the keyed anchor tag: 16 bits, so a tag names no word (≈ 65K words share it)
# while a chunk's distinct words yield only a handful of false candidates.
TAG_BYTES: Final = 2
# Bytes of a text's keyed digest (256 bits, a collision-free confirmation).
DIGEST_BYTES: Final = 32
# Distinct words whose tags are remembered between chunks (bounded memory on a large file).
TAG_CACHE_MAX: Final = 1 << 20
# Bytes of the random key (128 bits: no precomputed table applies).
KEY_BYTES: Final = 16
# Bytes read per step of the search (the same chunking as the in-memory byte search).
SCAN_CHUNK: Final = 1 << 20


@dataclass(frozen=True)
class Entry:
    """One erased text as the witness keeps it."""

    length: int
    anchor_offset: int
    anchor_tag: str
    digest: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "length": self.length,
            "anchor_offset": self.anchor_offset,
            "anchor_tag": self.anchor_tag,
            "digest": self.digest,
        }


@dataclass(frozen=True)
class Witness:
    """The key and the entries of one witness file."""

    key: bytes
    entries: tuple[Entry, ...]
    quoting: dict[str, str]  # node id -> keyed digest of its content when found quoting


def file_backed(db_path: str) -> bool:
    """Whether `db_path` names a database file (not ``:memory:``, not a server URL)."""
    return bool(db_path) and db_path != ":memory:" and os.path.isfile(db_path)


def path_of(db_path: str) -> str:
    """The witness file of a database file."""
    return db_path + WITNESS_SUFFIX


def _tag(key: bytes, word: bytes) -> str:
    return hashlib.blake2b(word, key=key, digest_size=TAG_BYTES, person=b"anchor").hexdigest()


def digest(key: bytes, data: bytes) -> str:
    """The keyed digest of one text's bytes (BLAKE2b with the witness key)."""
    return hashlib.blake2b(data, key=key, digest_size=DIGEST_BYTES, person=b"text").hexdigest()


def _entry(key: bytes, text: str) -> Entry | None:
    data = text.encode("utf-8")
    words = list(_WORD.finditer(data))
    if not words:
        return None
    interior = words[1:-1] if len(words) >= 3 else words
    anchor = max(interior, key=lambda m: (len(m.group()), -m.start()))
    return Entry(len(data), anchor.start(), _tag(key, anchor.group()), digest(key, data))


def load(db_path: str) -> Witness | None:
    """The witness of `db_path`, or None (absent).  An unreadable witness raises OSError
    or ValueError: the caller reports it (a scrub cannot be proven without it)."""
    try:
        with open(path_of(db_path), encoding="utf-8") as handle:
            raw = json.load(handle)
    except FileNotFoundError:
        return None
    if not isinstance(raw, dict) or raw.get("format") != _FORMAT:
        raise ValueError(f"{path_of(db_path)} is not an erase witness")
    entries = tuple(
        Entry(int(e["length"]), int(e["anchor_offset"]), str(e["anchor_tag"]), str(e["digest"]))
        for e in raw["entries"]
    )
    quoting = {str(k): str(v) for k, v in raw.get("quoting", {}).items()}
    return Witness(bytes.fromhex(raw["key"]), entries, quoting)


def add(db_path: str, texts: Iterable[str]) -> Witness:
    """Add `texts` to the witness of `db_path` (created with a fresh key when absent);
    returns it.  Written to a temporary name and renamed: a crash leaves the old or the
    new file."""
    witness = load(db_path) or Witness(secrets.token_bytes(KEY_BYTES), (), {})
    known = {e.digest for e in witness.entries}
    entries = list(witness.entries)
    for text in texts:
        entry = _entry(witness.key, text)
        if entry is not None and entry.digest not in known:
            known.add(entry.digest)
            entries.append(entry)
    updated = Witness(witness.key, tuple(sorted(entries, key=lambda e: e.digest)), witness.quoting)
    _write(db_path, updated)
    return updated


def set_quoting(db_path: str, witness: Witness, quoting: dict[str, str]) -> None:
    """Replace the quoting nodes the witness remembers (id -> content)."""
    digests = {
        node_id: digest(witness.key, text.encode("utf-8")) for node_id, text in quoting.items()
    }
    _write(db_path, Witness(witness.key, witness.entries, digests))


def still_quoting(witness: Witness, contents: dict[str, str]) -> list[str]:
    """Remembered quoting nodes whose content (`contents`: id -> content of the nodes that
    still exist) is unchanged since they were found quoting, sorted."""
    return sorted(
        node_id
        for node_id, text in contents.items()
        if witness.quoting.get(node_id) == digest(witness.key, text.encode("utf-8"))
    )


def _write(db_path: str, witness: Witness) -> None:
    body = {
        "format": _FORMAT,
        "key": witness.key.hex(),
        "entries": [e.to_dict() for e in witness.entries],
        "quoting": dict(sorted(witness.quoting.items())),
    }
    target = path_of(db_path)
    scratch = target + ".tmp"
    with open(scratch, "w", encoding="utf-8") as handle:
        json.dump(body, handle, sort_keys=True)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(scratch, target)


def clear(db_path: str) -> None:
    """Remove the witness (the scrub is proven)."""
    for name in (path_of(db_path), path_of(db_path) + ".tmp"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)


def find(witness: Witness, paths: Sequence[str]) -> dict[str, list[str]]:
    """``{file name: [texts found]}`` for the files among `paths` whose bytes hold a
    text of the witness (found texts decoded from the file, sorted).  Complexity:
    O(total file size + occurrences of the candidate anchor words)."""
    by_tag: dict[str, list[Entry]] = {}
    for entry in witness.entries:
        by_tag.setdefault(entry.anchor_tag, []).append(entry)
    if not by_tag:
        return {}
    overlap = max(e.length for e in witness.entries)
    tags: dict[bytes, str] = {}
    found: dict[str, list[str]] = {}
    for path in paths:
        hits = _find_in(path, witness.key, by_tag, overlap, tags)
        if hits:
            found[os.path.basename(path)] = sorted(hits)
    return found


def _find_in(
    path: str, key: bytes, by_tag: dict[str, list[Entry]], overlap: int, tags: dict[bytes, str]
) -> set[str]:
    hits: set[str] = set()
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below; a vanished file holds nothing
    except FileNotFoundError:
        return hits
    with handle:
        tail = b""
        while chunk := handle.read(SCAN_CHUNK):
            window = tail + chunk
            for word in set(_WORD.findall(window)):
                tag = tags.get(word)
                if tag is None:
                    if len(tags) >= TAG_CACHE_MAX:
                        tags.clear()
                    tag = tags[word] = _tag(key, word)
                for entry in by_tag.get(tag, ()):
                    hits.update(_matches(window, word, entry, key))
            tail = window[-overlap:]
    return hits


def _matches(window: bytes, word: bytes, entry: Entry, key: bytes) -> Iterable[str]:
    position = window.find(word)
    while position >= 0:
        start = position - entry.anchor_offset
        candidate = window[start : start + entry.length] if start >= 0 else b""
        if len(candidate) == entry.length and hmac.compare_digest(
            digest(key, candidate), entry.digest
        ):
            yield candidate.decode("utf-8", "replace")
        position = window.find(word, position + 1)


def restore(db_path: str, previous: Witness | None) -> None:
    """Put back the witness as it was before an erase that rolled back."""
    if previous is None:
        clear(db_path)
    else:
        _write(db_path, previous)
