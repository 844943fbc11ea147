"""Property test: the JavaScript κ engine (topology.js via topology-cli.mjs) agrees with Python.

1,200+ seeded random documents — small digraphs in every accepted edge form,
planted SCCs of 100–160 nodes, edge previews, and invalid documents — go to one
`node topology-cli.mjs --batch` process; each output line must equal
`graphonomous.topology.analyze_document` as a JSON value AND as compact text
(so float formatting and key order agree too), and each error must carry the
same "field: message".
"""

from __future__ import annotations

import json
import random
import subprocess
from typing import Any

from ui_tools import CLI_SCRIPT, node_binary

from graphonomous.model import ValidationError
from graphonomous.topology import analyze_document
from graphonomous.ui.relationships import relationship_table

SEED = 20261201
SMALL_GRAPHS = 900
LARGE_SCCS = 24
PREVIEWS = 300

_TABLE = relationship_table()
_KINDS = [*_TABLE["known_kinds"], None]


def _edge(rng: random.Random, source: str, target: str) -> Any:
    """One edge in a random accepted form (ours, seed 000's, BendScript's, a pair)."""
    kind = rng.choice(_KINDS)
    form = rng.randrange(6)
    if form == 0 or kind is None:
        return [source, target] if rng.random() < 0.5 else {"source": source, "target": target}
    if form == 1:
        return {"source": source, "target": target, "relationship": kind}
    if form == 2:
        return {"source_id": source, "target_id": target, "edge_type": kind}
    if form == 3:
        return {"id": f"e{rng.randrange(99)}", "a": source, "b": target, "props": {"kind": kind}}
    if form == 4:
        return {"from": source, "to": target, "kind": kind}
    return {"source": source, "target": target, "relationship": kind, "strength": 0.5}


def _ids(rng: random.Random, n: int) -> list[str]:
    alphabet = ["n", "N", "é", "z", "𝔸", "\ue000", "_", "10", "2"]
    return [f"{rng.choice(alphabet)}{i}" for i in range(n)]


def _small(rng: random.Random) -> dict[str, Any]:
    n = rng.randint(0, 12)
    ids = _ids(rng, n)
    edges = []
    if n:
        for _ in range(rng.randint(0, n * 3)):
            edges.append(_edge(rng, rng.choice(ids), rng.choice(ids)))
    listed = [i for i in ids if rng.random() < 0.7]
    nodes: list[Any] = [{"id": i, "text": i} if rng.random() < 0.3 else i for i in listed]
    return {"nodes": nodes, "edges": edges}


def _large(rng: random.Random) -> dict[str, Any]:
    """A ring of 100–160 nodes plus chords (one big SCC) and a DAG tail."""
    n = rng.randint(100, 160)
    ids = [f"big{i:03d}" for i in range(n)]
    order = ids[:]
    rng.shuffle(order)
    edges: list[Any] = [
        {"source": order[i], "target": order[(i + 1) % n], "relationship": "causal"}
        for i in range(n)
    ]
    for _ in range(rng.randint(0, 4 * n)):
        edges.append({"source": rng.choice(ids), "target": rng.choice(ids)})
    for i in range(10):
        edges.append({"source": f"tail{i}", "target": rng.choice(ids), "relationship": "supports"})
    return {"nodes": ids, "edges": edges}


def _preview(rng: random.Random) -> dict[str, Any]:
    doc = _small(rng) if rng.random() < 0.85 else _large(rng)
    universe = [n if isinstance(n, str) else n["id"] for n in doc["nodes"]] or ["p", "q"]
    source = rng.choice(universe) if rng.random() < 0.9 else "fresh-node"
    target = rng.choice(universe)
    doc["preview"] = {"source": source, "target": target}
    return doc


_INVALID: list[Any] = [
    [],
    {"nodes": "a"},
    {"edges": {}},
    {"nodes": [""]},
    {"nodes": [{"name": "x"}]},
    {"nodes": ["x" * 257]},
    {"edges": [{"source": "a"}]},
    {"edges": [{"target": "a", "source": 3}]},
    {"edges": [{"source": "a", "target": "b", "relationship": "loves"}]},
    {"edges": [{"source": "a", "target": "b", "relationship": 7}]},
    {"edges": [{"source": "a", "a": "b", "target": "c"}]},
    {"edges": [["a"]]},
    {"edges": ["ab"]},
    {"edges": [], "preview": {"source": "a"}},
    {"edges": [], "preview": {"source": "", "target": "b"}},
]


