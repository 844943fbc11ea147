#!/usr/bin/env python3
"""Validate the time/update evaluation data (stdlib only).

    python3 benchmarks/data/time/check_data.py

Checks conflict_pairs.jsonl and update_cases.jsonl: required fields and types,
unique ids, labels and kinds in the allowed sets, split equal to the hash rule
of make_splits.py, the minimum counts of the brief, and a few sanity rules.
Prints a count summary; exits 1 on any problem.
"""

import collections
import hashlib
import json
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent

CONFLICT_KINDS = {
    "number_unit",
    "version",
    "date",
    "time_of_day",
    "name_or_entity",
    "colour",
    "boolean_negation",
    "default_changed",
    "renamed",
    "moved",
    "removed",
    "other",
}
COMPATIBLE_KINDS = {
    "different_fact_same_subject",
    "same_value_rephrased",
    "both_events",
    "different_subject_same_slot",
    "refinement",
    "other",
}
# Words that announce an update. A conflict whose `second` has none of them is
# "cue-free": the detector has to notice the new value itself.
CUE_RE = re.compile(
    r"\b(now|no longer|any ?more|instead|changed?|changes|moved?|renamed?|replaced?|switched?|"
    r"updated?|previously|formerly|used to|new|became|corrected|increased|reduced|raised|"
    r"dropped|removed?|reverted|deprecated|since|again|longer)\b",
    re.I,
)

MIN_PAIRS = 180
MIN_PER_CONFLICT_KIND = 8
MIN_CUE_FREE_CONFLICTS = 10
CONFLICT_SHARE = (0.40, 0.50)  # brief: about 45 % conflict
MIN_UPDATE_CASES = 60

problems = []


def problem(msg):
    problems.append(msg)


def split_for(record_id):
    h = int(hashlib.sha256(record_id.encode("utf-8")).hexdigest(), 16)
    return "validate" if h % 2 == 1 else "tune"


def load(name):
    rows = []
    path = HERE / name
    if not path.exists():
        problem(f"{name}: missing")
        return rows
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as e:
            problem(f"{name}:{n}: not JSON ({e})")
    return rows


def check_source(where, src):
    if not isinstance(src, dict):
        problem(f"{where}: source is not an object")
        return
    for key in ("repo", "path", "ref"):
        if not isinstance(src.get(key), str) or not src[key].strip():
            problem(f"{where}: source.{key} missing or empty")
    if isinstance(src.get("repo"), str) and not re.fullmatch(r"[\w.-]+/[\w.-]+", src["repo"]):
        problem(f"{where}: source.repo {src['repo']!r} is not owner/name")


def check_common(name, row, n, id_re, ids):
    where = f"{name}:{n}"
    rid = row.get("id")
    if not isinstance(rid, str) or not re.fullmatch(id_re, rid):
        problem(f"{where}: bad id {rid!r}")
        return where
    where = f"{name}:{rid}"
    if rid in ids:
        problem(f"{where}: duplicate id")
    ids.add(rid)
    if row.get("split") not in ("tune", "validate"):
        problem(f"{where}: split {row.get('split')!r} not tune/validate")
    elif row["split"] != split_for(rid):
        problem(f"{where}: split {row['split']} does not match the hash rule ({split_for(rid)})")
    check_source(where, row.get("source"))
    return where


def sentence_ok(where, field, text):
    if not isinstance(text, str) or not text.strip():
        problem(f"{where}: {field} missing or empty")
        return
    if text != text.strip() or "\n" in text:
        problem(f"{where}: {field} has surrounding whitespace or a newline")
    # identifiers such as "pytest", "redis.conf", "orjson" may start a sentence
    if (
        not text[0].isupper()
        and not text[0].isdigit()
        and text[0] not in "'\""
        and not re.match(r"[a-z][\w.\-]*[\w]", text)
    ):
        problem(f"{where}: {field} does not start like a sentence: {text[:30]!r}")
    if text[-1] not in ".?!":
        problem(f"{where}: {field} does not end with . ? or !")
    if len(text) > 220:
        problem(f"{where}: {field} longer than 220 characters (keep excerpts short)")


def words(text):
    return set(re.findall(r"[a-z0-9_.#+-]+", text.lower())) - {
        "the",
        "a",
        "an",
        "is",
        "of",
        "to",
        "in",
        "by",
        "does",
        "do",
        "what",
        "which",
        "and",
        "for",
        "with",
    }


