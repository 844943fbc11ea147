"""The `graphonomous` command line: a thin adapter over the `Graphonomous` facade.

Every command prints a human summary, or the facade's JSON with `--json`.
Errors are one line on stderr naming the problem, with a non-zero exit code
(1 = the operation failed, 2 = bad usage or input); never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

from . import __version__
from .api import Graphonomous
from .contract import DOCUMENT_KINDS, FIXTURE_MODES, cli_check, cli_fixtures
from .mcp import DEFAULT_PORT, TRANSPORTS
from .mcp.tools import DEFAULT_SURFACE, SURFACES
from .model import NODE_TYPES, RELATIONSHIPS, TIMESCALES, NotFoundError, ValidationError
from .store import BatchError, StoreError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


class CliError(Exception):
    """A user-facing failure: printed as one line, exit code attached."""

    def __init__(self, message: str, code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.code = code


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise CliError(f"{self.prog}: {message}", EXIT_USAGE)


# -- output helpers ----------------------------------------------------------


def emit_json(data: Any, out: TextIO) -> None:
    out.write(json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def _short(text: str, width: int = 72) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _print_node(node: dict[str, Any], out: TextIO) -> None:
    out.write(f"{node['id']}  [{node['node_type']}, {node['timescale']}]  ")
    out.write(f"confidence {node['confidence']:.2f}\n  {_short(node['content'])}\n")


def _print_edge(edge: dict[str, Any], out: TextIO) -> None:
    out.write(
        f"{edge['id']}  {edge['source_id']} -[{edge['relationship']}]-> {edge['target_id']}"
        f"  strength {edge['strength']:.2f}\n"
    )


def _read_json_arg(path: str, what: str) -> Any:
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot read {what} {path}: {exc.strerror}", EXIT_USAGE) from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"{what} is not valid JSON: {exc}", EXIT_USAGE) from exc


def _open(args: argparse.Namespace) -> Graphonomous:
    return Graphonomous(db=args.db)


# -- commands ---------------------------------------------------------------


def cmd_init(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as graph:
        stats = graph.graph_stats()
    if args.json:
        emit_json({"db_path": stats["db_path"], "schema_version": stats["schema_version"]}, out)
    else:
        out.write(f"database ready: {stats['db_path']} (schema v{stats['schema_version']})\n")
    return EXIT_OK


def cmd_stats(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as graph:
        stats = graph.graph_stats()
    if args.json:
        emit_json(stats, out)
        return EXIT_OK
    out.write(f"database   {stats['db_path']} (schema v{stats['schema_version']})\n")
    out.write(f"nodes      {stats['node_count']} (+{stats['forgotten_count']} forgotten)\n")
    out.write(f"edges      {stats['edge_count']}\n")
    types = ", ".join(f"{k} {v}" for k, v in stats["nodes_by_type"].items() if v)
    out.write(f"by type    {types or '-'}\n")
    rels = ", ".join(f"{k} {v}" for k, v in stats["edges_by_relationship"].items())
    out.write(f"relations  {rels or '-'}\n")
    mean = stats["mean_confidence"]
    out.write(f"confidence {'-' if mean is None else f'{mean:.3f} mean'}\n")
    out.write(f"embedder   {stats['embedder']} ({stats['embedding_count']} vectors)\n")
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
        result = graph.get_node(args.node_id, include_forgotten=True)
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
        _print_edge(edge, out)
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
            args.source_id,
            args.target_id,
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
            node_id=args.node,
            direction=args.direction,
            relationship=args.relationship,
            limit=args.limit,
        )
    if args.json:
        emit_json(result, out)
        return EXIT_OK
    for edge in result["edges"]:
        _print_edge(edge, out)
    out.write(f"{result['count']} edges\n")
    return EXIT_OK


def cmd_batch(args: argparse.Namespace, out: TextIO) -> int:
    operations = _read_json_arg(args.file, "batch")
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


def cmd_topology(args: argparse.Namespace, out: TextIO) -> int:
    from .topology import analyze_document

    document = _read_json_arg(args.file, "topology input")
    preview = (args.preview[0], args.preview[1]) if args.preview else None
    emit_json(analyze_document(document, reference=args.reference, preview=preview), out)
    return EXIT_OK


def cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    import logging

    from .mcp import serve

    # stdout belongs to the protocol: diagnostics go to stderr.
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="graphonomous: %(message)s"
    )
    with _open(args) as graph:
        try:
            return serve(graph, args.transport, args.host, args.port, args.surface)
        except ValueError as exc:
            raise CliError(str(exc), EXIT_USAGE) from exc


def cmd_contract_check(args: argparse.Namespace, out: TextIO) -> int:
    return cli_check(args.file, args.json, sys.stdin, out, sys.stderr, kind=args.kind)


def cmd_contract_fixtures(args: argparse.Namespace, out: TextIO) -> int:
    return cli_fixtures(
        args.run, args.mode, args.fixtures, args.json, out, sys.stderr, timeout_s=args.timeout
    )


# -- parser -----------------------------------------------------------------


def _float_arg(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    # --db and --json are accepted before or after the subcommand.
    common = _Parser(add_help=False)
    common.add_argument(
        "--db",
        default=argparse.SUPPRESS,
        help="database file (default: $GRAPHONOMOUS_DB or ~/.graphonomous/knowledge.db)",
    )
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")

    parser = _Parser(
        prog="graphonomous",
        description="Continual-learning knowledge graph for LLM agents (MCP server and tools).",
    )
    parser.add_argument("--version", action="version", version=f"graphonomous {__version__}")
    parser.add_argument("--db", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", default=False, help=argparse.SUPPRESS)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

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
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help="HTTP port")
    serve.add_argument("--surface", choices=sorted(SURFACES), default=DEFAULT_SURFACE)
    command("stats", cmd_stats, "counts and facts about the graph")

    node = commands.add_parser("node", help="add, show and list nodes")
    node_commands = node.add_subparsers(
        dest="node_command", metavar="ACTION", parser_class=_Parser, required=True
    )
    add = command("add", cmd_node_add, "store a knowledge node", node_commands)
    add.add_argument("content")
    add.add_argument("--type", default="semantic", choices=NODE_TYPES)
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
    batch.add_argument("file", help="JSON file, or - for stdin")

    topo = command(
        "topology",
        cmd_topology,
        'κ analysis of a {"nodes", "edges"} JSON document, printed as canonical JSON',
    )
    topo.add_argument("file", nargs="?", default="-", help="JSON file, or - for stdin (default)")
    topo.add_argument("--reference", action="store_true", help="brute-force reference output")
    topo.add_argument("--preview", nargs=2, metavar=("SRC", "DST"), help="preview adding SRC->DST")

    contract = commands.add_parser("contract", help="check JSON against the canonical schema")
    contract_commands = contract.add_subparsers(
        dest="contract_command", metavar="ACTION", parser_class=_Parser, required=True
    )
    check = command(
        "check", cmd_contract_check, "validate a topology/preview document", contract_commands
    )
    check.add_argument("file", help="JSON file, or - for stdin")
    check.add_argument("--kind", choices=DOCUMENT_KINDS, default="auto")
    fixtures = command(
        "fixtures",
        cmd_contract_fixtures,
        "run another implementation (stdin JSON -> stdout JSON) on the shared fixtures",
        contract_commands,
    )
    fixtures.add_argument("--run", required=True, metavar="CMD", help="command to run (no shell)")
    fixtures.add_argument("--mode", choices=FIXTURE_MODES, default="exact")
    fixtures.add_argument(
        "--fixtures", metavar="DIR", help="fixtures directory (default ./fixtures)"
    )
    fixtures.add_argument("--timeout", type=_float_arg, default=30.0, help="seconds per fixture")
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
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
    except (NotFoundError, StoreError, BatchError) as exc:
        sys.stderr.write(f"graphonomous: {exc}\n")
        return EXIT_FAILED
    except KeyboardInterrupt:
        sys.stderr.write("graphonomous: interrupted\n")
        return 130
    except BrokenPipeError:
        # `graphonomous node list | head`: the reader went away; not an error.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:
        if os.environ.get("GRAPHONOMOUS_DEBUG"):
            raise
        sys.stderr.write(f"graphonomous: internal error: {type(exc).__name__}: {exc}\n")
        return EXIT_FAILED


if __name__ == "__main__":
    raise SystemExit(main())
