"""Check JSON documents against the canonical κ topology contract, in Python and on the CLI.

Run it from any directory (it writes ``out/`` there):

    python examples/contract_check.py

Standard library and graphonomous only.  It analyses a three-node feedback loop, checks the
result with the contract checker API (valid), breaks a copy the way drifted ports do (a
renamed key, a number written as a string) and checks it again, then writes both to files
and runs `graphonomous contract check out/` on them: exit 1 and every violation with its
file, line and column.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from graphonomous.contract import check_document, format_report
from graphonomous.topology import analyze_document

OUT = Path("out")
LOOP = {
    "nodes": ["valve", "pump", "seal"],
    "edges": [
        {"source": "valve", "target": "pump"},
        {"source": "pump", "target": "seal"},
        {"source": "seal", "target": "valve"},
    ],
}


def drifted(document: dict[str, Any]) -> dict[str, Any]:
    """`document` as a drifted implementation writes it (a deep copy; the original stays)."""
    bad: dict[str, Any] = json.loads(json.dumps(document))
    bad["overall_routing"] = bad.pop("routing")
    bad["sccs"][0]["kappa"] = str(bad["sccs"][0]["kappa"])
    return bad


def main() -> None:
    good = analyze_document(LOOP)
    print(f"analysed: routing {good['routing']}, max κ {good['max_kappa']}")
    print(format_report(check_document(good), kind="topology"))
    bad = drifted(good)
    print(format_report(check_document(bad), kind="topology"))

    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir()
    (OUT / "good.json").write_text(json.dumps(good, indent=2) + "\n", encoding="utf-8")
    (OUT / "bad.json").write_text(json.dumps(bad, indent=2) + "\n", encoding="utf-8")
    command = [sys.executable, "-m", "graphonomous", "contract", "check", str(OUT)]
    print(f"$ graphonomous contract check {OUT}/")
    run = subprocess.run(command, capture_output=True, text=True, check=False)
    print(run.stdout.rstrip())
    print(f"exit {run.returncode}")


if __name__ == "__main__":
    main()