def main():
    pairs = load("conflict_pairs.jsonl")
    ids = set()
    seen_pairs = set()
    label_n = collections.Counter()
    kind_n = collections.Counter()
    split_n = collections.Counter()
    split_label = collections.Counter()
    cue_free = 0
    required = {"id", "first", "second", "label", "kind", "source", "split"}
    for n, row in enumerate(pairs, 1):
        where = check_common("conflict_pairs", row, n, r"cp-\d{4}", ids)
        missing = required - set(row)
        extra = set(row) - required
        if missing:
            problem(f"{where}: missing fields {sorted(missing)}")
        if extra:
            problem(f"{where}: unexpected fields {sorted(extra)}")
        sentence_ok(where, "first", row.get("first"))
        sentence_ok(where, "second", row.get("second"))
        if row.get("first") == row.get("second"):
            problem(f"{where}: first and second are identical")
        key = (row.get("first"), row.get("second"))
        if key in seen_pairs:
            problem(f"{where}: duplicate pair")
        seen_pairs.add(key)
        label, kind = row.get("label"), row.get("kind")
        if label == "conflict":
            if kind not in CONFLICT_KINDS:
                problem(f"{where}: kind {kind!r} not allowed for conflict")
            if isinstance(row.get("second"), str) and not CUE_RE.search(row["second"]):
                cue_free += 1
        elif label == "compatible":
            if kind not in COMPATIBLE_KINDS:
                problem(f"{where}: kind {kind!r} not allowed for compatible")
        else:
            problem(f"{where}: label {label!r} not conflict/compatible")
        label_n[label] += 1
        kind_n[(label, kind)] += 1
        split_n[row.get("split")] += 1
        split_label[(row.get("split"), label)] += 1

    total = len(pairs)
    if total < MIN_PAIRS:
        problem(f"conflict_pairs: {total} pairs, need at least {MIN_PAIRS}")
    if total:
        share = label_n["conflict"] / total
        if not CONFLICT_SHARE[0] <= share <= CONFLICT_SHARE[1]:
            problem(f"conflict_pairs: conflict share {share:.1%} outside {CONFLICT_SHARE}")
    for k in sorted(CONFLICT_KINDS):
        if kind_n[("conflict", k)] < MIN_PER_CONFLICT_KIND:
            problem(
                f"conflict_pairs: conflict kind {k} has {kind_n[('conflict', k)]} pairs, "
                f"need {MIN_PER_CONFLICT_KIND}"
            )
    if cue_free < MIN_CUE_FREE_CONFLICTS:
        problem(f"conflict_pairs: {cue_free} cue-free conflicts, need {MIN_CUE_FREE_CONFLICTS}")
    for s in ("tune", "validate"):
        for lab in ("conflict", "compatible"):
            if split_label[(s, lab)] == 0:
                problem(f"conflict_pairs: no {lab} pairs in {s}")

    cases = load("update_cases.jsonl")
    uids = set()
    usplit = collections.Counter()
    required_u = {"id", "subject", "old", "new", "question", "distractors", "source", "split"}
    closer_to_new = []
    for n, row in enumerate(cases, 1):
        where = check_common("update_cases", row, n, r"uc-\d{3}", uids)
        missing = required_u - set(row)
        extra = set(row) - required_u
        if missing:
            problem(f"{where}: missing fields {sorted(missing)}")
        if extra:
            problem(f"{where}: unexpected fields {sorted(extra)}")
        if not isinstance(row.get("subject"), str) or not row["subject"].strip():
            problem(f"{where}: subject missing")
        for field in ("old", "new"):
            sentence_ok(where, field, row.get(field))
        q = row.get("question")
        if not isinstance(q, str) or not q.strip().endswith("?"):
            problem(f"{where}: question missing or not ending with ?")
        if row.get("old") == row.get("new"):
            problem(f"{where}: old and new are identical")
        d = row.get("distractors")
        if not isinstance(d, list) or not 2 <= len(d) <= 3:
            problem(f"{where}: distractors must be a list of 2-3 statements")
        else:
            for i, x in enumerate(d):
                sentence_ok(where, f"distractors[{i}]", x)
                if x in (row.get("old"), row.get("new")):
                    problem(f"{where}: distractor {i} repeats old/new")
        if (
            isinstance(q, str)
            and isinstance(row.get("old"), str)
            and isinstance(row.get("new"), str)
        ):
            qw = words(q)
            if len(qw & words(row["new"])) > len(qw & words(row["old"])):
                closer_to_new.append(row["id"])
        usplit[row.get("split")] += 1
    if closer_to_new:
        problem(
            f"update_cases: question shares more words with new than with old in {closer_to_new}"
        )
    if len(cases) < MIN_UPDATE_CASES:
        problem(f"update_cases: {len(cases)} cases, need at least {MIN_UPDATE_CASES}")

    # summary
    print(
        f"conflict_pairs.jsonl: {total} pairs; "
        + ", ".join(f"{k}={v}" for k, v in sorted(label_n.items()))
        + f"; conflict share {label_n['conflict'] / max(total, 1):.1%}"
    )
    print(
        "  splits: "
        + ", ".join(
            f"{s}={split_n[s]} ({split_label[(s, 'conflict')]} conflict / "
            f"{split_label[(s, 'compatible')]} compatible)"
            for s in ("tune", "validate")
        )
    )
    for lab in ("conflict", "compatible"):
        print(
            f"  {lab} kinds: "
            + ", ".join(f"{k}={v}" for (label, k), v in sorted(kind_n.items()) if label == lab)
        )
    print(f"  cue-free conflicts (second has no update cue word): {cue_free}")
    print(
        f"update_cases.jsonl: {len(cases)} cases; "
        + ", ".join(f"{s}={usplit[s]}" for s in ("tune", "validate"))
    )
    if problems:
        print(f"\n{len(problems)} problem(s):", file=sys.stderr)
        for p in problems:
            print("  - " + p, file=sys.stderr)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
