"""The hashing embedder: definition, determinism, golden values, quality sanity."""

from __future__ import annotations

import hashlib
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphonomous.embed import HashingEmbedder, dot, pack_f32, to_float32, tokenize
from graphonomous.embed.hashing import (
    _word_slots,
    feature_slot,
    hashed_vector,
    word_features,
)
from graphonomous.model import EMBEDDING_DIMENSIONS, ValidationError

REPO = Path(__file__).resolve().parents[1]

# Pinned outputs (test constants, not product code): any change to tokenising,
# features, weights, hashing, normalisation or rounding alters them.  Such a
# change must also rename the embedder (stored vectors would be incompatible).
GOLDEN_SENTENCE = "Graphonomous learns from every interaction."
GOLDEN_FIRST8_HEX = "00000000000000000000000000000000000000007c4aa33d000000007c4aa3bd"
GOLDEN_SHA256 = "7105dd3288580df1b62e323c1d161f0e43869b58c8a688a66237172f1be98c75"

PAIRS = [
    (
        "The hydraulic pressure dropped after the E-47 error.",
        "After error E-47 the hydraulic pressure was dropping.",
    ),
    (
        "Caroline went to the LGBTQ support group on Monday.",
        "On Monday Caroline attended a support group for LGBTQ people.",
    ),
    (
        "Melanie painted a sunrise over the lake last year.",
        "Last year Melanie made a painting of the sunrise above a lake.",
    ),
    (
        "To reset the valve, close the intake and flush the line.",
        "Resetting the valve: first close the intake, then flush the line.",
    ),
    (
        "My sister is adopting two children from Colombia.",
        "Two Colombian children are being adopted by my sister.",
    ),
    (
        "The deployment failed because the database migration timed out.",
        "A database migration timeout made the deployment fail.",
    ),
    (
        "We went camping in the mountains and saw shooting stars.",
        "While camping in the mountains we watched shooting stars.",
    ),
    (
        "The customer asked for a refund on the broken headphones.",
        "A refund for broken headphones was requested by the customer.",
    ),
    (
        "Python lists keep insertion order and allow duplicates.",
        "Insertion order is kept by Python lists, which also allow duplicates.",
    ),
    (
        "He is learning to play the violin at the community center.",
        "At the community center he is learning the violin.",
    ),
]
DISTRACTORS = [
    "Quarterly revenue grew by eight percent in Europe.",
    "The cat slept on the warm windowsill all afternoon.",
    "Please remember to water the tomato plants tomorrow.",
    "The train to Berlin leaves at half past seven.",
    "She bought a new laptop with a larger screen.",
    "Our football team won the championship game on Sunday.",
    "The recipe needs two eggs, flour and a pinch of salt.",
    "Volcanic eruptions can cool the global climate for years.",
]


