"""Help text for every CLI option, and its default shown (issue #19, papercuts).

Rules: ``cli.build_parser`` builds the commands; :func:`document` then walks the
whole argparse tree once and (1) gives every argument that was declared without
help the text of :data:`HELP` (keyed by command path and ``dest``), (2) appends
how the default reads to every option whose help does not say it already:
``(default: X)`` for a concrete default, ``(default: off)`` for a flag,
``(required)`` for a required option, ``(optional)`` for an optional
positional, ``(default: none)`` for an option that is simply not set when left
out (where leaving it out means a library default, :data:`HELP` states that
default in words).  :func:`missing` lists what is
still undocumented (the test walks every command with it).  Adapter layer, no I/O.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Final

from .learning.goals import DEFAULT_PRIORITY
from .model import (
    DEFAULT_EDGE_STRENGTH,
    DEFAULT_NODE_CONFIDENCE,
    DEFAULT_TIMESCALE,
)

# Words that show a help text already states its default (or that there is none).
_STATES_DEFAULT: Final = ("default", "required", "optional", "repeatable")

_RELATIONSHIP_LIST = "the relationship kind (unknown kinds are refused, naming the allowed ones)"

# (command path, dest) → help for arguments declared without one.
HELP: Final[dict[tuple[str, str], str]] = {
    ("serve", "transport"): "stdio (one MCP client on stdin/stdout) or http (127.0.0.1 only)",
    ("serve", "surface"): "tool surface: v2 machines, v1 tools, memory (server-memory), or all",
    ("node add", "content"): "the node's text",
    ("node add", "type"): "node type",
    ("node add", "source"): "where the knowledge came from (default: not recorded)",
    ("node add", "confidence"): f"initial confidence 0-1 (default: {DEFAULT_NODE_CONFIDENCE})",
    ("node add", "timescale"): f"how fast it decays (default: {DEFAULT_TIMESCALE})",
    ("node show", "node_id"): "node id, or a unique prefix of one",
    ("node list", "type"): "only nodes of this type (default: every type)",
    ("node list", "timescale"): "only nodes of this timescale (default: every timescale)",
    ("node list", "min_confidence"): "only nodes with at least this confidence (default: 0)",
    ("node list", "max_confidence"): "only nodes with at most this confidence (default: 1)",
    ("node list", "include_forgotten"): "also list forgotten nodes (marked as such)",
    ("node list", "limit"): "at most this many nodes",
    ("node list", "offset"): "skip this many nodes first (paging)",
    ("edge add", "source_id"): "source node id (or a unique prefix)",
    ("edge add", "target_id"): "target node id (or a unique prefix)",
    ("edge add", "relationship"): _RELATIONSHIP_LIST,
    ("edge add", "strength"): f"edge strength 0-1 (default: {DEFAULT_EDGE_STRENGTH})",
    ("edge list", "direction"): "edges out of, into, or both ways of --node",
    ("edge list", "relationship"): "only edges of this kind (default: every kind)",
    ("edge list", "limit"): "at most this many edges",
    ("remember", "content"): "the text to remember",
    ("remember", "type"): "node type",
    ("remember", "source"): "where the knowledge came from (default: not recorded)",
    ("remember", "confidence"): f"initial confidence 0-1 (default: {DEFAULT_NODE_CONFIDENCE})",
    ("recall", "query"): "what to look for (natural language or keywords)",
    ("recall", "limit"): "at most this many results",
    ("watch", "poll_interval_ms"): "milliseconds between two polls of the folder",
    ("contract check", "kind"): "which document kind to check (auto: detect from the content)",
    ("contract schema", "kind"): "which JSON Schema to print",
    ("contract fixtures", "mode"): "exact: byte-equal outputs; semantic: equal as JSON",
    ("contract fixtures", "report_format"): "report format (default: text, or json with --json)",
    ("learn outcome", "action_id"): "id of the action whose outcome this is",
    ("learn outcome", "status"): "how the action went",
    ("learn outcome", "confidence"): "how sure the outcome is, 0-1",
    ("learn outcome", "evidence_type"): "kind of evidence (default: weighted as self_report)",
    ("learn outcome", "goal"): "goal the action served (default: none)",
    ("learn outcome", "trace"): "id of the retrieval trace that led to the action (default: none)",
    ("learn feedback", "node_id"): "node the feedback is about",
    ("learn feedback", "feedback"): "positive, negative, or correction (give --correction)",
    ("learn feedback", "reason"): "why (kept with the feedback; default: none)",
    ("forget", "node_id"): "node to forget (omit with --policy or --path)",
    ("forget", "mode"): "soft hides, hard deletes, cascade deletes dependants (default: soft)",
    ("forget", "policy"): "forget by policy until the budget holds (default: one node)",
    ("erase", "node_id"): "node to erase with every trace of it (omit with --finish)",
    ("bench graphmembench", "seed"): "random seed of the generated tasks",
    ("goal create", "title"): "the goal's title",
    ("goal create", "description"): "longer description (default: none)",
    ("goal create", "priority"): f"priority 0-1 (default: {DEFAULT_PRIORITY})",
    ("goal create", "status"): "initial status (default: proposed)",
    ("goal create", "parent"): "parent goal id (default: a top-level goal)",
    ("goal list", "status"): "only goals in this status (default: every status)",
    ("goal list", "parent"): "only subgoals of this goal (default: every goal)",
    ("goal list", "limit"): "at most this many goals",
    ("goal show", "goal_id"): "goal id",
    ("goal delete", "goal_id"): "goal id",
    ("goal update", "goal_id"): "goal id",
    ("goal update", "title"): "new title (default: unchanged)",
    ("goal update", "description"): "new description (default: unchanged)",
    ("goal update", "priority"): "new priority 0-1 (default: unchanged)",
    ("goal transition", "goal_id"): "goal id",
    ("goal transition", "status"): "the status to move to",
    ("goal transition", "reason"): "why (kept in the goal's history; default: none)",
    ("goal progress", "goal_id"): "goal id",
    ("goal progress", "progress"): "progress 0-1",
    ("goal link", "goal_id"): "goal id",
    ("goal link", "node_ids"): "node ids to link to the goal",
    ("goal unlink", "goal_id"): "goal id",
    ("goal unlink", "node_ids"): "node ids to unlink from the goal",
    ("goal decompose", "goal_id"): "goal id",
    ("goal decompose", "titles"): "titles of the subgoals to create",
    ("goal review", "goal_id"): "goal id",
    ("coverage", "task"): "the task to check the knowledge for",
    ("coverage", "limit"): "at most this many supporting nodes",
}

# (command path, dest) → what leaving out an option whose default is None means,
# for options declared with help that does not say it.
NOTES: Final[dict[tuple[str, str], str]] = {
    ("recall", "effort"): "automatic",
    ("recall", "type"): "every type",
    ("edge list", "node"): "edges of every node",
    ("watch", "cycles"): "poll until Ctrl-C",
    ("consolidate", "log"): "run a cycle",
    ("node add", "type"): "procedural for a standing instruction, else semantic",
    ("remember", "type"): "procedural for a standing instruction, else semantic",
    ("node add", "metadata"): "{}",
    ("remember", "metadata"): "{}",
    ("goal create", "metadata"): "{}",
    ("goal update", "metadata"): "unchanged",
    ("edge add", "metadata"): "{}",
    ("node add", "id"): "a new UUIDv7",
    ("remember", "id"): "a new UUIDv7",
    ("pulse", "validate"): "print our own manifest",
}


def walk(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[str, argparse.Action]]:
    """(command path, argument) for every argument of every command and subcommand."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, (*path, name))
        elif not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            yield " ".join(path), action


