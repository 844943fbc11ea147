"""The learning loop: outcomes, feedback, beliefs, forgetting, uncertainty, consolidation.

Each module holds plain functions whose first argument is the graph's engine
(``retrieval.graph_view.GraphEngine``), never the facade; the facade's methods
are thin delegators to them.
"""

from __future__ import annotations
