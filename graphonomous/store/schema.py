"""The SQLite schema and its migrations — the only place table layouts are written.

`PRAGMA user_version` records how many migrations a database file has had.
Opening a file applies the missing ones in order, each in its own
transaction; a file with a higher version than `SCHEMA_VERSION` is refused
without being touched (see `Store.open`).

Migration 1 is the seed-003 baseline (column names as upstream had them);
migration 2 is the v0.3 upgrade of seed 004 plus our canonical column names,
so the upgrade path is exercised by every fresh database as well.  Migration 3
adds the consolidation log, attention items and the source-file table of
ingestion.  Migration 5 adds the change log that keeps every process's
in-memory indexes fresh (triggers write it in the same transaction as the
change, whichever process or statement made it) and the table of persisted
derived indexes.  Migration 6 indexes entity names (metadata.entity_name) for
the memory-compat view.  Migration 7 adds validity and the retention anchor.
Migration 8 keys vectors and saved derived indexes by model (one vector per node
and model) and logs which model's vector changed.  Migration 9 keeps the memory-compat
relations whose endpoints are not (yet) entities.  Migration 10 puts every row in a
namespace (existing rows in `default`).
"""

from __future__ import annotations

from typing import Final

from ..model import (
    CREATION_SOURCES,
    DEFAULT_AGENT_ID,
    DEFAULT_NAMESPACE,
    DEFAULT_Q_VALUE,
    NODE_TYPES,
    RELATIONSHIPS,
    TIMESCALES,
)


def _sql_list(values: tuple[str, ...]) -> str:
    return ", ".join(f"'{value}'" for value in values)


_MIGRATION_1: Final = [
    f"""
    CREATE TABLE nodes (
        id TEXT PRIMARY KEY,
        type TEXT NOT NULL CHECK (type IN ({_sql_list(NODE_TYPES)})),
        content TEXT NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{{}}',
        causal_parent_ids TEXT NOT NULL DEFAULT '[]',
        confidence REAL NOT NULL DEFAULT 0.5 CHECK (confidence BETWEEN 0.0 AND 1.0),
        access_count INTEGER NOT NULL DEFAULT 0,
        access_recency TEXT,
        creation_source TEXT NOT NULL DEFAULT 'inference'
            CHECK (creation_source IN ({_sql_list(CREATION_SOURCES)})),
        timescale TEXT NOT NULL DEFAULT 'medium' CHECK (timescale IN ({_sql_list(TIMESCALES)})),
        decay_rate REAL NOT NULL DEFAULT 0.01,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE node_embeddings (
        node_id TEXT PRIMARY KEY REFERENCES nodes(id) ON DELETE CASCADE,
        embedding BLOB NOT NULL
    )
    """,
    f"""
    CREATE TABLE edges (
        id TEXT PRIMARY KEY,
        source_id TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
        target_id TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
        relationship TEXT NOT NULL CHECK (relationship IN ({_sql_list(RELATIONSHIPS)})),
        strength REAL NOT NULL DEFAULT 0.3 CHECK (strength BETWEEN 0.0 AND 1.0),
        co_activation_count INTEGER NOT NULL DEFAULT 0,
        decay_rate REAL NOT NULL DEFAULT 0.005,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (source_id, target_id, relationship)
    )
    """,
    "CREATE INDEX idx_nodes_type ON nodes(type)",
    "CREATE INDEX idx_nodes_timescale ON nodes(timescale)",
    "CREATE INDEX idx_nodes_confidence ON nodes(confidence)",
    "CREATE INDEX idx_edges_source ON edges(source_id)",
    "CREATE INDEX idx_edges_target ON edges(target_id)",
    "CREATE INDEX idx_edges_relationship ON edges(relationship)",
]

