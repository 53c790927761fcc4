"""Standalone sanity checks for the signature database (signatures/*.toml).

Reads the TOML files directly with tomllib and the `regex` module, so it does not
depend on the dllogscan package. It enforces the rules of signatures/README.md plus
speed limits on hostile input.
"""

from __future__ import annotations

import fnmatch
import random
import re as _re
import string
import time
import tomllib
from pathlib import Path

import pytest
import regex

from dllogscan.core.classes import letter_range
from dllogscan.signatures.database import SITUATIONS

SIG_DIR = Path(__file__).resolve().parent.parent / "signatures"
SIGNATURE_FILES = ("A-shm", "B-worker-exit", "C-fd", "D-cuda", "E-hang", "F-spawn", "G-main-process", "context", "facts")

REQUIRED = {"id", "class", "title", "role", "keywords", "pattern", "weight",
            "examples", "counter_examples"}
OPTIONAL = {"subclass", "priority", "kinds", "since", "until", "source", "notes",
            "refines", "link", "linked_weight", "absorbs", "absorb_within",
            "requires", "excludes", "capture_after", "flags", "alone", "canonical", "variant_of", "lead", "once"}
ROLES = {"failure", "cause", "context", "fact"}
FACTS = {"pid", "pids", "worker_id", "signal", "errno", "exception", "message", "shm_size",
         "path", "num_workers", "prefetch_factor", "batch_size", "timeout", "job_id", "node",
         "exit_code", "rss_kb", "process", "rank", "strategy", "persistent_workers", "pin_memory",
         "start_method", "open_files", "batch_shape", "shm_use", "cpu_count", "pod",
         "collective_timeout_ms", "windows", "python", "start_method_call", "macos", "signalled_pid",
         "use_multiprocessing", "torch"}
CLASS_B_PREFIXES = ("oom", "getitem", "crash")
FIX_KEYS = {"key", "title", "why", "commands", "code", "rank", "when", "platform", "already"}
PLACEHOLDERS = {"pid", "pids", "worker_id", "num_workers", "prefetch_factor", "batch_size",
                "shm_size", "exception", "path", "job_id", "node", "shm_suggest", "shm_suggest_k8s",
                "shm_demand", "pod", "namespace", "fewer_workers"}
VERSION = _re.compile(r"^(\d+\.\d+(\.\d+)?)?$")
TIME_BUDGET_S = 0.2
ADVERSARIAL_BYTES = 1_000_000


def _load(name: str) -> list[dict]:
    with open(SIG_DIR / f"{name}.toml", "rb") as fh:
        data = tomllib.load(fh)
    assert set(data) <= {"signature"}, f"{name}.toml: unexpected top-level keys {set(data)}"
    entries = data.get("signature", [])
    for entry in entries:
        entry["_file"] = name
    return entries


ALL = [entry for name in SIGNATURE_FILES for entry in _load(name)]
IDS = [e.get("id", "?") for e in ALL]


def _compile(entry: dict) -> regex.Pattern:
    flags = regex.IGNORECASE if "i" in entry.get("flags", "") else 0
    return regex.compile(entry["pattern"], flags)


def _where(entry: dict) -> str:
    return f"{entry['_file']}.toml:{entry.get('id', '?')}"


def test_ids_unique_and_well_formed():
    seen = set()
    for entry in ALL:
        assert "id" in entry, f"{entry['_file']}.toml: an entry has no id"
        assert entry["id"] not in seen, f"duplicate id {_where(entry)}"
        seen.add(entry["id"])
        assert regex.fullmatch(rf"[{letter_range()}]\.[a-z0-9-]+\.[a-z0-9-]+|fact\.[a-z0-9-]+",
                               entry["id"]), f"bad id {_where(entry)}"


@pytest.mark.parametrize("entry", ALL, ids=IDS)
def test_keys_and_fields(entry):
    keys = set(entry) - {"_file"}
    assert REQUIRED <= keys, f"{_where(entry)}: missing {REQUIRED - keys}"
    assert keys <= REQUIRED | OPTIONAL, f"{_where(entry)}: unknown {keys - REQUIRED - OPTIONAL}"
    assert entry["role"] in ROLES, _where(entry)
    assert 0.0 <= entry["weight"] <= 1.0, _where(entry)
    assert entry["title"].strip(), _where(entry)
    assert entry["keywords"] and all(k.strip() for k in entry["keywords"]), _where(entry)
    for field in ("since", "until"):
        assert VERSION.match(entry.get(field, "")), f"{_where(entry)}: bad {field}"
    if entry["role"] == "fact":
        assert entry["class"] == "none", _where(entry)
    else:
        assert regex.fullmatch(r"[A-Z]", entry["class"]), _where(entry)
        sub = entry.get("subclass", "")
        assert regex.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", sub), f"{_where(entry)}: subclass"
        if entry["class"] == "B":
            assert sub.startswith(CLASS_B_PREFIXES), f"{_where(entry)}: class B subclass"
        assert entry["id"].startswith(f"{entry['class']}.{sub}."), f"{_where(entry)}: id prefix"
    if "refines" in entry:
        assert entry["role"] == "cause", _where(entry)
    if "link" in entry:
        assert "refines" in entry and entry["link"] in FACTS, _where(entry)
    assert len(entry["examples"]) >= 3, f"{_where(entry)}: needs 3+ examples"
    assert len(entry["counter_examples"]) >= 2, f"{_where(entry)}: needs 2+ counter-examples"


