"""Governing statements: what a user says once and expects to govern later answers.

A *directive* is a standing instruction ("always answer in French", "never use
tabs in Python code", "please don't ...", "from now on ...", "call me Sam") or a
standing preference ("I prefer tea", "I love painting", "my favourite band is
Queen", "remember that I am vegetarian", "my name is ...").  Later questions
rarely share words with it ("what should I cook tonight?" vs "I'm vegetarian"),
so similarity search alone seldom brings it back; this module recognises such
statements when they are written and hands them back beside the answers of
every later question whose scope they match (SPEC "Governing statements").

Rules of this module:

* Recognition is cue-based and pure (no model, no I/O): `detect(text)` reads
  each sentence of each line, skips lines of an assistant/system speaker (its
  words are not the user's standing statements; its promises echo the user's),
  rejects questions, quoted or reported speech, hedges and negated cues, then
  tries the rules of `RULES` in order (instructions first); the first hit wins.
  High precision first: a rule fires only on the cue's own grammatical frame
  (an imperative after "always", a first-person subject before "love").
* Scope = the content words of the directive's object (`keywords.content_words`;
  the whole sentence for the "favourite" frames, whose object may stand before
  the cue), never a cue word.  An instruction about *how to answer* (its verb in
  `_RESPONSE_VERBS` and no object or topic words left) has an empty scope and is
  *global*: it governs every question.  Naming instructions ("call me Sam") are
  global too.
* Write side: the facade marks a directive in the node's ``metadata``
  (``directive`` = kind, ``directive_rule`` = the rule name) and, when the
  caller chose no node type, types an instruction ``procedural`` (seed 003: how
  to act) and a preference ``semantic`` (a fact about the user).  Conversation
  turns stay ``episodic``: the turn *is* the statement, so it is marked in
  place; a derived copy would duplicate its text in every index and shift the
  keyword statistics of the turns around it.  A ``directive`` key the caller
  gave is kept as given.
* Read side: `DirectiveIndex` (an engine text mirror, derived from content,
  saved like the speaker index) lists the candidates; a node counts only while
  its metadata still marks it (`is_marked`), so an ingested file's "always ..."
  never becomes a directive.  `governing` picks the ones a question's scope
  matches, plus — for a question that asks about preferences — its holders'
  most similar preferences (at most `ASKED_PREFERENCES`), at most
  `MAX_DIRECTIVES` in all.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from ..embed import exact_score
from ..embed.index import normalized_f32
from ..index.bm25 import Bm25Index
from ..index.stem import light_stem
from ..model import Node, check_metadata
from .attribution import speaker_of
from .entities import entity_key
from .keywords import content_words
from .provenance import provenance
from .speakers import speaker_index

if TYPE_CHECKING:
    from .graph_view import GraphEngine, GraphReader

INSTRUCTION: Final = "instruction"
PREFERENCE: Final = "preference"
KINDS: Final = (INSTRUCTION, PREFERENCE)
# The node type a directive gets when the caller chose none (seed 003's types:
# procedural = how to act; semantic = what is true of the user).
NODE_TYPE_OF_KIND: Final[Mapping[str, str]] = {INSTRUCTION: "procedural", PREFERENCE: "semantic"}
METADATA_KIND: Final = "directive"
METADATA_RULE: Final = "directive_rule"
# Governing statements returned per question.  They ride beside the top-k answers,
# so each one costs prompt space on every question it matches; 5 keeps the channel
# within the size of a typical top-5 context while leaving room for the global
# instructions plus the best-matching scoped ones (benchmarks/eval_directives.py
# reports how many matched before the cut).
MAX_DIRECTIVES: Final = 5
# The `channel` of a directives-list entry (results use seed | bm25 | neighbor).
CHANNEL: Final = "directive"
# Weight of a global directive in `rank`: above any idf sum of a scoped one, so the
# statements that govern every question come first.
GLOBAL_WEIGHT: Final = 1e9
# The saved index's layout; it holds what `detect` found, so a change of the rules
# changes this name and a saved copy of the old rules is rebuilt, not read.
_DUMP_FORMAT: Final = "graphonomous-directives/1"
MIRROR_NAME: Final = "directives"


def _words(text: str) -> frozenset[str]:
    """A word set written as one string (the lists below read as prose)."""
    return frozenset(text.split())


# Who gives instructions: the assistant's user (an unlabelled text, or a line of one of
# these speakers).  A named person's imperative is advice to another person ("Caroline:
# never give up!"), not a rule for the assistant's answers; their preferences still count.
_INSTRUCTING: Final = frozenset({None, "user", "human", "me"})
# Speakers whose lines are never the user's standing statements.
_NOT_USER: Final = frozenset({"assistant", "ai", "bot", "system", "model", "chatbot", "gpt"})
# Every rule needs one of these words: a text holding none is no directive, and
# skipping it costs one scan (most stored texts hold none; `detect` on LoCoMo turns
# is about 10× faster with the filter, with the same results).
_ANY_CUE: Final = re.compile(
    r"\b(?:always|never|from now on|going forward|henceforth|in the future|rest of|please|"
    r"call me|address me|refer to me|remember|keep in mind|note|fan of|go-to|speaks to me|"
    r"fav\w*|prefer\w*|passion\w*|drawn to|"
    r"i(?:'m|'ve been)?(?: \w+){0,3} (?:love|like|enjoy|adore|admire|hate|dislike|detest|into|"
    r"can't stand|cannot stand|don't|do not)|"
    r"my (?:name|first|last|nickname|pronouns|birthday|email|e-mail|phone|address|time|"
    r"timezone|native|diet|job|profession|occupation|wife|husband|partner|girlfriend|"
    r"boyfriend|son|daughter|dog|cat|pet|thing))\b",
    re.IGNORECASE,
)
# Sentence ends: . ! ? ; before a space or the end, and line breaks ("kivy 2.1.0" is one
# sentence; a "?" stays with its sentence, see `_rejected`).
_SENTENCE: Final = re.compile(r"(?:[^.!?;\n]|[.!?;](?=[^\s.!?;]))+[.!?;]*")
# Words that open a sentence without changing what it says ("Oh, and always ...").
_FILLER: Final = re.compile(
    r"^(?:\(|(?:oh|ok|okay|well|also|and|but|so|btw|by the way|hey|hi|one more thing|"
    r"just so you know|fyi|and also|plus|again|hm+|um+|uh|yes|yeah|great|perfect|nice|cool|"
    r"thanks|thank you|remember:|note:|important:|ps:)(?:\b|(?<=:))[\s,:-]*)+"
)
# A question is not a directive: it ends with "?" or opens with a question word.
_QUESTION_OPENER: Final = re.compile(
    r"^(?:do|does|did|can|could|would|will|should|shall|is|are|was|were|have|has|"
    r"what|why|how|when|where|which|who|whom|whose)\b"
)
# Reported speech, or a sentence that opens with a quote: someone else's words, not the
# speaker's standing rule (a quoted phrase inside an instruction is its object: never
# say "I hope this email finds you well").
_REPORTED: Final = re.compile(
    r"^\s*[\"“”‘]|\b(?:they|people|he|she|i|we|you) say\b|"
    r"\b(?:said|says|saying|told|tells|telling|asked|asks|wrote|writes|"
    r"thinks|thought|believes?|claims?|claimed|mentioned|insists?|insisted|heard|reads|"
    r"used to say)\b"
)
# Hedges and temporary words: a statement the speaker does not commit to for good
# ("please don't write what comes next yet").
_HEDGE: Final = re.compile(
    r"\b(?:maybe|perhaps|might|possibly|probably|i guess|i think|i suppose|not sure|"
    r"sometimes|kind of|sort of|i wonder|if you want|if you like|for now|just this once|"
    r"this time|yet|right now|at this point)\b"
)
# A negated cue ("not always", "don't always", "never said") is no directive.
_NEGATED: Final = re.compile(r"\b(?:not|n't|never)\s+(?:always|never|said|really like)\b")
# First words that make a clause a statement about someone, not an imperative.
_SUBJECTS: Final = _words(
    "i i'm im i'll i've i'd we we're we'll he she they it it's its that this there my our "
    "his her their these those everyone everybody people someone nobody life things"
)
# A past form ("tried", "used") after "never" narrates; "feed", "need" stay verbs.
_PAST_FORM: Final = re.compile(r"(?:ied|[^e]ed)$")
# Verbs of answering: an instruction built on one with no object words is global.
_RESPONSE_VERBS: Final = _words(
    "answer respond reply write speak talk address explain format sign greet refer keep "
    "be give say tell"
)
# A question holding one of these asks about preferences: every preference of the
# holders it names is a candidate, ranked by similarity ("What are Nate's favorite
# desserts?" is governed by "I love coconut milk" without a shared word).
_ASKS_PREFERENCE: Final = _words(
    "like love enjoy favorite favourite fave prefer preference hate dislike fan"
)
# Preferences a question about preferences gets without a shared word: such a
# statement is a guess by similarity, so it gets few slots (on the LoCoMo tune split
# 5 slots: hit rate 0.452, 129 non-evidence turns listed; 2: 0.429, 47; 1: 0.405, 21).
ASKED_PREFERENCES: Final = 2
# Words that only restate the exchange itself ("always keep answers short", "when I ask").
_RESPONSE_NOUNS: Final = _words(
    "answer response reply message sentence text thing everything anything stuff simply "
    "briefly short brief concise formal informal polite friendly always never ever please "
    "sure word language tone style ask question much many anymore again"
)
# Words of an instruction about the exchange itself ("put MAN: before every message you
# send me", "don't give me all the steps"): it governs the whole conversation.
_ADDRESSED: Final = re.compile(r"\b(?:you|your|yours|me|our|us|every|all|each|any)\b")
# A naming convention ("abbreviate X as VMU", "instead of X use EGG") governs all writing.
_NAMING: Final = re.compile(r"^(?:abbreviate|refer to|rename|instead of|spell)\b")
# Topic markers: the words after one narrow an instruction's scope.
_TOPIC: Final = re.compile(r"\b(?:when|whenever|if|for|about|regarding|on|with|in)\b")
# Objects that are a reaction to the other speaker, not a preference ("I love that!").
_REACTION_OBJECTS: Final = _words(
    "it that this those these them you your yours how what when where him her us the seeing hearing"
)
# The cue words of preferences: never part of a scope (every preference has one).
_PREFERENCE_CUES: Final = _words(
    "love like enjoy adore hate dislike detest prefer favorite favourite favorites favourites "
    "fave faves fan passionate drawn really absolutely totally just also truly"
)
# "Call me ..." that is a request for a call, not a name.
_CALL_NOT_NAME: Final = _words(
    "back later tomorrow when whenever if at on sometime anytime now soon after before "
    "crazy old a an the tonight again up out"
)
# "I always/never ..." that narrates the past rather than states a habit.
_NARRATIVE: Final = _words(
    "thought knew wanted forget remember will would could had did was were imagined "
    "dreamed expected realized realised felt got been seen heard"
)
# "Please don't ..." formulas of politeness, not rules ("please don't apologize" is one).
_POLITE: Final = re.compile(r"^(?:worry|hesitate|thank|mention it|be (?:sorry|shy|afraid))\b")
# A closing tag ("…, ok?") asks for assent; the sentence before it is no question.
_TAG_QUESTION: Final = re.compile(
    r",?\s*(?:ok|okay|right|alright|all right|got it|deal|understood|please)\s*\?$", re.I
)


@dataclass(frozen=True)
class Directive:
    """One recognised governing statement.

    `kind`: instruction | preference; `rule`: the `RULES` name that fired;
    `scope`: content words of its object (empty = global); `holder`: the
    speaker key of a ``"<Speaker>: ..."`` line, else None; `sentence`: the
    sentence the rule read."""

    kind: str
    rule: str
    scope: tuple[str, ...]
    holder: str | None
    sentence: str

    @property
    def is_global(self) -> bool:
        return not self.scope


def stems(words: Iterable[str]) -> list[str]:
    """The light stems of words, trailing digits and repeats dropped: how scopes and
    questions meet ("painting" matches "paint", "kivy2" matches "kivy").  O(length)."""
    return list(dict.fromkeys(light_stem(word.rstrip("0123456789") or word) for word in words))


def _imperative(clause: str) -> bool:
    """Whether a clause opens with a verb (not a subject, not a past form): "use tabs",
    not "i use tabs" nor "never tried"."""
    first = clause.split()[0].rstrip(",;:") if clause.split() else ""
    return first not in _SUBJECTS and first.isalpha() and _PAST_FORM.search(first) is None


def _instruction_scope(clause: str) -> tuple[str, ...]:
    """Scope of an instruction's clause: global for answering verbs without object or topic
    and for a clause about the exchange itself (`_ADDRESSED`) that no topic narrows."""
    words = clause.split()
    verb = words[0] if words else ""
    rest = " ".join(words[1:])
    topic = _TOPIC.search(rest)
    narrowed = topic is not None and topic.group(0) not in ("in", "with")
    if _NAMING.match(clause) or (not narrowed and _ADDRESSED.search(rest)):
        return ()
    direct = rest[: topic.start()] if topic else rest
    direct_words = [w for w in content_words(direct) if w not in _RESPONSE_NOUNS]
    if verb in _RESPONSE_VERBS:
        topic_words: list[str] = []
        if topic is not None and narrowed:
            topic_words = [
                w for w in content_words(rest[topic.end() :]) if w not in _RESPONSE_NOUNS
            ]
        return tuple(dict.fromkeys([*direct_words, *topic_words]))
    return tuple(dict.fromkeys(w for w in content_words(rest) if w not in _RESPONSE_NOUNS))


def _preference_scope(clause: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(w for w in content_words(clause) if w not in _PREFERENCE_CUES))


# -- the rules: (name, kind, pattern, how the object becomes a scope) ------------------

_OBJ: Final = r"(?P<obj>[a-z].*)"
_LAZY_OBJ: Final = r"(?P<obj>[a-z].*?)"  # an object followed by a trailing cue


def _from_now_on(s: str) -> tuple[str, ...] | None:
    match = re.match(
        r"^(?:from now on|going forward|henceforth|in the future|for the rest of "
        r"(?:this|our) (?:chat|conversation))\s*,?\s*(?:please\s+)?" + _OBJ,
        s,
    ) or re.match(r"^(?:please\s+)?" + _LAZY_OBJ + r"\s*,?\s*(?:from now on|going forward)\b", s)
    if match is None:
        return None
    clause = re.sub(
        r"^(?:you (?:will|should|must|need to|have to)\s+|let's\s+)?(?:always\s+|never\s+)?",
        "",
        match.group("obj"),
    )
    return _instruction_scope(clause) if _imperative(clause) else None


def _always_never(s: str) -> tuple[str, ...] | None:
    match = re.match(
        r"^(?:please\s+)?(?:(?:(?:you|we) (?:should|must|need to|have to)|make sure\b.*?\bto|"
        r"make sure (?:you|we)|be sure to|let's)\s+)?(?:always|never)\s+(?:ever\s+)?" + _OBJ,
        s,
    )
    if match is None or not _imperative(match.group("obj")):
        return None
    return _instruction_scope(match.group("obj"))


def _please_dont(s: str) -> tuple[str, ...] | None:
    match = re.match(r"^please\s+(?:do not|don't|dont|never)\s+(?:ever\s+)?" + _OBJ, s) or (
        re.match(r"^(?:do not|don't|dont)\s+(?:ever\s+)?" + _LAZY_OBJ + r"\s*,?\s*please\W*$", s)
    )
    if match is None:
        return None
    clause = match.group("obj")
    if not _imperative(clause) or _POLITE.match(clause):
        return None
    return _instruction_scope(clause)


def _call_me(s: str) -> tuple[str, ...] | None:
    match = re.match(
        r"^(?:please\s+)?(?:call me|you can call me|address me as|refer to me as)\s+" + _OBJ, s
    ) or re.search(r"\b(?:you can|if you|please|just) call me\s+" + _OBJ, s)
    if match is None or match.group("obj").split()[0] in _CALL_NOT_NAME:
        return None
    return ()


def _remember_that(s: str) -> tuple[str, ...] | None:
    match = re.match(
        r"^(?:please\s+)?(?:remember|keep in mind|note|don't forget)\s+(?:that\s+)?"
        r"(?P<obj>(?:i|i'm|im|i am|my|i've|i have)\b.+)",
        s,
    )
    return _preference_scope(match.group("obj")) if match else None


def _i_prefer(s: str) -> tuple[str, ...] | None:
    match = re.search(
        r"(?:^|, |- )i (?:really |much |generally |usually |would |'d |do )?prefer\s+" + _OBJ, s
    ) or re.match(r"^i'd (?:much |really )?prefer\s+" + _OBJ, s)
    return _preference_scope(match.group("obj")) if match else None


def _i_like(s: str) -> tuple[str, ...] | None:
    match = re.search(
        r"(?:^|, )i (?:(?:really|absolutely|totally|just|also|truly|do|genuinely|so|still)\s+)*"
        r"(?:love|like|enjoy|adore|admire|hate|dislike|detest|can't stand|cannot stand|don't like|"
        r"do not like|don't enjoy)\s+" + _OBJ,
        s,
    )
    if match is None:
        return None
    clause = match.group("obj")
    if clause.split()[0] in _REACTION_OBJECTS or clause.startswith("the idea"):
        return None
    scope = _preference_scope(clause)
    return scope or None


def _favourite(s: str) -> tuple[str, ...] | None:
    match = (
        re.search(r"\bmy (?:all-time |absolute |personal )?fav(?:ou?)rite\s+" + _OBJ, s)
        or re.search(
            r"^(?P<obj>.+?) (?:is|are|was|were) (?:one of )?my (?:all-time |absolute )?"
            r"fav(?:ou?)rites?\b",
            s,
        )
        or re.search(r"(?:^|, )i'm (?:a )?(?:big |huge |massive |real )?fan of\s+" + _OBJ, s)
        or re.search(r"(?:^|, )(?:i'm|i've been) (?:really |so |very )?into\s+" + _OBJ, s)
        or re.search(
            r"(?:^|, )i'm (?:really |so |very )?(?:passionate about|drawn to)\s+" + _OBJ, s
        )
        or re.search(
            r"^(?P<obj>.+?) (?:is|are|has been|have been) (?:pretty much |really |always )?"
            r"(?:one of )?my (?:faves?|go-to|passion|thing)\b",
            s,
        )
        or re.search(r"\bmy passion (?:is|was)\s+" + _OBJ, s)
        or re.search(r"^(?P<obj>.+?)\W+it (?:really |just )?speaks to me\b", s)
    )
    if match is None:
        return None
    clause = match.group("obj")
    if clause.split()[0] in _REACTION_OBJECTS and "my" not in s.split():
        return None
    return _preference_scope(s) or None


def _i_always(s: str) -> tuple[str, ...] | None:
    match = re.search(r"(?:^|, )i (?:always|never)\s+" + _OBJ, s)
    if match is None:
        return None
    first = match.group("obj").split()[0]
    if first in _NARRATIVE or first.endswith("ed") or first in _REACTION_OBJECTS:
        return None
    return _preference_scope(match.group("obj")) or None


def _my_attribute(s: str) -> tuple[str, ...] | None:
    match = re.search(
        r"\bmy (?P<obj>(?:name|first name|last name|nickname|pronouns|birthday|email|e-mail|"
        r"phone number|address|timezone|time zone|native language|first language|diet|job|"
        r"profession|occupation|(?:wife|husband|partner|girlfriend|boyfriend|son|daughter|dog|"
        r"cat|pet)'s name) (?:is|are) [a-z0-9].*)",
        s,
    )
    return _preference_scope(match.group("obj")) if match else None


# Order matters: instructions before preferences, narrow frames before broad ones.
RULES: Final = (
    ("from_now_on", INSTRUCTION, _from_now_on),
    ("always_never", INSTRUCTION, _always_never),
    ("please_dont", INSTRUCTION, _please_dont),
    ("call_me", INSTRUCTION, _call_me),
    ("remember_that", PREFERENCE, _remember_that),
    ("i_prefer", PREFERENCE, _i_prefer),
    ("i_like", PREFERENCE, _i_like),
    ("favourite", PREFERENCE, _favourite),
    ("i_always", PREFERENCE, _i_always),
    ("my_attribute", PREFERENCE, _my_attribute),
)


def _normalised(sentence: str) -> str:
    text = sentence.strip().lower().replace("’", "'")
    return _FILLER.sub("", text).strip(" ,:-")


def _rejected(raw: str, s: str) -> bool:
    """Questions, reported speech, hedges and negated cues (module docstring)."""
    return (
        _TAG_QUESTION.sub("", raw.rstrip()).endswith("?")
        or bool(_QUESTION_OPENER.match(s))
        or bool(_REPORTED.search(raw.lower()))
        or bool(_HEDGE.search(s))
        or bool(_NEGATED.search(s))
    )


def _lines(text: str) -> Iterable[tuple[str | None, str]]:
    """(speaker key or None, words) per line; a line without a label continues the
    previous speaker's turn; lines of non-user speakers (`_NOT_USER`) are skipped.
    Past the first line only a user's or an assistant's label starts a new turn: inside a
    message, "Remember: …" or "Note: …" is a heading, not a speaker."""
    holder: str | None = None
    user = True
    for number, line in enumerate(text.splitlines()):
        label = speaker_of(line)
        if label is not None and (number == 0 or _is_turn_label(label)):
            holder = entity_key(label)
            user = " ".join(label).lower() not in _NOT_USER
            line = line.split(":", 1)[1]
        if user:
            yield holder, line


def _is_turn_label(label: list[str]) -> bool:
    name = " ".join(label).lower()
    return name in _NOT_USER or name in _INSTRUCTING


def detect(text: str) -> Directive | None:
    """The first governing statement of `text`, or None.

    >>> detect("User: Always answer in French, please.").scope
    ()
    >>> detect("Never use tabs in Python code").scope
    ('tabs', 'python', 'code')
    >>> detect("Caroline: I love painting landscapes!").kind
    'preference'
    >>> [detect(t) for t in ("She said always answer in French.", "Do you always run?",
    ...     "It's not always easy.", "Assistant: I will always answer in French.")]
    [None, None, None, None]

    Complexity: O(len(text)) regex work per rule.
    """
    if not isinstance(text, str) or _ANY_CUE.search(text.replace("’", "'")) is None:
        return None
    for holder, line in _lines(text):
        for raw in _SENTENCE.findall(line):
            s = _normalised(raw)
            if not s or _rejected(raw, s):
                continue
            for name, kind, rule in RULES:
                if kind == INSTRUCTION and holder not in _INSTRUCTING:
                    continue
                scope = rule(s)
                if scope is not None:
                    return Directive(kind, name, scope, holder, raw.strip())
    return None


def mark(
    content: str, metadata: Mapping[str, Any] | None, node_type: str | None
) -> tuple[dict[str, Any] | None, str | None]:
    """(metadata, node_type) of a node about to be written, the directive marked.

    The metadata gains ``directive`` and ``directive_rule`` when `content` is a
    governing statement and the caller gave no ``directive`` key; `node_type`
    None (the caller chose none) becomes `NODE_TYPE_OF_KIND` of its kind.  A
    non-directive is returned unchanged.  O(len(content))."""
    if metadata is not None and METADATA_KIND in metadata:
        return dict(metadata), node_type
    found = detect(content)
    if found is None:
        return (None if metadata is None else dict(metadata)), node_type
    marked = {**(metadata or {}), METADATA_KIND: found.kind, METADATA_RULE: found.rule}
    return marked, node_type or NODE_TYPE_OF_KIND[found.kind]


def mark_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A node's tool fields (``content``, ``node_type``, ``metadata``) with `mark`
    applied; fields that are not a directive, or whose content is no string, come
    back unchanged (validation stays the record builder's).  A JSON-text metadata is
    parsed by `check_metadata` (bad input raises its field-named error).  O(len)."""
    content = fields.get("content")
    raw = fields.get("metadata")
    if not isinstance(content, str) or not (raw is None or isinstance(raw, (str, Mapping))):
        return dict(fields)
    metadata = None if raw is None else check_metadata("metadata", raw)
    chosen = fields.get("node_type", fields.get("type"))  # `type`: the seed's alias
    marked, node_type = mark(content, metadata, chosen)
    if marked is None or METADATA_KIND not in marked or metadata == marked:
        return dict(fields)
    out = {**fields, "metadata": marked}
    if chosen is None:
        out.pop("type", None)
        out["node_type"] = node_type
    return out


