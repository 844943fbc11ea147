"""BERT's uncased WordPiece tokenizer in pure Python, built from a ``vocab.txt``.

Rules (the ones the Hugging Face ``tokenizers`` package applies for
``BertNormalizer(lowercase=True, strip_accents=None, clean_text=True,
handle_chinese_chars=True)`` + ``BertPreTokenizer`` + ``WordPiece``; Devlin et
al., "BERT", NAACL 2019, and Google's reference ``tokenization.py``):

1. clean: drop NUL, U+FFFD and control characters (Unicode category C*
   except tab, newline, carriage return); whitespace becomes a space;
2. every CJK ideograph gets spaces around it (it is a word of its own);
3. lowercase, then NFD and drop the combining marks (category Mn);
4. split on whitespace, then every punctuation character (ASCII symbols
   33-47, 58-64, 91-96, 123-126, or Unicode category P*) is a word alone;
5. each word is split greedily into the longest vocabulary pieces from the
   left, continuation pieces prefixed ``##``; a word with no such split, or
   longer than 100 characters, is the single token ``[UNK]``.

Stdlib only; deterministic; the vocabulary is a plain list (line n = id n).
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Final

UNK_TOKEN: Final = "[UNK]"
CLS_TOKEN: Final = "[CLS]"
SEP_TOKEN: Final = "[SEP]"
PAD_TOKEN: Final = "[PAD]"
MASK_TOKEN: Final = "[MASK]"
SPECIAL_TOKENS: Final = (PAD_TOKEN, UNK_TOKEN, CLS_TOKEN, SEP_TOKEN, MASK_TOKEN)
CONTINUATION: Final = "##"
# BERT's limit: a longer "word" is junk (a URL, a hash) and becomes [UNK].
MAX_WORD_CHARS: Final = 100
_WORD_CACHE_SIZE: Final = 1 << 16
# The CJK Unified Ideograph blocks BERT treats as one-character words.
_CJK_RANGES: Final = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


def _is_cjk(code: int) -> bool:
    return any(low <= code <= high for low, high in _CJK_RANGES)


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_whitespace(char: str) -> bool:
    return char in " \t\n\r" or char.isspace() or unicodedata.category(char) == "Zs"


def _is_control(char: str) -> bool:
    if char in "\t\n\r":
        return False
    return unicodedata.category(char).startswith("C")


def normalize(text: str) -> str:
    """Steps 1-3 of the module rules: cleaned, CJK spaced, lowercased, accents stripped."""
    out: list[str] = []
    for char in text:
        code = ord(char)
        if code == 0 or code == 0xFFFD or _is_control(char):
            continue
        if _is_whitespace(char):
            out.append(" ")
        elif _is_cjk(code):
            out.append(f" {char} ")
        else:
            out.append(char)
    decomposed = unicodedata.normalize("NFD", "".join(out).lower())
    return "".join(char for char in decomposed if unicodedata.category(char) != "Mn")


def pre_tokenize(text: str) -> list[str]:
    """Step 4: the words of normalised text (whitespace-split, punctuation alone)."""
    words: list[str] = []
    for chunk in text.split():
        start = 0
        for position, char in enumerate(chunk):
            if _is_punctuation(char):
                if start < position:
                    words.append(chunk[start:position])
                words.append(char)
                start = position + 1
        if start < len(chunk):
            words.append(chunk[start:])
    return words


class WordPieceTokenizer:
    """Text -> WordPiece token ids of one BERT uncased vocabulary.

    Input: the vocabulary, one token per entry (entry n has id n), as read
    from ``vocab.txt``.  `encode` gives the ids without [CLS]/[SEP];
    `encode_with_specials` adds them (the model's input form).
    Raises `ValueError` when the vocabulary lacks a special token.
    """

    def __init__(self, vocab: Sequence[str]) -> None:
        self.vocab: tuple[str, ...] = tuple(vocab)
        self.ids: dict[str, int] = {}
        for index, token in enumerate(self.vocab):
            self.ids.setdefault(token, index)
        missing = [token for token in SPECIAL_TOKENS if token not in self.ids]
        if missing:
            raise ValueError(f"vocabulary lacks the special tokens {', '.join(missing)}")
        self.unk_id = self.ids[UNK_TOKEN]
        self.cls_id = self.ids[CLS_TOKEN]
        self.sep_id = self.ids[SEP_TOKEN]
        self.special_ids = frozenset(self.ids[token] for token in SPECIAL_TOKENS)
        self._word_ids = functools.lru_cache(maxsize=_WORD_CACHE_SIZE)(self._split_word)

    @classmethod
    def from_file(cls, path: str | Path) -> WordPieceTokenizer:
        """Read ``vocab.txt`` (UTF-8, one token per line, trailing newline optional)."""
        text = Path(path).read_text(encoding="utf-8")
        return cls(text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"))

    def encode(self, text: str) -> list[int]:
        """Token ids of `text` (module rules 1-5), no [CLS]/[SEP].  O(len(text))."""
        ids: list[int] = []
        for word in pre_tokenize(normalize(text)):
            ids.extend(self._word_ids(word))
        return ids

    def encode_with_specials(self, text: str, max_tokens: int | None = None) -> list[int]:
        """``[CLS] + encode(text) + [SEP]``, the pieces cut to ``max_tokens - 2`` when given."""
        ids = self.encode(text)
        if max_tokens is not None:
            ids = ids[: max(0, max_tokens - 2)]
        return [self.cls_id, *ids, self.sep_id]

    def tokens(self, text: str) -> list[str]:
        """The token strings of `encode` (for reading and tests)."""
        return [self.vocab[index] for index in self.encode(text)]

    def _split_word(self, word: str) -> tuple[int, ...]:
        """Greedy longest-match-first pieces of one word (rule 5)."""
        if len(word) > MAX_WORD_CHARS:
            return (self.unk_id,)
        pieces: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else CONTINUATION + word[start:end]
                found = self.ids.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return (self.unk_id,)
            pieces.append(found)
            start = end
        return tuple(pieces)
