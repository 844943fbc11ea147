"""An erase never claims more than it verified (SPEC "GDPR erase", honesty and the witness).

"scrubbed" is said only after the bytes were looked for again in every store file and
not found; otherwise "pending" with the true cause: the nodes quoting the text (named by
id), a reader holding a snapshot, an error.  `--finish` looks for the bytes again (the
witness beside the file), so it cannot report "scrubbed" while a quoting node still
holds the text.  Derived text (outcome nodes' copied evidence) is rewritten.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphonomous import Graphonomous
from graphonomous.cli import main

MARKER = "Zqx7Marker"
# The witness file beside the database (learning/erase_witness.py).
WITNESS_SUFFIX = "-erase-pending"
SECRET = f"Private note of Erin {MARKER} with her phone number 555 0199."


def file_bytes_hold(db: Path, marker: str = MARKER) -> list[str]:
    """Which of the store's files contain the marker's bytes."""
    found = []
    for suffix in ("", "-wal", "-shm", "-journal", "-verified"):
        path = Path(str(db) + suffix)
        if path.exists() and marker.encode() in path.read_bytes():
            found.append(path.name)
    return found


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "g.db"


@pytest.fixture
def graph(db: Path) -> Iterator[Graphonomous]:
    with Graphonomous(db, embedder="hashing") as opened:
        yield opened


def causes(result: dict[str, object]) -> list[str]:
    return [c["cause"] for c in result["causes"]]  # type: ignore[attr-defined, index]


def test_a_quoting_node_is_the_named_cause_not_a_reader(graph: Graphonomous, db: Path) -> None:
    secret = graph.store_node(SECRET)["node"]["id"]
    quoting = graph.store_node(f"Forwarded: {SECRET} Please call her.")["node"]["id"]
    result = graph.gdpr_erase(secret)
    assert result["status"] == "pending"
    assert result["file"]["blocked_by_reader"] is False
    assert causes(result) == ["quoting_nodes"]
    assert result["causes"][0]["node_ids"] == [quoting]
    assert "read transaction" not in result["file"]["advice"]
    assert "--with-quoting" in result["file"]["advice"]


def test_finish_looks_for_the_bytes_again_in_a_new_process(db: Path) -> None:
    with Graphonomous(db, embedder="hashing") as graph:
        secret = graph.store_node(SECRET)["node"]["id"]
        quoting = graph.store_node(f"Copy of it: {SECRET}")["node"]["id"]
        assert graph.gdpr_erase(secret)["status"] == "pending"
    assert file_bytes_hold(db) == ["g.db"]  # the quoting node holds the text
    out = io.StringIO()
    assert main(["--db", str(db), "erase", "--finish", "--json"], out) == 1
    finished = json.loads(out.getvalue())
    assert finished["status"] == "pending" and finished["pending_before"] is True
    assert finished["file"]["bytes_found_in"] == ["g.db"]
    assert finished["causes"][0] == {**finished["causes"][0], "cause": "quoting_nodes"}
    assert finished["causes"][0]["node_ids"] == [quoting]
    assert MARKER not in out.getvalue()  # the report names ids, never the text
    out = io.StringIO()
    assert main(["--db", str(db), "erase", "--finish"], out) == 1
    assert "PENDING" in out.getvalue() and quoting in out.getvalue()
    # Erasing the quoting node ends it: its own erase looks for every pending text.
    with Graphonomous(db, embedder="hashing") as graph:
        assert graph.gdpr_erase(quoting)["status"] == "scrubbed"
    assert file_bytes_hold(db) == []
    assert not Path(str(db) + WITNESS_SUFFIX).exists()
    assert main(["--db", str(db), "erase", "--finish"], io.StringIO()) == 0


def test_the_witness_holds_no_text(graph: Graphonomous, db: Path) -> None:
    secret = graph.store_node(SECRET)["node"]["id"]
    graph.store_node(f"Quote: {SECRET}")
    graph.gdpr_erase(secret)
    witness = Path(str(db) + WITNESS_SUFFIX).read_text(encoding="utf-8")
    for word in ("Erin", MARKER, "phone", "0199"):
        assert word not in witness


def test_with_quoting_erases_the_quoting_nodes_too(graph: Graphonomous, db: Path) -> None:
    text = f"Erin {MARKER} lives at 4 Elm Street. Her dogs are called Rex and Moll."
    secret = graph.store_node(text)["node"]["id"]
    verbatim = graph.store_node(f"Forwarded: {text}")["node"]["id"]
    sentence = graph.store_node(f"Neighbours: Erin {MARKER} lives at 4 Elm Street. Nice.")
    other = graph.store_node("The plant runs three shifts a day")["node"]["id"]
    result = graph.gdpr_erase(secret, with_quoting=True)
    assert result["status"] == "scrubbed", result["causes"]
    assert {secret, verbatim, sentence["node"]["id"]} <= set(result["erased_ids"])
    assert other not in result["erased_ids"] and graph.store.get_node(other) is not None
    assert result["nodes_quoting_content"] == [] and file_bytes_hold(db) == []


def test_cli_with_quoting(db: Path) -> None:
    with Graphonomous(db, embedder="hashing") as graph:
        secret = graph.store_node(SECRET)["node"]["id"]
        graph.store_node(f"Forwarded: {SECRET}")
    out = io.StringIO()
    assert main(["--db", str(db), "erase", secret, "--with-quoting", "--json"], out) == 0
    assert json.loads(out.getvalue())["status"] == "scrubbed"
    assert file_bytes_hold(db) == []


def test_outcome_nodes_lose_the_copied_evidence(graph: Graphonomous, db: Path) -> None:
    secret = graph.store_node(SECRET)["node"]["id"]
    report = graph.learn_from_outcome(
        "call-erin", "success", 0.9, [secret], evidence={"description": SECRET}
    )
    outcome_node = report["outcome_node_id"]
    assert MARKER in graph.store.require_node(outcome_node).content
    result = graph.gdpr_erase(secret)
    assert result["status"] == "scrubbed", result["causes"]
    assert outcome_node in result["rewritten_ids"]
    content = graph.store.require_node(outcome_node).content
    assert MARKER not in content and "[erased]" in content
    assert content.startswith("Outcome of action call-erin: success")
    assert file_bytes_hold(db) == []


def test_an_outcome_quoting_one_sentence_is_rewritten(graph: Graphonomous, db: Path) -> None:
    secret = graph.store_node(f"Erin {MARKER} lives at 4 Elm Street. She owns two dogs.")
    evidence = {"description": f"Visited: Erin {MARKER} lives at 4 Elm Street. All fine."}
    report = graph.learn_from_outcome("visit", "success", 0.8, [secret["node"]["id"]], evidence)
    result = graph.gdpr_erase(secret["node"]["id"])
    assert result["status"] == "scrubbed", result["causes"]
    content = graph.store.require_node(report["outcome_node_id"]).content
    assert MARKER not in content and "Elm Street" not in content and "All fine." in content
    assert file_bytes_hold(db) == []


def test_a_keyword_list_is_named_but_holds_no_bytes(graph: Graphonomous, db: Path) -> None:
    """A node sharing the content's words is named for review, never erased with it, and
    does not keep the status pending (it holds none of the text's bytes)."""
    secret = graph.store_node(
        f"Dana {MARKER} paid invoice 4471 late. She asked for a refund of the fee."
    )["node"]["id"]
    keywords = graph.store_node("keywords: invoice, refund, dana, late, fee")["node"]["id"]
    result = graph.gdpr_erase(secret, with_quoting=True)
    assert result["status"] == "scrubbed" and result["causes"] == []
    assert result["nodes_quoting_content"] == [keywords]
    assert graph.store.get_node(keywords) is not None
    assert file_bytes_hold(db) == []


# -- a derived-index save racing an erase ----------------------------------------------


def test_a_stale_index_save_after_an_erase_is_dropped(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loads its indexes, B erases (after A's last refresh), A saves: the erased terms
    and id are not written back (the save checks the change log inside its write)."""
    with Graphonomous(db, embedder="hashing") as a:
        secret = a.store_node(SECRET)["node"]["id"]
        a.store_node("The plant runs three shifts a day")
        a.engine.text_index()
        a.engine.vector_index()
        with Graphonomous(db, embedder="hashing") as b:
            refresh = a.engine.refresh

            def erase_after_refresh() -> None:
                refresh()
                assert b.gdpr_erase(secret)["status"] == "scrubbed"

            monkeypatch.setattr(a.engine, "refresh", erase_after_refresh)
            saved = a.engine.save_indexes()
            monkeypatch.undo()
            assert saved_copies_hold(b, secret) is False
            assert file_bytes_hold(db, MARKER.lower()) == [] and file_bytes_hold(db) == []
            assert saved is False  # the stale copy was dropped
            assert a.engine.save_indexes() is True  # refreshed: a clean copy is saved
            assert saved_copies_hold(b, secret) is False
            assert file_bytes_hold(db, MARKER.lower()) == []


def saved_copies_hold(graph: Graphonomous, node_id: str) -> bool:
    """Whether a saved derived index names the node (the audit log keeps ids by design)."""
    rows = graph.store.query("SELECT data FROM derived_indexes")
    return any(node_id.encode() in bytes(row[0]) for row in rows)


def test_every_store_file_is_looked_in(graph: Graphonomous, db: Path) -> None:
    """The text in a file beside the database (here a stale rollback journal, as a crash
    in rollback-journal mode can leave one) keeps the erase pending, naming the file."""
    secret = graph.store_node(SECRET)["node"]["id"]
    quoting = graph.store_node(f"Copy of it: {SECRET}")["node"]["id"]
    assert graph.gdpr_erase(secret)["status"] == "pending"
    journal = Path(str(db) + "-journal")
    # A first byte 0 marks a journal that is not hot: SQLite leaves it alone.
    journal.write_bytes(b"\x00" * 512 + SECRET.encode())
    result = graph.gdpr_erase(quoting)
    assert result["status"] == "pending"
    assert result["file"]["bytes_found_in"] == ["g.db-journal"]
    assert result["causes"] == [{**result["causes"][0], "cause": "bytes_left"}]
    assert result["causes"][0]["files"] == ["g.db-journal"]
    journal.unlink()
    assert graph.gdpr_finish()["status"] == "scrubbed"
    assert file_bytes_hold(db) == []


def test_mcp_gdpr_erase_with_quoting(db: Path) -> None:
    """The MCP tool takes `with_quoting` and returns the causes (output schema checked)."""
    from mcp_tool_calls import Session

    with Graphonomous(db, embedder="hashing") as graph:
        session = Session(graph, "v1")
        secret = graph.store_node(SECRET)["node"]["id"]
        holder = graph.store_node(f"Forwarded: {SECRET}")["node"]["id"]
        pending = session.ok("gdpr_erase", {"node_id": secret})
        assert pending["causes"][0]["node_ids"] == [holder]
        again = graph.store_node(SECRET)["node"]["id"]  # stored once more
        erased = session.ok("gdpr_erase", {"node_id": again, "with_quoting": True})
        assert holder in erased["erased_ids"] and erased["status"] == "scrubbed"
    assert file_bytes_hold(db) == []


def test_an_unwritable_witness_is_said(
    graph: Graphonomous, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphonomous.learning import erase_witness

    def full_disk(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(erase_witness, "add", full_disk)
    secret = graph.store_node(SECRET)["node"]["id"]
    graph.store_node(f"Forwarded: {SECRET}")
    result = graph.gdpr_erase(secret)
    assert result["status"] == "pending" and graph.store.get_node(secret) is None
    assert causes(result) == ["quoting_nodes", "error"]
    assert "No space left" in result["causes"][1]["error"]


def test_cli_finish_refuses_with_quoting(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Graphonomous(db, embedder="hashing").close()
    assert main(["--db", str(db), "erase", "--finish", "--with-quoting"], io.StringIO()) == 2
    assert "--finish takes no NODE_ID (nor --with-quoting)" in capsys.readouterr().err
