"""Set-wise SQL on nodes and edges for retrieval and learning, as named store methods.

Rules of this module (issue #11, "all SQL on nodes/edges in store/"):
- Every statement on ``nodes`` / ``edges`` that retrieval, learning or the
  engine need beyond record-level CRUD lives here, one named, typed method
  per question ("the live nodes' degrees", "decay the unprotected nodes"),
  so a backend (store/postgres.py translates this dialect) and a reader see
  every statement in one place.  ``Store`` (store/sqlite.py) inherits these
  methods; `tests/test_sql_home.py` fails when SQL on nodes/edges appears
  outside ``store/``.
- Policy stays with its owner: which node types are protected, which
  relationships mean "rests on", what counts as an erased quote are
  arguments; this module knows only the statement shapes.
- Every statement on ``nodes`` / ``edges`` is bound to the store's namespace
  (``namespace = ?`` with ``self.namespace``, SPEC "Namespaces"): set-wise
  questions (counts, decay, pruning, budgets) never see another namespace.
- Parameterised SQL only; table and column names are the module's own
  literals or checked against `_SCRUBBED` / the schema, never input.
- Writes run inside the caller's `transaction()` (BEGIN IMMEDIATE, nested
  calls become savepoints); nothing here opens one.
- The statement texts are kept exactly as `store/postgres.py`'s translator
  expects them (``instr``, ``julianday``, ``json_extract``, ``json_each``).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, NamedTuple, Protocol

# SQL condition on a nodes row: "this node is backed by an ingested file"
# (the retention rule, learning/retention.py).  Both sub-selects are
# uncorrelated, so SQLite evaluates each once per statement: O(files + chunks).
SOURCE_BACKED_SQL: Final = (
    "(id IN (SELECT file_node_id FROM source_files WHERE file_node_id IS NOT NULL) "
    "OR id IN (SELECT j.value FROM source_files AS s, json_each(s.chunk_node_ids) AS j))"
)
# SQL condition on a nodes row: "this node does not count against the budget".
BUDGET_EXEMPT_SQL: Final = f"(pinned = 1 OR {SOURCE_BACKED_SQL})"
# Ids per statement: two id lists of this size stay under SQLite's old 999-variable limit.
ID_CHUNK: Final = 450
# Metadata key of an edge: the co-activation count already turned into strength.
COUNTED_KEY: Final = "co_activation_counted"


class _Sql(Protocol):
    """What these methods need of the store (the `Store` connection helpers)."""

    namespace: str

    @property
    def lock(self) -> threading.RLock: ...

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]: ...

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor: ...

    def execute_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None: ...


def _decay_exponent(rate_per_day: Mapping[str, float], now: str) -> tuple[str, list[Any]]:
    """SQL of λ·t for a nodes row at `now` (`decay_nodes`), and its parameters: the
    timescale's rate × decay_rate × days since the anchor (the creation time for a row
    written without one).  Each julianday() takes a bare column or mark, which the
    PostgreSQL dialect translates."""
    cases = " ".join("WHEN ? THEN ?" for _ in rate_per_day)
    days = (
        "max(0.0, COALESCE(julianday(?) - julianday(reinforced_at), "
        "julianday(?) - julianday(created_at)))"
    )
    params: list[Any] = [x for item in rate_per_day.items() for x in item]
    return f"(CASE timescale {cases} ELSE 0.0 END) * decay_rate * {days}", [*params, now, now]


class Protection(NamedTuple):
    """What makes a node protected from decay and pruning (the values are learning's
    policy: `learning.forgetting.PROTECTED_*`); pinned and source-backed nodes always are."""

    node_types: tuple[str, ...]
    timescales: tuple[str, ...]

    def sql(self) -> tuple[str, list[Any]]:
        """SQL condition on a nodes row "this node is protected", and its parameters."""
        types = ", ".join("?" * len(self.node_types))
        scales = ", ".join("?" * len(self.timescales))
        sql = (
            f"(node_type IN ({types}) OR timescale IN ({scales}) OR pinned = 1 "
            f"OR {SOURCE_BACKED_SQL})"
        )
        return sql, [*self.node_types, *self.timescales]

    def unprotected_edge_sql(self) -> tuple[str, list[Any]]:
        """SQL condition on an edges row "neither end is protected", and its parameters."""
        protected, params = self.sql()
        inner = f"SELECT id FROM nodes WHERE {protected}"
        return f"source_id NOT IN ({inner}) AND target_id NOT IN ({inner})", [*params, *params]


class RetentionFacts(NamedTuple):
    """The columns the forgetting priority reads of one live node."""

    id: str
    node_type: str
    timescale: str
    pinned: bool
    confidence: float
    access_count: int
    last_accessed_at: str | None
    created_at: str


class LightEdge(NamedTuple):
    """An edge without metadata (what walks and graph support read)."""

    id: str
    source_id: str
    target_id: str
    relationship: str
    strength: float


def _marks(count: int) -> str:
    return ", ".join("?" * count)


def _chunked(ids: Sequence[str]) -> Iterable[Sequence[str]]:
    for start in range(0, len(ids), ID_CHUNK):
        yield ids[start : start + ID_CHUNK]


class GraphQueries:
    """Named set-wise statements on nodes and edges (mixed into `Store`)."""

    # -- nodes: visibility and classification (retrieval) ------------------------------

    def node_visibility(self: _Sql, node_ids: Sequence[str]) -> list[tuple[str, str, bool]]:
        """(id, agent_id, forgotten?) of the ids that exist, by primary key.

        forgotten_at is returned, not tested in SQL: "forgotten_at IS NULL" would
        make SQLite scan the forgotten_at index (every live node) instead of
        looking the ids up by key.  O(ids)."""
        out: list[tuple[str, str, bool]] = []
        for chunk in _chunked(node_ids):
            rows = self.query(
                "SELECT id, agent_id, forgotten_at FROM nodes "
                f"WHERE namespace = ? AND id IN ({_marks(len(chunk))})",
                [self.namespace, *chunk],
            )
            out.extend((str(r[0]), str(r[1]), r[2] is not None) for r in rows)
        return out

    def node_kinds(self: _Sql, node_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """{id: (node_type, creation_source)} of the ids that exist.  O(ids)."""
        out: dict[str, tuple[str, str]] = {}
        for chunk in _chunked(node_ids):
            rows = self.query(
                "SELECT id, node_type, creation_source FROM nodes "
                f"WHERE namespace = ? AND id IN ({_marks(len(chunk))})",
                [self.namespace, *chunk],
            )
            out.update({str(r[0]): (str(r[1]), str(r[2])) for r in rows})
        return out

    def light_edges(
        self: _Sql, node_ids: Sequence[str], *, outgoing_only: bool = False
    ) -> list[LightEdge]:
        """Edges touching the ids (or leaving them), without metadata, by edge id."""
        found: dict[str, LightEdge] = {}
        for chunk in _chunked(node_ids):
            marks = _marks(len(chunk))
            condition = f"source_id IN ({marks})"
            params = list(chunk)
            if not outgoing_only:
                condition += f" OR target_id IN ({marks})"
                params += chunk
            rows = self.query(
                "SELECT id, source_id, target_id, relationship, strength FROM edges "
                f"WHERE namespace = ? AND ({condition})",
                [self.namespace, *params],
            )
            for row in rows:
                found[row[0]] = LightEdge(row[0], row[1], row[2], row[3], float(row[4]))
        return [found[key] for key in sorted(found)]

    # -- nodes: statistics -------------------------------------------------------------

    def mean_live_confidence(self: _Sql) -> float | None:
        """Mean confidence of the live nodes (None for an empty graph)."""
        value = self.query(
            "SELECT avg(confidence) FROM nodes WHERE namespace = ? AND forgotten_at IS NULL",
            (self.namespace,),
        )[0][0]
        return None if value is None else float(value)

    def embedding_count(self: _Sql, model: str) -> int:
        """Stored embeddings of one model."""
        rows = self.query(
            "SELECT count(*) FROM node_embeddings e JOIN nodes n ON n.id = e.node_id "
            "WHERE e.model = ? AND n.namespace = ?",
            (model, self.namespace),
        )
        return int(rows[0][0])

    def embedding_counts(self: _Sql) -> dict[str, int]:
        """Stored embeddings per model, by model name (one index scan)."""
        rows = self.query(
            "SELECT e.model, count(*) FROM node_embeddings e JOIN nodes n ON n.id = e.node_id "
            "WHERE n.namespace = ? GROUP BY e.model ORDER BY e.model",
            (self.namespace,),
        )
        return {str(row[0]): int(row[1]) for row in rows}

    def nodes_created_since(self: _Sql, since: str) -> int:
        """Nodes (live or forgotten) created at or after `since`."""
        rows = self.query(
            "SELECT count(*) FROM nodes WHERE namespace = ? AND created_at >= ?",
            (self.namespace, since),
        )
        return int(rows[0][0])

    def nodes_forgotten_since(self: _Sql, since: str) -> int:
        """Nodes soft-forgotten at or after `since`."""
        rows = self.query(
            "SELECT count(*) FROM nodes WHERE namespace = ? AND forgotten_at >= ?",
            (self.namespace, since),
        )
        return int(rows[0][0])

    def oldest_live_creation(self: _Sql) -> str | None:
        """Creation time of the oldest live node (None for an empty graph).  One query."""
        rows = self.query(
            "SELECT min(created_at) FROM nodes WHERE namespace = ? AND forgotten_at IS NULL",
            (self.namespace,),
        )
        return str(rows[0][0]) if rows and rows[0][0] is not None else None

    # -- nodes: retention (learning/retention.py states the rule) ---------------------

    def source_backed_ids(self: _Sql) -> set[str]:
        """Ids of every node (live or forgotten) backed by an ingested file.  One query."""
        rows = self.query(
            f"SELECT id FROM nodes WHERE namespace = ? AND {SOURCE_BACKED_SQL}", (self.namespace,)
        )
        return {str(row[0]) for row in rows}

    def source_backed_among(self: _Sql, node_ids: Sequence[str]) -> set[str]:
        """Those of `node_ids` backed by an ingested file.  One query per `ID_CHUNK` ids."""
        found: set[str] = set()
        for chunk in _chunked(sorted(set(node_ids))):
            rows = self.query(
                f"SELECT id FROM nodes WHERE namespace = ? AND id IN ({_marks(len(chunk))}) "
                f"AND {SOURCE_BACKED_SQL}",
                (self.namespace, *chunk),
            )
            found.update(str(row[0]) for row in rows)
        return found

    def budget_count(self: _Sql) -> int:
        """Live nodes that count against ``max_nodes`` (not pinned, not source-backed)."""
        rows = self.query(
            "SELECT count(*) FROM nodes WHERE namespace = ? AND forgotten_at IS NULL "
            f"AND NOT {BUDGET_EXEMPT_SQL}",
            (self.namespace,),
        )
        return int(rows[0][0])

    def forgotten_among(self: _Sql, node_ids: Sequence[str]) -> list[str]:
        """Those of `node_ids` that are soft-forgotten, sorted.  O(ids) by primary key."""
        found: list[str] = []
        for chunk in _chunked(node_ids):
            rows = self.query(
                "SELECT id FROM nodes WHERE namespace = ? AND forgotten_at IS NOT NULL AND id IN "
                f"({_marks(len(chunk))})",
                [self.namespace, *chunk],
            )
            found.extend(str(row[0]) for row in rows)
        return sorted(found)

    def protected_ids(self: _Sql, protection: Protection) -> set[str]:
        """Ids of the protected nodes (usually few).  One query."""
        clause, params = protection.sql()
        rows = self.query(
            f"SELECT id FROM nodes WHERE namespace = ? AND {clause}", [self.namespace, *params]
        )
        return {str(row[0]) for row in rows}

    def retention_facts(self: _Sql) -> list[RetentionFacts]:
        """What the forgetting priority reads of every live node.  One scan."""
        rows = self.query(
            "SELECT id, node_type, timescale, pinned, confidence, access_count, last_accessed_at, "
            "created_at FROM nodes WHERE namespace = ? AND forgotten_at IS NULL",
            (self.namespace,),
        )
        return [
            RetentionFacts(
                str(r[0]), str(r[1]), str(r[2]), bool(r[3]), float(r[4]), int(r[5]), r[6], str(r[7])
            )
            for r in rows
        ]

    def clear_superseded_by(self: _Sql, node_id: str) -> int:
        """Clear every ``superseded_by`` pointer to `node_id` (it is being deleted)."""
        sql = "UPDATE nodes SET superseded_by = NULL WHERE namespace = ? AND superseded_by = ?"
        return int(self.execute(sql, (self.namespace, node_id)).rowcount)

    # -- nodes: consolidation ------------------------------------------------------------

    def decay_nodes(
        self: _Sql,
        protection: Protection,
        rate_per_day: dict[str, float],
        now: str,
        q_share: float,
    ) -> int:
        """Recompute the decayed confidence and Q-value of the unprotected live nodes
        from their retention anchor: value = base × exp(−rate × decay_rate × days since
        `reinforced_at`), rate = `rate_per_day[timescale]` (a timescale not listed does
        not decay); Q by `q_share` of that rate.  Returns the rows decayed.  O(N)."""
        exponent, params = _decay_exponent(rate_per_day, now)
        protected, protected_params = protection.sql()
        cursor = self.execute(
            f"UPDATE nodes SET confidence = COALESCE(base_confidence, confidence) "
            f"* exp(-({exponent})), "
            f"q_value = COALESCE(base_q_value, q_value) * exp(-? * ({exponent})) "
            f"WHERE namespace = ? AND forgotten_at IS NULL AND NOT {protected} "
            f"AND timescale IN ({_marks(len(rate_per_day))})",
            [*params, q_share, *params, self.namespace, *protected_params, *rate_per_day],
        )
        return int(cursor.rowcount)

    def count_fading(
        self: _Sql,
        protection: Protection,
        rate_per_day: dict[str, float],
        moment: str,
        below: float,
    ) -> int:
        """How many unprotected live nodes will have decayed below `below` by `moment`
        if nothing reinforces them (the decay of `decay_nodes`, evaluated then).  O(N)."""
        exponent, params = _decay_exponent(rate_per_day, moment)
        protected, protected_params = protection.sql()
        rows = self.query(
            "SELECT count(*) FROM nodes WHERE namespace = ? AND forgotten_at IS NULL "
            f"AND NOT {protected} AND timescale IN ({_marks(len(rate_per_day))}) "
            f"AND COALESCE(base_confidence, confidence) * exp(-({exponent})) < ?",
            [self.namespace, *protected_params, *rate_per_day, *params, below],
        )
        return int(rows[0][0])

    def fade_facts(
        self: _Sql, protection: Protection
    ) -> list[tuple[str, str, str, float, float, str]]:
        """(id, node_type, timescale, decay_rate, base confidence, anchor) of every
        unprotected live node: what the fade forecast needs.  One scan."""
        protected, params = protection.sql()
        rows = self.query(
            "SELECT id, node_type, timescale, decay_rate, COALESCE(base_confidence, confidence), "
            "COALESCE(reinforced_at, created_at) FROM nodes "
            f"WHERE namespace = ? AND forgotten_at IS NULL AND NOT {protected} ORDER BY id",
            [self.namespace, *params],
        )
        return [
            (str(r[0]), str(r[1]), str(r[2]), float(r[3]), float(r[4]), str(r[5])) for r in rows
        ]

    def soft_forget(self: _Sql, node_ids: Sequence[str], now: str, reason: str) -> None:
        """forgotten_at = updated_at = `now`, forgotten_reason = `reason` on the given live
        nodes (the caller audits)."""
        for chunk in _chunked(sorted(set(node_ids))):
            self.execute(
                "UPDATE nodes SET forgotten_at = ?, updated_at = ?, forgotten_reason = ? "
                f"WHERE namespace = ? AND forgotten_at IS NULL AND id IN ({_marks(len(chunk))})",
                (now, now, reason, self.namespace, *chunk),
            )

    def faded_between(
        self: _Sql, start: str | None, end: str | None, agent_id: str | None, limit: int
    ) -> list[str]:
        """Ids of faded nodes (soft-forgotten by decay) stated in [start, end), oldest
        first, at most `limit`.  One query on idx_nodes_valid_from."""
        rows = self.query(
            "SELECT id FROM nodes WHERE namespace = ? AND forgotten_reason = 'faded' "
            "AND forgotten_at IS NOT NULL "
            "AND (? IS NULL OR valid_from >= ?) AND (? IS NULL OR valid_from < ?) "
            "AND (? IS NULL OR agent_id = ?) ORDER BY valid_from, id LIMIT ?",
            (self.namespace, start, start, end, end, agent_id, agent_id, limit),
        )
        return [str(row[0]) for row in rows]

    def recall_faded(self: _Sql, node_ids: Sequence[str], now: str) -> None:
        """Bring faded nodes back as reinforced now (their anchor values restored)."""
        for chunk in _chunked(sorted(set(node_ids))):
            self.execute(
                "UPDATE nodes SET forgotten_at = NULL, forgotten_reason = NULL, "
                "reinforced_at = ?, updated_at = ?, "
                "confidence = COALESCE(base_confidence, confidence), "
                "q_value = COALESCE(base_q_value, q_value) "
                "WHERE namespace = ? AND forgotten_reason = 'faded' "
                f"AND id IN ({_marks(len(chunk))})",
                (now, now, self.namespace, *chunk),
            )

    def weak_unprotected_ids(self: _Sql, protection: Protection, below: float) -> list[str]:
        """Live unprotected nodes with confidence below `below`, by id.  One scan."""
        protected, params = protection.sql()
        rows = self.query(
            "SELECT id FROM nodes WHERE namespace = ? AND forgotten_at IS NULL AND confidence < ? "
            f"AND NOT {protected} ORDER BY id",
            [self.namespace, below, *params],
        )
        return [str(row[0]) for row in rows]

    def live_current_groups_of(self: _Sql, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """{id: (node_type, agent_id)} of those of `ids` that are live and not superseded.
        One primary-key lookup per `ID_CHUNK` ids."""
        found: dict[str, tuple[str, str]] = {}
        for chunk in _chunked(sorted(set(ids))):
            rows = self.query(
                "SELECT id, node_type, agent_id FROM nodes WHERE namespace = ? "
                "AND forgotten_at IS NULL "
                f"AND superseded_by IS NULL AND id IN ({_marks(len(chunk))})",
                (self.namespace, *chunk),
            )
            found.update((str(r[0]), (str(r[1]), str(r[2]))) for r in rows)
        return found

    def promotion_candidates(
        self: _Sql, protection: Protection, now: str, timescales: Sequence[str], min_count: int
    ) -> list[tuple[str, str, int, float]]:
        """(id, timescale, access_count, age in days at `now`) of the live unprotected
        nodes in `timescales` with at least `min_count` accesses, by id.  One scan."""
        protected, params = protection.sql()
        rows = self.query(
            "SELECT id, timescale, access_count, julianday(?) - julianday(created_at) FROM nodes "
            "WHERE namespace = ? AND forgotten_at IS NULL "
            f"AND timescale IN ({_marks(len(timescales))}) "
            f"AND access_count >= ? AND NOT {protected} ORDER BY id",
            [now, self.namespace, *timescales, min_count, *params],
        )
        return [(str(r[0]), str(r[1]), int(r[2]), float(r[3])) for r in rows]

    def set_timescales(self: _Sql, updates: Sequence[tuple[str, str]]) -> None:
        """Set the timescale of each (timescale, id)."""
        self.execute_many(
            "UPDATE nodes SET timescale = ? WHERE id = ? AND namespace = ?",
            ((scale, node_id, self.namespace) for scale, node_id in updates),
        )

    def nodes_changed_after(
        self: _Sql, watermark: tuple[str, str] | None, limit: int
    ) -> tuple[list[tuple[str, str]], int]:
        """Live, non-superseded nodes changed after `watermark` (an (updated_at, id) key;
        None: every node): up to `limit` keys in key order, and the total count."""
        where = "namespace = ? AND forgotten_at IS NULL AND superseded_by IS NULL"
        params: list[str] = [self.namespace]
        if watermark is not None:
            where += " AND (updated_at > ? OR (updated_at = ? AND id > ?))"
            params += [watermark[0], watermark[0], watermark[1]]
        rows = self.query(
            f"SELECT updated_at, id FROM nodes WHERE {where} ORDER BY updated_at, id LIMIT ?",
            [*params, limit],
        )
        total = int(self.query(f"SELECT count(*) FROM nodes WHERE {where}", params)[0][0])
        return [(str(row[0]), str(row[1])) for row in rows], total

    def unabstracted_nodes(
        self: _Sql, node_type: str, relationship: str, creation_source: str
    ) -> set[str]:
        """Live nodes of `node_type` that no node made by `creation_source` points at
        with `relationship` (episodes no summary is derived from).  One query."""
        rows = self.query(
            "SELECT id FROM nodes WHERE namespace = ? AND node_type = ? AND forgotten_at IS NULL "
            "AND id NOT IN (SELECT e.target_id FROM edges e JOIN nodes s ON s.id = e.source_id "
            "WHERE e.relationship = ? AND s.creation_source = ?)",
            (self.namespace, node_type, relationship, creation_source),
        )
        return {str(row[0]) for row in rows}

    def live_metadata(self: _Sql) -> list[tuple[str, str]]:
        """(id, metadata JSON text) of every live node.  One scan."""
        rows = self.query(
            "SELECT id, metadata FROM nodes WHERE namespace = ? AND forgotten_at IS NULL",
            (self.namespace,),
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    # -- edges -------------------------------------------------------------------------

    def live_edge_ends(self: _Sql) -> list[tuple[str, str]]:
        """(source, target) of every edge whose both ends are live.  One join."""
        rows = self.query(
            "SELECT e.source_id, e.target_id FROM edges e "
            "JOIN nodes s ON s.id = e.source_id AND s.forgotten_at IS NULL "
            "JOIN nodes t ON t.id = e.target_id AND t.forgotten_at IS NULL "
            "WHERE e.namespace = ?",
            (self.namespace,),
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    def live_edges_of_kinds(self: _Sql, kinds: Sequence[str]) -> list[tuple[str, str, str]]:
        """(source, target, relationship) of the edges of `kinds` between live nodes."""
        rows = self.query(
            "SELECT e.source_id, e.target_id, e.relationship FROM edges e "
            "JOIN nodes s ON s.id = e.source_id AND s.forgotten_at IS NULL "
            "JOIN nodes t ON t.id = e.target_id AND t.forgotten_at IS NULL "
            f"WHERE e.namespace = ? AND e.relationship IN ({_marks(len(kinds))})",
            [self.namespace, *kinds],
        )
        return [(str(r[0]), str(r[1]), str(r[2])) for r in rows]

    def edges_within_type(
        self: _Sql, node_type: str, excluded: Sequence[str]
    ) -> list[tuple[str, str]]:
        """(source, target) of edges between two nodes of `node_type`, other relationships
        than `excluded`.  One join."""
        rows = self.query(
            "SELECT e.source_id, e.target_id FROM edges e "
            "JOIN nodes a ON a.id = e.source_id JOIN nodes b ON b.id = e.target_id "
            "WHERE e.namespace = ? AND a.node_type = ? AND b.node_type = ? "
            f"AND e.relationship NOT IN ({_marks(len(excluded))})",
            (self.namespace, node_type, node_type, *excluded),
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    def sources_pointing_at(
        self: _Sql, relationship: str, creation_source: str, targets: Sequence[str]
    ) -> list[str]:
        """Distinct sources made by `creation_source` with a `relationship` edge to any
        of `targets` (the summaries derived from them), sorted."""
        if not targets:
            return []
        rows = self.query(
            "SELECT DISTINCT e.source_id FROM edges e JOIN nodes s ON s.id = e.source_id "
            "WHERE e.namespace = ? AND e.relationship = ? AND s.creation_source = ? "
            f"AND e.target_id IN ({_marks(len(targets))}) ORDER BY e.source_id",
            (self.namespace, relationship, creation_source, *targets),
        )
        return [str(row[0]) for row in rows]

    def decay_edges(
        self: _Sql, protection: Protection, rate_per_day: float, days: float, floor: float
    ) -> int:
        """Decay the strength of edges with a decay rate and no protected end by
        exp(−rate_per_day × decay_rate × days), never below `floor` (time alone never
        makes an edge weak enough to prune).  Returns the rows changed.  O(E)."""
        clause, params = protection.unprotected_edge_sql()
        cursor = self.execute(
            "UPDATE edges SET strength = max(?, strength * exp(-? * decay_rate * ?)) "
            f"WHERE namespace = ? AND decay_rate > 0 AND strength > ? AND {clause}",
            [floor, rate_per_day, max(0.0, days), self.namespace, floor, *params],
        )
        return int(cursor.rowcount)

    def delete_weak_edges(self: _Sql, protection: Protection, below: float) -> int:
        """Delete the edges weaker than `below` with no protected end; returns how many."""
        clause, params = protection.unprotected_edge_sql()
        cursor = self.execute(
            f"DELETE FROM edges WHERE namespace = ? AND strength < ? AND {clause}",
            [self.namespace, below, *params],
        )
        return int(cursor.rowcount)

    def coactivated_edges(self: _Sql) -> list[tuple[str, float, int, str]]:
        """(id, strength, co_activation_count, metadata text) of the edges co-activated
        since last counted (``metadata.co_activation_counted``), by id.  One scan."""
        rows = self.query(
            "SELECT id, strength, co_activation_count, metadata FROM edges WHERE namespace = ? "
            f"AND co_activation_count > COALESCE(json_extract(metadata, '$.{COUNTED_KEY}'), 0) "
            "ORDER BY id",
            (self.namespace,),
        )
        return [(str(r[0]), float(r[1]), int(r[2]), str(r[3])) for r in rows]

    def set_edge_strengths(self: _Sql, updates: Sequence[tuple[float, str, str]]) -> None:
        """Set strength and metadata text of each (strength, metadata, id)."""
        self.execute_many(
            "UPDATE edges SET strength = ?, metadata = ? WHERE id = ? AND namespace = ?",
            ((*update, self.namespace) for update in updates),
        )

    # -- nodes: text search for the erasure (learning/erasure.py states the rule) -------

    def nodes_with_metadata_containing(self: _Sql, needle: str) -> list[tuple[str, str]]:
        """(id, metadata text) of nodes whose metadata text contains `needle`, by id."""
        rows = self.query(
            "SELECT id, metadata FROM nodes WHERE namespace = ? AND instr(metadata, ?) > 0 "
            "ORDER BY id",
            (self.namespace, needle),
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    def node_texts_of_type(self: _Sql, node_type: str) -> list[tuple[str, str]]:
        """(id, content) of every node (live or forgotten) of `node_type`."""
        rows = self.query(
            "SELECT id, content FROM nodes WHERE namespace = ? AND node_type = ?",
            (self.namespace, node_type),
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    def node_texts_containing(
        self: _Sql, phrases: Sequence[str], words: Sequence[str], min_words: int
    ) -> list[tuple[str, str]]:
        """(id, content) of nodes (live or forgotten) whose content holds one of
        `phrases`, or at least `min_words` of `words` in its lower-cased text (a cheap
        prefilter; the caller decides).  Nothing asked (no phrase, too few words): []."""
        parts = ["instr(content, ?) > 0" for _ in phrases]
        params = list(phrases)
        if len(words) >= min_words:
            hits = " + ".join("(instr(lower(content), ?) > 0)" for _ in words)
            parts.append(f"({hits}) >= {int(min_words)}")
            params += words
        condition = " OR ".join(parts) or "0"
        rows = self.query(
            f"SELECT id, content FROM nodes WHERE namespace = ? AND ({condition})",
            [self.namespace, *params],
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    # -- any table: the erasure's scrub and its residual check --------------------------

    def rows_mentioning(
        self: _Sql, table: str, key: str, column: str, needles: Sequence[str]
    ) -> list[tuple[Any, Any]]:
        """(key, column) of the rows of `table` whose column contains any needle (SQL
        instr).  `table`, `key`, `column`: names of this package (checked), never input."""
        _check_scrubbed(table, key, column)
        condition = " OR ".join(f"instr({column}, ?) > 0" for _ in needles)
        rows = self.query(f"SELECT {key}, {column} FROM {table} WHERE {condition}", list(needles))
        return [(r[0], r[1]) for r in rows]

    def set_text(self: _Sql, table: str, key: str, column: str, key_value: Any, text: str) -> None:
        """Set one text column of one row (the scrubbed value)."""
        _check_scrubbed(table, key, column)
        self.execute(f"UPDATE {table} SET {column} = ? WHERE {key} = ?", (text, key_value))

    def table_columns(self: _Sql) -> list[tuple[str, list[str]]]:
        """(table, its column names) of every table of the database, by table name."""
        names = self.query(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
        out = []
        for (table,) in names:
            columns = self.query(f"SELECT name FROM pragma_table_info('{table}')")
            out.append((str(table), [str(c[0]) for c in columns]))
        return sorted(out)

    def columns_holding(
        self: _Sql, table: str, pairs: Sequence[tuple[str, str]]
    ) -> list[tuple[str, str]]:
        """Those (column, needle) pairs of `table` (names from `table_columns`) where some
        text or bytes value of the column contains the needle.  One scan of the table."""
        flags = ", ".join(
            f"max(typeof(\"{column}\") IN ('text', 'blob') AND instr(\"{column}\", ?) > 0)"
            for column, _ in pairs
        )
        row = self.query(f'SELECT {flags} FROM "{table}"', [n for _, n in pairs])[0]
        return [pair for pair, flag in zip(pairs, tuple(row), strict=True) if flag]

    def values_containing(self: _Sql, table: str, column: str, needle: str) -> list[Any]:
        """The values of one column (names from `table_columns`) containing `needle`."""
        rows = self.query(
            f'SELECT "{column}" FROM "{table}" WHERE instr("{column}", ?) > 0', (needle,)
        )
        return [row[0] for row in rows]

    def table_mentions(self: _Sql, table: str, needle: str) -> bool:
        """Whether any column of `table` (a name from `table_columns`), read as text,
        contains `needle` (an independent check of the erasure's residual scan)."""
        columns = self.query(f"SELECT name FROM pragma_table_info('{table}')")
        return any(
            self.query(
                f'SELECT count(*) FROM "{table}" WHERE instr(CAST("{column[0]}" AS TEXT), ?) > 0',
                (needle,),
            )[0][0]
            for column in columns
        )


# The (table, key, column) triples the erasure scrubs; every other name is refused.
_SCRUBBED: Final = frozenset(
    {
        ("nodes", "id", "causal_parent_ids"),
        ("nodes", "id", "metadata"),
        ("edges", "id", "metadata"),
        ("outcomes", "id", "causal_node_ids"),
        ("outcomes", "id", "evidence"),
        ("outcomes", "id", "action_id"),
        ("goals", "id", "linked_node_ids"),
        ("goals", "id", "metadata"),
        ("goals", "id", "title"),
        ("goals", "id", "description"),
        ("revisions", "id", "details"),
        ("revisions", "id", "reason"),
        ("attention_items", "id", "subject_ids"),
        ("attention_items", "id", "details"),
        ("source_files", "path", "chunk_node_ids"),
        ("consolidation_log", "id", "stages"),
        ("consolidation_log", "id", "totals"),
    }
)


def _check_scrubbed(table: str, key: str, column: str) -> None:
    if (table, key, column) not in _SCRUBBED:
        raise ValueError(f"no scrub of {table}.{column}")