_MIGRATION_2: Final = [
    # Canonical names: the JSON field names are the column names.
    "ALTER TABLE nodes RENAME COLUMN type TO node_type",
    "ALTER TABLE nodes RENAME COLUMN access_recency TO last_accessed_at",
    "ALTER TABLE nodes ADD COLUMN source TEXT",
    f"ALTER TABLE nodes ADD COLUMN q_value REAL NOT NULL DEFAULT {DEFAULT_Q_VALUE}",
    "ALTER TABLE nodes ADD COLUMN q_update_count INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE nodes ADD COLUMN evidence_count INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE nodes ADD COLUMN revision_id TEXT",
    "ALTER TABLE nodes ADD COLUMN superseded_by TEXT",
    "ALTER TABLE nodes ADD COLUMN forgotten_at TEXT",
    "ALTER TABLE nodes ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0",
    f"ALTER TABLE nodes ADD COLUMN agent_id TEXT NOT NULL DEFAULT '{DEFAULT_AGENT_ID}'",
    "ALTER TABLE edges ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}'",
    f"ALTER TABLE edges ADD COLUMN agent_id TEXT NOT NULL DEFAULT '{DEFAULT_AGENT_ID}'",
    "ALTER TABLE node_embeddings ADD COLUMN model TEXT NOT NULL DEFAULT 'hashing-384'",
    "CREATE INDEX idx_nodes_agent ON nodes(agent_id)",
    "CREATE INDEX idx_nodes_forgotten ON nodes(forgotten_at)",
    "CREATE INDEX idx_nodes_created ON nodes(created_at)",
    "CREATE INDEX idx_edges_agent ON edges(agent_id)",
    """
    CREATE TABLE goals (
        id TEXT PRIMARY KEY,
        node_id TEXT REFERENCES nodes(id) ON DELETE SET NULL,
        title TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        status TEXT NOT NULL DEFAULT 'proposed',
        priority REAL NOT NULL DEFAULT 0.5,
        progress REAL NOT NULL DEFAULT 0.0,
        parent_goal_id TEXT REFERENCES goals(id) ON DELETE SET NULL,
        linked_node_ids TEXT NOT NULL DEFAULT '[]',
        metadata TEXT NOT NULL DEFAULT '{}',
        agent_id TEXT NOT NULL DEFAULT 'default',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )
    """,
    "CREATE INDEX idx_goals_status ON goals(status)",
    """
    CREATE TABLE outcomes (
        id TEXT PRIMARY KEY,
        action_id TEXT NOT NULL,
        status TEXT NOT NULL,
        confidence REAL NOT NULL,
        causal_node_ids TEXT NOT NULL DEFAULT '[]',
        evidence TEXT NOT NULL DEFAULT '{}',
        goal_id TEXT,
        outcome_node_id TEXT REFERENCES nodes(id) ON DELETE SET NULL,
        created_at TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE revisions (
        id TEXT PRIMARY KEY,
        operation TEXT NOT NULL,
        old_node_id TEXT,
        new_node_id TEXT,
        reason TEXT NOT NULL DEFAULT '',
        details TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL
    )
    """,
    # Append-only; never holds node content (GDPR erase leaves only this trace).
    """
    CREATE TABLE audit_log (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        at TEXT NOT NULL,
        action TEXT NOT NULL,
        subject_id TEXT,
        details TEXT NOT NULL DEFAULT '{}'
    )
    """,
    """
    CREATE TABLE forgetting_config (
        id TEXT PRIMARY KEY DEFAULT 'default',
        policy TEXT NOT NULL DEFAULT 'hybrid',
        max_nodes INTEGER NOT NULL DEFAULT 10000,
        max_age_hours INTEGER NOT NULL DEFAULT 720,
        updated_at TEXT NOT NULL
    )
    """,
]

# Bookkeeping for the learning loop and for ingestion.
_MIGRATION_3: Final = [
    """
    CREATE TABLE consolidation_log (
        id TEXT PRIMARY KEY,
        started_at TEXT NOT NULL,
        finished_at TEXT NOT NULL,
        trigger TEXT NOT NULL,
        dry_run INTEGER NOT NULL DEFAULT 0,
        stages TEXT NOT NULL DEFAULT '[]',
        totals TEXT NOT NULL DEFAULT '{}'
    )
    """,
    "CREATE INDEX idx_consolidation_started ON consolidation_log(started_at)",
    """
    CREATE TABLE attention_items (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        severity TEXT NOT NULL DEFAULT 'info',
        subject_ids TEXT NOT NULL DEFAULT '[]',
        details TEXT NOT NULL DEFAULT '{}',
        status TEXT NOT NULL DEFAULT 'open',
        created_at TEXT NOT NULL,
        resolved_at TEXT
    )
    """,
    "CREATE INDEX idx_attention_status ON attention_items(status)",
    """
    CREATE TABLE source_files (
        path TEXT PRIMARY KEY,
        root TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        file_node_id TEXT REFERENCES nodes(id) ON DELETE SET NULL,
        chunk_node_ids TEXT NOT NULL DEFAULT '[]',
        ingested_at TEXT NOT NULL
    )
    """,
    "CREATE INDEX idx_source_files_root ON source_files(root)",
]

