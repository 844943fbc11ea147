"""GDPR erase, the parts beyond the node itself: derived content, the file, honesty.

:func:`graphonomous.learning.forgetting.gdpr_erase` deletes a node and scrubs
references to it; this module supplies what makes the erase *complete* and
*honest* (SPEC.md, "GDPR erase"):

* **Derived content.**  A consolidation summary built from erased episodes is
  rewritten from the members that remain (at least
  :data:`MIN_SUMMARY_MEMBERS`), or erased with them; a goal node whose text
  quoted the erased content is rewritten with the same ``[erased]`` mark as
  its goals row; a node merged away by consolidation resolves to its survivor
  (whose ``metadata.merged_from`` names it).
* **Partial quotes.**  :func:`quoting_nodes` finds other nodes that contain a
  sentence of the erased content verbatim, or most of its content words (a
  keyword list), not only the whole text.
* **The file.**  :func:`scrub_file` checkpoints, VACUUMs and checkpoints
  again, waiting up to `wait_s` for other connections' readers, then reads
  the ``.db`` and ``-wal`` bytes for the erased texts.  The report says
  ``status: "scrubbed"`` only when the VACUUM ran, the WAL was fully
  checkpointed and truncated, and no erased text is left in the bytes;
  otherwise ``"pending"`` with what remains and the fix.  A pending scrub is
  remembered (audit entries) and completed by :func:`finish`.
"""

from __future__ import annotations

import json
import math
import os
import re
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from ..embed import pack_f32
from ..model import Node
from ..retrieval.experience import SUMMARY_MEMBERS_KEY, SUMMARY_SOURCE
from ..retrieval.keywords import distinct_words
from ..store import Store, StoreError
from ..store.sqlite import BUSY_TIMEOUT_MS
from . import tables
from .abstraction import GROUNDING_RELATIONSHIP, summary_text

if TYPE_CHECKING:
    from ..retrieval.graph_view import GraphEngine

# A summary of fewer members than this is no summary: it goes with its erased members.
MIN_SUMMARY_MEMBERS: Final = 2
# A sentence this long (characters) quoted verbatim is a quote, not a coincidence
# (the same floor as forgetting.MIN_CONTENT_MATCH).
MIN_QUOTE_CHARS: Final = 12
# A keyword list quotes the content when it shares this many content words and they
# are at least half of either text's distinct content words.
MIN_SHARED_WORDS: Final = 3
SHARED_WORDS_FRACTION: Final = 0.5
# The prefilter tests at most this many of the erased text's words, the longest (most
# distinctive) ones (SQL size bound): for a text with more distinct words, a keyword list
# is found only through those (its sentences are always checked).
MAX_PREFILTER_WORDS: Final = 64
# --wait polls the checkpoint this often.
WAIT_POLL_S: Final = 0.1
# Busy timeout of one truncating checkpoint (ms): a held reader makes it wait this long,
# not the store's BUSY_TIMEOUT_MS (2 checkpoints × 30 s made an erase beside a second
# server take a minute before answering "pending").
CHECKPOINT_BUSY_MS: Final = 100
# Bytes read per step when searching the files for erased text.
SCAN_CHUNK: Final = 1 << 20
FILE_SCRUB_ACTION: Final = "gdpr_file_scrub"
ERASE_ACTION: Final = "gdpr_erase"
READER_ADVICE: Final = (
    "another connection holds a read transaction on this database (another graphonomous "
    "server or process), so the old bytes are still in the file; close the other servers, "
    "then run `graphonomous erase --finish` (or erase with `--wait SECONDS`)"
)
ERROR_ADVICE: Final = (
    "the erase is committed (the node and its references are gone from every table), but "
    "the file could not be rewritten; fix the cause (e.g. free disk space), then run "
    "`graphonomous erase --finish`"
)
_SENTENCE: Final = re.compile(r"[^.!?\n]+[.!?]?")


# -- merged-away ids and derived nodes ---------------------------------------------------


def survivor_of(store: Store, merged_id: str) -> Node | None:
    """The live node whose ``metadata.merged_from`` lists `merged_id` (consolidation merged
    it away), or None."""
    for node_id, metadata in store.nodes_with_metadata_containing(merged_id):
        merged = json.loads(metadata).get("merged_from", [])
        if isinstance(merged, list) and merged_id in merged:
            return store.get_node(node_id)
    return None


