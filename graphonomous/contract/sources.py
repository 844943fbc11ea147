"""Find the documents a ``contract check`` run covers: files, directories, globs, JSONL, MCP logs.

An operand is ``-`` (stdin), a file, a directory (every ``*.json``,
``*.jsonl`` and ``*.ndjson`` below it, hidden entries skipped) or a glob
(``out/**/*.json``; ``**`` crosses directories).  Each file is read as:

* **json** — one JSON document (the whole file);
* **jsonl** — JSON Lines: one document per non-blank line (``.jsonl`` and
  ``.ndjson`` files in ``auto`` mode);
* **mcp** — a JSON-RPC transcript: messages (or batches) one per line, or
  one JSON array of messages.  Every ``tools/call`` response of a tool that
  returns a contract document (:data:`TOOL_KINDS`, :data:`MACHINE_KINDS`) is
  checked in place: its ``structuredContent``, else the JSON text of its first
  text content item.  Requests and responses are paired by id.

In ``auto`` mode a JSON-RPC message (an object with ``"jsonrpc"``, or an
array of them) is read as a transcript wherever it appears.  A response
whose request is not in the file (a capture of responses only), and a bare
CallToolResult (``{"content": [...], "structuredContent": ...}``), are
checked when they carry a contract document
(:func:`~graphonomous.contract.checker.is_contract_document`), as ``auto``.

Rules of this file: every input that cannot be read or parsed becomes an
:class:`InputProblem` naming the file and line (the run goes on with the
others); every contract tool response that is not checked (an error result, a
bare tool result without a contract document) becomes a note; output order is operand
order, then file name order, then line order.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TextIO

from graphonomous.contract.checker import is_contract_document
from graphonomous.contract.options import INPUT_MODES as INPUT_MODES
from graphonomous.contract.options import MAX_FINDINGS_PER_DOCUMENT
from graphonomous.contract.positions import TextIndex, locate, nearest_offset
from graphonomous.contract.schema import (
    Violation,
    index_path,
    key_path,
    parse_json,
    path_sort_key,
)

JSONL_SUFFIXES: Final = (".jsonl", ".ndjson")
DOCUMENT_SUFFIXES: Final = (".json", *JSONL_SUFFIXES)
STDIN_NAME: Final = "stdin"
_NOT_JSONRPC: Final = "not a JSON-RPC message (an object with 'jsonrpc') or an array of them"

# MCP tools whose result is a contract document, by tool name (v1 surface and
# seed 000's names) → document kind.  The contract cannot import the MCP
# package (it sits below it), so the names are listed here; the MCP tests
# keep them true.
TOOL_KINDS: Final[Mapping[str, str]] = {
    "retrieve_context": "retrieve_context",
    "analyze_topology": "analyze_topology",
    "topology_analyze": "analyze_topology",
    "preview_edge_impact": "preview",
}
# The v2 surface's machines: (tool, action) → document kind.
MACHINE_KINDS: Final[Mapping[tuple[str, str], str]] = {
    ("retrieve", "context"): "retrieve_context",
    ("route", "topology"): "analyze_topology",
}


class _Positions:
    """Lazy offsets and line index of one text (computed only if a violation needs a line).

    The text starts at line `first_line`, column `first_column` of its file; `prefix` is
    its path in the file's value (an element of a streamed array: ``$[3]``), stripped
    from the paths asked for.
    """

    def __init__(
        self, text: str, first_line: int, first_column: int = 1, prefix: str = "$"
    ) -> None:
        self.text = text
        self.first_line = first_line
        self.first_column = first_column
        self.prefix = prefix
        self._offsets: dict[str, int] | None = None
        self._index: TextIndex | None = None

    def line_column(self, text_path: str) -> tuple[int, int]:
        if self.prefix != "$":
            inside = text_path.startswith(self.prefix)
            text_path = "$" + text_path[len(self.prefix) :] if inside else "$"
        line, column = self._local(text_path)
        if line == 1:
            column += self.first_column - 1
        return line + self.first_line - 1, column

    def _local(self, text_path: str) -> tuple[int, int]:
        if text_path == "$" and self._offsets is None:  # the root: no scan needed
            start = len(self.text) - len(self.text.lstrip(" \t\n\r"))
            prefix = self.text[:start]
            return 1 + prefix.count("\n"), start - (prefix.rfind("\n") + 1) + 1
        if self._offsets is None:
            try:
                self._offsets = locate(self.text)
            except (ValueError, RecursionError):
                self._offsets = {}
            self._index = TextIndex(self.text)
        assert self._index is not None
        offset = nearest_offset(self._offsets, text_path)
        return self._index.line_column(offset if offset is not None else 0)


class _Placed(_Positions):
    """Positions known in advance (a streamed array checked as one document): the
    root's, and those of the violations kept, found while its elements were read."""

    def __init__(self, root: tuple[int, int], places: dict[str, tuple[int, int]]) -> None:
        super().__init__("", root[0], root[1])
        self.places = places

    def line_column(self, text_path: str) -> tuple[int, int]:
        return self.places.get(text_path, (self.first_line, self.first_column))