# Outcome signals may carry the sender's idempotency key: a repeated signal
# (a client retrying after a timeout) is recognised and applied once.
_MIGRATION_4: Final = [
    "ALTER TABLE outcomes ADD COLUMN signal_id TEXT",
    "CREATE UNIQUE INDEX idx_outcomes_signal ON outcomes(signal_id) WHERE signal_id IS NOT NULL",
]

# The change log: one row per write that can change what the vector or BM25
# index holds for a node (insert, delete, content or forgotten_at changed, its
# embedding written or dropped).  Triggers write it, so no writer can forget
# to — raw SQL, cascades and other processes included.  Access counters,
# confidence and edges are not logged: the indexes do not depend on them
# (the graph snapshot is checked by `Store.fingerprint`).  `seq` is
# AUTOINCREMENT, so it only grows even after old rows are pruned.
_NODE_CHANGE_TRIGGERS: Final = (
    ("nodes_log_insert", "AFTER INSERT ON nodes", "NEW.id"),
    ("nodes_log_update", "AFTER UPDATE OF content, forgotten_at ON nodes", "NEW.id"),
    ("nodes_log_delete", "AFTER DELETE ON nodes", "OLD.id"),
    ("embeddings_log_insert", "AFTER INSERT ON node_embeddings", "NEW.node_id"),
    ("embeddings_log_update", "AFTER UPDATE ON node_embeddings", "NEW.node_id"),
    ("embeddings_log_delete", "AFTER DELETE ON node_embeddings", "OLD.node_id"),
)
_MIGRATION_5: Final = [
    """
    CREATE TABLE node_changes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        node_id TEXT NOT NULL
    )
    """,
    *(
        f"CREATE TRIGGER {name} {event} BEGIN "
        f"INSERT INTO node_changes (node_id) VALUES ({value}); END"
        for name, event, value in _NODE_CHANGE_TRIGGERS
    ),
    # Derived indexes saved by the engine so a fresh process loads them in one
    # read instead of rebuilding them from rows; `generation` is the change-log
    # seq they reflect (later changes are applied on load).
    """
    CREATE TABLE derived_indexes (
        name TEXT PRIMARY KEY,
        model TEXT NOT NULL,
        generation INTEGER NOT NULL,
        data BLOB NOT NULL
    )
    """,
]
# The memory-compat view (server_memory) finds entities by name in the store on every
# call instead of holding a copy of the graph: a partial expression index on the
# entity name (only entity nodes carry one), with agent_id and created_at for "the
# oldest of the agent wins".
_MIGRATION_6: Final = [
    "CREATE INDEX idx_nodes_entity_name ON nodes("
    "json_extract(metadata, '$.entity_name'), agent_id, created_at) "
    "WHERE json_extract(metadata, '$.entity_name') IS NOT NULL",
]

# Time (SPEC "Retention" and "Validity"): when a node's statement holds in the world
# (valid_from/valid_to: a superseded fact ends where its successor begins), and its
# retention anchor: the confidence and Q-value it had when last reinforced (written,
# learned from, retrieved) and when.  Decay recomputes confidence from the anchor, so
# it depends on elapsed time alone, never on how often consolidation runs, and a
# reinforcement resets it.  Existing rows start anchored at their last use.  Why a
# node was soft-forgotten (faded, budget, asked): only a faded one may be recalled.
_MIGRATION_7: Final = [
    "ALTER TABLE nodes ADD COLUMN valid_from TEXT",
    "ALTER TABLE nodes ADD COLUMN valid_to TEXT",
    "ALTER TABLE nodes ADD COLUMN reinforced_at TEXT",
    "ALTER TABLE nodes ADD COLUMN base_confidence REAL",
    "ALTER TABLE nodes ADD COLUMN base_q_value REAL",
    "ALTER TABLE nodes ADD COLUMN forgotten_reason TEXT",
    "UPDATE nodes SET valid_from = created_at, "
    "reinforced_at = COALESCE(last_accessed_at, updated_at, created_at), "
    "base_confidence = confidence, base_q_value = q_value",
    "CREATE INDEX idx_nodes_valid_from ON nodes(valid_from)",
]

