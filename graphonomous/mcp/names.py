"""The names the command line needs from the MCP server, without the server.

Rules of this module: constants only, no imports of the other MCP modules,
so ``graphonomous recall`` (which builds the whole argument parser) does
not load the tool sets, the protocol machine or the transports.
`surfaces.SURFACES` is keyed by exactly `SURFACE_NAMES` (checked there).
"""

from __future__ import annotations

from typing import Final

TRANSPORTS: Final = ("stdio", "http")
DEFAULT_PORT: Final = 4100
# The surfaces of `surfaces.SURFACES`, in its order.
SURFACE_NAMES: Final = ("v2", "v1", "memory", "all")
# Seed 003: the five loop-phase machines are the production default.
DEFAULT_SURFACE: Final = "v2"