@pytest.mark.parametrize("entry", ALL, ids=IDS)
def test_pattern_examples_and_counter_examples(entry):
    pattern = _compile(entry)
    unknown = set(pattern.groupindex) - FACTS
    assert not unknown, f"{_where(entry)}: unknown named groups {unknown}"
    for example in entry["examples"]:
        assert "\n" not in example, f"{_where(entry)}: examples are single lines"
        assert pattern.search(example), f"{_where(entry)}: example does not match: {example!r}"
        assert any(k in example for k in entry["keywords"]), \
            f"{_where(entry)}: example has none of the keywords: {example!r}"
    for counter in entry["counter_examples"]:
        assert not pattern.search(counter), f"{_where(entry)}: counter-example matches: {counter!r}"


def test_failure_counter_examples_match_no_failure_of_same_class():
    """A near miss listed under a failure must not be the same diagnosis by another entry."""
    compiled = [(e, _compile(e)) for e in ALL if e["role"] == "failure"]
    for entry in ALL:
        if entry["role"] != "failure":
            continue
        for counter in entry["counter_examples"]:
            for other, pat in compiled:
                same = (other["class"], other.get("subclass")) == (entry["class"], entry.get("subclass"))
                if same and pat.search(counter):
                    pytest.fail(f"{_where(entry)}: counter-example {counter!r} "
                                f"is {entry['class']}.{entry.get('subclass')} per {_where(other)}")


BUILTIN_CONDITIONS = {"@progress", "@relevant", "@loader", "@loader-frame", "@loader-frame-below"}  # evaluated by dllogscan.correlate, not by another entry


def _resolve(ids: list[str]) -> list[str]:
    return [i for pat in ids for i in (IDS + sorted(BUILTIN_CONDITIONS)) if fnmatch.fnmatchcase(i, pat)]


@pytest.mark.parametrize("entry", ALL, ids=IDS)
def test_references_resolve(entry):
    for field in ("requires", "excludes"):
        for rule in entry.get(field, []):
            assert set(rule) <= {"ids", "within", "same"}, f"{_where(entry)}: {field} keys"
            for target in rule["ids"]:
                assert _resolve([target]), f"{_where(entry)}: {field} points nowhere: {target!r}"
            if "same" in rule:
                assert rule["same"] in FACTS, _where(entry)
    for cls in entry.get("absorbs", []):
        assert regex.fullmatch(r"[A-Z]", cls), _where(entry)


def test_distinct_keywords_stay_few():
    """Few keywords keep the prefilter fast: its literals (``scan/anchors.py``) fit two passes of
    the packed searcher (64 each); a third would cost one more pass over every byte."""
    from dllogscan.scan.anchors import PACKED_LIMIT, anchors

    distinct = {k for e in ALL for k in e["keywords"]}
    assert len(anchors(distinct)) <= 2 * PACKED_LIMIT, sorted(distinct)


