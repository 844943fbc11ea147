"""scan_directory on generated trees: rules, odd files, incremental re-scans, references."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphonomous import Graphonomous
from graphonomous.embed import exact_score
from graphonomous.ingest import ScanOptions, format_scan, scan_directory, sources
from graphonomous.ingest import scan as scan_module
from graphonomous.model import Node
from graphonomous.topology import analyze

PAST = time.time() - 3600  # files older than the racy window: a stat settles them


def write(root: Path, rel: str, text: str | bytes, *, old: bool = True) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    if old:
        os.utime(path, (PAST, PAST))
    return path


def touch_old(path: Path, offset: float = 0.0) -> None:
    os.utime(path, (PAST + offset, PAST + offset))


@pytest.fixture
def graph() -> Iterator[Graphonomous]:
    with Graphonomous(":memory:") as g:
        yield g


def file_nodes(graph: Graphonomous) -> dict[str, Node]:
    """path -> file node."""
    return {
        n.metadata["path"]: n for n in graph.store.list_nodes() if n.metadata.get("kind") == "file"
    }


def chunks_of(graph: Graphonomous, path: str) -> list[Node]:
    found = [
        n
        for n in graph.store.list_nodes()
        if n.metadata.get("kind") == "chunk" and n.metadata["path"] == path
    ]
    return sorted(found, key=lambda n: n.metadata["chunk_index"])


def reference_edges(graph: Graphonomous) -> set[tuple[str, str, str]]:
    by_id = {n.id: path for path, n in file_nodes(graph).items()}
    return {
        (by_id[e.source_id], by_id[e.target_id], e.relationship)
        for e in graph.store.list_edges()
        if e.metadata.get("role") == "reference"
    }


DOC = """# Guide

This guide explains the widget pipeline in enough words to make a section of
its own, covering setup, operation and the usual troubleshooting steps too.
Every section here is longer than the merge threshold of the chunker.

## Setup

Install the widget, then configure it through `config/settings.toml` and read
[the notes](notes.txt) before running anything in production please.
Keep a copy of the settings somewhere safe as well.

## Troubleshooting

If error E-47 appears, the hydraulic pressure dropped: close the intake and
flush the line, then recalibrate the valve as described in the manual.
Call the maintenance team when the error persists after two attempts.
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    write(root, "README.md", DOC)
    write(root, "notes.txt", "Plain notes.\n\nSecond paragraph of notes.\n")
    write(root, "config/settings.toml", "[widget]\nspeed = 3\n")
    write(root, "src/pkg/__init__.py", "")
    write(root, "src/pkg/core.py", "from . import util\n\n\ndef run():\n    return util.x\n")
    write(root, "src/pkg/util.py", "x = 1\n")
    write(root, "build/out.txt", "generated\n")
    write(root, "logs/app.log.txt", "log line\n")
    write(root, "logs/keep.txt", "kept despite *.txt rule below\n")
    write(root, ".gitignore", "build/\nlogs/*\n!logs/keep.txt\n")
    write(root, "src/.gitignore", "*.tmp.py\n")
    write(root, "src/scratch.tmp.py", "ignored = True\n")
    write(root, ".hidden/secret.md", "# hidden\n")
    write(root, "image.png.txt", b"\x89PNG\r\n\x1a\n\x00\x00binary")
    write(root, "latin1.txt", "caf\xe9\n".encode("latin-1"))
    write(root, "picture.png", b"\x89PNG")
    (root / "src" / "loop").symlink_to(root / "src", target_is_directory=True)
    return root


# -- the first scan -----------------------------------------------------------------


def test_first_scan_follows_the_rules(graph: Graphonomous, tree: Path) -> None:
    summary = scan_directory(graph, tree)
    assert sorted(file_nodes(graph)) == [
        "README.md",
        "config/settings.toml",
        "logs/keep.txt",
        "notes.txt",
        "src/pkg/__init__.py",
        "src/pkg/core.py",
        "src/pkg/util.py",
    ]
    assert summary.files_seen == 9
    assert summary.ingested == 7
    assert summary.skipped == 2
    assert summary.skipped_by_reason == {"binary": 1, "not_utf8": 1}
    assert summary.failed == 0
    assert summary.files_seen == (
        summary.ingested + summary.unchanged + summary.skipped + summary.failed
    )
    assert summary.nodes_added == graph.store.count_nodes()
    assert summary.edges_added == graph.store.count_edges()


