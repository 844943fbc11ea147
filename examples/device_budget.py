"""A small device: keep the graph within a node budget, read the stats, see what will fade.

Run it from any directory (it writes ``device.db`` and ``manual/`` there):

    python examples/device_budget.py

Standard library and graphonomous only.  It sets a budget of 5 learned nodes, stores 8
readings plus a pinned node and a scanned manual (both exempt from the budget), asks the
policy what it would forget, forgets it (soft: `graphonomous restore ID` brings a node
back), then runs the command line (`config`, `stats`, `forget --forecast 30`) on the same
file, as a cron job on the device would.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from graphonomous import Graphonomous
from graphonomous.ingest import scan_directory

DB = Path("device.db")
MANUAL = Path("manual")
BUDGET = 5  # learned nodes kept; small, so that 8 readings overflow it
READINGS = 8


def budget_line(g: Graphonomous) -> str:
    b = g.budget_status()
    return f"{b['counted_nodes']} of {b['max_nodes']} learned nodes, {b['exempt_nodes']} exempt"


def fill(g: Graphonomous) -> None:
    """Readings (learned, counted), one pinned node and a scanned manual (exempt)."""
    for i in range(READINGS):
        kind = "episodic" if i % 2 else "semantic"
        g.store_node(f"Reading {i}: pump P-{i} runs at {i + 1} bar", kind, node_id=f"reading-{i}")
    g.store_node("The emergency stop is the red button by the door", node_id="estop", pinned=True)
    shutil.rmtree(MANUAL, ignore_errors=True)
    MANUAL.mkdir()
    (MANUAL / "pump.md").write_text("# Pump\n\nBleed the pump before a restart.\n", "utf-8")
    scan_directory(g, MANUAL)


def cli(*args: str) -> None:
    """One `graphonomous` command on the device's database, its output printed."""
    command = [sys.executable, "-m", "graphonomous", "--db", str(DB), *args]
    print(f"$ graphonomous {' '.join(args)}")
    run = subprocess.run(command, capture_output=True, text=True, check=True)
    print(run.stdout.rstrip())


def main() -> None:
    DB.unlink(missing_ok=True)  # a fresh database on every run
    with Graphonomous(DB) as g:
        g.forgetting_config(max_nodes=BUDGET)
        fill(g)
        print(f"budget: {budget_line(g)}")
        plan = g.forget_by_policy(dry_run=True)
        planned = [c["node_id"] for c in plan["candidates"]]
        print(f"dry run would forget: {', '.join(planned)}")
        done = g.forget_by_policy()
        print(f"forgotten: {', '.join(done['forgotten'])}")
        print(f"budget: {budget_line(g)}")
    cli("config")
    cli("stats")
    cli("forget", "--forecast", "30")


if __name__ == "__main__":
    main()
