#!/usr/bin/env python3
"""Generate ``standalone/graphonomous_contract.py``: the contract checker as one vendorable file.

For projects that may not install packages in CI: one file, Python ≥ 3.10
standard library only, the same reports byte for byte as ``graphonomous
contract check`` of the version it was generated from.

How (no hand copying): the modules in :data:`MODULES` are read in order
(each only imports the standard library and earlier modules), their
top-level imports are removed and merged into one block (intra-package
``from graphonomous.contract.X import …`` lines are dropped, any other
``graphonomous`` import is an error), their docstrings become section
banners, :func:`graphonomous.contract.schema.package_text` is replaced by a
lookup in the embedded copies of :data:`DATA_FILES`, and a small ``main``
is appended.  Generation fails when two modules define the same top-level
name, so concatenation can never shadow a function silently.  The header
names the package version and the sha256 of every source file.

Usage::

    python scripts/make_vendored_contract.py            # (re)write the file
    python scripts/make_vendored_contract.py --check    # exit 1 if it is stale
    python scripts/make_vendored_contract.py --output PATH

Deterministic: the output depends only on the source files' bytes.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import re
import sys
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
PACKAGE_DIR: Final = ROOT / "graphonomous" / "contract"
OUTPUT: Final = ROOT / "standalone" / "graphonomous_contract.py"
PACKAGE: Final = "graphonomous.contract"
# Concatenation order: each module imports only modules before it.
MODULES: Final = ("options", "schema", "checker", "positions", "sources", "report", "run")
DATA_FILES: Final = ("topology.schema.json", "fixture.schema.json")
REPLACED_FUNCTION: Final = "package_text"
VERSION_FILE: Final = ROOT / "graphonomous" / "__init__.py"

REPLACEMENT: Final = '''def package_text(package: str, name: str) -> str:
    """The text of a data file of `package`: the copies embedded in this file."""
    try:
        return EMBEDDED_FILES[f"{package}/{name}"]
    except KeyError:
        raise FileNotFoundError(f"{package}/{name} is not embedded in this file") from None
'''

MAIN_IMPORTS: Final = "import argparse\nimport sys\nfrom typing import Final\n"
MAIN: Final = '''def main(argv: list[str] | None = None) -> int:
    """``graphonomous_contract.py check …`` / ``schema …``: exit 0 valid, 1 invalid, 2 unusable."""
    parser = argparse.ArgumentParser(
        prog="graphonomous_contract.py",
        description="The Graphonomous κ schema-contract checker (vendored single file).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {VENDORED_VERSION}")
    commands = parser.add_subparsers(dest="command", metavar="ACTION", required=True)
    check = commands.add_parser("check", help="check topology / preview documents")
    add_check_arguments(check)
    check.add_argument("--json", action="store_true", help="the one-document JSON report")
    schema = commands.add_parser("schema", help="print the published JSON Schema of a kind")
    add_schema_arguments(schema)
    args = parser.parse_args(argv)
    if args.command == "check":
        return main_check_args(args, sys.stdin, sys.stdout, sys.stderr, VENDORED_VERSION)
    return run_schema(args.kind, sys.stdout, sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
'''


class GenerationError(RuntimeError):
    """The sources break a rule that makes concatenation safe."""


def package_version() -> str:
    match = re.search(r'^__version__ = "([^"]+)"', VERSION_FILE.read_text(encoding="utf-8"), re.M)
    if match is None:
        raise GenerationError(f"no __version__ in {VERSION_FILE}")
    return match.group(1)


def _split_module(name: str, text: str) -> tuple[str, list[ast.stmt], str]:
    """(first docstring line, top-level import nodes, the code without docstring and imports)."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    drop: set[int] = set()
    imports: list[ast.stmt] = []
    docstring = ast.get_docstring(tree) or name
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        drop.update(range(body[0].lineno - 1, body[0].end_lineno or body[0].lineno))
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(node)
            drop.update(range(node.lineno - 1, node.end_lineno or node.lineno))
    kept = "".join(line for index, line in enumerate(lines) if index not in drop)
    return docstring.splitlines()[0], imports, kept.strip("\n") + "\n"


def _top_level_names(code: str) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def _replace_function(code: str, function: str, replacement: str) -> str:
    tree = ast.parse(code)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == function:
            lines = code.splitlines(keepends=True)
            start = (node.decorator_list[0].lineno if node.decorator_list else node.lineno) - 1
            end = node.end_lineno or node.lineno
            return "".join(lines[:start]) + replacement + "".join(lines[end:])
    raise GenerationError(f"function {function} not found")