@dataclass
class Document:
    """One document to check, and where it came from.

    `source` is the file name as given (``stdin`` for ``-``); `origin` says
    what inside the file it is (None: the whole file or line); `root` is the
    document's path inside the parsed text; `embedded` documents were a JSON
    string inside that text, so each of their violations is placed on the
    string.
    """

    source: str
    value: Any
    kind: str
    duplicates: list[Violation]
    positions: _Positions
    root: str = "$"
    origin: str | None = None
    embedded: bool = False
    part: bool = False  # one of several documents of its file (a JSON Lines line, a response)
    line: int = 1
    dropped: int = 0  # violations found while reading and counted, not kept (past the cap)

    def release(self) -> None:
        """Drop the value and the text once checked: a report keeps where, not what."""
        self.value = None
        self.positions = _Positions("", self.positions.first_line)

    def locate(self, path: str) -> tuple[int, int]:
        """The (line, column) in `source` of the key or value at document path `path`."""
        if self.embedded:
            return self.positions.line_column(self.root)
        return self.positions.line_column(self.root + path[1:])


@dataclass(frozen=True)
class InputProblem:
    """Input that could not be checked: `line` None means the whole file."""

    source: str
    message: str
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "line": self.line, "message": self.message}

    def __str__(self) -> str:
        where = self.source if self.line is None else f"{self.source}:{self.line}"
        return f"{where}: {self.message}"


@dataclass
class Inputs:
    """Everything found: documents in order, unusable inputs and notes.

    From `collect`, `documents` is a stream: files are read as it is consumed
    (a JSON Lines file line by line), so `problems`, `notes` and `single` are
    complete once it is exhausted.  `found` is the reader's buffer of documents
    not yet handed on.
    """

    documents: Iterable[Document] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    notes: list[InputProblem] = field(default_factory=list)
    # True when the run is one plain JSON document from one file or stdin,
    # the case whose report keeps its original format.
    single: bool = False
    found: list[Document] = field(default_factory=list)


# --------------------------------------------------------------------------
# Operands → files
# --------------------------------------------------------------------------


def expand_operands(operands: list[str]) -> tuple[list[str], list[InputProblem]]:
    """File names (``-`` for stdin) for the operands, each once; operands that match none."""
    files: list[str] = []
    problems: list[InputProblem] = []
    seen: set[str] = set()
    for operand in operands:
        found = _expand_one(operand)
        if isinstance(found, InputProblem):
            problems.append(found)
            continue
        for name in found:
            if name not in seen:
                seen.add(name)
                files.append(name)
    return files, problems


def _expand_one(operand: str) -> list[str] | InputProblem:
    if operand == "-":
        return ["-"]
    path = Path(operand)
    if path.is_dir():
        found = sorted(_walk(path))
        if not found:
            suffixes = ", ".join(f"*{suffix}" for suffix in DOCUMENT_SUFFIXES)
            return InputProblem(operand, f"no {suffixes} files in this directory")
        return found
    if path.exists() or not glob.has_magic(operand):
        return [operand]  # a missing plain name is reported when it is read
    matches = sorted(
        Path(name).as_posix() for name in glob.glob(operand, recursive=True) if Path(name).is_file()
    )
    return matches or InputProblem(operand, "no files match this pattern")


