"""The package's layers point one way, and its import graph has no cycle.

Rules (ARCHITECTURE.md, issue #11): every module belongs to one layer
(`LAYERS`, lowest first); a module may import its own layer and the layers
below, never a layer above.  Every import counts: top-level, inside functions
and under ``TYPE_CHECKING``.  Separately, the module import graph of the whole
package is acyclic (a cycle inside one layer is still a knot a newcomer cannot
cut).  Parsed with stdlib `ast`; nothing is imported, so the test also holds
for optional backends.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Final

PACKAGE: Final = Path(__file__).resolve().parent.parent / "graphonomous"

# Lowest first.  A name is the first component under `graphonomous.`
# (a subpackage or a top-level module).
LAYERS: Final[tuple[frozenset[str], ...]] = (
    frozenset({"model", "clock", "records", "hygiene", "telemetry", "paths", "lazy_import"}),
    frozenset({"store", "index", "embed", "topology", "algorithms"}),
    frozenset({"engine"}),
    frozenset({"retrieval"}),
    frozenset({"learning"}),
    frozenset({"api"}),
    frozenset(
        {
            "__init__",
            "__main__",
            "cli",
            "cli_help",
            "mcp",
            "ingest",
            "ui",
            "pulse",
            "server_memory",
            "capabilities",
            "bench",
            "contract",
            "portable",
        }
    ),
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(base: str, level: int, is_package: bool) -> str:
    parts = base.split(".")
    if not is_package:
        parts.pop()
    for _ in range(level - 1):
        parts.pop()
    return ".".join(parts)


def imports_of(name: str, path: Path, known: set[str]) -> Iterator[str]:
    """The package modules `name` imports (the most specific known module per name)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield from _known(alias.name, known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                origin = _resolve(name, node.level, is_package)
                base = f"{origin}.{node.module}" if node.module else origin
            else:
                base = node.module or ""
            if not base.startswith("graphonomous"):
                continue
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                if candidate in known:
                    yield candidate
                else:
                    yield from _known(base, known)


def _known(dotted: str, known: set[str]) -> Iterator[str]:
    parts = dotted.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in known:
            yield candidate
            return
        parts.pop()


def import_graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {
        name: {target for target in imports_of(name, path, known) if target != name}
        for name, path in found.items()
    }


def layer_of(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    for rank, members in enumerate(LAYERS):
        if top in members:
            return rank
    raise AssertionError(f"{module}: no layer (add its top-level name to LAYERS)")


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{source} -> {target}"
        for source, targets in graph.items()
        for target in targets
        if layer_of(target) > layer_of(source)
    )


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_every_module_has_a_layer() -> None:
    for name in modules():
        layer_of(name)


def test_no_import_points_up_a_layer() -> None:
    assert upward_imports(import_graph()) == []


def test_the_import_graph_is_acyclic() -> None:
    assert cycles(import_graph()) == []


def test_the_checker_sees_an_upward_import_and_a_cycle() -> None:
    # The checker itself can fail: a made-up graph with both faults.
    graph = {
        "graphonomous.learning.a": {"graphonomous.api"},
        "graphonomous.api": {"graphonomous.learning.a"},
    }
    assert upward_imports(graph) == ["graphonomous.learning.a -> graphonomous.api"]
    assert cycles(graph) == [["graphonomous.api", "graphonomous.learning.a"]]


if __name__ == "__main__":  # the dependency picture, for ARCHITECTURE.md and reports
    picture = import_graph()
    ups = upward_imports(picture)
    knots = cycles(picture)
    print(f"modules {len(picture)}, upward imports {len(ups)}, cycles {len(knots)}")
    for line in ups:
        print("  up:", line)
    for knot in knots:
        print(f"  cycle ({len(knot)}):", " ".join(m.removeprefix("graphonomous.") for m in knot))