def _default_note(command: str, action: argparse.Action) -> str | None:
    """How the default reads, or None when the help must say it in words."""
    if not action.option_strings:
        return "(optional)" if action.nargs in ("?", "*") else None
    if action.required:
        return "(required)"
    if isinstance(action, argparse._StoreTrueAction):
        return "(default: off)"
    if isinstance(action, argparse._StoreFalseAction):
        return "(default: on)"
    note = NOTES.get((command, action.dest))
    if note is not None:
        return f"(default: {note})"
    if action.default is argparse.SUPPRESS:
        return None  # a common option: its help says where the value comes from
    if action.default is None:
        return "(default: none)"
    return "(default: %(default)s)"


def document(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Fill in missing help and show every default (module docstring); returns `parser`."""
    for command, action in walk(parser):
        if action.help == argparse.SUPPRESS:
            continue
        if not action.help:
            action.help = HELP.get((command, action.dest))
        if action.help is None:
            continue  # reported by missing()
        if any(word in action.help.lower() for word in _STATES_DEFAULT):
            continue
        note = _default_note(command, action)
        if note is not None:
            action.help = f"{action.help} {note}"
    return parser


def missing(parser: argparse.ArgumentParser) -> list[str]:
    """Arguments without help, and options whose help does not show their default."""
    problems = []
    for command, action in walk(parser):
        name = "/".join(action.option_strings) or action.dest
        where = f"{command or 'graphonomous'} {name}"
        if action.help == argparse.SUPPRESS:
            continue
        if not action.help:
            problems.append(f"{where}: no help")
        elif (
            action.option_strings
            and action.default is not argparse.SUPPRESS
            and not any(word in action.help.lower() for word in _STATES_DEFAULT)
        ):
            problems.append(f"{where}: default {action.default!r} not shown")
    return problems
