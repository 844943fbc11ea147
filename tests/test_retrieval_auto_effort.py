"""Without an explicit effort, documentation questions run at effort 0, others at 1."""

from __future__ import annotations

from pathlib import Path

from graphonomous import Graphonomous
from graphonomous.ingest import scan_directory


def test_default_effort_follows_the_corpus(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(4):
        (docs / f"d{i}.md").write_text(f"# Doc {i}\n\nThe compressor manual part {i}.\n", "utf-8")
    with Graphonomous(tmp_path / "a.db") as graph:
        scan_directory(graph, docs)
        for i in range(4):
            graph.store_node(f"The agent saw the valve open at {i} pm", "episodic")
        documents = graph.retrieve_context("compressor manual", limit=4)["stats"]
        assert documents["effort"] == 0 and "auto_effort_documents" in documents["mechanisms"]
        assert documents["effort_requested"] is None
        explicit = graph.retrieve_context("compressor manual", limit=4, effort=1)["stats"]
        assert explicit["effort"] == 1 and "auto_effort_documents" not in explicit["mechanisms"]
        learned = graph.retrieve_context("valve open", limit=4)["stats"]
        assert learned["effort"] == 1 and "auto_effort_documents" not in learned["mechanisms"]
