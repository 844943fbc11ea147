"""What a later process needs to look for erased bytes again without knowing them.

Rules of this module (SPEC.md, "GDPR erase", the witness):
- An erase leaves a *witness* beside the database, ``<db>-erase-pending``
  (JSON, stdlib only), until its scrub is proven: per erased text (the whole
  content and each sentence of at least ``MIN_QUOTE_CHARS``), its UTF-8
  length, a keyed digest (BLAKE2b), and an *anchor* — the byte offset and
  length of one of its tokens and a 16-bit keyed tag of that token.  The key
  is random per file.  It holds no text: the digest confirms only a guess of
  the whole text, and a 16-bit tag fits thousands of words of any vocabulary.
- :func:`find` reads files in chunks, tags every distinct token of an
  anchor's length in each chunk, and at each occurrence of a token whose tag
  matches compares the digest of the bytes the text would span: an exact byte
  search in O(file size + candidate occurrences) — a regex scan, ≈ 25 ns per
  byte, so an erase searches its own texts with ``bytes.find`` and the
  witness only for earlier erases' texts.  A hit returns the bytes found (the
  erased text, recovered from the file itself), so the caller can name the
  nodes still holding it; it never leaves the process.
- The witness is removed once a scrub is proven; a crash leaves it, and the
  next ``erase --finish`` (or consolidation) looks again.
- Limits: the anchor token (an ASCII word, else one non-ASCII character) is
  interior to the text when the text has three tokens or more; a text of one
  or two tokens is found only where its first ASCII word is not glued to
  letters before it.  Text SQLite split over overflow pages (a content
  longer than a page, ≈ 4 KB) is found only where it is contiguous — the same
  limit as the in-memory byte search.
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
# A token for anchoring: a maximal run of ASCII letters, digits and "_", or one non-ASCII
# UTF-8 character (scripts without spaces have no words; a UTF-8 character delimits
# itself), so the text and the file are tokenised alike whatever the script.
_TOKEN: Final = re.compile(rb"[0-9A-Za-z_]+|[\xc2-\xf4][\x80-\xbf]*")
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
    """One erased text as the witness keeps it: its byte length, its keyed digest, and
    its anchor word (offset in the text, length, whether it is ASCII, keyed tag)."""

    length: int
    anchor_offset: int
    anchor_length: int
    anchor_ascii: bool
    anchor_tag: str
    digest: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "length": self.length,
            "anchor_offset": self.anchor_offset,
            "anchor_length": self.anchor_length,
            "anchor_ascii": self.anchor_ascii,
            "anchor_tag": self.anchor_tag,
            "digest": self.digest,
        }


@dataclass(frozen=True)
class Witness:
    """The key and the entries of one witness file."""

    key: bytes
    entries: tuple[Entry, ...]


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
    """The witness entry of one text; its anchor is an interior token: the longest ASCII
    word, else the non-ASCII character of the highest code point (deterministic)."""
    data = text.encode("utf-8")
    tokens = list(_TOKEN.finditer(data))
    if not tokens:
        return None
    interior = tokens[1:-1] if len(tokens) >= 3 else tokens
    anchor = max(
        interior, key=lambda m: (m.group().isascii(), len(m.group()), m.group(), -m.start())
    )
    word = anchor.group()
    return Entry(
        len(data), anchor.start(), len(word), word.isascii(), _tag(key, word), digest(key, data)
    )


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
        Entry(
            int(e["length"]),
            int(e["anchor_offset"]),
            int(e["anchor_length"]),
            bool(e["anchor_ascii"]),
            str(e["anchor_tag"]),
            str(e["digest"]),
        )
        for e in raw["entries"]
    )
    return Witness(bytes.fromhex(raw["key"]), entries)


def add(db_path: str, texts: Iterable[str]) -> Witness:
    """Add `texts` to the witness of `db_path` (created with a fresh key when absent);
    returns it.  Written to a temporary name and renamed: a crash leaves the old or the
    new file."""
    witness = load(db_path) or Witness(secrets.token_bytes(KEY_BYTES), ())
    known = {e.digest for e in witness.entries}
    entries = list(witness.entries)
    for text in texts:
        entry = _entry(witness.key, text)
        if entry is not None and entry.digest not in known:
            known.add(entry.digest)
            entries.append(entry)
    updated = Witness(witness.key, tuple(sorted(entries, key=lambda e: e.digest)))
    _write(db_path, updated)
    return updated


def _write(db_path: str, witness: Witness) -> None:
    body = {
        "format": _FORMAT,
        "key": witness.key.hex(),
        "entries": [e.to_dict() for e in witness.entries],
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


def without(witness: Witness, texts: Iterable[str]) -> Witness:
    """The witness without the entries of `texts` (those an erase searches for directly)."""
    known = {digest(witness.key, text.encode("utf-8")) for text in texts}
    kept = tuple(e for e in witness.entries if e.digest not in known)
    return Witness(witness.key, kept)


def find(witness: Witness, paths: Sequence[str]) -> dict[str, list[str]]:
    """``{file name: [texts found]}`` for the files among `paths` whose bytes hold a
    text of the witness (found texts decoded from the file, sorted).  Complexity:
    O(total file size) regex scans (one per anchor kind) + one keyed hash per distinct
    word of an anchor's length + occurrences of the words whose tag matches."""
    if not witness.entries:
        return {}
    scan = _Scan(witness)
    found: dict[str, list[str]] = {}
    for path in paths:
        hits = scan.file(path)
        if hits:
            found[os.path.basename(path)] = sorted(hits)
    return found


