"""`python -m graphonomous.mcp [--db PATH] [--transport stdio|http] [--host H] [--port P]`.

A minimal launcher for the MCP server (used by tests and scripts/interop.sh);
`graphonomous serve` in the CLI offers the same options.
"""

from __future__ import annotations

import argparse
import logging
import sys

from ..api import Graphonomous
from . import DEFAULT_PORT, SURFACES, TRANSPORTS, serve
from .tools import DEFAULT_SURFACE


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graphonomous.mcp", description=__doc__)
    parser.add_argument("--db", help="database file (default $GRAPHONOMOUS_DB or ~/.graphonomous)")
    parser.add_argument("--transport", choices=TRANSPORTS, default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--surface", choices=sorted(SURFACES), default=DEFAULT_SURFACE)
    args = parser.parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="graphonomous: %(message)s"
    )
    try:
        with Graphonomous(args.db) as graph:
            return serve(graph, args.transport, args.host, args.port, args.surface)
    except ValueError as exc:
        print(f"graphonomous: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
