"""The relationship table as JSON: the one source of edge directions for the JavaScript κ engine.

Rules of this file: it restates nothing.  Every value comes from
`graphonomous.model` (KAPPA_ARC_DIRECTION, RELATIONSHIPS, …) and from
`graphonomous.topology.adjacency.known_kinds`; the JSON document is derived at
serve time (``GET /relationships.json``) and, for the Node CLI that runs
without a server, written once to ``static/relationships.json`` by
``python -m graphonomous.ui.relationships`` — a test fails when that file is
not byte-identical to this export.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Final

from ..model import (
    BENDSCRIPT_EXCLUDED_KINDS,
    EDGE_FIELD_ALIASES,
    KAPPA_ARC_DIRECTION,
    MAX_ID_CHARS,
    RELATIONSHIPS,
    SYMMETRIC_RELATIONSHIPS,
)
from ..topology.adjacency import known_kinds

STATIC_DIR: Final = Path(__file__).with_name("static")
TABLE_FILE: Final = STATIC_DIR / "relationships.json"
# The relationship a canvas edge gets when the user draws it (seed 000: Connect to… is causal).
CANVAS_DEFAULT_RELATIONSHIP: Final = "causal"


def relationship_table() -> dict[str, Any]:
    """The direction table and the edge-field rules, as a JSON-ready dict (model order)."""
    return {
        "kappa_arc_direction": {kind: KAPPA_ARC_DIRECTION[kind] for kind in KAPPA_ARC_DIRECTION},
        "known_kinds": sorted(known_kinds()),
        "relationships": list(RELATIONSHIPS),
        "symmetric_relationships": list(SYMMETRIC_RELATIONSHIPS),
        "bendscript_excluded_kinds": list(BENDSCRIPT_EXCLUDED_KINDS),
        "edge_field_aliases": dict(EDGE_FIELD_ALIASES),
        "max_id_chars": MAX_ID_CHARS,
        "canvas_default_relationship": CANVAS_DEFAULT_RELATIONSHIP,
    }


def table_text() -> str:
    """The exported table exactly as written to ``static/relationships.json``."""
    return json.dumps(relationship_table(), indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    """Write ``static/relationships.json``; ``--check`` only compares (exit 1 when stale)."""
    text = table_text()
    if "--check" in sys.argv[1:]:
        current = TABLE_FILE.read_text(encoding="utf-8") if TABLE_FILE.exists() else ""
        if current != text:
            sys.stderr.write(
                f"{TABLE_FILE} is stale: run python -m graphonomous.ui.relationships\n"
            )
            return 1
        return 0
    TABLE_FILE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