def _walk(directory: Path) -> Iterator[str]:
    for root, dirs, names in os.walk(directory):
        dirs[:] = [name for name in dirs if not name.startswith(".")]
        for name in names:
            if not name.startswith(".") and name.endswith(DOCUMENT_SUFFIXES):
                yield (Path(root) / name).as_posix()


# --------------------------------------------------------------------------
# Files → documents
# --------------------------------------------------------------------------


def collect(operands: list[str], kind: str, mode: str, stdin: TextIO) -> Inputs:
    """The operands' documents, as a stream read while consumed (see the module
    docstring and `Inputs`)."""
    if mode not in INPUT_MODES:
        raise ValueError(f"--input must be one of {', '.join(INPUT_MODES)}; got {mode!r}")
    files, problems = expand_operands(operands)
    inputs = Inputs(problems=problems)
    inputs.documents = _documents(operands, files, kind, mode, stdin, inputs)
    return inputs


def _documents(
    operands: list[str], files: list[str], kind: str, mode: str, stdin: TextIO, inputs: Inputs
) -> Iterator[Document]:
    count, any_origin = 0, False
    for name in files:
        for document in _read_file(name, kind, mode, stdin, inputs):
            count += 1
            any_origin = any_origin or document.origin is not None
            yield document
    inputs.single = (
        len(operands) == 1
        and files == operands
        and mode in ("auto", "json")
        and not files[0].endswith(JSONL_SUFFIXES)
        and count + len(inputs.problems) == 1
        and not any_origin
        and not inputs.notes
    )


def _read_file(
    name: str, kind: str, mode: str, stdin: TextIO, inputs: Inputs
) -> Iterator[Document]:
    """One file's documents: JSON Lines line by line (one line's text held at a time),
    a JSON document or a transcript whole."""
    source = STDIN_NAME if name == "-" else name
    chosen = mode
    if mode == "auto":
        chosen = "jsonl" if name.endswith(JSONL_SUFFIXES) else "json"
    try:
        if chosen == "jsonl":
            with contextlib.ExitStack() as stack:
                lines: Iterable[str] = (
                    stdin
                    if name == "-"
                    else stack.enter_context(open(name, encoding="utf-8", newline="\n"))
                )
                transcript = Transcript(source, inputs)
                for number, raw in enumerate(lines, start=1):
                    _read_line(
                        source, raw.removesuffix("\n"), number, kind, chosen, mode, transcript
                    )
                    yield from _drain(inputs)
            return
        if name != "-" and chosen in ("json", "mcp") and _holds_array(name):
            streamed = _stream_array(name, source, kind, mode, inputs)
            if streamed is not None:
                yield from streamed
                return
        text = stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        inputs.problems.append(InputProblem(source, f"cannot read {source}: {exc}"))
        return
    if chosen == "json" or (chosen == "mcp" and _is_one_value(text)):
        _read_json(source, text, kind, mode, inputs)
    else:
        _read_lines(source, text, kind, chosen, mode, inputs)
    yield from _drain(inputs)


# --------------------------------------------------------------------------
# A top-level JSON array, streamed element by element
# --------------------------------------------------------------------------
# A file holding one JSON array (a transcript saved as one array, or an array checked
# as one document) is read in steps of this many characters: what is held is one
# element plus one step, never the whole text.
READ_CHARS: Final = 1 << 20
_JSON_SPACE: Final = " \t\n\r"


class _NotStreamable(Exception):
    """The text is not one well-formed JSON array: read it whole (the exact error)."""


def _holds_array(name: str) -> bool:
    """Whether the file's first non-blank character opens an array."""
    try:
        with open(name, encoding="utf-8", newline="") as handle:
            while chunk := handle.read(4096):
                stripped = chunk.lstrip(_JSON_SPACE)
                if stripped:
                    return stripped[0] == "["
    except UnicodeDecodeError:
        pass  # the whole read reports it, naming the byte
    return False


