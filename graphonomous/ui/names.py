"""The canvas's constants the command line needs, without the HTTP server.

Rules of this module: constants only and no imports of `.server`, so the
argument parser of every command (a cold ``recall`` included) does not load
``http.server``, ``webbrowser`` and the MCP HTTP transport.
"""

from __future__ import annotations

from typing import Final

DEFAULT_UI_PORT: Final = 4200
