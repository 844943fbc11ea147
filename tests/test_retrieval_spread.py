"""The per-file cap: results spread across files, order stays score order."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from graphonomous import Graphonomous
from graphonomous.ingest import scan_directory
from graphonomous.retrieval.settings import DEFAULT_SETTINGS
from graphonomous.retrieval.spread import spread_by_file


def test_spread_caps_per_file_and_keeps_order() -> None:
    ranked = ["a1", "a2", "a3", "b1", "x", "a4", "c1"]
    path = {"a": "a.md", "b": "b.md", "c": "c.md"}

    def path_of(item: str) -> str | None:
        return path.get(item[0])

    assert spread_by_file(ranked, path_of, 2, 5) == ["a1", "a2", "b1", "x", "c1"]
    assert spread_by_file(ranked, path_of, 1, 3) == ["a1", "b1", "x"]
    # not enough other files: the capped ones fill up, in rank order
    assert spread_by_file(["a1", "a2", "a3", "b1"], path_of, 1, 3) == ["a1", "a2", "b1"]
    assert spread_by_file(ranked, path_of, 0, 4) == ranked[:4]


def test_retrieval_spreads_chunks_of_one_file(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    long = "".join(f"## Part {i}\n\nThe turbine blade {i} inspection.\n\n" for i in range(12))
    (root / "turbine.md").write_text("# Turbine\n\n" + long * 3, encoding="utf-8")
    for name in ("blade.md", "inspect.md"):
        (root / name).write_text(f"# {name}\n\nturbine blade inspection notes\n", "utf-8")
    with Graphonomous(tmp_path / "s.db") as graph:
        scan_directory(graph, root)
        capped = graph.retrieve_context("turbine blade inspection", limit=5, effort=1)
        paths = [r["path"].rsplit("/", 1)[-1] for r in capped["results"]]
        assert paths.count("turbine.md") <= 2 and {"blade.md", "inspect.md"} <= set(paths)
        scores = [r["score"] for r in capped["results"]]
        assert scores == sorted(scores, reverse=True)
        from graphonomous.retrieval import retriever

        one_file = retriever.retrieve_context(
            graph.engine,
            "turbine blade inspection",
            limit=5,
            effort=1,
            settings=replace(DEFAULT_SETTINGS, max_per_file=0),
        )
        unc = [r["path"].rsplit("/", 1)[-1] for r in one_file["results"]]
        assert unc.count("turbine.md") > 2  # without the cap one file fills the top 5


def test_text_orders_the_chunks_of_a_file_in_the_places_the_file_earned() -> None:
    from graphonomous.retrieval.spread import text_first_within_files

    # (id, path, own text score), in graph-score order: a's sibling a2 was lifted above a1.
    ranked = [("a2", "a", 0.2), ("m", None, 0.9), ("b1", "b", 0.5), ("a1", "a", 0.8)]
    out = text_first_within_files(ranked, lambda r: r[1], lambda r: r[2], lambda r: r[0])
    assert [(place, item[0]) for place, item in out] == [(0, "a1"), (1, "m"), (2, "b1"), (3, "a2")]
    tied = [("x2", "f", 0.5), ("x1", "f", 0.5)]
    assert [
        i[0]
        for _, i in text_first_within_files(tied, lambda r: r[1], lambda r: r[2], lambda r: r[0])
    ] == ["x1", "x2"]
