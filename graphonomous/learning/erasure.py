"""GDPR erase, the parts beyond the node itself: derived content, the file, honesty.

:func:`graphonomous.learning.forgetting.gdpr_erase` deletes a node and scrubs
references to it; this module supplies what makes the erase *complete* and
*honest* (SPEC.md, "GDPR erase"):

* **Derived content.**  A consolidation summary built from erased episodes is
  rewritten from the members that remain (at least
  :data:`MIN_SUMMARY_MEMBERS`), or erased with them; a goal or outcome node
  whose text holds the erased id, content or one of its sentences is
  rewritten with the same ``[erased]`` mark as its goals / outcomes row; a
  node merged away by consolidation resolves to its survivor (whose
  ``metadata.merged_from`` names it).
* **Partial quotes.**  :func:`quoting_nodes` finds other nodes that contain a
  sentence of the erased content verbatim, or most of its content words (a
  keyword list), not only the whole text.
* **The file.**  :func:`scrub_file` checkpoints, VACUUMs and checkpoints
  again, waiting up to `wait_s` for other connections' readers, then reads
  every store file (:data:`STORE_FILE_SUFFIXES`) for the erased texts and
  for every text a pending erase left in the witness
  (:mod:`.erase_witness`).  :func:`verdict` says ``status: "scrubbed"`` only
  when the VACUUM ran, the WAL was fully checkpointed and truncated, no
  erased text is left in the bytes, no node quotes it and no column holds
  it; otherwise ``"pending"`` with its causes (the reader, the quoting nodes
  by id, the columns, the error).  A pending scrub is remembered (audit
  entries, the witness) and completed by :func:`finish`, which looks for the
  bytes again through the witness.
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
from ..model import AID_NODE_TYPES, Node
from ..retrieval.experience import SUMMARY_MEMBERS_KEY, SUMMARY_SOURCE
from ..retrieval.keywords import distinct_words
from ..store import Store, StoreError
from ..store.sqlite import BUSY_TIMEOUT_MS, is_busy_error
from ..store.verify import WITNESS_SUFFIX as VERIFIED_SUFFIX
from . import erase_witness, tables
from .abstraction import GROUNDING_RELATIONSHIP, summary_text

if TYPE_CHECKING:
    from ..retrieval.graph_view import GraphEngine

# Node types whose content the package writes from other nodes' text (a goal node
# from its goals row, an outcome node from its evidence): rewritten by an erase.
DERIVED_NODE_TYPES: Final = ("goal", *AID_NODE_TYPES)
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
QUOTING_ADVICE: Final = (
    "other nodes hold the erased text or one of its sentences verbatim (node_ids): erase "
    "each (`graphonomous erase ID`; `--with-quoting` erases them with the node) or edit "
    "them so they no longer hold it, then run `graphonomous erase --finish`"
)
WITNESS_ADVICE: Final = (
    "the witness beside the database could not be written, so a later "
    "`graphonomous erase --finish` cannot look for these texts and proves only the VACUUM "
    "and checkpoint; fix the cause (e.g. free disk space) before ending the other causes"
)
RESIDUAL_ADVICE: Final = (
    "a column still holds the erased id or text (columns); run `graphonomous doctor` and "
    "report it: the erase's reference scrub missed it"
)
BYTES_ADVICE: Final = (
    "the erased text is still in these files (files) though no node holds it and no reader "
    "blocks the checkpoint: a file VACUUM does not rewrite (a stale journal, a copy beside "
    "the database); remove or overwrite it, then run `graphonomous erase --finish`"
)
# The files of a SQLite store (suffixes of the database path): the database, its WAL,
# WAL index, rollback journal and the quick-check side file (store/verify.py).
STORE_FILE_SUFFIXES: Final = ("", "-wal", "-shm", "-journal", VERIFIED_SUFFIX)
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
        "SELECT 1 FROM audit_log WHERE action = ? AND subject_id = ? AND namespace = ? LIMIT 1",
        (ERASE_ACTION, node_id, store.namespace),
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


def rewrite_derived_nodes(
    graph: GraphEngine,
    scrub_text: Any,
    mentions: Any,
) -> list[str]:
    """Derived nodes (goal nodes, outcome nodes: :data:`DERIVED_NODE_TYPES`) whose content
    mentions the erased ids or content, rewritten with `scrub_text` (the same
    ``[erased]`` replacement as their goals / outcomes rows) and re-embedded."""
    store = graph.store
    rows = [row for kind in DERIVED_NODE_TYPES for row in store.node_texts_of_type(kind)]
    targets = [(node_id, scrub_text(text)) for node_id, text in sorted(rows) if mentions(text)]
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


def holding_nodes(store: Store, texts: Sequence[str], exclude: Iterable[str] = ()) -> list[str]:
    """Ids of live or forgotten nodes (not in `exclude`) whose content holds one of the
    erased `texts` (contents and their sentences, :func:`erased_texts`) verbatim, sorted:
    the nodes that keep the text's bytes in the file.  A SQL prefilter (``instr``), then
    the check with runs of white space folded."""
    wanted = [t for t in texts if len(t) >= MIN_QUOTE_CHARS]
    if not wanted:
        return []
    skip = set(exclude)
    found = set()
    for node_id, other in store.node_texts_containing(wanted, (), MIN_SHARED_WORDS):
        flat = " ".join(other.split())
        if node_id not in skip and any(t in other or t in flat for t in wanted):
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


def _vacuum(store: Store, deadline: float) -> bool:
    """VACUUM; False when, on a store whose readers block it (PostgreSQL), another
    connection's read transaction still held a table's lock at `deadline`.  There each
    try waits CHECKPOINT_BUSY_MS, not the store's 30 s lock timeout: an erase beside a
    reader answers "pending" (cause ``reader``) at once, not after 30 s with an error."""
    if not store.readers_block_vacuum:
        tables.execute(store, "VACUUM")
        return True
    tables.query(store, f"PRAGMA busy_timeout = {CHECKPOINT_BUSY_MS}")
    try:
        while True:
            try:
                tables.execute(store, "VACUUM")
                return True
            except sqlite3.OperationalError as exc:
                if not is_busy_error(exc):
                    raise
                if time.monotonic() >= deadline:
                    return False
                time.sleep(WAIT_POLL_S)
    finally:
        tables.query(store, f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


def store_files(store: Store) -> list[str]:
    """Every file of a file-backed store that exists now: the database, its ``-wal``,
    ``-shm`` and ``-journal``, and the quick-check side file (the files the store writes;
    import scratch files are unlinked at open, so none has a name to look in)."""
    if not erase_witness.file_backed(store.path):
        return []
    names = [store.path + suffix for suffix in STORE_FILE_SUFFIXES]
    return [p for p in names if os.path.exists(p)]


def erased_texts(contents: Iterable[str]) -> list[str]:
    """What the byte search looks for: each content and each of its sentences
    (≥ MIN_QUOTE_CHARS characters), sorted and distinct."""
    found = {c for c in contents if len(c) >= MIN_QUOTE_CHARS}
    for content in list(found):
        found.update(_sentences(content))
    return sorted(found)


def remaining_in_files(paths: Sequence[str], needles: Sequence[str]) -> dict[str, list[str]]:
    """``{file name: [needles found]}`` for the files among `paths` whose bytes hold one
    of the `needles` (UTF-8).  Reads each file once in overlapping chunks: O(file size
    × needles) byte comparisons, done by ``bytes.find``."""
    encoded = {n: n.encode("utf-8") for n in needles if len(n) >= MIN_QUOTE_CHARS}
    if not encoded:
        return {}
    overlap = max(len(n) for n in encoded.values())
    found: dict[str, list[str]] = {}
    for path in paths:
        hits: set[str] = set()
        with open(path, "rb") as handle:
            tail = b""
            while chunk := handle.read(SCAN_CHUNK):
                window = tail + chunk
                hits.update(text for text, data in encoded.items() if data in window)
                tail = window[-overlap:]
        if hits:
            found[os.path.basename(path)] = sorted(hits)
    return found


def look_again(store: Store, needles: Sequence[str]) -> tuple[dict[str, list[str]], int]:
    """Search every store file for the `needles` (known in memory) and for every text
    of the pending-erase witness (:mod:`.erase_witness`): ``({file name: [texts]},
    how many texts were looked for)``.  Raises OSError / ValueError when a file or the
    witness cannot be read."""
    paths = store_files(store)
    if not paths:  # in memory, or a server's files (PostgreSQL): nothing a client can read
        return {}, 0
    found = remaining_in_files(paths, needles)
    witness = erase_witness.load(store.path)
    looked_for = len({n for n in needles if len(n) >= MIN_QUOTE_CHARS})
    if witness is not None:
        # Texts known in memory were searched directly (bytes.find, ≈ 10× faster than
        # the witness's word scan); the witness adds the earlier erases' texts.
        witness = erase_witness.without(witness, needles)
        looked_for += len(witness.entries)
        for name, texts in erase_witness.find(witness, paths).items():
            found[name] = sorted(set(found.get(name, [])) | set(texts))
    return found, looked_for


def _new_report() -> dict[str, Any]:
    """A file report before anything was done (:func:`scrub_file`'s output shape)."""
    return {
        "status": "pending",
        "vacuumed": False,
        "wal_truncated": False,
        "blocked_by_reader": False,
        "bytes_found_in": [],
        "error": None,
        "advice": None,
        "texts_looked_for": 0,
        "settings": [],
        "waited_ms": 0.0,
        "duration_ms": 0.0,
    }


def scrub_file(
    store: Store, needles: Sequence[str] = (), wait_s: float = 0.0
) -> tuple[dict[str, Any], list[str]]:
    """Rewrite the file so no free page, WAL frame or journal keeps erased bytes, then
    look for the bytes again.  Never raises for SQLite or OS errors: they are reported.

    Output: the report ``{"status": "scrubbed" | "pending", "vacuumed", "wal_truncated",
    "blocked_by_reader", "bytes_found_in": [file names], "error", "advice",
    "texts_looked_for", "settings": [{setting, value, advice}], "waited_ms",
    "duration_ms"}`` (settings: `Store.scrub_obstacles`) and the erased texts found (for
    naming the nodes holding them; never part of any output).  ``status`` here is the
    bytes' verdict only; the caller adds what the rows say (:func:`verdict`).
    """
    started = time.perf_counter()
    report = _new_report()
    found: dict[str, list[str]] = {}
    try:
        _checkpoint_complete(store)
        deadline = time.monotonic() + max(0.0, wait_s)
        waited = time.perf_counter()
        report["vacuumed"] = _vacuum(store, deadline)
        complete = report["vacuumed"] and _checkpoint_complete(store)
        while report["vacuumed"] and not complete and time.monotonic() < deadline:
            time.sleep(WAIT_POLL_S)
            complete = _checkpoint_complete(store)
        report["waited_ms"] = round((time.perf_counter() - waited) * 1000.0, 3)
        report["wal_truncated"] = complete
        refusal = store.checkpoint_refusal
        report["blocked_by_reader"] = not report["vacuumed"] or (not complete and refusal is None)
        if report["vacuumed"] and not complete and refusal is not None:
            report["error"] = refusal
        found, report["texts_looked_for"] = look_again(store, needles)
        report["bytes_found_in"] = sorted(found)
        report["settings"] = store.scrub_obstacles()
    except (sqlite3.Error, StoreError, OSError, ValueError) as exc:
        report["error"] = f"{type(exc).__name__}: {exc}"
    proven = (
        report["vacuumed"]
        and report["wal_truncated"]
        and not report["bytes_found_in"]
        and not report["settings"]
    )
    if proven:
        report["status"] = "scrubbed"
    report["duration_ms"] = round((time.perf_counter() - started) * 1000.0, 3)
    return report, sorted({text for texts in found.values() for text in texts})


def verdict(
    report: dict[str, Any], quoting: Sequence[str], residual: Sequence[str]
) -> tuple[str, list[dict[str, Any]]]:
    """The erase's status and its causes, from the file report (bytes looked for again),
    the nodes still quoting the text and the residual columns.  ``"scrubbed"`` only when
    there is no cause; each cause names what holds the bytes and how to end it; the
    report's ``advice`` becomes the first cause's.  Causes, in this order: ``error``,
    ``reader``, ``setting`` (one per store setting that keeps old bytes: PostgreSQL's
    WAL retention, archiving, replication), ``quoting_nodes`` (ids of the nodes holding
    the text verbatim, :func:`holding_nodes`), ``residual`` (columns), ``bytes_left``
    (files, when nothing above explains them)."""
    causes: list[dict[str, Any]] = []
    if report["error"] is not None:
        causes.append({"cause": "error", "error": report["error"], "advice": ERROR_ADVICE})
    if report["blocked_by_reader"]:
        causes.append({"cause": "reader", "advice": READER_ADVICE})
    causes.extend({"cause": "setting", **item} for item in report["settings"])
    if quoting:
        causes.append(
            {"cause": "quoting_nodes", "node_ids": list(quoting), "advice": QUOTING_ADVICE}
        )
    if residual:
        causes.append({"cause": "residual", "columns": list(residual), "advice": RESIDUAL_ADVICE})
    if report["bytes_found_in"] and not causes:
        causes.append(
            {"cause": "bytes_left", "files": list(report["bytes_found_in"]), "advice": BYTES_ADVICE}
        )
    report["advice"] = causes[0]["advice"] if causes else None
    return ("scrubbed" if not causes and report["status"] == "scrubbed" else "pending"), causes


def note_pending(
    store: Store, texts: Sequence[str]
) -> tuple[erase_witness.Witness | None, str | None]:
    """Before an erase commits: add its texts to the witness (a crash after the commit
    leaves what `--finish` needs).  Returns the witness as it was (for
    :func:`restore_pending` on a rollback; None for a store without files) and why the
    witness could not be written, if so (the erase goes on: it searches its own texts)."""
    if not erase_witness.file_backed(store.path):
        return None, None
    try:
        previous = erase_witness.load(store.path)
        erase_witness.add(store.path, texts)
    except (OSError, ValueError) as exc:
        return None, f"{type(exc).__name__}: {exc}"
    return previous, None


def witness_cause(problem: str) -> dict[str, Any]:
    """The cause added to a pending erase whose witness could not be written."""
    return {
        "cause": "error",
        "error": f"the witness was not written ({problem})",
        "advice": WITNESS_ADVICE,
    }


def restore_pending(store: Store, previous: erase_witness.Witness | None) -> None:
    """After an erase rolled back: the witness as :func:`note_pending` found it."""
    if erase_witness.file_backed(store.path):
        erase_witness.restore(store.path, previous)


def record_file_scrub(store: Store, report: dict[str, Any], now: str) -> None:
    """Remember that the scrub is proven (an audit entry without content), drop the
    witness, then checkpoint again so the WAL holds nothing.  Only for a "scrubbed"
    verdict."""
    try:
        with store.transaction():
            store.audit(now, FILE_SCRUB_ACTION, None, {"status": "scrubbed"})
        if erase_witness.file_backed(store.path):
            erase_witness.clear(store.path)
        _checkpoint_complete(store)
    except (sqlite3.Error, StoreError, OSError) as exc:
        report["error"] = f"{type(exc).__name__}: {exc}"


def file_scrub_pending(store: Store) -> bool:
    """Whether an erase happened after the last completed file scrub (audit log order),
    or a witness of pending texts lies beside the file."""
    rows = tables.query(
        store,
        "SELECT max(CASE WHEN action = ? THEN seq END), max(CASE WHEN action = ? THEN seq END) "
        "FROM audit_log",
        (ERASE_ACTION, FILE_SCRUB_ACTION),
    )
    last_erase, last_scrub = rows[0][0], rows[0][1]
    if last_erase is not None and (last_scrub is None or last_scrub < last_erase):
        return True
    return erase_witness.file_backed(store.path) and os.path.exists(
        erase_witness.path_of(store.path)
    )


def recheck(store: Store, now: str, wait_s: float = 0.0) -> tuple[str, dict[str, Any], list[Any]]:
    """Scrub the file and look for every pending text again (the witness): the texts are
    no longer known, but their bytes are recognised.  Texts found name the nodes still
    holding them.  While a store setting keeps old bytes (`Store.scrub_obstacles`) nothing
    is rewritten: the answer is pending with those settings.  Returns ``(status, file
    report, causes)``; a proven scrub is recorded."""
    try:
        obstacles = store.scrub_obstacles()
    except (sqlite3.Error, StoreError):
        obstacles = []  # scrub_file reports the error
    if obstacles:
        # A setting keeps the bytes whatever the scrub does: no VACUUM (FULL locks every
        # table) until it changes; the causes say which and how.
        report = {**_new_report(), "settings": obstacles}
        status, causes = verdict(report, (), ())
        return status, report, causes
    report, texts = scrub_file(store, (), wait_s)
    status, causes = verdict(report, holding_nodes(store, texts), ())
    if status == "scrubbed":
        record_file_scrub(store, report, now)
    return status, report, causes


def finish(graph: GraphEngine, wait_s: float = 0.0) -> dict[str, Any]:
    """Complete a pending physical scrub (``graphonomous erase --finish``).

    The scrub (:func:`recheck`) looks for the pending texts again through the
    witness, so "scrubbed" means they were looked for and not found; otherwise
    "pending" with the causes.  Output: ``{"pending_before", "file": report,
    "causes", "status"}``.  Must not run inside an open transaction.
    """
    with graph.lock:
        store = graph.store
        if store.in_transaction:
            raise StoreError("erase --finish cannot run inside an open transaction")
        pending = file_scrub_pending(store)
        status, report, causes = recheck(store, graph.now(), wait_s)
    return {"pending_before": pending, "file": report, "causes": causes, "status": status}


def consolidation_scrub(store: Store, now: str, dry_run: bool = False) -> dict[str, Any] | None:
    """The physical scrub a consolidation cycle owes a pending erase (SPEC "GDPR erase").

    None when no scrub is pending.  Otherwise :func:`recheck` runs (no wait: the
    cycle must not block on another process's reader) and its report is returned with
    ``attempted: true`` and the verdict; a proven scrub is recorded, so the next cycle
    owes nothing.  A dry run or a call inside an open transaction attempts nothing and
    says so (``attempted: false``, ``status: "pending"``).  Never raises for SQLite/OS
    errors.
    """
    try:
        pending = file_scrub_pending(store)
    except (sqlite3.Error, StoreError, OSError):
        return None  # a damaged audit log is doctor's to report, not the cycle's
    if not pending:
        return None
    if dry_run or store.in_transaction:
        return {"status": "pending", "attempted": False, "advice": READER_ADVICE}
    status, report, causes = recheck(store, now, 0.0)
    return {"attempted": True, **report, "status": status, "causes": causes}