class _ArrayReader:
    """The elements of the JSON array one text file holds, read incrementally.

    `elements` yields (value, element text, line, column) per element, the line and
    column (1-based, code points) of its first character.  Anything but one
    well-formed array (strict: no NaN) raises _NotStreamable, so that the caller
    reads the text whole and reports exactly what it always did.
    """

    def __init__(self, handle: TextIO) -> None:
        self.handle = handle
        self.buffer = ""
        self.pos = 0
        self.eof = False
        self.line = 1
        self.newline = -1  # buffer index of the last newline before `pos` (may be < 0)
        self.decoder = json.JSONDecoder(parse_constant=_no_constant)
        self.opened = (1, 1)  # where the array's "[" is

    def _fill(self, at_least: int = 0) -> None:
        self.buffer = self.buffer[self.pos :]
        self.newline -= self.pos
        self.pos = 0
        chunk = self.handle.read(max(at_least, READ_CHARS))
        self.eof = not chunk
        self.buffer += chunk

    def _advance(self, to: int) -> None:
        found = self.buffer.count("\n", self.pos, to)
        if found:
            self.line += found
            self.newline = self.buffer.rindex("\n", self.pos, to)
        self.pos = to

    def _next_char(self) -> str:
        """The next non-blank character ("" at the end of the text), not consumed."""
        while True:
            end = len(self.buffer)
            while self.pos < end and self.buffer[self.pos] in _JSON_SPACE:
                self._advance(self.pos + 1)
            if self.pos < end or self.eof:
                return self.buffer[self.pos] if self.pos < end else ""
            self._fill()

    def _element(self) -> tuple[Any, str]:
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buffer, self.pos)
                if end < len(self.buffer) or self.eof:  # a number may go on past the step
                    text = self.buffer[self.pos : end]
                    self._advance(end)
                    return value, text
            except json.JSONDecodeError:
                if self.eof:
                    raise _NotStreamable from None
            except (ValueError, RecursionError):
                raise _NotStreamable from None
            self._fill(2 * (len(self.buffer) - self.pos))

    def elements(self) -> Iterator[tuple[Any, str, int, int]]:
        if self._next_char() != "[":
            raise _NotStreamable
        self.opened = (self.line, self.pos - self.newline)
        self._advance(self.pos + 1)
        if self._next_char() == "]":
            self._advance(self.pos + 1)
        else:
            while True:
                if self._next_char() in ("", "]", ","):
                    raise _NotStreamable
                line, column = self.line, self.pos - self.newline
                value, text = self._element()
                yield value, text, line, column
                after = self._next_char()
                self._advance(self.pos + 1)
                if after == "]":
                    break
                if after != ",":
                    raise _NotStreamable
        if self._next_char() != "":
            raise _NotStreamable


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _elements(
    name: str, reader: list[_ArrayReader] | None = None
) -> Iterator[tuple[Any, str, int, int]]:
    """The elements of the array file `name` holds (universal newlines, as a whole read
    has); a text that does not decode raises _NotStreamable (the whole read names the
    byte).  `reader`, when given, receives the reader (for its `opened`)."""
    with open(name, encoding="utf-8") as handle:
        array = _ArrayReader(handle)
        if reader is not None:
            reader.append(array)
        try:
            yield from array.elements()
        except UnicodeDecodeError:
            raise _NotStreamable from None


@dataclass
class _ArrayScan:
    """What one read of a streamed array found: its length, whether every element is a
    JSON-RPC message, its root's place and the repeated keys kept (placed) and dropped."""

    count: int = 0
    jsonrpc: bool = True
    root: tuple[int, int] = (1, 1)
    duplicates: list[Violation] = field(default_factory=list)
    places: dict[str, tuple[int, int]] = field(default_factory=dict)
    dropped: int = 0