def _python(doc: Any) -> Any:
    try:
        return analyze_document(doc)
    except ValidationError as exc:
        return {"error": str(exc)}


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def test_javascript_engine_matches_python_on_random_graphs() -> None:
    node = node_binary()
    rng = random.Random(SEED)
    docs: list[Any] = [_small(rng) for _ in range(SMALL_GRAPHS)]
    docs += [_large(rng) for _ in range(LARGE_SCCS)]
    docs += [_preview(rng) for _ in range(PREVIEWS)]
    docs += _INVALID
    stdin = "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs)
    run = subprocess.run(
        [node, str(CLI_SCRIPT), "--batch"],
        input=stdin.encode(),
        capture_output=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr.decode(errors="replace")
    lines = run.stdout.decode().splitlines()
    assert len(lines) == len(docs)
    big = 0
    for position, (doc, line) in enumerate(zip(docs, lines, strict=True)):
        expected = _python(doc)
        assert json.loads(line) == expected, f"document {position}: {json.dumps(doc)[:300]}"
        assert line == _compact(expected), f"document {position}: text differs"
        if "sccs" in expected and any(len(s["nodes"]) >= 100 for s in expected["sccs"]):
            big += 1
    assert big >= LARGE_SCCS  # the 100+-node SCCs really were exercised
    assert len(docs) >= 1000


def test_cli_output_is_byte_identical_to_graphonomous_topology() -> None:
    node = node_binary()
    doc = _large(random.Random(7))
    text = json.dumps(doc)
    js = subprocess.run(
        [node, str(CLI_SCRIPT), "-"], input=text.encode(), capture_output=True, check=True
    )
    python = json.dumps(analyze_document(doc), indent=2, ensure_ascii=False) + "\n"
    assert js.stdout.decode() == python


def test_cli_rejects_bad_input_naming_the_field() -> None:
    node = node_binary()
    bad = {"edges": [{"source": "a", "target": "b", "relationship": "loves"}]}
    run = subprocess.run(
        [node, str(CLI_SCRIPT)], input=json.dumps(bad).encode(), capture_output=True, check=False
    )
    assert run.returncode == 2
    assert b"invalid edges[0].relationship: unknown relationship 'loves'" in run.stderr
    assert run.stdout == b""


_WORK_SCRIPT = """
import { readFileSync } from 'node:fs';
import * as T from %(engine)s;
T.setRelationshipTable(JSON.parse(readFileSync(%(table)s, 'utf8')));
const cases = JSON.parse(readFileSync(0, 'utf8'));
console.log(JSON.stringify(cases.map((doc) => {
  const adj = T.adjacencyFromDocument(doc);
  const sccs = T.analyzeTopology(adj).sccs;
  const big = sccs.reduce((a, s) => (s.nodes.length > a.length ? s.nodes : a), []);
  return [big, T.kappaWork(adj, big)];
})));
"""


def test_work_counts_match_python_so_budgets_trip_alike() -> None:
    """Arc-inspection counts are equal, so a spent work budget trips at the same point."""
    from graphonomous.topology import adjacency_from_json, kappa_work

    node = node_binary()
    rng = random.Random(SEED + 1)
    docs = [_large(rng) for _ in range(6)] + [_small(rng) for _ in range(40)]
    static = CLI_SCRIPT.parent / "static"
    script = _WORK_SCRIPT % {
        "engine": json.dumps((static / "topology.js").as_uri()),
        "table": json.dumps(str(static / "relationships.json")),
    }
    run = subprocess.run(
        [node, "--input-type=module", "-e", script],
        input=json.dumps(docs).encode(),
        capture_output=True,
        timeout=300,
        check=True,
    )
    for doc, (members, work) in zip(docs, json.loads(run.stdout), strict=True):
        assert kappa_work(adjacency_from_json(doc), members) == work