# Vectors per model: a node keeps at most one vector per embedding model, so a
# process with another embedder adds its own vectors instead of replacing (and a
# later switch back re-embedding) the others'.  SQLite cannot change a primary key
# in place: the table is rebuilt (existing rows keep their model) and its change-log
# triggers are created again, now also logging which model's vector changed (NULL:
# a change of the node itself), so a process skips the rows of other models' vectors.
# Saved derived indexes are keyed by (name, model) likewise: each model keeps its
# saved vector index.  Portable SQL (PostgreSQL runs it through store/postgres.py).
_EMBEDDING_LOG_TRIGGERS: Final = (
    ("embeddings_log_insert", "AFTER INSERT ON node_embeddings", "NEW"),
    ("embeddings_log_update", "AFTER UPDATE ON node_embeddings", "NEW"),
    ("embeddings_log_delete", "AFTER DELETE ON node_embeddings", "OLD"),
)
_MIGRATION_8: Final = [
    """
    CREATE TABLE node_embeddings_v8 (
        node_id TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
        embedding BLOB NOT NULL,
        model TEXT NOT NULL,
        PRIMARY KEY (node_id, model)
    )
    """,
    "INSERT INTO node_embeddings_v8 (node_id, embedding, model) "
    "SELECT node_id, embedding, model FROM node_embeddings",
    "DROP TABLE node_embeddings",
    "ALTER TABLE node_embeddings_v8 RENAME TO node_embeddings",
    # One model's vectors in id order (index loads, counts per model); lookups by
    # node (the cascade from nodes, the joins) use the primary key.
    "CREATE INDEX idx_embeddings_model ON node_embeddings(model, node_id)",
    "ALTER TABLE node_changes ADD COLUMN model TEXT",
    *(
        f"CREATE TRIGGER {name} {event} BEGIN "
        f"INSERT INTO node_changes (node_id, model) VALUES ({row}.node_id, {row}.model); END"
        for name, event, row in _EMBEDDING_LOG_TRIGGERS
    ),
    """
    CREATE TABLE derived_indexes_v8 (
        name TEXT NOT NULL,
        model TEXT NOT NULL,
        generation INTEGER NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (name, model)
    )
    """,
    "INSERT INTO derived_indexes_v8 (name, model, generation, data) "
    "SELECT name, model, generation, data FROM derived_indexes",
    "DROP TABLE derived_indexes",
    "ALTER TABLE derived_indexes_v8 RENAME TO derived_indexes",
]

# server-memory stores a relation whatever its endpoints; ours become edges between
# entity nodes, so a relation naming a name that is no entity yet (a "dangling" one)
# is kept here by name until both ends are entities (then it becomes an edge with
# the same stamp) or a delete removes it.  `stamp` (a UUIDv7 made when the relation
# was created) orders every listing, as on edges; the triple is unique per agent.
_MIGRATION_9: Final = [
    """
    CREATE TABLE memory_dangling_relations (
        stamp TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        from_name TEXT NOT NULL,
        to_name TEXT NOT NULL,
        relation_type TEXT NOT NULL,
        UNIQUE (agent_id, from_name, to_name, relation_type)
    )
    """,
    "CREATE INDEX idx_memory_dangling_to ON memory_dangling_relations(agent_id, to_name)",
]