def _fragments(entry: dict) -> list[str]:
    frags = list(entry["keywords"])
    for example in entry["examples"]:
        for k in entry["keywords"]:
            at = example.find(k)
            if at >= 0:
                tail = example[at:]
                frags.append(tail[: max(len(k) + 1, len(tail) * 2 // 3)])
                frags.append(tail[:-1])
    return frags


def _adversarial_line(entry: dict, seed: int) -> str:
    rng = random.Random(seed)
    frags = _fragments(entry)
    parts, size = [], 0
    while size < ADVERSARIAL_BYTES:
        frag = rng.choice(frags)
        sep = rng.choice(["", " ", "(", "<", ": ", "1", "a", "\t", "|"])
        parts.append(frag + sep)
        size += len(frag) + len(sep)
    return "".join(parts)


_BAD_BYTES = bytes([0xFF, 0xC3, 0xE2, 0x80, 0x41, 0x20, 0x28, 0x3C])
_NOISE = bytes(_BAD_BYTES[b % len(_BAD_BYTES)] for b in random.Random(7).randbytes(4096))
_LETTERS = "".join(random.Random(3).choices(string.ascii_letters + " ", k=ADVERSARIAL_BYTES))


def _invalid_utf8(entry: dict) -> str:
    """1 MB of invalid UTF-8 sprinkled with the entry's keywords, decoded as a scanner would."""
    rng = random.Random(7)
    keywords = [k.encode() for k in entry["keywords"]]
    chunks, size = [], 0
    while size < ADVERSARIAL_BYTES:
        at = rng.randrange(len(_NOISE) - 64)
        chunk = _NOISE[at:at + 64] + rng.choice(keywords)
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks).decode("utf-8", errors="replace")


def _time_search(pattern: regex.Pattern, text: str) -> float:
    start = time.perf_counter()
    pattern.search(text)
    pattern.findall(text[:200_000])
    return time.perf_counter() - start


@pytest.mark.parametrize("entry", ALL, ids=IDS)
def test_pattern_is_fast_on_hostile_input(entry):
    pattern = _compile(entry)
    for label, text in (("near-match", _adversarial_line(entry, 1)),
                        ("near-match-2", _adversarial_line(entry, 2)),
                        ("invalid-utf8", _invalid_utf8(entry)),
                        ("letters", _LETTERS)):
        elapsed = min(_time_search(pattern, text) for _ in range(2))
        assert elapsed < TIME_BUDGET_S, f"{_where(entry)}: {label} took {elapsed:.3f}s"


# ---- fixes.toml -------------------------------------------------------------------------

with open(SIG_DIR / "fixes.toml", "rb") as _fh:
    _FIX_DATA = tomllib.load(_fh)
FIXES = _FIX_DATA.get("fix", [])


def test_fixes_well_formed():
    assert set(_FIX_DATA) <= {"fix"}
    seen = set()
    for fix in FIXES:
        keys = set(fix)
        assert {"key", "title", "why", "commands", "rank"} <= keys, fix.get("title")
        assert keys <= FIX_KEYS, f"{fix['title']}: unknown {keys - FIX_KEYS}"
        assert regex.fullmatch(r"[A-Z](\.[a-z0-9]+(-[a-z0-9]+)*)?", fix["key"]), fix["key"]
        assert fix.get("when") is None or fix["when"] in SITUATIONS, fix["title"]
        place = (fix["key"], fix.get("when"), fix["rank"])
        assert place not in seen, f"duplicate rank {place}"
        seen.add(place)
        assert fix["commands"] or fix.get("code"), fix["title"]
        texts = list(fix["commands"]) + [fix.get("code", ""), fix["title"]]
        for text in texts:
            # every brace must belong to a known placeholder ({name} or {name|default})
            for name in regex.findall(r"\{([^{}]*)\}", text):
                assert name.split("|")[0] in PLACEHOLDERS, f"{fix['title']}: unknown placeholder {{{name}}}"
            bare = regex.sub(r"\{[a-z0-9_]+(\|[^{}|]+)?\}", "", text)
            assert "{" not in bare and "}" not in bare, f"{fix['title']}: stray brace"


def test_every_class_and_subclass_has_two_fixes():
    counts: dict[str, int] = {}
    for fix in FIXES:
        counts[fix["key"]] = counts.get(fix["key"], 0) + 1
    needed = {"A", "B", "C", "D", "E", "B.oom-suspected"}
    for entry in ALL:
        if entry["role"] != "fact":
            needed.add(entry["class"])
            needed.add(f"{entry['class']}.{entry['subclass']}")
    missing = {k: counts.get(k, 0) for k in needed if counts.get(k, 0) < 2}
    assert not missing, f"keys with fewer than 2 fixes: {missing}"


def _condition_ids(entry, name):
    return {i for cond in entry.get(name, ()) for i in cond["ids"]}


def test_examples_are_not_claimed_by_another_class():
    """No other class's failure or cause entry may match an entry's own example (no stealing),
    unless the two are told apart by their conditions: one requires a hit the other excludes (the
    fetch frame is B with workers named in the text, G without)."""
    compiled = [(e, _compile(e)) for e in ALL if e["role"] in ("failure", "cause")]
    for entry in ALL:
        if entry["role"] == "fact":
            continue
        for example in entry["examples"]:
            for other, pat in compiled:
                apart = (_condition_ids(entry, "requires") & _condition_ids(other, "excludes")
                         or _condition_ids(other, "requires") & _condition_ids(entry, "excludes"))
                if other["class"] != entry["class"] and not apart and pat.search(example) \
                        and any(k in example for k in other["keywords"]):
                    pytest.fail(f"{_where(entry)}: example {example!r} also matches {_where(other)}")


VARIANTS = [e for e in ALL if "variant_of" in e]


def test_a_variant_only_adds_a_condition_to_its_base():
    """A ``variant_of`` entry is its base's text under a condition of its own: the base's pattern
    matches each of its examples, it has a condition the base lacks, and the text classifier
    learns none of its examples (they are the base's, taught there)."""
    from dllogscan.evaluation.train import signature_examples

    assert VARIANTS, "no variant entry: drop this test with the field"
    taught = {text for text, _, _ in signature_examples()}
    by_id = {e["id"]: e for e in ALL}
    for entry in VARIANTS:
        base = by_id[entry["variant_of"]]
        assert base["class"] == entry["class"] and base.get("subclass") == entry.get("subclass"), _where(entry)
        assert entry.get("requires") and entry.get("requires") != base.get("requires"), _where(entry)
        pattern = regex.compile(base["pattern"], regex.I if "i" in base.get("flags", "") else 0)
        for example in entry["examples"]:
            assert pattern.search(example), f"{_where(entry)}: {example!r} is not {base['id']}'s text"
        only_here = set(entry["examples"]) - set(base["examples"])
        assert not only_here & taught, f"{_where(entry)}: taught to the classifier"
