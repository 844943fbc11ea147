"""Access control of the HTTP servers: tokens → principals → namespaces and rights.

Rules of this file (SPEC §3.5 "Access control"):

* A *principal* is who a bearer token belongs to: a name, the namespaces it may act in
  (``*``: every one) and its rights.  Rights are ``read``, ``write``, ``erase``, ``admin``;
  every right implies ``read`` and ``admin`` implies them all.
* Tokens are configured in a JSON file (``--tokens FILE`` or ``$GRAPHONOMOUS_TOKENS_FILE``)
  holding SHA-256 hashes, never tokens.  The single token of ``$GRAPHONOMOUS_HTTP_TOKEN``
  still works: it is the principal ``GRAPHONOMOUS_HTTP_TOKEN``, admin on the served
  namespace.  With no token at all (loopback only) every request is the local user, admin
  on the served namespace.
* A presented token is hashed and compared with every configured hash by
  ``hmac.compare_digest``, all of them, whichever matches: the time taken says nothing of
  which entry (or whether any) matched.
* Each MCP tool needs one right (`TOOL_RIGHTS`, one table; a machine's action needs its v1
  tool's right; a few tools need less for their read-only operations).  A principal without
  ``write``/``erase``/``admin`` is served by a facade opened read-only: its calls write
  nothing, bookkeeping included (access counters, saved indexes, audit entries).
* A namespace the principal may not act in gets the same answer as one that holds nothing:
  the refusal never looks at the data.  Likewise a tokens-file principal's caller-chosen
  node id must start with ``<namespace>:`` (ids are unique in the file, so a free choice
  would reveal whether another tenant holds it).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..model import HTTP_TOKEN_ENV_VAR, TOKENS_FILE_ENV_VAR, check_namespace

if TYPE_CHECKING:
    from ..api import Graphonomous

RIGHTS: Final = ("read", "write", "erase", "admin")
READ: Final = "read"
WRITE: Final = "write"
ERASE: Final = "erase"
ADMIN: Final = "admin"
ANY_NAMESPACE: Final = "*"
# The principal of $GRAPHONOMOUS_HTTP_TOKEN: it names where the token came from.
LEGACY_PRINCIPAL: Final = HTTP_TOKEN_ENV_VAR
# How a client names the namespace of a session: a header or the endpoint's query.
PROJECT_HEADER: Final = "Graphonomous-Project"
PROJECT_QUERY: Final = "project"
_HEX_DIGITS: Final = frozenset("0123456789abcdef")

# -- which right each MCP tool needs ------------------------------------------------------

# Every tool of every surface (v1, memory-compat; a v2 machine by its action's v1 tool).
# `read`: answers from the graph (retrieval's access counters are bookkeeping, skipped for
# a read-only principal); `write`: adds, changes, forgets or deletes knowledge; `erase`: the
# GDPR erase (the one removal that scrubs every trace); `admin`: the namespace's forgetting
# policy and budget, and forgetting by them.
TOOL_RIGHTS: Final[Mapping[str, str]] = {
    # reads
    "retrieve_context": READ,
    "retrieve_episodic": READ,
    "retrieve_procedural": READ,
    "coverage_query": READ,
    "trace_evidence_path": READ,
    "epistemic_frontier": READ,
    "topology_analyze": READ,
    "analyze_topology": READ,
    "graph_stats": READ,
    "query_graph": READ,
    "graph_traverse": READ,
    "attention_survey": READ,
    "learn_detect_novelty": READ,
    "belief_contradictions": READ,
    "deliberate": READ,  # write_back: write (READ_UNLESS)
    "review_goal": READ,  # apply: write (READ_UNLESS)
    "read_graph": READ,
    "search_nodes": READ,
    "open_nodes": READ,
    # writes
    "store_node": WRITE,
    "store_edge": WRITE,
    "delete_node": WRITE,
    "manage_edge": WRITE,  # get / list: read (READ_OPERATIONS)
    "manage_goal": WRITE,  # get / list: read (READ_OPERATIONS)
    "belief_revise": WRITE,
    "forget_node": WRITE,
    "restore_node": WRITE,
    "learn_from_outcome": WRITE,
    "learn_from_feedback": WRITE,
    "learn_from_interaction": WRITE,
    "attention_run_cycle": WRITE,
    "run_consolidation": WRITE,
    "create_entities": WRITE,
    "create_relations": WRITE,
    "add_observations": WRITE,
    "delete_entities": WRITE,
    "delete_observations": WRITE,
    "delete_relations": WRITE,
    # erase and admin
    "gdpr_erase": ERASE,
    "forget_by_policy": ADMIN,
}
# tool -> (its operation argument, the operations that only read)
READ_OPERATIONS: Final[Mapping[str, tuple[str, frozenset[str]]]] = {
    "manage_edge": ("action", frozenset({"get", "list"})),
    "manage_goal": ("action", frozenset({"get", "list"})),
}
# tool -> the flag that makes a reading tool write (true: `write` needed)
READ_UNLESS: Final[Mapping[str, str]] = {"deliberate": "write_back", "review_goal": "apply"}
# tool -> its argument naming a new node's id chosen by the caller (the only such tools).
CALLER_CHOSEN_IDS: Final[Mapping[str, str]] = {"store_node": "node_id"}
# Between a namespace and the rest of a caller-chosen id on a server with a tokens file.
ID_SCOPE_SEPARATOR: Final = ":"


def _machines() -> Mapping[str, Any]:
    from .machines import MACHINES

    return {machine.name: machine for machine in MACHINES}


def _v1_call(tool: str, arguments: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    """A v2 machine call as the v1 call its action runs; a v1 call as it is."""
    machine = _machines().get(tool)
    if machine is None:
        return tool, arguments
    action = machine.action(str(arguments.get("action")))
    return action.tool.name, action.to_v1(dict(arguments))


def id_scope_refusal(tool: str, arguments: Mapping[str, Any], namespace: str) -> str | None:
    """Why a caller-chosen node id is refused for a tokens-file principal, or None.

    Ids are unique in the file, so creating a node under an id another namespace holds
    would fail where a fresh id succeeds: an existence oracle.  A tokens-file principal's
    chosen id must therefore start with its namespace and ``:``, which no other tenant can
    choose; the refusal never reads the data, so it is the same for every id."""
    v1_tool, v1_arguments = _v1_call(tool, arguments)
    field = CALLER_CHOSEN_IDS.get(v1_tool)
    chosen = None if field is None else v1_arguments.get(field)
    prefix = f"{namespace}{ID_SCOPE_SEPARATOR}"
    if not isinstance(chosen, str) or chosen.startswith(prefix):
        return None
    return (
        f"Invalid argument '{field}': on this server a chosen id starts with the project "
        f"and a colon ('{prefix}…'), or is left out (a new UUIDv7)"
    )


def required_right(tool: str, arguments: Mapping[str, Any]) -> str:
    """The right a call of `tool` with (validated) `arguments` needs.

    A v2 machine's action needs its v1 tool's right (the action's arguments in v1 names);
    a tool missing from the table needs ``admin`` (a new tool is closed until classified).
    """
    if tool in _machines():
        return required_right(*_v1_call(tool, arguments))
    right = TOOL_RIGHTS.get(tool, ADMIN)
    operation = READ_OPERATIONS.get(tool)
    if operation is not None and arguments.get(operation[0]) in operation[1]:
        return READ
    flag = READ_UNLESS.get(tool)
    if flag is not None and arguments.get(flag) is True:
        return WRITE
    return right


# -- principals and the policy -------------------------------------------------------------


@dataclass(frozen=True)
class Principal:
    """Who a token belongs to: its name, namespaces (None: every one) and rights."""

    name: str | None  # None: the local user (no token configured, loopback only)
    namespaces: tuple[str, ...] | None
    rights: frozenset[str]
    # A tenant of a shared server (a tokens-file entry): its chosen node ids are scoped
    # (`id_scope_refusal`).  The single token and the local user choose ids freely.
    tenant: bool = False

    def may(self, right: str) -> bool:
        """Whether this principal holds `right` (every right implies read, admin all)."""
        return ADMIN in self.rights or right in self.rights or right == READ

    @property
    def read_only(self) -> bool:
        """Only `read`: served by a facade that writes nothing."""
        return not any(self.may(r) for r in (WRITE, ERASE, ADMIN))

    def serves(self, namespace: str) -> bool:
        return self.namespaces is None or namespace in self.namespaces

    def default_namespace(self, served: str) -> str:
        """The namespace of a session that names none: the first listed, else `served`."""
        return served if not self.namespaces else self.namespaces[0]

    def refusal(self, tool: str, right: str) -> str:
        who = self.name or "this client"
        return f"Forbidden: {who} may not call {tool} (it needs the right '{right}')"


def token_digest(token: str) -> bytes:
    """SHA-256 of a token's UTF-8 bytes (what a tokens file stores, in hex)."""
    return hashlib.sha256(token.encode("utf-8")).digest()


class AccessPolicy:
    """The principals one server accepts, by token hash (or the local user when none)."""

    def __init__(self, entries: Iterable[tuple[bytes, Principal]], served: str) -> None:
        self.entries = tuple(entries)
        self.served = served
        self.local = (
            None
            if self.entries
            else Principal(None, (served,), frozenset({ADMIN}))  # loopback without tokens
        )

    @property
    def requires_token(self) -> bool:
        return self.local is None

    def authenticate(self, authorization: str | None) -> Principal | None:
        """The principal of an ``Authorization`` header, or None (refused).

        Every configured hash is compared (constant time each, no early exit)."""
        if self.local is not None:
            return self.local
        text = (authorization or "").strip()
        scheme, _, token = text.partition(" ")
        digest = token_digest(token.strip()) if scheme.lower() == "bearer" else b""
        found: Principal | None = None
        for stored, principal in self.entries:
            if hmac.compare_digest(digest, stored) and found is None:
                found = principal
        return found


def legacy_entry(token: str, served: str) -> tuple[bytes, Principal]:
    """$GRAPHONOMOUS_HTTP_TOKEN: admin on the served namespace."""
    return token_digest(token), Principal(LEGACY_PRINCIPAL, (served,), frozenset({ADMIN}))


def build_policy(
    served: str, token: str | None = None, tokens_file: str | os.PathLike[str] | None = None
) -> AccessPolicy:
    """The policy of a server serving `served`: the tokens file's principals (if any)
    and the single token (if any).  Raises ValueError naming the file and field."""
    entries = [] if tokens_file is None else load_tokens(tokens_file)
    if token:
        entries.append(legacy_entry(token, served))
    return AccessPolicy(entries, served)


def tokens_file_from_env() -> str | None:
    return os.environ.get(TOKENS_FILE_ENV_VAR) or None


def load_tokens(path: str | os.PathLike[str]) -> list[tuple[bytes, Principal]]:
    """The entries of a tokens file (module docstring).  Raises ValueError naming the file
    and the field of the first problem: unreadable, not JSON, a missing or bad member, a
    repeated principal or hash."""
    where = str(path)
    try:
        document = json.loads(Path(path).expanduser().read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"tokens file {where}: cannot read it ({exc.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"tokens file {where}: not JSON ({exc})") from None
    items = document.get("tokens") if isinstance(document, dict) else None
    if not isinstance(items, list) or not items:
        raise ValueError(f"tokens file {where}: tokens must be a non-empty list")
    entries = [_entry(where, f"tokens[{i}]", item) for i, item in enumerate(items)]
    _unique(where, [p.name for _, p in entries], "principal")
    _unique(where, [d.hex() for d, _ in entries], "token_sha256")
    return entries


def _entry(where: str, at: str, item: object) -> tuple[bytes, Principal]:
    def bad(field: str, message: str) -> ValueError:
        return ValueError(f"tokens file {where}: {at}.{field} {message}")

    if not isinstance(item, dict):
        raise ValueError(f"tokens file {where}: {at} must be an object")
    unknown = sorted(set(item) - {"principal", "token_sha256", "namespaces", "rights"})
    if unknown:
        raise bad(unknown[0], "is not a field (principal, token_sha256, namespaces, rights)")
    name = item.get("principal")
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        raise bad("principal", "must be a non-empty name")
    digest = item.get("token_sha256")
    if not isinstance(digest, str) or len(digest) != 64 or not set(digest) <= _HEX_DIGITS:
        raise bad("token_sha256", "must be 64 lower-case hex digits (the token's SHA-256)")
    return bytes.fromhex(digest), Principal(
        name,
        _namespaces(item.get("namespaces"), bad),
        _rights(item.get("rights"), bad),
        tenant=True,
    )


def _namespaces(value: object, bad: Callable[[str, str], ValueError]) -> tuple[str, ...] | None:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise bad("namespaces", 'must be a non-empty list of names (or ["*"])')
    if ANY_NAMESPACE in value:
        if len(value) != 1:
            raise bad("namespaces", '"*" stands alone')
        return None
    for name in value:
        try:
            check_namespace("namespaces", name)
        except ValueError:
            raise bad("namespaces", f"holds {name!r}, not a namespace name") from None
    return tuple(dict.fromkeys(value))


def _rights(value: object, bad: Callable[[str, str], ValueError]) -> frozenset[str]:
    if not isinstance(value, list) or not value or not all(v in RIGHTS for v in value):
        raise bad("rights", f"must be a non-empty list of {', '.join(RIGHTS)}")
    return frozenset(value)


def _unique(where: str, values: list[Any], field: str) -> None:
    seen: set[Any] = set()
    for index, value in enumerate(values):
        if value in seen:
            raise ValueError(f"tokens file {where}: tokens[{index}].{field} is repeated")
        seen.add(value)


# -- the facades of one server -------------------------------------------------------------


class Tenants:
    """The facades one server serves: one per (namespace, read-only), opened on first use
    over the served graph's database, embedder and clock.  The served graph itself is the
    writable facade of its namespace.  `on_open(facade)` runs for each writable facade
    opened here (the server starts its idle consolidation)."""

    def __init__(
        self, served: Graphonomous, on_open: Callable[[Graphonomous], None] | None = None
    ) -> None:
        self.served = served
        self.on_open = on_open
        self._facades: dict[tuple[str, bool], Graphonomous] = {(served.namespace, False): served}
        self._lock = threading.Lock()

    def facade(self, namespace: str, read_only: bool) -> Graphonomous:
        from ..api import Graphonomous

        key = (namespace, read_only)
        with self._lock:
            found = self._facades.get(key)
            if found is not None:
                return found
            if self.served.db_path == ":memory:":
                raise ValueError("serving several namespaces or read-only tokens needs a file")
            opened = Graphonomous(
                self.served.db_path,
                self.served.embedder,
                clock=self.served.clock,
                namespace=namespace,
                read_only=read_only,
            )
            self._facades[key] = opened
        if not read_only and self.on_open is not None:
            self.on_open(opened)
        return opened

    def close(self) -> None:
        """Close every facade opened here (the served graph is its owner's to close)."""
        with self._lock:
            opened = [g for g in self._facades.values() if g is not self.served]
            self._facades = {(self.served.namespace, False): self.served}
        for graph in opened:
            graph.close()
