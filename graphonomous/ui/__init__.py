"""The κ canvas: `graphonomous ui`, a graph explorer in the browser.

* :mod:`.server` — the stdlib HTTP server (127.0.0.1; the MCP transport's
  Host/Origin/token checks) serving the static files and the JSON API;
* :mod:`.views` — the JSON API over the `Graphonomous` facade;
* :mod:`.relationships` — the relationship table exported for the JS engine;
* ``static/`` — HTML, CSS and ES modules (``topology.js`` is the DOM-free κ
  engine), no build step; ``topology-cli.mjs`` runs that engine under Node
  with the protocol of `graphonomous topology -`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .names import DEFAULT_UI_PORT

if TYPE_CHECKING:
    from .server import CanvasServer, make_ui_server, serve_ui


def __getattr__(name: str) -> Any:
    """The server's names, imported on first use (PEP 562): the CLI's parser reads
    `DEFAULT_UI_PORT` on every command and must not load the HTTP server."""
    if name in ("CanvasServer", "make_ui_server", "serve_ui"):
        return getattr(importlib.import_module(".server", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["DEFAULT_UI_PORT", "CanvasServer", "make_ui_server", "serve_ui"]