def test_nodes_carry_paths_lines_hashes_and_structure(graph: Graphonomous, tree: Path) -> None:
    scan_directory(graph, tree)
    readme = file_nodes(graph)["README.md"]
    assert readme.node_type == "semantic"
    assert readme.source == "README.md"
    assert readme.metadata["format"] == "markdown"
    assert readme.metadata["truncated"] is False
    assert "Guide" in readme.content
    chunks = chunks_of(graph, "README.md")
    assert [c.metadata["section"] for c in chunks] == ["Guide", "Setup", "Troubleshooting"]
    assert (chunks[1].metadata["line_start"], chunks[1].metadata["line_end"]) == (7, 11)
    assert all(c.source == "README.md" for c in chunks)
    edges = graph.store.list_edges()
    part_of = {(e.source_id, e.target_id) for e in edges if e.relationship == "part_of"}
    follows = {(e.source_id, e.target_id) for e in edges if e.relationship == "follows"}
    assert {(c.id, readme.id) for c in chunks} <= part_of
    assert {(chunks[0].id, chunks[1].id), (chunks[1].id, chunks[2].id)} <= follows


def test_references_become_edges_between_file_nodes(graph: Graphonomous, tree: Path) -> None:
    scan_directory(graph, tree)
    assert reference_edges(graph) == {
        ("README.md", "config/settings.toml", "derived_from"),
        ("README.md", "notes.txt", "derived_from"),
        ("src/pkg/core.py", "src/pkg/util.py", "depends_on"),
    }


def test_every_node_is_embedded_and_searchable(graph: Graphonomous, tree: Path) -> None:
    scan_directory(graph, tree)
    hits = graph.similarity_search("hydraulic pressure E-47 recalibrate valve", limit=3)
    assert hits["results"][0]["metadata"]["section"] == "Troubleshooting"
    stats = graph.graph_stats()
    assert stats["embedding_count"] == stats["node_count"]


def test_follow_symlinks_terminates_on_a_loop(graph: Graphonomous, tree: Path) -> None:
    summary = scan_directory(graph, tree, ScanOptions(follow_symlinks=True))
    paths = sorted(file_nodes(graph))
    assert not any("loop" in p for p in paths)
    assert summary.ingested == 7


def test_non_recursive_hidden_and_extension_options(graph: Graphonomous, tree: Path) -> None:
    scan_directory(graph, tree, ScanOptions(recursive=False, extensions=(".md",)))
    assert sorted(file_nodes(graph)) == ["README.md"]
    scan_directory(graph, tree, ScanOptions(include_hidden=True, extensions=("md",)))
    assert sorted(file_nodes(graph)) == [".hidden/secret.md", "README.md"]


def test_without_gitignore_ignored_files_are_ingested(graph: Graphonomous, tree: Path) -> None:
    scan_directory(graph, tree, ScanOptions(respect_gitignore=False))
    assert {"build/out.txt", "logs/app.log.txt", "src/scratch.tmp.py"} <= set(file_nodes(graph))


def test_missing_root_is_a_validation_error(graph: Graphonomous, tmp_path: Path) -> None:
    from graphonomous.model import ValidationError

    with pytest.raises(ValidationError) as info:
        scan_directory(graph, tmp_path / "absent")
    assert info.value.field == "root"
    os.mkfifo(tmp_path / "fifo.txt")  # neither a directory nor a regular file
    with pytest.raises(ValidationError):
        scan_directory(graph, tmp_path / "fifo.txt")


def ingested_shape(graph: Graphonomous, path: str) -> list[tuple[Any, ...]]:
    """What a file became, without node ids: kind, provenance, content, chunk section."""
    from graphonomous.retrieval.provenance import provenance

    return sorted(
        (n.metadata["kind"], tuple(provenance(n).values()), n.content, n.metadata.get("section"))
        for n in graph.store.list_nodes()
        if n.metadata.get("path") == path
    )