class _Scan:
    """The search of :func:`find`: per anchor kind (ASCII or not) one regex for the
    whole words of the anchors' lengths, the entries by tag, a bounded tag cache."""

    def __init__(self, witness: Witness) -> None:
        self.key = witness.key
        self.overlap = max(e.length for e in witness.entries)
        self.by_tag: dict[str, list[Entry]] = {}
        lengths: dict[bool, set[int]] = {True: set(), False: set()}
        for entry in witness.entries:
            self.by_tag.setdefault(entry.anchor_tag, []).append(entry)
            lengths[entry.anchor_ascii].add(entry.anchor_length)
        self.patterns = [
            (_words_of(ascii_only, sizes), sizes) for ascii_only, sizes in lengths.items() if sizes
        ]
        self.tags: dict[bytes, str] = {}

    def file(self, path: str) -> set[str]:
        hits: set[str] = set()
        try:
            handle = open(path, "rb")  # noqa: SIM115 - closed below; a vanished file holds nothing
        except FileNotFoundError:
            return hits
        with handle:
            tail = b""
            while chunk := handle.read(SCAN_CHUNK):
                window = tail + chunk
                hits.update(self.window(window))
                tail = window[-self.overlap :]
        return hits

    def window(self, window: bytes) -> set[str]:
        hits: set[str] = set()
        for pattern, sizes in self.patterns:
            for word in set(pattern.findall(window)):
                if len(word) in sizes:
                    for entry in self.by_tag.get(self.tag(word), ()):
                        hits.update(_matches(window, word, entry, self.key))
        return hits

    def tag(self, word: bytes) -> str:
        tag = self.tags.get(word)
        if tag is None:
            if len(self.tags) >= TAG_CACHE_MAX:
                self.tags.clear()
            tag = self.tags[word] = _tag(self.key, word)
        return tag


def _words_of(ascii_only: bool, sizes: set[int]) -> re.Pattern[bytes]:
    """Tokens (:data:`_TOKEN`) with a byte length in min(sizes)..max(sizes): ASCII words
    when `ascii_only`, else non-ASCII characters."""
    lo, hi = min(sizes), max(sizes)
    if ascii_only:
        # ``\b`` (ASCII word edges) admits exactly the maximal ASCII runs.
        return re.compile(rb"\b[0-9A-Za-z_]{%d,%d}\b" % (lo, hi))
    return re.compile(rb"[\xc2-\xf4][\x80-\xbf]{%d,%d}" % (lo - 1, hi - 1))


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
