"""Built-in benchmarks that drive the product through its facade (an adapters-layer package).

`graphmembench`: GraphMemBench v2's eight κ-sensitive tiers T1–T8
(``graphonomous bench graphmembench``).
"""

from __future__ import annotations

from .graphmembench import TIERS, format_report, run_graphmembench

__all__ = ["TIERS", "format_report", "run_graphmembench"]
