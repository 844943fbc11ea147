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


# The seed's name for the same setting (a documented alias of EMBEDDER_ENV).
EMBEDDER_ALIAS_ENV = "GRAPHONOMOUS_EMBEDDING_MODEL"


def test_embedding_model_is_an_alias_of_the_embedder_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """$GRAPHONOMOUS_EMBEDDING_MODEL (the seed's name) = $GRAPHONOMOUS_EMBEDDER; both set and
    different is exit 2 naming both; --embedder still overrides either."""
    db = str(tmp_path / "e.db")
    assert run("init", "--db", db)[0] == 0
    monkeypatch.delenv(EMBEDDER_ENV, raising=False)
    monkeypatch.setenv(EMBEDDER_ALIAS_ENV, "hashing-24")
    code, text = run("--db", db, "--json", "stats")
    assert code == 0 and json.loads(text)["embedder"] == "hashing-24"
    monkeypatch.setenv(EMBEDDER_ENV, "hashing-24")  # both, the same: fine
    assert json.loads(run("--db", db, "--json", "stats")[1])["embedder"] == "hashing-24"
    monkeypatch.setenv(EMBEDDER_ENV, "hashing-48")
    code, _ = run("--db", db, "stats")
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert EMBEDDER_ENV in err and EMBEDDER_ALIAS_ENV in err and "Traceback" not in err
    code, text = run("--db", db, "--json", "--embedder", "hashing-8", "stats")
    assert code == 0 and json.loads(text)["embedder"] == "hashing-8"
    with pytest.raises(ValueError, match=EMBEDDER_ALIAS_ENV):  # the Python API too
        Graphonomous(":memory:")
