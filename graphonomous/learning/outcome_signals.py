"""What an outcome's status says about the knowledge it rests on.

Rules of this module: constants only, shared by the learner (the confidence
update) and the uncertainty estimates (evidence counts), so neither imports
the other for them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

# Direction and size of the confidence update per status (seed 003: success
# up, failure down, partial proportional, timeout "typically small/no
# adjustment (caller may re-run)").  partial_success uses the fraction
# achieved, evidence["fraction"] in [0, 1], defaulting to one half.
STATUS_SIGNALS: Final[Mapping[str, float]] = {
    "success": 1.0,
    "partial_success": 0.5,
    "failure": -1.0,
    "timeout": 0.0,
}
PARTIAL_FRACTION_KEY: Final = "fraction"
