"""References between files: extraction (per file) and resolution (per tree).

Extraction reads one file's text and returns *references*: a kind and an
ordered list of alternatives, e.g. ``["python", "pkg.mod.name", "pkg.mod"]``
for ``from pkg.mod import name`` (a submodule `name` first, else the module).
They are stored in the file node's metadata, so a later scan can resolve
them again when files appear or disappear without re-reading the file.

Resolution maps an alternative to a file path of the current tree; the first
alternative that resolves wins.  Kinds:

- ``python``: dotted module name, leading dots = relative import level;
  resolved to ``m.py``, ``m.pyi`` or ``m/__init__.py``.  Relative imports
  start from the importing file's package; absolute ones from the directory
  Python would import it from (the first ancestor without ``__init__.py``,
  i.e. the package root, or a script's own directory), then the tree root,
  then ``src/``.  When the scan root is itself a package (it has an
  ``__init__.py``), ``root_package`` is its directory name and absolute
  imports of that name (``pkg.mod`` while scanning ``pkg/``) resolve inside
  the tree as well.
- ``js``: an import/require/export-from specifier starting with ``./``,
  ``../`` or ``/``; tried as is, with JS/TS extensions, as a directory
  ``index`` file, and ``.js`` → ``.ts`` (TypeScript's ESM convention).
- ``link``: a Markdown link/image target (URLs and pure anchors are dropped);
  relative to the file's directory, or to the root when it starts with ``/``.
- ``mention``: a back-ticked path in a document; relative to the file's
  directory, then to the root.

Code references (python, js) become ``depends_on`` edges, document
references (link, mention) ``derived_from`` edges, always from the
referencing file node to the referenced file node.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any, Final
from urllib.parse import unquote

# At most this many references are kept per file (bounds the metadata size).
MAX_REFERENCES_PER_FILE: Final = 500
MAX_SPEC_CHARS: Final = 300

JS_EXTENSIONS: Final = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".json")
CODE_REFERENCE_KINDS: Final = ("python", "js")
DOCUMENT_REFERENCE_KINDS: Final = ("link", "mention")

_PY_IMPORT_LINE: Final = re.compile(
    r"^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+\(?([\w \t,]+)|import[ \t]+([\w. \t,]+))",
    re.MULTILINE,
)
_JS_SPECIFIER: Final = re.compile(
    r"""(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)(['"])([^'"\n]+)\1"""
)
_MD_INLINE_LINK: Final = re.compile(
    r"!?\[[^\]\n]*\]\(\s*(<[^>\n]*>|[^)\s]+)(?:\s+[\"'(][^)\n]*)?\)"
)
_MD_REFERENCE_DEF: Final = re.compile(r"^ {0,3}\[[^\]\n]+\]:\s*(<[^>\n]*>|\S+)", re.MULTILINE)
_BACKTICKED: Final = re.compile(r"`+([^`\s]+)`+")
_LOOKS_LIKE_PATH: Final = re.compile(r"^[\w.\-/]+$")
_HAS_EXTENSION: Final = re.compile(r"\.[A-Za-z0-9]{1,8}$")
_URL_SCHEME: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")

Reference = list[str]


# -- extraction -----------------------------------------------------------------


def _statements(tree: ast.Module) -> Iterator[ast.stmt]:
    """Every statement, nested ones included (imports may sit in functions,
    `if TYPE_CHECKING:` or `try:` blocks); expressions are not visited."""
    stack: list[Any] = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.stmt):
            yield node
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, name, None)
            if isinstance(children, list):
                stack.extend(reversed(children))


