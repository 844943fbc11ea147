"""The light stemmer moved to `graphonomous.index.stem`; this name stays for importers."""

from __future__ import annotations

from ..index.stem import light_stem

__all__ = ["light_stem"]