def _merge_imports(nodes: list[ast.stmt], code: str) -> list[str]:
    """isort-ordered stdlib import lines, keeping only names the code uses."""
    plain: set[str] = set()
    members: dict[str, set[str]] = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                _require_stdlib(alias.name)
                plain.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module == "__future__":
                continue
            if module == PACKAGE or module.startswith(PACKAGE + "."):
                continue  # concatenated: the names are defined in this file
            _require_stdlib(module)
            for alias in node.names:
                members.setdefault(module, set()).add(
                    alias.name if alias.asname is None else f"{alias.name} as {alias.asname}"
                )

    def used(name: str) -> bool:
        return re.search(rf"\b{re.escape(name.split(' as ')[-1])}\b", code) is not None

    lines = ["from __future__ import annotations", ""]
    lines += [f"import {module}" for module in sorted(plain) if used(module.split(".")[0])]
    for module in sorted(members):
        names = sorted((n for n in members[module] if used(n)), key=_isort_key)
        if not names:
            continue
        single = f"from {module} import {', '.join(names)}"
        if len(single) <= 100:
            lines.append(single)
        else:
            lines += [f"from {module} import ("] + [f"    {n}," for n in names] + [")"]
    return lines


def _isort_key(name: str) -> tuple[int, str]:
    # isort's order-by-type: CONSTANTS, then Classes, then functions and modules.
    bare = name.split(" as ")[0]
    if bare.isupper():
        return 0, bare
    return (1, bare) if bare[:1].isupper() else (2, bare)


def _require_stdlib(module: str) -> None:
    top = module.split(".")[0]
    if top == "graphonomous" or top not in sys.stdlib_module_names:
        raise GenerationError(f"import of {module!r}: the vendored file may use the stdlib only")


def _embedded_files() -> str:
    lines = ["# The package data files, embedded (read through package_text).", ""]
    lines.append("EMBEDDED_FILES: Final[dict[str, str]] = {")
    for name in DATA_FILES:
        text = (PACKAGE_DIR / name).read_text(encoding="utf-8")
        lines.append(f"    {f'{PACKAGE}/{name}'!r}: (")
        lines += [f"        {line!r}" for line in text.splitlines(keepends=True)]
        lines.append("    ),")
    lines.append("}")
    return "\n".join(lines)


def generate() -> str:
    """The text of the vendored file (deterministic)."""
    version = package_version()
    sections: list[str] = []
    imports: list[ast.stmt] = []
    defined: dict[str, str] = {}
    hashes: list[str] = []
    for module in MODULES:
        path = PACKAGE_DIR / f"{module}.py"
        raw = path.read_bytes()
        hashes.append(
            f"    graphonomous/contract/{module}.py  sha256 {hashlib.sha256(raw).hexdigest()}"
        )
        summary, nodes, code = _split_module(module, raw.decode("utf-8"))
        if module == "schema":
            code = _replace_function(code, REPLACED_FUNCTION, REPLACEMENT)
        for name in _top_level_names(code):
            if name in defined:
                raise GenerationError(f"{name} is defined in both {defined[name]} and {module}")
            defined[name] = module
        imports += nodes
        banner = f"# {'=' * 74}\n# graphonomous/contract/{module}.py — {summary}\n# {'=' * 74}"
        sections.append(f"{banner}\n\n{code}")
    for name in DATA_FILES:
        raw = (PACKAGE_DIR / name).read_bytes()
        hashes.append(f"    graphonomous/contract/{name}  sha256 {hashlib.sha256(raw).hexdigest()}")
    body = "\n\n".join(sections) + "\n\n" + _embedded_files() + "\n\n\n" + MAIN
    header = f'''#!/usr/bin/env python3
# ruff: noqa
"""graphonomous_contract — the Graphonomous κ schema-contract checker in one file.

GENERATED by scripts/make_vendored_contract.py from graphonomous {version}.
Do not edit: regenerate it.  Zero dependencies (Python >= 3.10 standard
library only); prints the same reports, byte for byte, as
``graphonomous contract check`` of that version.

    python graphonomous_contract.py check FILE|DIR|GLOB|- ... \\
        [--kind auto|topology|analyze_topology|preview|retrieve_context] \\
        [--input auto|json|jsonl|mcp] [--format text|json|github|junit|sarif] [--json]
    python graphonomous_contract.py schema [--kind KIND]

Exit status: 0 valid, 1 some document invalid, 2 some input unusable.

Provenance (the generator's inputs):
{chr(10).join(hashes)}
"""

# fmt: off
'''
    imports += ast.parse(MAIN_IMPORTS).body
    import_block = "\n".join(_merge_imports(imports, body + "\nFinal"))
    constants = f'VENDORED_VERSION: Final = "{version}"\n'
    return f"{header}{import_block}\n\n{constants}\n\n{body}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is out of date")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    try:
        text = generate()
    except GenerationError as exc:
        print(f"make_vendored_contract: {exc}", file=sys.stderr)
        return 2
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is out of date: run scripts/make_vendored_contract.py")
            return 1
        print(f"{args.output} is up to date")
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output} ({len(text.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
