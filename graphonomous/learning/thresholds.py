"""Thresholds shared by several learning rules, each defined once.

Rules of this module: constants only, each with its reason; the modules that
use one import it (never restate the number).
"""

from __future__ import annotations

from typing import Final

# Seed 003's merge threshold: two texts this similar state the same knowledge.
# Consolidation merges them; the learner reinforces instead of storing a copy;
# the orchestrator's "reinforce" decision is the same test seen as novelty.
SAME_KNOWLEDGE_SIMILARITY: Final = 0.95
# Seed 003's min_confidence_threshold: below it consolidation prunes a node;
# contraction sets a given-up belief to it so it decays away.
PRUNE_CONFIDENCE: Final = 0.05
# A claim this close to a node extends its context (the learner links them
# `related`; the orchestrator counts the node as context).
RELATED_SIMILARITY: Final = 0.5