def _read_array_once(name: str) -> _ArrayScan:
    """Read the whole array once (raises _NotStreamable): see _ArrayScan.  Keeps the
    first MAX_FINDINGS_PER_DOCUMENT repeated keys in path order, counts the rest."""
    scan = _ArrayScan()
    reader: list[_ArrayReader] = []
    for index, (value, text, line, column) in enumerate(_elements(name, reader)):
        scan.count += 1
        scan.jsonrpc = scan.jsonrpc and isinstance(value, dict) and "jsonrpc" in value
        repeated = sorted(parse_json(text)[1], key=lambda v: path_sort_key(v.path))
        room = max(0, MAX_FINDINGS_PER_DOCUMENT - len(scan.duplicates))
        prefix = index_path("$", index)
        positions = _Positions(text, line, column, prefix)
        for violation in repeated[:room]:
            path = prefix + violation.path[1:]
            scan.duplicates.append(Violation(path, violation.message, violation.rule))
            scan.places[path] = positions.line_column(path)
        scan.dropped += max(0, len(repeated) - room)
    scan.root = reader[0].opened
    return scan


def _stream_array(
    name: str, source: str, kind: str, mode: str, inputs: Inputs
) -> Iterator[Document] | None:
    """The documents of a file holding one JSON array, as `_read_json` finds them in its
    whole text, in bounded memory; None when the text is not one well-formed array."""
    try:
        scan = _read_array_once(name)
    except _NotStreamable:
        return None
    if mode == "mcp" and not (scan.jsonrpc and scan.count):
        inputs.problems.append(InputProblem(source, _NOT_JSONRPC))
        return iter(())
    if mode == "json" or not (scan.jsonrpc and scan.count):
        value = [None] * scan.count  # the checks read an array's length, not its items
        positions = _Placed(scan.root, scan.places)
        document = Document(source, value, kind, scan.duplicates, positions)
        document.dropped = scan.dropped
        inputs.found.append(document)
        return _drain(inputs)
    return _stream_transcript(name, source, inputs)


def _stream_transcript(name: str, source: str, inputs: Inputs) -> Iterator[Document]:
    """The second read of an array of JSON-RPC messages: each message fed in turn."""
    transcript = Transcript(source, inputs)
    try:
        for index, (_, text, line, column) in enumerate(_elements(name)):
            value, repeated = parse_json(text)
            prefix = index_path("$", index)
            duplicates = [Violation(prefix + v.path[1:], v.message, v.rule) for v in repeated]
            positions = _Positions(text, line, column, prefix)
            transcript._message(value, prefix, duplicates, positions)
            yield from _drain(inputs)
    except _NotStreamable:
        inputs.problems.append(InputProblem(source, f"{source} changed while it was read"))


def _drain(inputs: Inputs) -> Iterator[Document]:
    found, inputs.found = inputs.found, []
    yield from found


def _parse(source: str, text: str, line: int | None) -> tuple[Any, list[Violation]] | InputProblem:
    try:
        return parse_json(text)
    except json.JSONDecodeError as exc:
        at = exc.lineno if line is None else line
        where = f"line {at} column {exc.colno}"
        return InputProblem(source, f"{source} is not JSON: {exc.msg} at {where}", line)
    except ValueError as exc:
        return InputProblem(source, f"{source} is not JSON: {exc}", line)
    except RecursionError:
        return InputProblem(source, f"{source} is nested too deeply to be read", line)


def _read_json(source: str, text: str, kind: str, mode: str, inputs: Inputs) -> None:
    parsed = _parse(source, text, None)
    if isinstance(parsed, InputProblem):
        inputs.problems.append(parsed)
        return
    value, duplicates = parsed
    positions = _Positions(text, 1)
    if mode == "mcp" and not is_jsonrpc(value):
        inputs.problems.append(InputProblem(source, _NOT_JSONRPC))
        return
    if mode == "mcp" or (mode == "auto" and is_jsonrpc(value)):
        Transcript(source, inputs).feed(value, duplicates, positions)
        return
    if mode == "auto" and is_tool_result(value):
        Transcript(source, inputs).bare_result(value, duplicates, positions, 1)
        return
    inputs.found.append(Document(source, value, kind, duplicates, positions))


def _is_one_value(text: str) -> bool:
    """Whether the whole text is one JSON value (a transcript saved as one array)."""
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _read_lines(source: str, text: str, kind: str, chosen: str, mode: str, inputs: Inputs) -> None:
    transcript = Transcript(source, inputs)
    for number, raw in enumerate(text.split("\n"), start=1):
        _read_line(source, raw, number, kind, chosen, mode, transcript)


