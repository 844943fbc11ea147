"""The user documentation (docs/*.md) is tested, block by block.

* ```bash / ```sh / ```console blocks, and the `run:` / `script:` lines of ```yaml CI
  configurations: every command that starts with `graphonomous` (``$ graphonomous`` in a
  console block; after ``VAR=value`` assignments; each part of a ``&&`` / ``|`` / ``;``
  chain; after the ``--`` of ``claude mcp add NAME -- graphonomous …``; ``python3 -m
  graphonomous``) must parse with the real parser (`cli.build_parser`).  The
  cheap commands (:data:`RUNNABLE`) then run for real, in page order, in a sandbox: a temp
  directory as the working directory holding the files the pages name (:func:`sandbox`),
  ``$GRAPHONOMOUS_DB`` a temp file, every ``--db FILE`` pointed at it (never the user's
  database); each must exit 0.
* ```json blocks parse.  A client configuration (``mcpServers`` / ``servers``) names the
  console script (`[project.scripts]`) with arguments that parse, or the HTTP endpoint's
  ``/mcp`` URL.  A ``tools/call`` parameter object (``{"name", "arguments"}``) runs on an
  in-process MCP server (surface ``all``, results checked against the tools' output
  schemas) over one graph per page, in page order, and must not be an error.
  An ``env`` sets only variables the package reads; an HTTP ``url`` names the default port.
* ```python blocks run, each in a fresh temp directory, in a subprocess.
* The client page's surface tool counts and resources are what the server serves; the
  README's commands parse too (they are not run: the README's own CI runs them).
* Every relative link in docs/ and README.md names a file that exists (and, with
  ``#anchor``, a heading of that file); every ``§N`` of a page names a section of SPEC.md.
* docs/api.md is exactly what scripts/gen_api_docs.py renders now, docs/cli.md what
  scripts/gen_cli_docs.py renders now (every command of the parser, with its flags).

The checkers are plain functions so that they are tested to fail on a bad page too.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

import pytest

from graphonomous import Graphonomous
from graphonomous.cli import CliError, build_parser, main
from graphonomous.mcp import build_server
from graphonomous.mcp.jsonrpc import encode
from graphonomous.mcp.names import DEFAULT_PORT

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
SHELL_LANGUAGES = frozenset({"bash", "sh", "shell", "console"})
# CI configurations: their `run:` steps and `script:` items are shell commands too.
YAML_LANGUAGES = frozenset({"yaml", "yml"})
_YAML_COMMAND = re.compile(r"^\s*(?:-\s+)?(?:run:\s+)?(\S.*)$")
# Commands run for real in the sandbox: fast, local, no placeholder ids.  The tuple is the
# command word(s); a value is an option the command must carry to be run (watch without
# --cycles never stops; forget without --forecast/--dry-run needs a real id).
RUNNABLE: dict[tuple[str, ...], tuple[str, ...]] = {
    ("init",): (),
    ("stats",): (),
    ("remember",): (),
    ("recall",): (),
    ("scan",): (),
    ("watch",): ("--cycles",),
    ("export",): (),
    ("import",): (),
    ("backup",): (),
    ("config",): (),
    ("consolidate",): (),
    ("doctor",): (),
    ("coverage",): (),
    ("topology",): (),
    ("metrics",): (),
    ("restore",): (),
    ("learn", "outcome"): (),
    ("learn", "feedback"): (),
    ("node", "list"): (),
    ("edge", "list"): (),
    ("forget",): ("--forecast", "--dry-run", "--path"),
    ("contract", "check"): (),
    ("contract", "schema"): (),
}
# The console scripts of pyproject.toml's [project.scripts] (no tomllib before 3.11).
_SCRIPTS = re.search(
    r"^\[project\.scripts\]\n(.*?)(?:^\[|\Z)",
    (ROOT / "pyproject.toml").read_text(encoding="utf-8"),
    re.DOTALL | re.MULTILINE,
)
assert _SCRIPTS is not None
SCRIPT_NAMES = frozenset(re.findall(r"^([\w-]+)\s*=", _SCRIPTS.group(1), re.MULTILINE))
# The environment variables the package reads (an MCP config's "env" may set only these).
KNOWN_ENV = frozenset(
    name
    for path in (ROOT / "graphonomous").rglob("*.py")
    for name in re.findall(r"\b(GRAPHONOMOUS_[A-Z_]+|DATABASE_URL)\b", path.read_text("utf-8"))
)


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return {
        name: sub
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
        for name, sub in action.choices.items()
    }


# Options of the top-level parser that take a value (skipped to find the command word).
_GLOBAL_VALUE_OPTIONS = frozenset(
    option
    for action in build_parser()._actions
    if type(action) is argparse._StoreAction
    for option in action.option_strings
)
# Commands with actions of their own (`node list`, `contract check`).
_GROUPS = frozenset(name for name, sub in _subcommands(build_parser()).items() if _subcommands(sub))


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence
    language: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.page.name}:{self.line}"


def blocks(page: Path, text: str | None = None) -> list[Block]:
    """The fenced code blocks of a page, with the line of their opening fence."""
    text = page.read_text(encoding="utf-8") if text is None else text
    found: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        match = re.match(r"^(\s*)```([\w+-]*)\s*$", lines[i])
        if match is None:
            i += 1
            continue
        start, body = i, []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith("```"):
            body.append(lines[i])
            i += 1
        found.append(Block(page, start + 1, match.group(2).lower(), "\n".join(body)))
        i += 1
    return found


# -- shell commands -------------------------------------------------------------------


def _logical_lines(block: Block) -> Iterator[str]:
    """The command lines of a shell block (backslash continuations joined; in a console
    block only the ``$ `` lines; in a YAML block the `run:` / list-item values)."""
    if block.language in YAML_LANGUAGES:
        for raw in block.text.splitlines():
            match = _YAML_COMMAND.match(raw)
            if match is not None:
                yield match.group(1)
        return
    pending = ""
    for raw in block.text.splitlines():
        line = raw.rstrip()
        if block.language == "console" and not pending:
            if not line.startswith("$ "):
                continue
            line = line[2:]
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        yield pending + line
        pending = ""
    if pending:
        yield pending


def commands(block: Block) -> list[list[str]]:
    """The argv (after `graphonomous`) of every graphonomous command in a shell block."""
    found: list[list[str]] = []
    for line in _logical_lines(block):
        line = re.sub(r"(?<=\s)\d+(?=[<>])", "", line)  # `2>&1`: the descriptor
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        part: list[str] = []
        for token in [*lexer, ";"]:
            if token and set(token) <= set(";&|") and token != "&>":
                argv = _graphonomous_argv(part)
                if argv is not None:
                    found.append(argv)
                part = []
            else:
                part.append(token)
    return found


def _graphonomous_argv(tokens: list[str]) -> list[str] | None:
    while tokens and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", tokens[0]):
        tokens = tokens[1:]  # VAR=value before the command
    if tokens and Path(tokens[0]).name not in SCRIPT_NAMES and "--" in tokens:
        tokens = tokens[tokens.index("--") + 1 :]  # `claude mcp add NAME -- graphonomous …`
    if tokens and Path(tokens[0]).name.startswith("python") and "-m" in tokens:
        module = tokens.index("-m") + 1  # `python3 [-S] -m graphonomous …`
        if tokens[module : module + 1] == ["graphonomous"]:
            tokens = ["graphonomous", *tokens[module + 1 :]]
    if not tokens or Path(tokens[0]).name not in SCRIPT_NAMES:
        return None
    argv: list[str] = []
    skip = False
    for token in tokens[1:]:
        if skip:
            skip = False
        elif token and set(token) <= set("<>&") and set(token) & set("<>"):
            skip = True  # a redirection and its target
        else:
            argv.append(token)
    return argv


def parse_problem(argv: list[str]) -> str | None:
    """None when the real parser takes `argv`, else its message."""
    try:
        build_parser().parse_args(argv)
    except CliError as exc:
        return str(exc)
    except SystemExit as exc:  # --help / --version
        return None if exc.code == 0 else f"exit {exc.code}"
    return None


def _command_words(argv: list[str]) -> tuple[str, ...]:
    """The command word, and the action word of a command group (`node list`)."""
    words: list[str] = []
    tokens = iter(argv)
    for token in tokens:
        if token in _GLOBAL_VALUE_OPTIONS:
            next(tokens, None)
        elif not token.startswith("-"):
            words.append(token)
            if words[0] not in _GROUPS or len(words) == 2:
                break
    return tuple(words)


def runnable(argv: list[str]) -> bool:
    """Whether the sandbox runs `argv` for real (see RUNNABLE)."""
    if "--help" in argv or "-h" in argv or any("postgresql://" in a for a in argv):
        return False
    words = _command_words(argv)
    if words not in RUNNABLE:
        return False
    needed = RUNNABLE[words]
    return not needed or any(option in argv for option in needed)


def sandbox_argv(argv: list[str], db: Path) -> list[str]:
    """`argv` with every `--db FILE` naming the sandbox database."""
    out: list[str] = []
    replace_next = False
    for token in argv:
        if replace_next:
            out.append(str(db))
            replace_next = False
        elif token == "--db":
            out.append(token)
            replace_next = True
        elif token.startswith("--db="):
            out.append(f"--db={db}")
        else:
            out.append(token)
    return out


SAMPLE_GRAPH = {
    "nodes": ["valve", "pump", "seal"],
    "edges": [
        {"source": "valve", "target": "pump"},
        {"source": "pump", "target": "seal"},
        {"source": "seal", "target": "valve"},
    ],
}
# The same loop as the canvas's Save canvas writes it (ui/static/graph.js `toDocument`).
SAMPLE_CANVAS = {
    "nodes": [
        {"id": node, "text": node.title(), "x": 40 * i, "y": 30 * i}
        for i, node in enumerate(SAMPLE_GRAPH["nodes"])
    ],
    "edges": [{**edge, "relationship": "causal"} for edge in SAMPLE_GRAPH["edges"]],
}


def sandbox(directory: Path) -> Path:
    """The files the pages' commands name, in `directory`; returns the database path.

    knowledge.db an initialised, empty database (as the MCP server or a first command
    leaves it); notes/ a tiny folder to scan; graph.json a {"nodes", "edges"} document and
    canvas.json the same loop as a saved canvas; out/ a topology document as
    `graphonomous topology` prints it (for `contract check`).
    """
    notes = directory / "notes"
    notes.mkdir()
    (notes / "pump.md").write_text(
        "# Pump P-3\n\nPump P-3 overheats when valve V-12 loses pressure.\n\n"
        "## Fix\n\nClose valve V-12, replace the worn seal, restart the pump.\n",
        encoding="utf-8",
    )
    (notes / "valve.py").write_text(
        'def seal_worn(pressure_bar: float) -> bool:\n    """Valve V-12 leaks below 2 bar."""\n'
        "    return pressure_bar < 2.0\n",
        encoding="utf-8",
    )
    (directory / "graph.json").write_text(json.dumps(SAMPLE_GRAPH), encoding="utf-8")
    (directory / "canvas.json").write_text(json.dumps(SAMPLE_CANVAS), encoding="utf-8")
    out = io.StringIO()
    assert main(["topology", str(directory / "graph.json")], out) == 0
    (directory / "out" / "run-1").mkdir(parents=True)
    (directory / "out" / "run-1" / "topology.json").write_text(out.getvalue(), encoding="utf-8")
    db = directory / "knowledge.db"
    assert main(["init", "--db", str(db)], io.StringIO()) == 0
    return db


def shell_problems(page: Path, tmp: Path, text: str | None = None) -> list[str]:
    """Every command of a page that does not parse, or (when runnable) does not exit 0."""
    problems: list[str] = []
    db = sandbox(tmp)
    previous, environ = Path.cwd(), dict(os.environ)
    os.chdir(tmp)
    os.environ["GRAPHONOMOUS_DB"] = str(db)
    for name in ("GRAPHONOMOUS_EMBEDDER", "GRAPHONOMOUS_EMBEDDING_MODEL", "DATABASE_URL"):
        os.environ.pop(name, None)
    try:
        for block in blocks(page, text):
            if block.language not in SHELL_LANGUAGES | YAML_LANGUAGES:
                continue
            for argv in commands(block):
                where = f"{block.where}: graphonomous {shlex.join(argv)}"
                problem = parse_problem(argv)
                if problem is not None:
                    problems.append(f"{where}: {problem}")
                elif runnable(argv):
                    out, err = io.StringIO(), io.StringIO()
                    with contextlib.redirect_stderr(err):
                        code = main(sandbox_argv(argv, db), out)
                    if code != 0:
                        problems.append(f"{where}: exit {code}: {err.getvalue().strip()}")
    finally:
        os.chdir(previous)
        os.environ.clear()
        os.environ.update(environ)
    return problems


# -- JSON blocks ----------------------------------------------------------------------


def _server_problems(where: str, name: str, entry: dict[str, Any]) -> list[str]:
    if "command" in entry:
        command, args = entry["command"], entry.get("args", [])
        if Path(command).name in SCRIPT_NAMES:
            argv = list(args)
        elif Path(command).name.startswith("python") and args[:2] == ["-m", "graphonomous"]:
            argv = list(args[2:])
        else:
            return [f"{where}: server {name!r}: {command!r} is not the graphonomous script"]
        problem = parse_problem(argv)
        if problem is None and _command_words(argv) not in {(), ("serve",)}:
            problem = "the arguments do not start the server (serve)"
        unknown = sorted(set(entry.get("env", {})) - KNOWN_ENV)
        if problem is None and unknown:
            problem = f"env names no variable the package reads: {unknown}"
        return [] if problem is None else [f"{where}: server {name!r}: {problem}"]
    if "url" in entry:
        url = urlsplit(entry["url"])
        if url.scheme != "http" or url.path != "/mcp" or url.port != DEFAULT_PORT:
            return [f"{where}: server {name!r}: {entry['url']!r} is not the /mcp endpoint"]
        return []
    return [f"{where}: server {name!r} has neither command nor url"]


def config_problems(block: Block, document: Any) -> list[str]:
    """Problems of one MCP client configuration document."""
    servers = document.get("mcpServers", document.get("servers"))
    if not isinstance(servers, dict) or not servers:
        return [f"{block.where}: no servers in the configuration"]
    problems: list[str] = []
    for name, entry in servers.items():
        problems += _server_problems(block.where, name, entry)
    return problems


def json_problems(page: Path, text: str | None = None) -> list[str]:
    """JSON blocks that do not parse, configurations that name no real entry point, and
    tools/call objects that fail on a fresh graph (in page order)."""
    problems: list[str] = []
    with Graphonomous(":memory:") as graph:
        server = build_server(graph, "all", check_output=True)
        for n, block in enumerate(b for b in blocks(page, text) if b.language == "json"):
            try:
                document = json.loads(block.text)
            except json.JSONDecodeError as exc:
                problems.append(f"{block.where}: not JSON: {exc}")
                continue
            if isinstance(document, dict) and {"mcpServers", "servers"} & document.keys():
                problems += config_problems(block, document)
            elif isinstance(document, dict) and {"name", "arguments"} <= document.keys():
                request = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": document}
                (reply,) = server.receive(json.dumps(request))
                answer = json.loads(encode(reply))
                result = answer.get("result") or {}
                if "error" in answer or result.get("isError"):
                    detail = answer.get("error") or result["content"][0]["text"]
                    problems.append(f"{block.where}: {document['name']} failed: {detail}")
    return problems


# -- Python blocks --------------------------------------------------------------------


def python_problems(page: Path, tmp: Path, text: str | None = None) -> list[str]:
    """Python blocks that do not run to completion (each in a fresh directory)."""
    problems: list[str] = []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("GRAPHONOMOUS_DB", None)
    for n, block in enumerate(b for b in blocks(page, text) if b.language == "python"):
        where = tmp / f"block-{n}"
        where.mkdir()
        run = subprocess.run(
            [sys.executable, "-c", block.text],
            cwd=where,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if run.returncode != 0:
            tail = "\n".join(run.stderr.strip().splitlines()[-5:])
            problems.append(f"{block.where}: exit {run.returncode}:\n{tail}")
    return problems


# -- links ----------------------------------------------------------------------------

_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _prose(text: str) -> str:
    """`text` without fenced blocks and inline code."""
    prose = re.sub(r"^\s*```.*?^\s*```", "", text, flags=re.DOTALL | re.MULTILINE)
    return re.sub(r"`[^`\n]*`", "", prose)


def anchors(text: str) -> set[str]:
    """The heading anchors GitHub makes for a Markdown text (lower case, punctuation
    dropped, spaces to hyphens)."""
    headings = re.findall(r"^#{1,6}\s+(.+?)\s*#*$", _prose(text), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.replace("`", "").lower()).replace(" ", "-") for h in headings}


def link_problems(page: Path, text: str | None = None) -> list[str]:
    """Relative links (outside code) whose file, or heading anchor in a Markdown file,
    does not exist."""
    text = page.read_text(encoding="utf-8") if text is None else text
    problems: list[str] = []
    for match in _LINK.finditer(_prose(text)):
        target = match.group(1)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            continue  # a URL
        name, _, anchor = target.partition("#")
        path = (page.parent / name).resolve()
        if name and not path.exists():
            problems.append(f"{page.name}: link to {target} (no such file)")
        elif anchor and (not name or path.suffix == ".md"):
            document = path.read_text(encoding="utf-8") if name else text
            if anchor not in anchors(document):
                problems.append(f"{page.name}: link to {target} (no such heading)")
    return problems


def spec_section_problems(page: Path, text: str | None = None) -> list[str]:
    """Every `§N`, `§Na` or `§N.M` of a docs page names a numbered section of SPEC.md
    (`## N.`, or `### N.M` / a `### M.` inside `## N.`); one written after a subsystem
    page (`spec/NAME.md §N`, the page maybe a link) names a `## N.` of that page."""
    text = page.read_text(encoding="utf-8") if text is None else text
    spec = (ROOT / "SPEC.md").read_text(encoding="utf-8")
    problems: list[str] = []
    for name, number in re.findall(r"spec/([\w-]+\.md)\)? §(\d+)", text):
        home = ROOT / "spec" / name
        if not home.exists() or not re.search(
            rf"^## {number}\. ", home.read_text(encoding="utf-8"), re.M
        ):
            problems.append(f"{page.name}: spec/{name} §{number} names no section of that page")
    text = re.sub(r"spec/[\w-]+\.md\)? §\d+", "", text)
    for ref in sorted(set(re.findall(r"§(\d+[a-z]?(?:\.\d+[a-z]?)?)", text))):
        top, _, sub = ref.partition(".")
        section = re.search(rf"^## {re.escape(top)}\. .*?(?=^## |\Z)", spec, re.M | re.S)
        found = section is not None and (
            not sub
            or re.search(rf"^### {re.escape(ref)} ", spec, re.M) is not None
            or re.search(rf"^### {re.escape(sub)}\. ", section.group(0), re.M) is not None
        )
        if not found:
            problems.append(f"{page.name}: §{ref} names no section of SPEC.md")
    return problems


# -- the tests ------------------------------------------------------------------------


def test_the_pages_exist() -> None:
    names = {page.name for page in PAGES}
    expected = {
        "index.md",
        "connect-mcp-client.md",
        "agent-memory-patterns.md",
        "search-docs-and-code.md",
        "device-vendoring.md",
        "team-server-postgresql.md",
        "contract-in-ci.md",
        "canvas.md",
        "api.md",
        "cli.md",
        "troubleshooting.md",
    }
    assert expected <= names, sorted(expected - names)
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    for name in sorted(names - {"index.md"}):
        assert f"]({name})" in index, f"docs/index.md does not link {name}"


def test_the_readme_links_the_docs_index() -> None:
    assert "](docs/index.md)" in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_command_parses_and_the_cheap_ones_run(page: Path, tmp_path: Path) -> None:
    assert shell_problems(page, tmp_path) == []


def test_the_client_page_names_every_surface_and_resource_as_served() -> None:
    from graphonomous.mcp.resources import RESOURCE_TEMPLATES, RESOURCES
    from graphonomous.mcp.surfaces import surface_tools

    text = (DOCS / "connect-mcp-client.md").read_text(encoding="utf-8")
    counts = dict(re.findall(r"^\| `(\w+)`[^|]*\| (\d+)", text, re.MULTILINE))
    assert counts == {name: str(len(surface_tools(name))) for name in counts}
    assert set(counts) == {"v2", "v1", "memory", "all"}
    served = {r.uri for r in RESOURCES} | {t.uri_template for t in RESOURCE_TEMPLATES}
    assert set(re.findall(r"graphonomous://[\w/{}]+", text)) == served


def test_every_command_of_the_readme_parses() -> None:
    readme = ROOT / "README.md"
    found = [
        (block.where, argv)
        for block in blocks(readme)
        if block.language in SHELL_LANGUAGES | YAML_LANGUAGES
        for argv in commands(block)
    ]
    assert len(found) >= 5  # the main job's scan and recall, the canvas, the contract
    assert [f"{where}: {argv}" for where, argv in found if parse_problem(argv)] == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_json_block_is_a_real_config_or_call(page: Path) -> None:
    assert json_problems(page) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_python_block_runs(page: Path, tmp_path: Path) -> None:
    assert python_problems(page, tmp_path) == []


SPEC_PAGES = [ROOT / "SPEC.md", *sorted((ROOT / "spec").glob("*.md"))]


@pytest.mark.parametrize(
    "page", [*PAGES, ROOT / "README.md", *SPEC_PAGES], ids=lambda p: p.relative_to(ROOT).as_posix()
)
def test_every_relative_link_names_a_file(page: Path) -> None:
    assert link_problems(page) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_spec_section_reference_exists(page: Path) -> None:
    assert spec_section_problems(page) == []


def _generator(name: str = "gen_api_docs") -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        f"{name}_under_test", ROOT / "scripts" / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_api_page_is_what_the_generator_makes_now() -> None:
    assert (DOCS / "api.md").read_text(encoding="utf-8") == _generator().render(), (
        "docs/api.md is stale: run python scripts/gen_api_docs.py"
    )


def test_the_generator_writes_the_api_page_by_default() -> None:
    assert _generator().OUTPUT == DOCS / "api.md"
    assert not (DOCS / "python-api.md").exists()


def test_the_api_page_names_every_public_method() -> None:
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    public = [n for n in vars(Graphonomous) if not n.startswith("_")]
    assert public and all(f"- `{name}" in text for name in public)


def test_the_cli_page_is_what_the_generator_makes_now() -> None:
    assert (DOCS / "cli.md").read_text(encoding="utf-8") == _generator("gen_cli_docs").render(), (
        "docs/cli.md is stale: run python scripts/gen_cli_docs.py"
    )


def test_the_cli_generator_checks_the_page(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    generator = _generator("gen_cli_docs")
    assert generator.OUTPUT == DOCS / "cli.md"
    stale = tmp_path / "docs" / "cli.md"
    monkeypatch.setattr(generator, "ROOT", tmp_path)
    monkeypatch.setattr(generator, "OUTPUT", stale)
    assert generator.main(["--check"]) == 1  # no page yet
    assert generator.main([]) == 0 and generator.main(["--check"]) == 0
    stale.write_text(stale.read_text(encoding="utf-8").replace("--limit", "--top"), "utf-8")
    assert generator.main(["--check"]) == 1


def test_the_cli_page_names_every_command_and_option() -> None:
    from graphonomous.cli_help import walk

    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    generator = _generator("gen_cli_docs")
    for path, _ in generator.commands(build_parser()):
        if path:
            assert f"## `graphonomous {' '.join(path)}`" in text, path
    for command, action in walk(build_parser()):
        for option in action.option_strings:
            assert f"`{option}" in text or f", {option}" in text, f"{command} {option}"


# -- the checkers fail on bad pages ---------------------------------------------------


def test_the_checkers_catch_a_bad_page(tmp_path: Path) -> None:
    page = tmp_path / "bad.md"
    text = "\n".join(
        [
            "See [the missing page](nowhere.md) and [a site](https://example.org),",
            "[a heading](#json) and [a lost one](index.md#no-such-heading), SPEC.md §99.",
            "## JSON",
            "```bash",
            "graphonomous recall --no-such-flag 'pumps'",
            "graphonomous no-such-command",
            "GRAPHONOMOUS_DB=x.db graphonomous init && graphonomous scan missing-folder/",
            "```",
            "```json",
            '{"mcpServers": {"g": {"command": "graphonomus", "args": ["serve"]},'
            ' "u": {"url": "http://127.0.0.1:4999/mcp"}}}',
            "```",
            "```json",
            '{"servers": {"g": {"command": "graphonomous", "args": ["serve", "--surface", "v3"]},'
            ' "h": {"command": "graphonomous", "args": [],'
            ' "env": {"GRAPHONOMOUS_DATABASE": "x"}}}}',
            "```",
            "```json",
            '{"name": "retrieve", "arguments": {"action": "context"}}',
            "```",
            "```json",
            "{not json}",
            "```",
            "```python",
            "raise SystemExit(3)",
            "```",
        ]
    )
    sandbox_dir = tmp_path / "sandbox"
    sandbox_dir.mkdir()
    shell = shell_problems(page, sandbox_dir, text)
    assert len(shell) == 3, shell
    assert "--no-such-flag" in shell[0] and "no-such-command" in shell[1]
    assert "scan missing-folder/: exit 2" in shell[2]
    problems = json_problems(page, text)
    assert len(problems) == 6, problems
    assert "'graphonomus' is not the graphonomous script" in problems[0]
    assert "4999/mcp' is not the /mcp endpoint" in problems[1]
    assert "v3" in problems[2] and "GRAPHONOMOUS_DATABASE" in problems[3]
    assert "retrieve failed" in problems[4] and "not JSON" in problems[5]
    python_dir = tmp_path / "python"
    python_dir.mkdir()
    assert python_problems(page, python_dir, text)[0].startswith("bad.md:21: exit 3")
    assert link_problems(page, text) == [
        "bad.md: link to nowhere.md (no such file)",
        "bad.md: link to index.md#no-such-heading (no such file)",
    ]
    (tmp_path / "index.md").write_text("# Index\n", encoding="utf-8")
    assert link_problems(page, text)[1:] == [
        "bad.md: link to index.md#no-such-heading (no such heading)"
    ]
    assert spec_section_problems(page, text) == ["bad.md: §99 names no section of SPEC.md"]
    assert spec_section_problems(
        page, "spec/pulse.md §2, [spec/nope.md](../spec/nope.md) §1, spec/pulse.md §99"
    ) == [
        "bad.md: spec/nope.md §1 names no section of that page",
        "bad.md: spec/pulse.md §99 names no section of that page",
    ]


def test_commands_are_found_in_console_blocks_chains_and_continuations() -> None:
    block = Block(
        Path("x.md"),
        1,
        "console",
        "$ graphonomous scan . \\\n    --quiet && graphonomous stats | head\n"
        "output line\n$ TOKEN=abc graphonomous serve --transport http > log 2>&1\n"
        "$ echo graphonomous\n$ .venv/bin/graphonomous recall 'a # b'  # a comment\n"
        "$ claude mcp add g -- graphonomous serve --db x.db\n"
        "$ cd device && python3 -S -m graphonomous --db k.db init\n$ python3 -m pip install x",
    )
    assert commands(block) == [
        ["scan", ".", "--quiet"],
        ["stats"],
        ["serve", "--transport", "http"],
        ["recall", "a # b"],
        ["serve", "--db", "x.db"],
        ["--db", "k.db", "init"],
    ]