def _python_import_specs(text: str, tree: ast.Module | None) -> Iterator[list[str]]:
    if tree is None:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            yield from _python_import_specs_by_regex(text)
            return
    for node in _statements(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield [alias.name]
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name == "*":
                    yield [module]
                else:
                    yield [_join_module(module, alias.name), module]


def _python_import_specs_by_regex(text: str) -> Iterator[list[str]]:
    # A file cut at max_read_bytes rarely parses; its imports are at the top.
    for match in _PY_IMPORT_LINE.finditer(text):
        if match.group(3) is not None:
            for name in match.group(3).split(","):
                if name.split():
                    yield [name.split()[0]]
        else:
            module = match.group(1)
            for name in match.group(2).split(","):
                parts = name.split()
                if parts and parts[0] != "*":
                    yield [_join_module(module, parts[0]), module]
                elif parts:
                    yield [module]


def _join_module(module: str, name: str) -> str:
    return module + name if not module or module.endswith(".") else f"{module}.{name}"


def _clean_link_target(raw: str) -> str | None:
    target = raw[1:-1] if raw.startswith("<") and raw.endswith(">") else raw
    if not target or target.startswith("#") or _URL_SCHEME.match(target) or target.startswith("//"):
        return None
    target = unquote(target.split("#", 1)[0].split("?", 1)[0])
    return target or None


def _document_specs(text: str, fmt: str) -> Iterator[list[str]]:
    if fmt == "markdown":
        for pattern in (_MD_INLINE_LINK, _MD_REFERENCE_DEF):
            for match in pattern.finditer(text):
                target = _clean_link_target(match.group(1))
                if target is not None:
                    yield ["link", target]
    for match in _BACKTICKED.finditer(text):
        candidate = match.group(1)
        if (
            _LOOKS_LIKE_PATH.match(candidate)
            and ("/" in candidate or _HAS_EXTENSION.search(candidate))
            and (not candidate.startswith(".") or candidate.startswith(("./", "../")))
        ):
            yield ["mention", candidate]


def extract_references(
    text: str, fmt: str, python_tree: ast.Module | None = None
) -> list[Reference]:
    """References of one file: ``[kind, alternative, ...]`` lists, unique, in first-seen order.

    Input: the file's text and its format ("python", "javascript",
    "markdown", "text", "code").  Output: at most MAX_REFERENCES_PER_FILE
    references.  `python_tree`: the parsed module when the caller has it.
    Complexity: O(len(text)) plus a parse for Python.
    """
    found: list[Reference] = []
    if fmt == "python":
        found.extend(
            ["python", *alternatives] for alternatives in _python_import_specs(text, python_tree)
        )
    elif fmt == "javascript":
        for match in _JS_SPECIFIER.finditer(text):
            specifier = match.group(2).strip()
            if specifier.startswith(("./", "../", "/")) or specifier in (".", ".."):
                found.append(["js", specifier])
    elif fmt in ("markdown", "rst", "text"):
        found.extend(_document_specs(text, fmt))
    seen: set[tuple[str, ...]] = set()
    unique: list[Reference] = []
    for reference in found:
        key = tuple(reference)
        if key in seen or any(len(part) > MAX_SPEC_CHARS for part in reference):
            continue
        seen.add(key)
        unique.append(reference)
        if len(unique) == MAX_REFERENCES_PER_FILE:
            break
    return unique


# -- resolution ------------------------------------------------------------------


def _inside(path: str) -> str | None:
    """A normalised root-relative path, or None when it leaves the root."""
    normal = posixpath.normpath(path)
    if normal in (".", "") or normal.startswith("../") or normal == ".." or normal.startswith("/"):
        return None
    return normal


def _import_root(directory: str, files: Collection[str]) -> str:
    """The sys.path entry a module in `directory` is imported from: the first
    ancestor that is not a package (has no __init__.py)."""
    while directory and posixpath.join(directory, "__init__.py") in files:
        directory = posixpath.dirname(directory)
    return directory


def _python_candidates(
    module: str, rel_path: str, files: Collection[str], root_package: str | None = None
) -> Iterator[str]:
    level = len(module) - len(module.lstrip("."))
    tail = module[level:].replace(".", "/")
    if not level and root_package and (tail == root_package or tail.startswith(root_package + "/")):
        # `import pkg.mod` while the tree root IS pkg/: the root is the package.
        yield from _python_candidates(module[len(root_package) :] or ".", "__init__.py", files)
    here = posixpath.dirname(rel_path)
    if level:
        base = here
        for _ in range(level - 1):
            if not base:
                return  # beyond the root
            base = posixpath.dirname(base)
        bases = [base]
    else:
        # Absolute imports: the importing package's root (or a script's own
        # directory), then the tree root and a src/ layout.
        bases = list(dict.fromkeys([_import_root(here, files), "", "src"]))
    for base in bases:
        stem = posixpath.join(base, tail) if tail else base
        if tail:
            yield f"{stem}.py"
            yield f"{stem}.pyi"
        yield posixpath.join(stem, "__init__.py") if stem else "__init__.py"


def _js_candidates(specifier: str, rel_path: str, files: Collection[str]) -> Iterator[str]:
    if specifier.startswith("/"):
        stem = specifier.lstrip("/")
    else:
        stem = posixpath.join(posixpath.dirname(rel_path), specifier)
    yield stem
    for extension in JS_EXTENSIONS:
        yield stem + extension
    for extension in JS_EXTENSIONS:
        yield posixpath.join(stem, "index" + extension)
    if stem.endswith(".js"):
        yield stem[:-3] + ".ts"
        yield stem[:-3] + ".tsx"


def _path_candidates(target: str, rel_path: str, root_fallback: bool) -> Iterator[str]:
    if target.startswith("/"):
        yield target.lstrip("/")
        return
    yield posixpath.join(posixpath.dirname(rel_path), target)
    if root_fallback:
        yield target


_CANDIDATES: Final[dict[str, Callable[[str, str, Collection[str]], Iterator[str]]]] = {
    "python": lambda module, rel_path, files: _python_candidates(module, rel_path, files),
    "js": _js_candidates,
    "link": lambda target, rel_path, _files: _path_candidates(target, rel_path, False),
    "mention": lambda target, rel_path, _files: _path_candidates(target, rel_path, True),
}


def resolve_reference(
    reference: Reference,
    rel_path: str,
    files: Collection[str],
    root_package: str | None = None,
) -> str | None:
    """The root-relative path a reference of file `rel_path` points at, or None.

    `files` is the set of ingested paths of the tree; `root_package` the
    tree root's package name when the root is a package (module docstring).
    A file never references itself.  Unknown kinds resolve to None.
    Complexity: O(alternatives x candidates) set lookups.
    """
    if not reference:
        return None
    candidates = _CANDIDATES.get(reference[0])
    if candidates is None:
        return None
    for alternative in reference[1:]:
        found = (
            _python_candidates(alternative, rel_path, files, root_package)
            if reference[0] == "python"
            else candidates(alternative, rel_path, files)
        )
        for candidate in found:
            path = _inside(candidate)
            if path is not None and path != rel_path and path in files:
                return path
    return None


def resolution_changed(
    references: Sequence[object],
    rel_path: str,
    before: Collection[str],
    after: Collection[str],
    root_package: str | None = None,
) -> bool:
    """Does any well-formed reference resolve differently against two file sets?

    O(references x candidates) set lookups; no database access.
    """
    for reference in references:
        if not isinstance(reference, list) or not all(isinstance(p, str) for p in reference):
            continue
        if resolve_reference(reference, rel_path, before, root_package) != resolve_reference(
            reference, rel_path, after, root_package
        ):
            return True
    return False


def reference_is_code(reference: Reference) -> bool:
    """True for code dependencies (python, js); False for document citations."""
    return bool(reference) and reference[0] in CODE_REFERENCE_KINDS