# Namespaces (SPEC "Namespaces"): every row of memory and of its bookkeeping belongs
# to one namespace; a store opened in a namespace reads and writes only its rows.  The
# rows of a file made before namespaces existed stay in `default`.  Ids stay unique in
# the file (UUIDv7), so foreign keys and the change log are unchanged; the forgetting
# configuration is keyed by the namespace itself (its `id`), and a saved derived index
# by a namespaced name (`Store.derived_name`).  Lookups by id, source, target and entity
# name keep their indexes (the namespace is a residual test on the rows found); the
# indexes of single node columns lead with the namespace (below).  No edge index does:
# SQLite would prefer it to the source / target indexes that walks and cascades use.
# Portable SQL (ADD COLUMN with a constant default, a table rebuilt as in migration 8;
# PostgreSQL runs it through store/postgres.py).
NAMESPACED_TABLES: Final = (
    "nodes",
    "edges",
    "goals",
    "outcomes",
    "revisions",
    "audit_log",
    "consolidation_log",
    "attention_items",
    "source_files",
    "memory_dangling_relations",
)
# An ingested file is one project's: source_files is keyed by (namespace, path), so two
# projects may ingest the same path.  SQLite cannot change a primary key in place: the
# table is rebuilt (as in migration 8) with its rows in `default`.
_NAMESPACE_LED: Final = (
    ("idx_nodes_type", "node_type"),
    ("idx_nodes_timescale", "timescale"),
    ("idx_nodes_confidence", "confidence"),
    ("idx_nodes_agent", "agent_id"),
    ("idx_nodes_forgotten", "forgotten_at"),
    ("idx_nodes_created", "created_at"),
    ("idx_nodes_valid_from", "valid_from"),
)
_MIGRATION_10: Final = [
    *(
        f"ALTER TABLE {table} ADD COLUMN namespace TEXT NOT NULL DEFAULT '{DEFAULT_NAMESPACE}'"
        for table in NAMESPACED_TABLES
        if table != "source_files"
    ),
    f"""
    CREATE TABLE source_files_v10 (
        path TEXT NOT NULL,
        root TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        file_node_id TEXT REFERENCES nodes(id) ON DELETE SET NULL,
        chunk_node_ids TEXT NOT NULL DEFAULT '[]',
        ingested_at TEXT NOT NULL,
        namespace TEXT NOT NULL DEFAULT '{DEFAULT_NAMESPACE}',
        PRIMARY KEY (namespace, path)
    )
    """,
    "INSERT INTO source_files_v10 (path, root, content_hash, size, mtime_ns, file_node_id, "
    "chunk_node_ids, ingested_at) SELECT path, root, content_hash, size, mtime_ns, "
    "file_node_id, chunk_node_ids, ingested_at FROM source_files",
    "DROP TABLE source_files",
    "ALTER TABLE source_files_v10 RENAME TO source_files",
    "CREATE INDEX idx_source_files_root ON source_files(namespace, root)",
    # The indexes of single node columns lead with the namespace, which every statement
    # on nodes names: each serves what it served before, within one namespace (a count
    # or group stays index-only, a range stays a range), so a namespace's statistics
    # cost what it holds, not what the file holds.
    *(
        statement
        for name, column in _NAMESPACE_LED
        for statement in (
            f"DROP INDEX {name}",
            f"CREATE INDEX {name} ON nodes(namespace, {column})",
        )
    ),
    # An outcome's idempotency key is the sender's: unique within its namespace.
    "DROP INDEX idx_outcomes_signal",
    "CREATE UNIQUE INDEX idx_outcomes_signal ON outcomes(namespace, signal_id) "
    "WHERE signal_id IS NOT NULL",
]

MIGRATIONS: Final[tuple[list[str], ...]] = (
    _MIGRATION_1,
    _MIGRATION_2,
    _MIGRATION_3,
    _MIGRATION_4,
    _MIGRATION_5,
    _MIGRATION_6,
    _MIGRATION_7,
    _MIGRATION_8,
    _MIGRATION_9,
    _MIGRATION_10,
)
SCHEMA_VERSION: Final = len(MIGRATIONS)

NODE_COLUMNS: Final = (
    "id",
    "node_type",
    "content",
    "metadata",
    "source",
    "causal_parent_ids",
    "confidence",
    "access_count",
    "last_accessed_at",
    "creation_source",
    "timescale",
    "decay_rate",
    "q_value",
    "q_update_count",
    "evidence_count",
    "revision_id",
    "superseded_by",
    "forgotten_at",
    "pinned",
    "agent_id",
    "created_at",
    "updated_at",
    "valid_from",
    "valid_to",
    "reinforced_at",
    "base_confidence",
    "base_q_value",
    "forgotten_reason",
)
EDGE_COLUMNS: Final = (
    "id",
    "source_id",
    "target_id",
    "relationship",
    "strength",
    "co_activation_count",
    "decay_rate",
    "metadata",
    "agent_id",
    "created_at",
    "updated_at",
)

# Columns holding JSON text (written in `model.canonical_json` form): readers decode
# them, and the export (store/dump.py) carries them as JSON values, not strings.
JSON_COLUMNS: Final = frozenset(
    {
        ("nodes", "metadata"),
        ("nodes", "causal_parent_ids"),
        ("edges", "metadata"),
        ("goals", "linked_node_ids"),
        ("goals", "metadata"),
        ("outcomes", "causal_node_ids"),
        ("outcomes", "evidence"),
        ("revisions", "details"),
        ("audit_log", "details"),
        ("consolidation_log", "stages"),
        ("consolidation_log", "totals"),
        ("attention_items", "subject_ids"),
        ("attention_items", "details"),
        ("source_files", "chunk_node_ids"),
    }
)
