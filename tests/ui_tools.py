"""Shared helpers of the canvas tests: where node and chromium are, and when their absence fails.

Rules: a missing tool skips the test in a plain `pytest` run, but FAILS it when
the CI leg that exists for that tool says so (GRAPHONOMOUS_REQUIRE_NODE=1,
GRAPHONOMOUS_REQUIRE_BROWSER=1) — a leg that cannot start never passes silently.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Final

import pytest

from graphonomous.api import Graphonomous

ROOT: Final = Path(__file__).resolve().parent.parent
UI_DIR: Final = ROOT / "graphonomous" / "ui"
CLI_SCRIPT: Final = UI_DIR / "topology-cli.mjs"
REQUIRE_NODE_ENV: Final = "GRAPHONOMOUS_REQUIRE_NODE"
REQUIRE_BROWSER_ENV: Final = "GRAPHONOMOUS_REQUIRE_BROWSER"
CHROMIUM: Final = os.environ.get("GRAPHONOMOUS_CHROMIUM", "/usr/bin/chromium")


def _missing(what: str, env: str) -> None:
    if os.environ.get(env) == "1":
        pytest.fail(f"{what} is required ({env}=1) but is not available")
    pytest.skip(f"{what} is not available (set {env}=1 to make this a failure)")


def node_binary() -> str:
    """The `node` executable (v18+), or skip/fail."""
    found = shutil.which("node")
    if found is None:
        _missing("node", REQUIRE_NODE_ENV)
    assert found is not None
    version = subprocess.run([found, "--version"], capture_output=True, text=True, check=False)
    major = int(version.stdout.strip().lstrip("v").split(".")[0] or 0)
    if major < 18:
        _missing(f"node >= 18 (found {version.stdout.strip()})", REQUIRE_NODE_ENV)
    return found


def chromium_binary() -> str:
    """Debian's chromium (never a downloaded browser), or skip/fail."""
    if not os.access(CHROMIUM, os.X_OK):
        _missing(f"chromium at {CHROMIUM}", REQUIRE_BROWSER_ENV)
    return CHROMIUM


def seed(graph: Graphonomous) -> None:
    """The business example of seed 000 plus a provenance-carrying chunk node."""
    for name in ("market-share", "revenue", "r-and-d", "product-quality", "customer-retention"):
        graph.store_node(f"{name.replace('-', ' ')} of the company", node_id=name)
    graph.store_node(
        "notes on revenue",
        node_id="notes",
        metadata={"path": "docs/notes.md", "line_start": 3, "line_end": 9},
    )
    for a, b in [
        ("market-share", "revenue"),
        ("revenue", "r-and-d"),
        ("r-and-d", "product-quality"),
        ("product-quality", "market-share"),
    ]:
        graph.store_edge(a, b, "causal")
    graph.store_edge("notes", "revenue", "related")


def seed_folders(graph: Graphonomous) -> None:
    """Chunks of three folders (paths and lines as `scan` writes them) and a node from no
    file.  A loop runs zircon-a → gneiss-0 … gneiss-4 → zircon-b → zircon-a: a search for
    "zircon crystal" draws the two zircon chunks (and schist) without the gneiss ones, so
    the drawing alone has κ 0 while the search's topology region closes the loop (κ 1)."""

    def chunk(node_id: str, path: str, text: str, line: int) -> None:
        metadata = {"kind": "chunk", "path": path, "line_start": line, "line_end": line + 4}
        graph.store_node(text, node_id=node_id, metadata=metadata)

    chunk("zircon-a", "src/geo/zircon.md", "zircon crystal growth alpha", 1)
    chunk("zircon-b", "src/geo/zircon.md", "zircon crystal growth beta", 6)
    for k in range(5):
        chunk(f"gneiss-{k}", "src/rock/gneiss.md", f"metamorphic banding pressure {k}", 1 + 5 * k)
    for k in range(4):
        graph.store_edge(f"gneiss-{k}", f"gneiss-{k + 1}", "causal")
    graph.store_edge("zircon-a", "gneiss-0", "causal")
    graph.store_edge("gneiss-4", "zircon-b", "causal")
    graph.store_edge("zircon-b", "zircon-a", "causal")
    chunk("schist", "docs/schist.md", "foliation mica layers", 1)
    graph.store_edge("schist", "gneiss-0", "causal")
    graph.store_node("a remembered fact about quartz", node_id="quartz")
