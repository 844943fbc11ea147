"""The vendorable ``standalone/graphonomous_contract.py``: generated, current, identical.

* the committed file is exactly what ``scripts/make_vendored_contract.py``
  generates from the package now (so it can never drift from the package);
* it imports the standard library only and runs in an isolated interpreter
  (``python -I``, no ``graphonomous`` on the path);
* on every shared fixture, every hand-written mutation of the checker's
  tests and an MCP transcript, it prints byte-identical reports to
  ``graphonomous contract check`` in every format, and the same exit codes.
"""

from __future__ import annotations

import ast
import importlib.util
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from test_contract_checker import (
    SEMANTIC,
    SEMANTIC_PREVIEW,
    STRUCTURAL,
    VALID_PREVIEW,
    VALID_TOPOLOGY,
)

from graphonomous import __version__
from graphonomous.contract import REPORT_FORMATS, run_check

ROOT = Path(__file__).resolve().parent.parent
VENDORED = ROOT / "standalone" / "graphonomous_contract.py"
GENERATOR = ROOT / "scripts" / "make_vendored_contract.py"


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def vendored() -> ModuleType:
    return _load(VENDORED, "graphonomous_contract_vendored_under_test")


def test_the_committed_file_is_what_the_generator_makes_now() -> None:
    generator = _load(GENERATOR, "make_vendored_contract_under_test")
    assert VENDORED.read_text(encoding="utf-8") == generator.generate(), (
        "standalone/graphonomous_contract.py is stale: run scripts/make_vendored_contract.py"
    )


def test_the_header_names_version_and_source_hashes() -> None:
    head = VENDORED.read_text(encoding="utf-8")[:3000]
    assert f"from graphonomous {__version__}" in head
    for module in ("schema", "checker", "positions", "sources", "report", "run"):
        assert f"graphonomous/contract/{module}.py  sha256 " in head


def test_it_imports_the_standard_library_only() -> None:
    tree = ast.parse(VENDORED.read_text(encoding="utf-8"))
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            modules.add((node.module or "").split(".")[0])
    assert modules <= set(sys.stdlib_module_names), modules - set(sys.stdlib_module_names)


def _write_corpus(root: Path) -> list[str]:
    """Every fixture's expected output and file, every mutation, a JSONL and a transcript."""
    names: list[str] = []

    def put(name: str, value: Any, indent: int | None = 2) -> None:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value, indent=indent, ensure_ascii=False), encoding="utf-8")
        names.append(path.relative_to(root).as_posix())

    fixtures = sorted((ROOT / "fixtures").glob("*/*.json"))
    assert len(fixtures) > 50
    for path in fixtures:
        fixture = json.loads(path.read_text(encoding="utf-8"))
        put(f"expected/{path.parent.name}/{path.name}", fixture["expected"])
        put(f"fixture-files/{path.parent.name}/{path.name}", fixture)  # not contract documents
    mutations = STRUCTURAL + [(n, d, "topology_result", p) for n, d, p, _ in SEMANTIC]
    mutations += [(n, d, "preview_result", p) for n, d, p, _ in SEMANTIC_PREVIEW]
    for name, doc, definition, _path in mutations:
        put(f"mutations/{definition.split('_')[0]}/{name}.json", doc)
    for name, doc in VALID_TOPOLOGY.items():
        put(f"valid/topology/{name}.json", doc)
    for name, doc in VALID_PREVIEW.items():
        put(f"valid/preview/{name}.json", doc)
    lines = [json.dumps(doc) for _, doc, _, _ in mutations] + ["{not json"]
    (root / "all.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    names.append("all.jsonl")
    messages: list[Any] = []
    for ident, (_, doc, definition, _) in enumerate(mutations[:20]):
        tool = "preview_edge_impact" if definition == "preview_result" else "topology_analyze"
        call = {"name": tool, "arguments": {}}
        messages.append({"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": call})
        result = {"content": [{"type": "text", "text": json.dumps(doc)}], "structuredContent": doc}
        messages.append({"jsonrpc": "2.0", "id": ident, "result": result})
    put("session.json", messages, indent=1)
    (root / "dup.json").write_text('{"sccs": [], "sccs": [], "dag_nodes": []}', encoding="utf-8")
    names.append("dup.json")
    return names


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("vendored-corpus")
    return root, _write_corpus(root)


def _report(check: Callable[..., int], operands: list[str], **options: Any) -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    code = check(operands, io.StringIO(""), stdout, stderr, version=__version__, **options)
    return code, stdout.getvalue(), stderr.getvalue()


@pytest.mark.parametrize("fmt", REPORT_FORMATS)
def test_many_document_reports_are_byte_identical(
    vendored: ModuleType, corpus: tuple[Path, list[str]], fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = corpus
    monkeypatch.chdir(root)
    operands = [".", "missing.json", "no/**/*.json"]
    ours = _report(run_check, operands, report_format=fmt)
    theirs = _report(vendored.run_check, operands, report_format=fmt)
    assert ours == theirs
    assert ours[0] == 2  # the unusable inputs
    assert len(ours[1]) > 1000


def test_single_document_reports_are_byte_identical(
    vendored: ModuleType, corpus: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, names = corpus
    monkeypatch.chdir(root)
    codes = set()
    for name in names:
        for as_json in (False, True):
            ours = _report(run_check, [name], as_json=as_json)
            assert ours == _report(vendored.run_check, [name], as_json=as_json), name
            codes.add(ours[0])
    assert codes == {0, 1, 2}


def test_the_mutations_are_flagged_by_the_vendored_file(
    vendored: ModuleType, corpus: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = corpus
    monkeypatch.chdir(root)
    for kind in ("topology", "preview"):
        operands = [f"mutations/{kind}", f"valid/{kind}"]
        code, out, _ = _report(vendored.run_check, operands, report_format="json", kind=kind)
        documents = json.loads(out)["documents"]
        flagged = {doc["source"] for doc in documents if not doc["valid"]}
        assert code == 1
        assert flagged == {doc["source"] for doc in documents if "mutations/" in doc["source"]}
        assert len(flagged) >= 6


def test_it_runs_alone_in_an_isolated_interpreter(corpus: tuple[Path, list[str]]) -> None:
    root, _ = corpus
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    command = [sys.executable, "-I", str(VENDORED), "check", "mutations", "session.json"]
    alone = subprocess.run(
        [*command, "--format", "sarif"], cwd=root, env=env, capture_output=True, text=True
    )
    previous = Path.cwd()
    try:
        os.chdir(root)
        ours = _report(run_check, ["mutations", "session.json"], report_format="sarif")
    finally:
        os.chdir(previous)
    assert (alone.returncode, alone.stdout) == (ours[0], ours[1])
    version = subprocess.run(
        [sys.executable, "-I", str(VENDORED), "--version"], env=env, capture_output=True, text=True
    )
    assert version.stdout.strip() == f"graphonomous_contract.py {__version__}"