def was_erased(store: Store, node_id: str) -> bool:
    """Whether the audit log records an erase of `node_id` (ids are kept there by design)."""
    rows = tables.query(
        store,
        "SELECT 1 FROM audit_log WHERE action = ? AND subject_id = ? LIMIT 1",
        (ERASE_ACTION, node_id),
    )
    return bool(rows)


def summaries_of(store: Store, node_ids: Iterable[str]) -> list[Node]:
    """Consolidation summaries grounded (``derived_from``) in any of `node_ids`, by id."""
    ids = sorted(set(node_ids))
    found = store.get_nodes(store.sources_pointing_at(GROUNDING_RELATIONSHIP, SUMMARY_SOURCE, ids))
    return [found[key] for key in sorted(found)]


def plan_derived(store: Store, erased: set[str]) -> tuple[set[str], list[tuple[Node, list[Node]]]]:
    """Summaries to erase with `erased` (too few members left) and summaries to rewrite
    (with their remaining live members).  Repeats until no new summary is erased, since a
    summary can itself be a member of nothing but may ground another summary."""
    to_erase = set(erased)
    rewrites: dict[str, tuple[Node, list[Node]]] = {}
    frontier = set(erased)
    while frontier:
        newly: set[str] = set()
        for summary in summaries_of(store, frontier):
            if summary.id in to_erase:
                continue
            members = summary.metadata.get(SUMMARY_MEMBERS_KEY, [])
            member_ids = [m for m in members if isinstance(m, str) and m not in to_erase]
            live = store.get_nodes(member_ids)
            remaining = [live[m] for m in member_ids if m in live and live[m].forgotten_at is None]
            if len(remaining) < MIN_SUMMARY_MEMBERS:
                newly.add(summary.id)
                rewrites.pop(summary.id, None)
            else:
                rewrites[summary.id] = (summary, remaining)
        to_erase |= newly
        frontier = newly
    return to_erase - erased, [rewrites[key] for key in sorted(rewrites) if key not in to_erase]


def rewrite_summaries(graph: GraphEngine, rewrites: Sequence[tuple[Node, list[Node]]]) -> list[str]:
    """Rebuild each summary from its remaining members (text, keywords, members, embedding),
    inside the erase transaction.  Returns the rewritten ids."""
    if not rewrites:
        return []
    index = graph.vector_index()
    texts = []
    for _summary, members in rewrites:
        vectors = {m.id: v for m in members if (v := index.get(m.id)) is not None}
        texts.append(summary_text(members, vectors))
    vectors_out = graph.embed_texts([text for text, _ in texts])
    now = graph.now()
    for (summary, members), (text, keywords), vector in zip(
        rewrites, texts, vectors_out, strict=True
    ):
        metadata = {
            **summary.metadata,
            SUMMARY_MEMBERS_KEY: [m.id for m in members],
            "keywords": keywords,
        }
        graph.store.update_node(summary.id, content=text, metadata=metadata, updated_at=now)
        graph.store.set_embedding(summary.id, pack_f32(vector), graph.embedding_model)
        # Summaries are retrieval aids, kept out of the search indexes (common.insert_node).
    return [summary.id for summary, _ in rewrites]


def rewrite_goal_nodes(
    graph: GraphEngine,
    scrub_text: Any,
    mentions: Any,
) -> list[str]:
    """Goal nodes whose content mentions the erased ids or content, rewritten with
    `scrub_text` (the same ``[erased]`` replacement as their goals row) and re-embedded."""
    store = graph.store
    rows = store.node_texts_of_type("goal")
    targets = [(node_id, scrub_text(text)) for node_id, text in rows if mentions(text)]
    if not targets:
        return []
    vectors = graph.embed_texts([text for _, text in targets])
    now = graph.now()
    for (node_id, text), vector in zip(targets, vectors, strict=True):
        store.update_node(node_id, content=text, updated_at=now)
        store.set_embedding(node_id, pack_f32(vector), graph.embedding_model)
    return [node_id for node_id, _ in targets]


# -- partial quotes --------------------------------------------------------------------


def _sentences(content: str) -> list[str]:
    found = (" ".join(part.split()) for part in _SENTENCE.findall(content))
    return sorted({s for s in found if len(s) >= MIN_QUOTE_CHARS})


@dataclass(frozen=True)
class _Quotable:
    """An erased text prepared once for :func:`quotes`: its sentences and content words."""

    text: str
    sentences: tuple[str, ...]
    words: frozenset[str]