def _read_line(
    source: str, raw: str, number: int, kind: str, chosen: str, mode: str, transcript: Transcript
) -> None:
    """One line of a JSON Lines file or line-wise transcript (its documents go to `found`)."""
    inputs = transcript.inputs
    line = raw.rstrip("\r")
    if not line.strip():
        return  # a blank line holds no document
    parsed = _parse(source, line, number)
    if isinstance(parsed, InputProblem):
        inputs.problems.append(parsed)
        return
    value, duplicates = parsed
    positions = _Positions(line, number)
    if chosen == "mcp" and not is_jsonrpc(value):
        inputs.problems.append(InputProblem(source, _NOT_JSONRPC, number))
    elif chosen == "mcp" or (mode == "auto" and is_jsonrpc(value)):
        transcript.feed(value, duplicates, positions)
    elif mode == "auto" and is_tool_result(value):
        transcript.bare_result(value, duplicates, positions, number)
    else:
        inputs.found.append(
            Document(source, value, kind, duplicates, positions, part=True, line=number)
        )


def is_jsonrpc(value: Any) -> bool:
    """A JSON-RPC message (an object with ``jsonrpc``) or a non-empty array of them."""
    if isinstance(value, dict):
        return "jsonrpc" in value
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(item, dict) and "jsonrpc" in item for item in value)
    )


# --------------------------------------------------------------------------
# MCP transcripts
# --------------------------------------------------------------------------


def tool_kind(name: Any, arguments: Any) -> str | None:
    """The document kind a tools/call returns (None: not a contract document)."""
    if not isinstance(name, str):
        return None
    if name in TOOL_KINDS:
        return TOOL_KINDS[name]
    action = arguments.get("action") if isinstance(arguments, dict) else None
    return MACHINE_KINDS.get((name, action)) if isinstance(action, str) else None


@dataclass
class _Call:
    tool: str
    kind: str | None  # None: a tool whose result is not a contract document
    line: int