def test_one_file_is_ingested_as_a_scan_of_its_folder_would(tmp_path: Path) -> None:
    root = tmp_path.resolve() / "project"
    readme = write(root, "README.md", DOC)
    write(root, "notes.txt", "Plain notes.\n\nSecond paragraph of notes.\n")
    write(root, "sub/other.md", "# Other\n\nanother file\n")
    with Graphonomous(":memory:") as alone, Graphonomous(":memory:") as whole:
        summary = scan_directory(alone, readme)
        assert (summary.root, summary.files_seen, summary.ingested) == (str(root), 1, 1)
        assert summary.excluded == 0 and summary.failed == 0
        assert set(file_nodes(alone)) == {"README.md"}  # no other file was read
        scan_directory(whole, root)
        assert ingested_shape(alone, "README.md") == ingested_shape(whole, "README.md")
        assert len(chunks_of(alone, "README.md")) == len(chunks_of(whole, "README.md")) > 1
        key = str(root / "README.md")
        assert sources.get_row(alone.store, key).root == sources.get_row(whole.store, key).root
        # The folder's scan then finds the file already ingested (same root, same row).
        folder = scan_directory(alone, root)
        assert (folder.ingested, folder.unchanged, folder.nodes_updated) == (2, 1, 0)


def test_a_rescan_of_one_file_is_incremental(graph: Graphonomous, tmp_path: Path) -> None:
    root = tmp_path / "project"
    readme = write(root, "README.md", DOC)
    write(root, "notes.txt", "Plain notes.\n")
    scan_directory(graph, root)
    ids = {n.id for n in graph.store.list_nodes()}
    again = scan_directory(graph, readme)
    assert (again.files_seen, again.unchanged, again.ingested, again.removed) == (1, 1, 0, 0)
    assert (again.nodes_added, again.nodes_updated, again.nodes_removed) == (0, 0, 0)
    assert {n.id for n in graph.store.list_nodes()} == ids  # notes.txt was not removed
    write(root, "README.md", DOC.replace("E-47", "E-48"))
    touch_old(readme, 10)
    changed = scan_directory(graph, readme)
    assert (changed.ingested, changed.nodes_added, changed.removed) == (1, 0, 0)
    assert changed.nodes_updated > 0  # the changed chunk and its file node
    assert set(file_nodes(graph)) == {"README.md", "notes.txt"}


# -- read limits ------------------------------------------------------------------------


def test_large_files_are_skipped_by_name_and_long_files_ingested_whole(
    graph: Graphonomous, tmp_path: Path
) -> None:
    write(tmp_path, "big.txt", "x\n" * 6000)
    write(tmp_path, "long.md", "# Head\n\n" + "".join(f"line {i}\n" for i in range(400)))
    options = ScanOptions(max_file_size_bytes=10_000, max_read_bytes=64)
    summary = scan_directory(graph, tmp_path, options)
    assert summary.skipped_by_reason == {"too_large": 1}
    assert summary.to_dict()["skipped_files"] == [{"path": "big.txt", "reason": "too_large"}]
    assert "big.txt: not ingested (too_large)" in format_scan(summary)
    long_md = file_nodes(graph)["long.md"]
    assert long_md.metadata["truncated"] is False
    assert long_md.metadata["bytes_read"] == (tmp_path / "long.md").stat().st_size
    text = "".join(c.content for c in chunks_of(graph, "long.md"))
    assert "line 5\n" in text and "line 399" in text  # read past the 64-byte preview
    # a change far beyond the preview is seen (the whole file is hashed)
    with open(tmp_path / "long.md", "a", encoding="utf-8") as handle:
        handle.write("appended far below the preview\n")
    touch_old(tmp_path / "long.md", 5)
    again = scan_directory(graph, tmp_path, options)
    assert (again.ingested, again.unchanged) == (1, 0)
    assert "appended far below" in "".join(c.content for c in chunks_of(graph, "long.md"))


