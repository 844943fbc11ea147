"""Search documents and code: scan a small folder, then recall with file and lines.

Run it from any directory (it writes ``notes/`` and ``docs-search.db`` there):

    python examples/docs_search.py

Standard library and graphonomous only.  It creates three files, scans them, scans again
(nothing changed, so nothing is re-read), edits one file and scans a third time, then asks
questions: every answer names the file and the lines it came from.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from graphonomous import Graphonomous
from graphonomous.ingest import scan_directory

DB = Path("docs-search.db")
NOTES = Path("notes")
SNIPPET = 48  # characters of each answer shown: enough to recognise it on one line
FILES = {
    "pump.md": "# Pump P-3\n\nPump P-3 overheats when valve V-12 loses pressure.\n\n"
    "## Fix\n\nClose valve V-12, replace the worn seal, restart the pump.\n",
    "valve.py": "def seal_worn(pressure_bar: float) -> bool:\n"
    '    """Valve V-12 leaks below 2 bar."""\n'
    "    return pressure_bar < 2.0\n",
    "rota.txt": "The on-call rota changes every Monday.\n\n"
    "Escalate to the plant manager after 2 hours.\n",
}


def write_notes() -> None:
    shutil.rmtree(NOTES, ignore_errors=True)
    NOTES.mkdir()
    for name, text in FILES.items():
        (NOTES / name).write_text(text, encoding="utf-8")


def scan(g: Graphonomous, label: str) -> None:
    s = scan_directory(g, NOTES)
    print(
        f"{label}: {s.files_seen} seen, {s.ingested} ingested, {s.unchanged} unchanged; "
        f"nodes +{s.nodes_added} ~{s.nodes_updated} -{s.nodes_removed}"
    )


def ask(g: Graphonomous, question: str) -> None:
    print(f"? {question}")
    for r in g.retrieve_context(question, limit=2)["results"]:
        snippet = " ".join(r["content"].split())[:SNIPPET]
        print(f"  {r['score']:.3f}  {r['source']}:{r['line_start']}-{r['line_end']}  {snippet}")


def main() -> None:
    DB.unlink(missing_ok=True)  # a fresh database on every run
    write_notes()
    with Graphonomous(DB) as g:
        scan(g, "first scan")
        scan(g, "second scan")
        with (NOTES / "rota.txt").open("a", encoding="utf-8") as f:
            f.write("\nThe rota is kept in the shared calendar.\n")
        scan(g, "after an edit")
        ask(g, "how do I fix the overheating pump")
        ask(g, "below which pressure does the valve leak")
        ask(g, "when does the on-call rota change")


if __name__ == "__main__":
    main()
