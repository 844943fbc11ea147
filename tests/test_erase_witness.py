"""The erase witness finds erased bytes it does not hold (learning/erase_witness.py)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from graphonomous.learning import erase_witness

TEXTS = (
    "Private note of Erin Zqx7Marker with her phone number 555 0199.",
    "Ünïcödé nämé Çafé Ŝtraße — München Köln",  # non-ASCII words only
    "日本語のテキストです。東京都",  # no spaces: every character is a token
)


def noise(rng: random.Random, size: int) -> bytes:
    return bytes(rng.randrange(256) for _ in range(size))


@pytest.mark.parametrize("text", TEXTS)
def test_a_text_across_a_chunk_boundary_in_binary_noise_is_found(tmp_path: Path, text: str) -> None:
    db = tmp_path / "g.db"
    db.write_bytes(b"")
    witness = erase_witness.add(str(db), [text])
    rng = random.Random(5)
    data = text.encode()
    cut = erase_witness.SCAN_CHUNK - len(data) // 2  # straddles the first chunk's end
    blob = tmp_path / "blob"
    blob.write_bytes(noise(rng, cut) + data + noise(rng, 4096))
    assert erase_witness.find(witness, [str(blob)]) == {"blob": [text]}
    blob.write_bytes(noise(rng, cut) + data[:-1] + b"#" + noise(rng, 4096))
    assert erase_witness.find(witness, [str(blob)]) == {}


def test_the_witness_names_no_word(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    db.write_bytes(b"")
    erase_witness.add(str(db), TEXTS)
    raw = Path(erase_witness.path_of(str(db))).read_bytes()
    for text in TEXTS:
        for word in text.split():
            assert len(word) < 5 or word.encode() not in raw
    erase_witness.clear(str(db))
    assert erase_witness.load(str(db)) is None