def _packed_hex_in_subprocess(extra_env: dict[str, str]) -> str:
    code = (
        "from graphonomous.embed import HashingEmbedder, pack_f32\n"
        f"print(pack_f32(HashingEmbedder().embed([{GOLDEN_SENTENCE!r}])[0]).hex())\n"
    )
    env = {**os.environ, **extra_env, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_tokenize_normalises_width_case_and_splits_on_non_word() -> None:
    text = "Ｆｕｌｌ-Width ÉCOLE, n°42_x! ½ ﬁne"
    assert tokenize(text) == ["full", "width", "école", "n", "42_x", "1", "2", "fine"]
    assert tokenize("  \t\n ") == []


def test_word_features_order_and_weights() -> None:
    features = word_features("cat")
    assert features[0] == ("w:cat", 0.25)
    grams = [name for name, weight in features[1:] if weight == 1.0]
    # "<cat>": 2-grams, then 3-, 4-, 5-grams, each left to right.
    assert grams == [
        "c:<c",
        "c:ca",
        "c:at",
        "c:t>",
        "c:<ca",
        "c:cat",
        "c:at>",
        "c:<cat",
        "c:cat>",
        "c:<cat>",
    ]
    assert len(features) == 1 + len(grams)


def test_feature_slot_matches_its_definition() -> None:
    for feature in ("w:cat", "c:<ca", "b:hello world", "w:école", "w:\ud800x"):
        digest = hashlib.blake2b(feature.encode("utf-8", "surrogatepass"), digest_size=8).digest()
        expected_bucket = int.from_bytes(digest[:4], "little") % 384
        expected_sign = -1.0 if digest[4] % 2 else 1.0
        assert feature_slot(feature, 384) == (expected_bucket, expected_sign)


def test_hashed_vector_sums_signed_weights_in_order() -> None:
    # "a b a": token "a" (count 2) and "b", bigrams "a b" and "b a" once each.
    dims = 64
    expected = [0.0] * dims
    for token, count in (("a", 2), ("b", 1)):
        for name, weight in word_features(token):
            bucket, sign = feature_slot(name, dims)
            expected[bucket] += sign * weight * math.sqrt(count)
    for bigram in ("a b", "b a"):
        bucket, sign = feature_slot("b:" + bigram, dims)
        expected[bucket] += sign * (0.35 * 1.0)
    assert hashed_vector("a b a", dims) == expected


def test_output_is_unit_float32_of_default_size() -> None:
    embedder = HashingEmbedder()
    assert embedder.dimensions == EMBEDDING_DIMENSIONS == 384
    assert embedder.name == "hashing-384"
    (vector,) = embedder.embed(["Valves leak when the seals wear out."])
    assert len(vector) == 384
    assert to_float32(vector) == vector
    assert math.isclose(math.sqrt(dot(vector, vector)), 1.0, rel_tol=1e-6)


@pytest.mark.parametrize("text", ["", "   ", "\n\t", "?!.,;"])
def test_text_without_words_is_the_zero_vector(text: str) -> None:
    assert HashingEmbedder(32).embed([text]) == [[0.0] * 32]


def test_case_and_unicode_width_do_not_matter() -> None:
    embedder = HashingEmbedder()
    first, second = embedder.embed(["Hello World", "ＨＥＬＬＯ world"])
    assert first == second


def test_word_order_matters_only_a_little() -> None:
    embedder = HashingEmbedder()
    first, second = embedder.embed(["dog bites man", "man bites dog"])
    assert first != second  # bigrams differ
    assert dot(first, second) > 0.8  # same words


def test_empty_batch_and_bad_inputs() -> None:
    embedder = HashingEmbedder()
    assert embedder.embed([]) == []
    with pytest.raises(ValidationError):
        embedder.embed("a bare string")
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValidationError):
            HashingEmbedder(bad)  # type: ignore[arg-type]


def test_caches_do_not_change_results() -> None:
    embedder = HashingEmbedder()
    before = embedder.embed([GOLDEN_SENTENCE])
    feature_slot.cache_clear()
    _word_slots.cache_clear()
    assert embedder.embed([GOLDEN_SENTENCE]) == before
    assert HashingEmbedder(100).embed([GOLDEN_SENTENCE])[0][:5] != before[0][:5]


def test_golden_vector() -> None:
    (vector,) = HashingEmbedder().embed([GOLDEN_SENTENCE])
    assert pack_f32(vector[:8]).hex() == GOLDEN_FIRST8_HEX
    assert hashlib.sha256(pack_f32(vector)).hexdigest() == GOLDEN_SHA256


def test_byte_identical_across_processes_and_without_numpy() -> None:
    here = pack_f32(HashingEmbedder().embed([GOLDEN_SENTENCE])[0]).hex()
    assert _packed_hex_in_subprocess({"PYTHONHASHSEED": "1"}) == here
    assert _packed_hex_in_subprocess({"PYTHONHASHSEED": "2", "GRAPHONOMOUS_NO_NUMPY": "1"}) == here


def test_paraphrases_score_higher_than_unrelated_text() -> None:
    embedder = HashingEmbedder()
    texts = [text for pair in PAIRS for text in pair] + DISTRACTORS
    vectors = dict(zip(texts, embedder.embed(texts), strict=True))
    for first, second in PAIRS:
        paraphrase = dot(vectors[first], vectors[second])
        others = [dot(vectors[first], vectors[t]) for t in texts if t not in (first, second)]
        assert paraphrase > max(others), (first, paraphrase, max(others))
        assert paraphrase > 0.6


def test_released_caches_change_no_vector() -> None:
    embedder = HashingEmbedder()
    texts = [GOLDEN_SENTENCE, "lakes and rivers of the north", "add_column __init__ x"]
    before = embedder.embed(texts)
    assert feature_slot.cache_info().currsize > 0 and _word_slots.cache_info().currsize > 0
    embedder.release_caches()
    assert feature_slot.cache_info().currsize == 0 and _word_slots.cache_info().currsize == 0
    assert embedder.embed(texts) == before