def test_changed_options_and_force_re_ingest(graph: Graphonomous, tmp_path: Path) -> None:
    write(tmp_path, "big.txt", "x\n" * 6000)
    write(tmp_path, "a.md", "# A\n\nalpha\n")
    small = ScanOptions(max_file_size_bytes=10_000)
    assert scan_directory(graph, tmp_path, small).skipped == 1
    assert scan_directory(graph, tmp_path, small).unchanged == 1
    # a larger limit is another fingerprint: both files are read again
    larger = scan_directory(graph, tmp_path, ScanOptions())
    assert (larger.ingested, larger.skipped) == (2, 0)
    assert "big.txt" in file_nodes(graph)
    assert scan_directory(graph, tmp_path).unchanged == 2
    forced = scan_directory(graph, tmp_path, force=True)
    assert (forced.ingested, forced.unchanged) == (2, 0)
    assert forced.nodes_added == 0  # same ids reused


def test_rescan_restores_policy_forgotten_chunks(graph: Graphonomous, tmp_path: Path) -> None:
    write(tmp_path, "doc.md", "# One\n\n" + "alpha " * 60 + "\n\n# Two\n\n" + "beta " * 60)
    scan_directory(graph, tmp_path)
    ids = [c.id for c in chunks_of(graph, "doc.md")]
    for node_id in ids:  # as an older policy would have done
        graph.forget_node(node_id)
    assert chunks_of(graph, "doc.md") == []
    summary = scan_directory(graph, tmp_path)
    assert summary.unchanged == 1 and summary.nodes_restored == len(ids)
    assert [c.id for c in chunks_of(graph, "doc.md")] == ids
    found = graph.retrieve_context("beta", limit=3)["results"]
    assert any(r["node_id"] in ids for r in found)


def test_ingested_nodes_are_exempt_from_budget_and_decay(
    graph: Graphonomous, tmp_path: Path
) -> None:
    for i in range(6):
        write(tmp_path, f"d{i}.md", f"# Doc {i}\n\ntopic{i} " * 40)
    scan_directory(graph, tmp_path)
    ingested = {n.id for n in graph.store.list_nodes()}
    learned = [graph.store_node(f"episode {i}", "episodic")["node"]["id"] for i in range(5)]
    graph.forgetting_config(max_nodes=2)
    status = graph.budget_status()
    assert status["counted_nodes"] == 5 and status["exempt_nodes"] == len(ingested)
    assert status["warning"] is True
    result = graph.run_consolidation()
    prune = next(s for s in result["stages"] if s["name"] == "prune_nodes")
    assert prune["budget_nodes"] == 5 and len(prune["forgotten"]) == 3
    assert set(prune["forgotten"]) <= set(learned)
    live = {n.id for n in graph.store.list_nodes()}
    assert ingested <= live
    confidences = {n.id: n.confidence for n in graph.store.list_nodes() if n.id in ingested}
    graph.run_consolidation()
    graph.run_consolidation()
    after = {n.id: n.confidence for n in graph.store.list_nodes() if n.id in ingested}
    assert after == confidences  # never decayed while the file exists


# -- failures never abort the scan ----------------------------------------------------------


