"""The defaults of `retrieve_context`'s arguments, in a module that imports nothing.

Rules of this file: every surface that calls `retrieve_context` (the facade, the CLI
`recall`, the MCP tool schemas, the canvas search) takes its defaults from here, so the
same query asked with no options gets the same results and the same topology
everywhere; the retriever re-exports them.  Light on purpose: the CLI's argument
parser and the facade import it without loading the retriever.
"""

from __future__ import annotations

from typing import Final

# Results per call: ten passages fill an agent's context without crowding it, and
# the retrieval benchmarks report R@5 and R@10 of exactly this list.
DEFAULT_LIMIT: Final = 10
# Graph expansion (effort >= 1): one hop from the seeds, the neighbours each
# seed's strongest 5 edges reach; more hops mostly add hub neighbours (SPEC §9.3.4).
DEFAULT_EXPANSION_HOPS: Final = 1
DEFAULT_NEIGHBORS_PER_NODE: Final = 5