def is_marked(metadata: Mapping[str, Any]) -> bool:
    """Whether a node's metadata marks it a directive (`mark`, or the caller's own key)."""
    return metadata.get(METADATA_KIND) in KINDS


class DirectiveIndex:
    """Node id -> `Directive` of the searchable content that reads as one, and
    scope word -> node ids; kept current by the engine (a text mirror).

    >>> index = DirectiveIndex()
    >>> index.add("a", "Always answer in French.")
    >>> index.add("b", "Never use tabs in Python code.")
    >>> index.add("c", "The valve is closed.")
    >>> sorted(index.candidates(stems(["python"]))), len(index)
    (['a', 'b'], 2)
    """

    def __init__(self) -> None:
        self._found: dict[str, Directive] = {}
        self._by_word: dict[str, set[str]] = {}
        self._global: set[str] = set()
        self._preferences: set[str] = set()

    def __len__(self) -> int:
        return len(self._found)

    def add(self, node_id: str, content: str) -> None:
        """Index (or re-index) one node.  O(len(content))."""
        self.remove(node_id)
        found = detect(content)
        if found is not None:
            self._set(sys.intern(node_id), found)

    def add_many(self, items: Iterable[tuple[str, str]]) -> None:
        for node_id, content in items:
            self.add(node_id, content)

    def remove(self, node_id: str) -> None:
        """Forget a node (no-op if unknown).  O(its scope)."""
        found = self._found.pop(node_id, None)
        if found is None:
            return
        self._global.discard(node_id)
        self._preferences.discard(node_id)
        for word in stems(found.scope):
            ids = self._by_word.get(word)
            if ids is not None:
                ids.discard(node_id)
                if not ids:
                    del self._by_word[word]

    def _set(self, node_id: str, found: Directive) -> None:
        self._found[node_id] = found
        if found.is_global:
            self._global.add(node_id)
        if found.kind == PREFERENCE:
            self._preferences.add(node_id)
        for word in stems(found.scope):
            self._by_word.setdefault(word, set()).add(node_id)

    def get(self, node_id: str) -> Directive | None:
        return self._found.get(node_id)

    def candidates(self, words: Iterable[str]) -> set[str]:
        """The global directives plus those whose scope holds one of the stems `words`
        (`stems`).  O(matches)."""
        out = set(self._global)
        for word in words:
            out |= self._by_word.get(word, set())
        return out

    def preferences(self) -> set[str]:
        """Every preference (the candidates of a question about preferences).  O(n)."""
        return set(self._preferences)

    def dump(self) -> bytes:
        """The whole index as bytes (`load` restores it).  O(size)."""
        rows = [
            [n, d.kind, d.rule, list(d.scope), d.holder, d.sentence] for n, d in self._found.items()
        ]
        state = {"format": _DUMP_FORMAT, "directives": rows}
        return json.dumps(state, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    @classmethod
    def load(cls, data: bytes) -> DirectiveIndex | None:
        """An index from `dump` bytes; None when they are not a readable dump.  O(size)."""
        try:
            state = json.loads(data.decode("utf-8"))
            if not isinstance(state, dict) or state.get("format") != _DUMP_FORMAT:
                return None
            index = cls()
            for node_id, kind, rule, scope, holder, sentence in state["directives"]:
                if kind not in KINDS or not isinstance(node_id, str):
                    return None
                found = Directive(kind, rule, tuple(scope), holder, sentence)
                index._set(sys.intern(node_id), found)
        except (UnicodeDecodeError, ValueError, KeyError, TypeError):
            return None
        return index


@dataclass(frozen=True)
class Governing:
    """One directive chosen for a question: its node id, the directive and the query
    words its scope matched (empty for a global one)."""

    node_id: str
    directive: Directive
    matched: tuple[str, ...]
    weight: float


def query_words(query: str) -> list[str]:
    """The content words of a question, the same way scopes are read."""
    return list(dict.fromkeys(content_words(query)))


def rank(
    found: Sequence[Governing], recency: Mapping[str, str], limit: int = MAX_DIRECTIVES
) -> list[Governing]:
    """The `limit` directives to return: instructions before preferences, then by
    matched weight (global ones first), then newest first (`recency`: node id ->
    when it was said, ``valid_from`` else creation time), then id.  O(n log n)."""
    ordered = sorted(found, key=lambda item: item.node_id)
    ordered.sort(key=lambda item: recency.get(item.node_id, ""), reverse=True)
    ordered.sort(key=lambda item: (item.directive.kind != INSTRUCTION, -item.weight))
    return ordered[:limit]


def directive_index(engine: GraphEngine) -> DirectiveIndex:
    """The directive index of searchable content, current with the database
    (`Engine.text_mirror`)."""
    index = engine.text_mirror(MIRROR_NAME, DirectiveIndex)
    assert isinstance(index, DirectiveIndex)
    return index


def _weigh(
    found: Directive, words: set[str], index: Bm25Index
) -> tuple[tuple[str, ...], float] | None:
    """(matched stems, weight = their idf sum) of a directive for a question's stems,
    or None when its scope does not match: no shared stem, or only common ones (each
    below the index's mean idf: "time", "day" would tie a preference to most
    questions).  A global directive matches with `GLOBAL_WEIGHT`."""
    if found.is_global:
        return (), GLOBAL_WEIGHT
    matched = tuple(stem for stem in stems(found.scope) if stem in words)
    weights = [index.idf(stem) for stem in matched]
    if not matched or max(weights) < index.mean_idf():
        return None
    return matched, sum(weights)


def governing(
    graph: GraphEngine,
    reader: GraphReader,
    query: str,
    admits: Callable[[Node], bool],
    result_ids: Sequence[str],
    vector: list[float] | None,
    limit: int = MAX_DIRECTIVES,
) -> tuple[list[dict[str, Any]], set[str], dict[str, int]]:
    """The governing statements of a question: (rows of the ``directives`` list,
    result ids that are directives themselves, stats ``{matched, returned}``).

    A directive applies when it is global, or its scope shares a stem with the
    question (`_weigh`), or it is a preference and the question asks about
    preferences (`_ASKS_PREFERENCE`: "what does Nate like?"); and its node is
    visible and admitted (`admits`: forgotten, other agents', superseded and
    out-of-time nodes stay out) and still marked (`is_marked`), and — when the
    question names speakers — its holder is one of them.  Results that are
    directives are flagged, not repeated.  The rest are ranked by `rank` (weight =
    `GLOBAL_WEIGHT` for a global one, else the idf sum of the shared stems +
    cosine(query vector, statement)) and cut at
    `limit`; at most `ASKED_PREFERENCES` of them matched no stem.
    Complexity: O(candidates) row reads (one query per 900 ids) + O(c log c).
    """
    index = directive_index(graph)
    if not len(index):
        return [], set(), {"matched": 0, "returned": 0}
    found, nodes = _applying(graph, reader, index, query, admits, _cosine(graph, vector))
    found = _bounded_asked(found)
    in_results = {item.node_id for item in found} & set(result_ids)
    rest = [item for item in found if item.node_id not in in_results]
    said = {n: node.valid_from or node.created_at for n, node in nodes.items()}
    chosen = rank(rest, said, limit)
    rows = [_row(item, nodes[item.node_id]) for item in chosen]
    return rows, in_results, {"matched": len(found), "returned": len(rows)}


def _applying(
    graph: GraphEngine,
    reader: GraphReader,
    index: DirectiveIndex,
    query: str,
    admits: Callable[[Node], bool],
    cosine: Callable[[str], float],
) -> tuple[list[Governing], dict[str, Node]]:
    """Every directive that applies to the question (`governing`), weighed, with its row."""
    asked = query_words(query)
    words = set(stems(asked))
    asks = not _ASKS_PREFERENCE.isdisjoint(asked)
    ids = sorted(index.candidates(words) | (index.preferences() if asks else set()))
    named = set(speaker_index(graph).query_speakers(query))
    text_index = graph.text_index()
    reader.load_nodes(ids)
    found: list[Governing] = []
    nodes: dict[str, Node] = {}
    for node_id in ids:
        node = reader.node(node_id)
        directive = index.get(node_id)
        if directive is None or node is None or not _applies(node, directive, admits, named):
            continue
        weighed = _weigh(directive, words, text_index)
        if weighed is None and asks and directive.kind == PREFERENCE:
            weighed = (), 0.0
        if weighed is not None:
            nodes[node_id] = node
            # Global statements all apply fully: recency alone orders them (the later
            # of "always answer in French" and "from now on, reply in English" first).
            gain = 0.0 if directive.is_global else cosine(node_id)
            found.append(Governing(node_id, directive, weighed[0], weighed[1] + gain))
    return found, nodes


def _bounded_asked(found: list[Governing]) -> list[Governing]:
    """`found` with at most `ASKED_PREFERENCES` of the preferences that only the
    question's asking about preferences brought (no shared stem), the most similar."""
    asked = [g for g in found if not g.matched and not g.directive.is_global]
    if len(asked) <= ASKED_PREFERENCES:
        return found
    asked.sort(key=lambda g: (-g.weight, g.node_id))
    dropped = {g.node_id for g in asked[ASKED_PREFERENCES:]}
    return [g for g in found if g.node_id not in dropped]


def _cosine(graph: GraphEngine, vector: list[float] | None) -> Callable[[str], float]:
    """node id -> cosine(query vector, its stored vector); 0.0 without either.
    The query is normalised once; each call is O(dimensions)."""
    if vector is None:
        return lambda node_id: 0.0
    index = graph.vector_index()
    query = normalized_f32(vector, index.dimensions)

    def cosine(node_id: str) -> float:
        stored = index.get(node_id)
        return 0.0 if stored is None else exact_score(query, stored)

    return cosine


def _applies(
    node: Node, directive: Directive, admits: Callable[[Node], bool], named: set[str]
) -> bool:
    return (
        admits(node)
        and is_marked(node.metadata)
        and (not named or directive.holder is None or directive.holder in named)
    )


def _row(item: Governing, node: Node) -> dict[str, Any]:
    """One entry of the ``directives`` list (SPEC "Governing statements")."""
    return {
        "node_id": item.node_id,
        "content": node.content,
        "node_type": node.node_type,
        "confidence": node.confidence,
        **provenance(node),
        "channel": CHANNEL,
        "kind": item.directive.kind,
        "rule": item.directive.rule,
        "scope": list(item.directive.scope),
        "matched": list(item.matched),
        "created_at": node.created_at,
    }


__all__ = [
    "CHANNEL",
    "INSTRUCTION",
    "KINDS",
    "MAX_DIRECTIVES",
    "METADATA_KIND",
    "METADATA_RULE",
    "NODE_TYPE_OF_KIND",
    "PREFERENCE",
    "RULES",
    "Directive",
    "DirectiveIndex",
    "Governing",
    "detect",
    "directive_index",
    "governing",
    "is_marked",
    "mark",
    "mark_fields",
    "query_words",
    "rank",
]
