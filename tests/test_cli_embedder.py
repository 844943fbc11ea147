"""`--embedder` / $GRAPHONOMOUS_EMBEDDER on the command line: same names and vectors as Python."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import pytest

from graphonomous import Graphonomous
from graphonomous.cli import main
from graphonomous.embed import EMBEDDER_ENV, unpack_f32


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def test_flag_selects_the_embedder_and_stores_its_vectors(tmp_path: Path) -> None:
    db = str(tmp_path / "e.db")
    code, text = run("--db", db, "--embedder", "hashing-64", "--json", "node", "add", "pump E-47")
    assert code == 0
    node_id = json.loads(text)["node"]["id"]
    code, text = run("--db", db, "--embedder", "hashing-64", "--json", "stats")
    assert json.loads(text)["embedder"] == "hashing-64"
    with sqlite3.connect(db) as con:
        model, blob = con.execute(
            "SELECT model, embedding FROM node_embeddings WHERE node_id = ?", (node_id,)
        ).fetchone()
    assert model == "hashing-64"
    with Graphonomous(":memory:", embedder="hashing-64") as graph:
        assert unpack_f32(blob) == graph.embedder.embed(["pump E-47"])[0]


def test_flag_after_the_subcommand_and_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "e.db")
    assert run("init", "--db", db)[0] == 0  # stats reads only: the file must exist
    code, text = run("stats", "--db", db, "--json", "--embedder", "hashing-32")
    assert code == 0 and json.loads(text)["embedder"] == "hashing-32"
    monkeypatch.setenv(EMBEDDER_ENV, "hashing-16")
    code, text = run("--db", db, "--json", "stats")
    assert json.loads(text)["embedder"] == "hashing-16"


def test_bad_embedder_is_a_usage_error_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = run("--db", str(tmp_path / "e.db"), "--embedder", "nonsense", "stats")
    assert code == 2
    err = capsys.readouterr().err
    assert "invalid embedder" in err and "Traceback" not in err
    code, _ = run("--db", str(tmp_path / "e.db"), "--embedder", "onnx:/no/such/dir", "stats")
    assert code == 2