def _prepare(content: str) -> _Quotable:
    return _Quotable(content, tuple(_sentences(content)), frozenset(distinct_words(content)))


def _quotes(erased: _Quotable, other: str) -> bool:
    if len(erased.text) >= MIN_QUOTE_CHARS and erased.text in other:
        return True
    flat = " ".join(other.split())
    if any(sentence in flat for sentence in erased.sentences):
        return True
    words = erased.words
    if len(words) < MIN_SHARED_WORDS:
        return False
    theirs = set(distinct_words(other))
    shared = len(words & theirs)
    if shared < MIN_SHARED_WORDS:
        return False
    fraction = shared / max(1, min(len(words), len(theirs)))
    return fraction >= SHARED_WORDS_FRACTION or shared >= math.ceil(
        SHARED_WORDS_FRACTION * len(words)
    )


def quotes(content: str, other: str) -> bool:
    """Does `other` quote `content`: all of it, one of its sentences (≥ 12 characters),
    or a keyword list (≥ 3 shared content words, half of either text's distinct words)?"""
    return _quotes(_prepare(content), other)


def _candidates(store: Store, erased: _Quotable) -> list[tuple[str, str]]:
    """Nodes no quoting node can be missing from (a cheap prefilter run in the store):
    they hold a sentence, or at least MIN_SHARED_WORDS of the words (folded words are
    prefixes of the written ones, so a search of the lower-cased text never misses)."""
    words = sorted(erased.words, key=lambda w: (-len(w), w))[:MAX_PREFILTER_WORDS]
    return store.node_texts_containing(erased.sentences, words, MIN_SHARED_WORDS)


def quoting_nodes(store: Store, contents: Sequence[str], exclude: Iterable[str] = ()) -> list[str]:
    """Ids of live or forgotten nodes (not in `exclude`) quoting any of `contents`, sorted.
    A SQL prefilter per content, then :func:`quotes` on the candidates."""
    skip = set(exclude)
    found: set[str] = set()
    for content in contents:
        if not content:
            continue
        erased = _prepare(content)
        for node_id, other in _candidates(store, erased):
            if node_id not in skip and _quotes(erased, other):
                found.add(str(node_id))
    return sorted(found)


# -- the file ----------------------------------------------------------------------------


