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

from .server import DEFAULT_UI_PORT, CanvasServer, make_ui_server, serve_ui

__all__ = ["DEFAULT_UI_PORT", "CanvasServer", "make_ui_server", "serve_ui"]