class Transcript:
    """Pairs tools/call requests with their responses across the messages of one file."""

    def __init__(self, source: str, inputs: Inputs) -> None:
        self.source = source
        self.inputs = inputs
        self.pending: dict[str, _Call] = {}

    def feed(self, value: Any, duplicates: list[Violation], positions: _Positions) -> None:
        """Take one parsed message, batch or array of messages (the whole of one text)."""
        if isinstance(value, list):
            for index, item in enumerate(value):
                self._message(item, index_path("$", index), duplicates, positions)
        else:
            self._message(value, "$", duplicates, positions)

    def bare_result(
        self,
        value: Mapping[str, Any],
        duplicates: list[Violation],
        positions: _Positions,
        line: int,
    ) -> None:
        """A captured CallToolResult on its own (no JSON-RPC envelope): its tool is unknown."""
        if value.get("isError") is True:
            self.inputs.notes.append(
                InputProblem(self.source, "an MCP error result, not a contract document", line)
            )
            return
        before = len(self.inputs.found)
        self.tool_result(value, "$", "tool result", None, duplicates, positions, line)
        if len(self.inputs.found) == before:
            self.inputs.notes.append(
                InputProblem(
                    self.source, "an MCP tool result without a contract document; not checked", line
                )
            )

    def _message(
        self, message: Any, path: str, duplicates: list[Violation], positions: _Positions
    ) -> None:
        if not isinstance(message, dict) or "id" not in message:
            return  # a notification or not a message: nothing to pair
        key = json.dumps(message["id"], sort_keys=True)
        line = positions.line_column(path)[0]
        if message.get("method") == "tools/call":
            params = message.get("params")
            params = params if isinstance(params, dict) else {}
            name = params.get("name")
            kind = tool_kind(name, params.get("arguments"))
            action = None
            if kind is not None and name not in TOOL_KINDS:
                action = params["arguments"].get("action")
            label = f"{name}/{action}" if action else str(name)
            self.pending[key] = _Call(label, kind, line)
            return
        if "method" in message or ("result" not in message and "error" not in message):
            return
        call = self.pending.pop(key, None)
        origin_id = json.dumps(message["id"], ensure_ascii=False)
        result = message.get("result")
        if call is None:
            # No request in the transcript (a capture of responses only): check the
            # result when it carries a contract document, whatever its tool was.
            if isinstance(result, dict) and result.get("isError") is not True:
                origin = f"response (id {origin_id}; its request is not in the transcript)"
                root = key_path(path, "result")
                self.tool_result(result, root, origin, None, duplicates, positions, line)
            return
        if call.kind is None:
            return  # the response of a tool outside the contract
        origin = f"tools/call {call.tool} (id {origin_id})"
        if not isinstance(result, dict) or result.get("isError") is True:
            self.inputs.notes.append(
                InputProblem(
                    self.source, f"{origin} returned an error, not a contract document", line
                )
            )
            return
        self.tool_result(
            result, key_path(path, "result"), origin, call.kind, duplicates, positions, line
        )

    def tool_result(
        self,
        result: Mapping[str, Any],
        path: str,
        origin: str,
        kind: str | None,
        duplicates: list[Violation],
        positions: _Positions,
        line: int,
    ) -> None:
        """Check the document an MCP CallToolResult at `path` carries.

        `kind` None: the tool is unknown, so the result is checked (as
        ``auto``) only when it holds a contract document
        (:func:`is_contract_document`); otherwise it is left alone.
        """
        found = self._document_of(result, path, origin, line, report=kind is not None)
        if found is None:
            return
        value, root, inner, embedded = found
        if kind is None and not is_contract_document(value):
            return
        own = inner if embedded else _rebase(duplicates, root)
        self._add(value, root, origin, kind or "auto", own, positions, embedded=embedded)

    def _document_of(
        self, result: Mapping[str, Any], path: str, origin: str, line: int, *, report: bool
    ) -> tuple[Any, str, list[Violation], bool] | None:
        """(document, its path, its own duplicate keys, embedded?) of a result, or None.

        The document is ``structuredContent``, else the JSON text of the first
        text content item.  When there is none (or the text is not JSON) and
        `report` is true, that is recorded as an unusable input.
        """
        if "structuredContent" in result:
            return result["structuredContent"], key_path(path, "structuredContent"), [], False
        content = result.get("content")
        problem = f"{origin}: the result has neither structuredContent nor a text content item"
        for index, item in enumerate(content if isinstance(content, list) else []):
            if isinstance(item, dict) and item.get("type") == "text":
                text = item.get("text")
                root = key_path(index_path(key_path(path, "content"), index), "text")
                if not isinstance(text, str):
                    break
                try:
                    value, inner = parse_json(text)
                except (ValueError, RecursionError) as exc:
                    problem = f"{origin}: content[{index}].text is not JSON: {exc}"
                    break
                return value, root, inner, True
        if report:
            self.inputs.problems.append(InputProblem(self.source, problem, line))
        return None

    def _add(
        self,
        value: Any,
        root: str,
        origin: str,
        kind: str,
        own: list[Violation],
        positions: _Positions,
        *,
        embedded: bool = False,
    ) -> None:
        document = Document(
            self.source,
            value,
            kind,
            own,
            positions,
            root=root,
            origin=origin,
            embedded=embedded,
            part=True,
        )
        # One message per line: its line; a multi-line transcript: where the document starts.
        one_line = "\n" not in positions.text
        document.line = positions.first_line if one_line else positions.line_column(root)[0]
        self.inputs.found.append(document)


def _rebase(duplicates: list[Violation], root: str) -> list[Violation]:
    """The repeated keys found inside the value at `root`, with paths relative to it."""
    return [
        Violation("$" + violation.path[len(root) :], violation.message, violation.rule)
        for violation in duplicates
        if violation.path == root or violation.path.startswith((root + ".", root + "["))
    ]


def is_tool_result(value: Any) -> bool:
    """An MCP CallToolResult (``content`` list) rather than a contract document."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("content"), list)
        and not is_contract_document(value)
    )
