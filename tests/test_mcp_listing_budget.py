"""What a client pays for a surface before the conversation starts: tools/list size.

Budgets (bytes of compact JSON).  The v2 machine surface is what agents get
by default; it must stay within 11.8 KB in full (≤ 16 KB required, goal 11 KB;
measured 11,742 bytes with restore_node and the time fields as_of,
include_superseded, valid_from, valid_to).  The
*selection-relevant* size — names, titles, descriptions, input schemas and
annotations, without output schemas — is bounded per surface so that a
regression anywhere shows up here.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from graphonomous import Graphonomous
from graphonomous.mcp import build_server
from graphonomous.mcp.jsonrpc import Request, Response, encode
from graphonomous.mcp.surfaces import SURFACES

V2_LISTING_BUDGET = 11_800
SELECTION_BUDGETS = {"v2": 11_800, "v1": 40_000, "memory": 8_000, "all": 60_000}


def listing(surface: str) -> tuple[bytes, list[dict[str, Any]]]:
    with Graphonomous(":memory:") as graph:
        server = build_server(graph, surface)
        (reply,) = [
            m for m in server.handle(Request(1, "tools/list", {})) if isinstance(m, Response)
        ]
        text = encode(reply)
    return text, json.loads(text)["result"]["tools"]


def selection_size(tools: list[dict[str, Any]]) -> int:
    return sum(
        len(json.dumps({k: v for k, v in t.items() if k != "outputSchema"}, separators=(",", ":")))
        for t in tools
    )


def test_v2_listing_fits_the_budget() -> None:
    text, tools = listing("v2")
    assert len(text) <= V2_LISTING_BUDGET, len(text)
    assert [t["name"] for t in tools] == ["retrieve", "route", "act", "learn", "consolidate"]


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_selection_relevant_size_per_surface(surface: str) -> None:
    _, tools = listing(surface)
    assert selection_size(tools) <= SELECTION_BUDGETS[surface]


def test_retrieve_is_read_only_and_reads_need_no_destructive_tool() -> None:
    _, tools = listing("v2")
    hints = {t["name"]: t["annotations"] for t in tools}
    assert hints["retrieve"]["readOnlyHint"] is True
    assert hints["retrieve"]["destructiveHint"] is False
    retrieve = next(t for t in tools if t["name"] == "retrieve")
    for action in ("context", "stats", "query", "traverse", "topology"):
        assert action in retrieve["inputSchema"]["properties"]["action"]["enum"]