def _checkpoint_complete(store: Store) -> bool:
    """``wal_checkpoint(TRUNCATE)``: True when no reader blocked it and every frame was
    copied (then the WAL is empty).  Non-WAL databases answer (0, -1, -1): complete.

    A TRUNCATE checkpoint calls the busy handler while another connection reads, so it
    runs with a busy timeout of CHECKPOINT_BUSY_MS, not the store's 30 s: an erase or
    consolidation beside a held reader answers "pending" at once (`wait_s` polls)."""
    tables.query(store, f"PRAGMA busy_timeout = {CHECKPOINT_BUSY_MS}")
    try:
        row = tables.query(store, "PRAGMA wal_checkpoint(TRUNCATE)")[0]
    finally:
        tables.query(store, f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    busy, log, checkpointed = int(row[0]), int(row[1]), int(row[2])
    return busy == 0 and log == checkpointed


def _files(store: Store) -> list[str]:
    if store.path == ":memory:" or not store.path:
        return []
    return [p for p in (store.path, store.path + "-wal") if os.path.exists(p)]


def remaining_in_files(store: Store, needles: Sequence[str]) -> list[str]:
    """Names of the database files (``.db``, ``-wal``) whose bytes still hold one of the
    `needles` (UTF-8).  Reads each file once in overlapping chunks: O(file size)."""
    encoded = [n.encode("utf-8") for n in needles if len(n) >= MIN_QUOTE_CHARS]
    if not encoded:
        return []
    overlap = max(len(n) for n in encoded)
    found = []
    for path in _files(store):
        with open(path, "rb") as handle:
            tail = b""
            while chunk := handle.read(SCAN_CHUNK):
                window = tail + chunk
                if any(n in window for n in encoded):
                    found.append(os.path.basename(path))
                    break
                tail = window[-overlap:]
    return found


def scrub_file(store: Store, needles: Sequence[str] = (), wait_s: float = 0.0) -> dict[str, Any]:
    """Rewrite the file so no free page, WAL frame or journal keeps erased bytes; say
    whether that is proven.  Never raises for SQLite or OS errors: they are reported.

    Output: ``{"status": "scrubbed" | "pending", "vacuumed", "wal_truncated",
    "blocked_by_reader", "bytes_found_in": [file names], "error", "advice", "waited_ms",
    "duration_ms"}``.
    """
    started = time.perf_counter()
    report: dict[str, Any] = {
        "status": "pending",
        "vacuumed": False,
        "wal_truncated": False,
        "blocked_by_reader": False,
        "bytes_found_in": [],
        "error": None,
        "advice": None,
        "waited_ms": 0.0,
    }
    try:
        _checkpoint_complete(store)
        tables.execute(store, "VACUUM")
        report["vacuumed"] = True
        complete = _checkpoint_complete(store)
        deadline = time.monotonic() + max(0.0, wait_s)
        waited = time.perf_counter()
        while not complete and time.monotonic() < deadline:
            time.sleep(WAIT_POLL_S)
            complete = _checkpoint_complete(store)
        report["waited_ms"] = round((time.perf_counter() - waited) * 1000.0, 3)
        report["wal_truncated"] = complete
        report["blocked_by_reader"] = not complete
        report["bytes_found_in"] = remaining_in_files(store, needles)
    except (sqlite3.Error, StoreError, OSError) as exc:
        report["error"] = f"{type(exc).__name__}: {exc}"
    proven = report["vacuumed"] and report["wal_truncated"] and not report["bytes_found_in"]
    if proven:
        report["status"] = "scrubbed"
    elif report["error"] is not None:
        report["advice"] = ERROR_ADVICE
    else:
        report["advice"] = READER_ADVICE
    report["duration_ms"] = round((time.perf_counter() - started) * 1000.0, 3)
    return report


def record_file_scrub(store: Store, report: dict[str, Any], now: str) -> None:
    """Remember that the file scrub completed (an audit entry without content), then
    checkpoint again so the WAL holds nothing.  Only for ``status == "scrubbed"``."""
    try:
        with store.transaction():
            store.audit(now, FILE_SCRUB_ACTION, None, {"status": report["status"]})
        _checkpoint_complete(store)
    except (sqlite3.Error, StoreError) as exc:
        report["error"] = f"{type(exc).__name__}: {exc}"


def file_scrub_pending(store: Store) -> bool:
    """Whether an erase happened after the last completed file scrub (audit log order)."""
    rows = tables.query(
        store,
        "SELECT max(CASE WHEN action = ? THEN seq END), max(CASE WHEN action = ? THEN seq END) "
        "FROM audit_log",
        (ERASE_ACTION, FILE_SCRUB_ACTION),
    )
    last_erase, last_scrub = rows[0][0], rows[0][1]
    return last_erase is not None and (last_scrub is None or last_scrub < last_erase)


def finish(graph: GraphEngine, wait_s: float = 0.0) -> dict[str, Any]:
    """Complete a pending physical scrub (``graphonomous erase --finish``).

    The erased texts are no longer known (that is the point), so the proof is
    mechanical: VACUUM rebuilt every page from live rows and the WAL was fully
    checkpointed and truncated.  Output: ``{"pending_before", "file": report,
    "status"}``.  Must not run inside an open transaction.
    """
    with graph.lock:
        store = graph.store
        if store.in_transaction:
            raise StoreError("erase --finish cannot run inside an open transaction")
        pending = file_scrub_pending(store)
        report = scrub_file(store, (), wait_s)
        if report["status"] == "scrubbed":
            record_file_scrub(store, report, graph.now())
    return {"pending_before": pending, "file": report, "status": report["status"]}


def consolidation_scrub(store: Store, now: str, dry_run: bool = False) -> dict[str, Any] | None:
    """The physical scrub a consolidation cycle owes a pending erase (SPEC "GDPR erase").

    None when no scrub is pending.  Otherwise :func:`scrub_file` runs (no wait: the
    cycle must not block on another process's reader) and its report is returned with
    ``attempted: true``; a completed scrub is recorded, so the next cycle owes nothing.
    A dry run or a call inside an open transaction attempts nothing and says so
    (``attempted: false``, ``status: "pending"``).  Never raises for SQLite/OS errors.
    """
    try:
        pending = file_scrub_pending(store)
    except (sqlite3.Error, StoreError):
        return None  # a damaged audit log is doctor's to report, not the cycle's
    if not pending:
        return None
    if dry_run or store.in_transaction:
        return {"status": "pending", "attempted": False, "advice": READER_ADVICE}
    report = scrub_file(store, (), 0.0)
    if report["status"] == "scrubbed":
        record_file_scrub(store, report, now)
    return {"attempted": True, **report}