def test_unreadable_file_is_counted_and_keeps_old_knowledge(
    graph: Graphonomous, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tests run as root, where chmod 000 does not block reads: simulate EACCES.
    real = scan_module.read_prefix

    def deny(path: str, limit: int, **safety: Any) -> tuple[bytes, bool]:
        if path.endswith("notes.txt"):
            raise PermissionError(13, "Permission denied")
        return real(path, limit, **safety)

    monkeypatch.setattr(scan_module, "read_prefix", deny)
    summary = scan_directory(graph, tree)
    assert summary.failed == 1
    assert summary.errors == [{"path": "notes.txt", "error": "Permission denied"}]
    assert summary.ingested == 6
    # Once ingested, a file that becomes unreadable is kept, not removed.
    monkeypatch.setattr(scan_module, "read_prefix", real)
    scan_directory(graph, tree)
    touch_old(tree / "notes.txt", 10)
    monkeypatch.setattr(scan_module, "read_prefix", deny)
    again = scan_directory(graph, tree)
    assert (again.failed, again.removed) == (1, 0)
    assert "notes.txt" in file_nodes(graph)


def test_file_deleted_between_listing_and_reading(
    graph: Graphonomous, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scan_directory(graph, tree)
    touch_old(tree / "notes.txt", 10)  # changed: the next scan must read it
    real = scan_module.read_prefix

    def vanish(path: str, limit: int, **safety: Any) -> tuple[bytes, bool]:
        if path.endswith("notes.txt"):
            os.remove(path)
        return real(path, limit, **safety)

    monkeypatch.setattr(scan_module, "read_prefix", vanish)
    summary = scan_directory(graph, tree)
    assert summary.failed == 1
    assert summary.errors[0]["path"] == "notes.txt"
    assert summary.removed == 1
    assert "notes.txt" not in file_nodes(graph)
    assert ("README.md", "notes.txt", "derived_from") not in reference_edges(graph)


def test_a_failed_write_rolls_back_the_whole_file(
    graph: Graphonomous, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scan_directory(graph, tree)
    before = {n.id: n.content for n in graph.store.list_nodes()}
    write(tree, "README.md", DOC.replace("E-47", "E-48") + "\n## New\n\nnew section\n")
    touch_old(tree / "README.md", 20)
    real = sources.upsert_row

    def broken(store: Any, row: sources.SourceRow) -> None:
        if row.path.endswith("README.md"):
            raise OSError("disk full")
        real(store, row)

    monkeypatch.setattr(scan_module, "upsert_row", broken)
    summary = scan_directory(graph, tree)
    assert summary.failed == 1
    assert summary.ingested == 0
    assert {n.id: n.content for n in graph.store.list_nodes()} == before
    monkeypatch.setattr(scan_module, "upsert_row", real)
    assert scan_directory(graph, tree).ingested == 1


# -- incremental re-scans -----------------------------------------------------------------


def test_second_scan_reads_nothing_and_writes_nothing(
    graph: Graphonomous, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = scan_directory(graph, tree)
    counts = (graph.store.count_nodes(), graph.store.count_edges())

    def no_reads(path: str, limit: int, **safety: Any) -> tuple[bytes, bool]:
        raise AssertionError(f"unexpected read of {path}")

    # Skipped files are recorded too: not even the binary ones are read again.
    monkeypatch.setattr(scan_module, "read_prefix", no_reads)
    second = scan_directory(graph, tree)
    assert second.ingested == 0
    assert second.unchanged == first.ingested
    assert second.skipped_by_reason == {"binary": 1, "not_utf8": 1}
    assert (second.nodes_added, second.nodes_updated, second.edges_added) == (0, 0, 0)
    assert (graph.store.count_nodes(), graph.store.count_edges()) == counts


def test_recently_modified_files_are_rehashed_not_rewritten(
    graph: Graphonomous, tmp_path: Path
) -> None:
    write(tmp_path, "fresh.md", "# Fresh\n\ntext\n", old=False)
    scan_directory(graph, tmp_path)
    row = sources.rows_under(graph.store, tmp_path.resolve().as_posix())
    assert next(iter(row.values())).mtime_ns == 0  # racy: re-read next time
    again = scan_directory(graph, tmp_path)
    assert (again.ingested, again.unchanged) == (0, 1)


def test_changed_file_keeps_node_ids_and_external_edges(graph: Graphonomous, tree: Path) -> None:
    scan_directory(graph, tree)
    file_id = file_nodes(graph)["README.md"].id
    setup, trouble = chunks_of(graph, "README.md")[1:3]
    note = graph.store_node("Our team always forgets the settings file")["node"]["id"]
    graph.store_edge(note, setup.id, "related_to")
    graph.store_edge(note, trouble.id, "supports")

    edited = DOC.replace(
        "## Setup",
        "## Preface\n\nA new preface section, long enough to be its own "
        "chunk in the document after the merge rule runs over it; it needs more than "
        "two hundred characters, so here are a few more words to get there.\n\n## Setup",
    )
    edited = edited.replace("E-47", "E-99")
    write(tree, "README.md", edited)
    touch_old(tree / "README.md", 30)
    summary = scan_directory(graph, tree)
    assert summary.ingested == 1
    assert file_nodes(graph)["README.md"].id == file_id
    after = chunks_of(graph, "README.md")
    assert [c.metadata["section"] for c in after] == [
        "Guide",
        "Preface",
        "Setup",
        "Troubleshooting",
    ]
    assert after[2].id == setup.id  # same text: same node
    assert after[3].id == trouble.id  # same heading: same node, new text
    assert "E-99" in after[3].content
    linked = {e.target_id for e in graph.store.edges_of(note, "out")}
    assert linked == {setup.id, trouble.id}
    assert summary.nodes_added == 1 and summary.nodes_removed == 0
    # structure is rebuilt: the new chunk sits between Guide and Setup
    follows = {(e.source_id, e.target_id) for e in graph.store.list_edges(relationship="follows")}
    assert (after[0].id, after[1].id) in follows
    assert (after[1].id, after[2].id) in follows
    assert (after[0].id, after[2].id) not in follows


def test_shrinking_file_removes_surplus_chunks(graph: Graphonomous, tree: Path) -> None:
    scan_directory(graph, tree)
    old_ids = {c.id for c in chunks_of(graph, "README.md")}
    write(tree, "README.md", "# Guide\n\nOnly one section is left now.\n")
    touch_old(tree / "README.md", 40)
    summary = scan_directory(graph, tree)
    remaining = chunks_of(graph, "README.md")
    assert len(remaining) == 1 and remaining[0].id in old_ids
    assert summary.nodes_removed == 2
    assert graph.store.get_nodes(list(old_ids - {remaining[0].id})) == {}


def test_deleted_and_newly_ignored_files_are_removed(graph: Graphonomous, tree: Path) -> None:
    scan_directory(graph, tree)
    util_chunks = [c.id for c in chunks_of(graph, "src/pkg/util.py")]
    os.remove(tree / "src" / "pkg" / "util.py")
    with open(tree / ".gitignore", "a", encoding="utf-8") as handle:
        handle.write("config/\n")
    summary = scan_directory(graph, tree)
    assert summary.removed == 2
    assert "src/pkg/util.py" not in file_nodes(graph)
    assert "config/settings.toml" not in file_nodes(graph)
    assert graph.store.get_nodes(util_chunks) == {}
    rows = sources.rows_under(graph.store, tree.resolve().as_posix())
    assert not any(key.endswith(("util.py", "settings.toml")) for key in rows)
    # `from . import util` now resolves to the package itself (util may be a
    # name defined in __init__.py), as Python would try.
    assert reference_edges(graph) == {
        ("README.md", "notes.txt", "derived_from"),
        ("src/pkg/core.py", "src/pkg/__init__.py", "depends_on"),
    }
    # The vector index no longer returns removed nodes.
    hits = graph.similarity_search("speed widget", limit=50)["results"]
    assert not any(h["source"] == "config/settings.toml" for h in hits)


def test_text_file_turned_binary_is_removed(graph: Graphonomous, tree: Path) -> None:
    scan_directory(graph, tree)
    write(tree, "notes.txt", b"\x00\x01\x02")
    touch_old(tree / "notes.txt", 50)
    summary = scan_directory(graph, tree)
    assert summary.removed == 1 and summary.skipped_by_reason["binary"] == 2
    assert "notes.txt" not in file_nodes(graph)


def test_reference_appears_when_its_target_is_created(graph: Graphonomous, tmp_path: Path) -> None:
    write(tmp_path, "a.md", "# A\n\nSee [b](b.md) for details on the subject.\n")
    scan_directory(graph, tmp_path)
    assert reference_edges(graph) == set()
    write(tmp_path, "b.md", "# B\n\nThe details.\n")
    summary = scan_directory(graph, tmp_path)
    assert summary.ingested == 1  # only b.md; a.md is unchanged
    assert reference_edges(graph) == {("a.md", "b.md", "derived_from")}


# -- feedback loops from files (seed 004: "ingest file pair with mutual imports") -------------


def _mutual_pair(root: Path) -> None:
    write(
        root,
        "alpha.py",
        '"""Alpha parses widget orders."""\nimport beta\n\n\ndef parse_order(text):\n'
        "    return beta.validate_order(text.split())\n",
    )
    write(
        root,
        "beta.py",
        '"""Beta validates widget orders."""\nimport alpha\n\n\ndef validate_order(parts):\n'
        "    return [alpha.parse_order(p) for p in parts if p]\n",
    )


def test_mutual_imports_form_an_scc_that_routes_deliberate(
    graph: Graphonomous, tmp_path: Path
) -> None:
    _mutual_pair(tmp_path)
    scan_directory(graph, tmp_path)
    assert reference_edges(graph) == {
        ("alpha.py", "beta.py", "depends_on"),
        ("beta.py", "alpha.py", "depends_on"),
    }
    files = file_nodes(graph)
    ids = [files["alpha.py"].id, files["beta.py"].id]
    edges = graph.store.list_edges_between(ids)
    result = analyze(edges, emit_telemetry=False)
    assert result["routing"] == "deliberate"
    assert result["max_kappa"] == 1
    assert result["sccs"][0]["nodes"] == sorted(ids)


def test_retrieving_over_mutual_imports_routes_deliberate(
    graph: Graphonomous, tmp_path: Path
) -> None:
    if not hasattr(graph, "retrieve_context"):
        pytest.skip("retrieve_context is not available")
    _mutual_pair(tmp_path)
    scan_directory(graph, tmp_path)
    result = graph.retrieve_context("alpha beta widget orders parse validate", limit=10)
    assert result["topology"]["max_kappa"] > 0
    assert result["topology"]["routing"] == "deliberate"


def test_a_dag_of_imports_routes_fast(graph: Graphonomous, tmp_path: Path) -> None:
    # Dissimilar files: no semantic back-reference (see the next test), so no loop.
    write(tmp_path, "alpha.py", "import beta\n\ndef parse_orders(rows):\n    return rows\n")
    write(tmp_path, "beta.py", 'X = 1\nCOLOURS = ["red", "green"]\n')
    scan_directory(graph, tmp_path)
    ids = [n.id for n in file_nodes(graph).values()]
    assert analyze(graph.store.list_edges_between(ids), emit_telemetry=False)["routing"] == "fast"


def test_back_references_read_their_endpoints_vectors_only(
    graph: Graphonomous, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The re-link never loads the whole vector index (a scan of 100K files would hold
    every vector); the similarity equals the index's."""
    body = "def parse_orders(rows):\n    return [row for row in rows if row.valid]\n"
    write(tmp_path, "alpha.py", "import beta\n\n" + body)
    write(tmp_path, "beta.py", body)
    loads: list[int] = []
    engine_type = type(graph.engine)
    vector_index = engine_type.vector_index
    monkeypatch.setattr(
        engine_type, "vector_index", lambda self: loads.append(1) or vector_index(self)
    )
    scan_directory(graph, tmp_path)
    assert loads == []
    monkeypatch.undo()
    files = file_nodes(graph)
    alpha, beta = files["alpha.py"].id, files["beta.py"].id
    back = graph.store.find_edge(beta, alpha, "supports")
    assert back is not None
    index = graph.vector_index()
    u, v = index.get(beta), index.get(alpha)
    assert u is not None and v is not None
    assert back.metadata["similarity"] == round(exact_score(u, v), 6)


def test_similar_files_get_a_semantic_back_reference(graph: Graphonomous, tmp_path: Path) -> None:
    body = "def parse_orders(rows):\n    return [row for row in rows if row.valid]\n"
    write(tmp_path, "alpha.py", "import beta\n\n" + body)
    write(tmp_path, "beta.py", body)
    scan_directory(graph, tmp_path)
    files = file_nodes(graph)
    alpha, beta = files["alpha.py"].id, files["beta.py"].id
    back = graph.store.find_edge(beta, alpha, "supports")
    assert back is not None and back.metadata["source"] == "edge_extractor_backref"
    assert back.metadata["similarity"] >= 0.75
    assert back.strength == round(back.metadata["similarity"] * 0.6, 3)
    result = analyze(graph.store.list_edges_between([alpha, beta]), emit_telemetry=False)
    assert result["max_kappa"] == 1  # the deliberate 2-cycle ("Kappa activation")
    write(tmp_path, "alpha.py", body)  # the import goes: so does its back-reference
    scan_directory(graph, tmp_path)
    assert graph.store.find_edge(beta, alpha, "supports") is None


def test_binary_file_turned_text_is_ingested(graph: Graphonomous, tree: Path) -> None:
    scan_directory(graph, tree)
    write(tree, "image.png.txt", "now it is text\n")
    touch_old(tree / "image.png.txt", 60)
    summary = scan_directory(graph, tree)
    assert (summary.ingested, summary.skipped_by_reason) == (1, {"not_utf8": 1})
    assert "image.png.txt" in file_nodes(graph)


def test_a_deleted_file_node_is_rebuilt_and_chunks_reused(graph: Graphonomous, tree: Path) -> None:
    scan_directory(graph, tree)
    old_file = file_nodes(graph)["README.md"].id
    chunk_ids = [c.id for c in chunks_of(graph, "README.md")]
    graph.delete_node(old_file)
    summary = scan_directory(graph, tree)
    assert summary.ingested == 1
    rebuilt = file_nodes(graph)["README.md"]
    assert rebuilt.id != old_file
    assert [c.id for c in chunks_of(graph, "README.md")] == chunk_ids
    part_of = {(e.source_id, e.target_id) for e in graph.store.list_edges(relationship="part_of")}
    assert {(c, rebuilt.id) for c in chunk_ids} <= part_of
    assert ("README.md", "notes.txt", "derived_from") in reference_edges(graph)


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0,
    reason="root reads chmod-000 files anyway (the monkeypatched test above covers it)",
)
def test_chmod_000_file_is_counted_as_failed(graph: Graphonomous, tree: Path) -> None:
    target = tree / "notes.txt"
    target.chmod(0)
    try:
        summary = scan_directory(graph, tree)
    finally:
        target.chmod(0o644)
    assert summary.failed == 1
    assert summary.errors[0]["path"] == "notes.txt"


def test_imports_resolve_when_the_root_is_the_package(graph: Graphonomous, tmp_path: Path) -> None:
    pkg = tmp_path / "mypkg"
    write(pkg, "__init__.py", "from mypkg.core import run\n")
    write(pkg, "core.py", "import mypkg.util\n\ndef run():\n    return 1\n")
    write(pkg, "util.py", "from mypkg import core\n")
    write(pkg, "other.py", "import os.path\nimport util_elsewhere\n")
    scan_directory(graph, pkg)
    edges = reference_edges(graph)
    assert ("__init__.py", "core.py", "depends_on") in edges
    assert ("core.py", "util.py", "depends_on") in edges
    assert ("util.py", "core.py", "depends_on") in edges
    assert not any(source == "other.py" for source, _, _ in edges)


def test_rst_is_chunked_by_heading(graph: Graphonomous, tmp_path: Path) -> None:
    body = "words " * 50
    write(tmp_path, "guide.rst", f"Guide\n=====\n\n{body}\n\nInstall\n-------\n\n{body}\n")
    scan_directory(graph, tmp_path)
    chunks = chunks_of(graph, "guide.rst")
    assert [c.metadata["section"] for c in chunks] == ["Guide", "Install"]
    assert chunks[1].metadata["line_start"] == 6


def test_chunks_carry_heading_and_symbol_paths_and_a_forced_rescan_changes_none(
    graph: Graphonomous, tmp_path: Path
) -> None:
    body = "word " * 50
    write(tmp_path, "guide.md", f"# Guide\n\n{body}\n\n## Install\n\n{body}\n")
    write(tmp_path, "notes.txt", f"Notes\n=====\n\n{body}\n\nDebug\n-----\n\n{body}\n")
    write(tmp_path, "mod.py", f'def helper():\n    """{body}"""\n')
    scan_directory(graph, tmp_path)
    headings = {
        path: [n.metadata["headings"] for n in chunks_of(graph, path)]
        for path in ("guide.md", "notes.txt", "mod.py")
    }
    assert headings == {
        "guide.md": [["Guide"], ["Guide", "Install"]],
        "notes.txt": [["Notes"], ["Notes", "Debug"]],
        "mod.py": [["helper"]],
    }
    again = scan_directory(graph, tmp_path, force=True)
    assert (again.nodes_added, again.nodes_updated, again.nodes_removed) == (0, 0, 0)
