"""Label audit of corpus/threads/: pairs of threads that look like one failure but carry two classes.

    python3 corpus/threads/audit.py          # pairs not reviewed yet, and stale reviews (exit 1 if any)
    python3 corpus/threads/audit.py --all    # every flagged pair, with its review

Two checks flag a pair of scored threads (neither `ambiguous`) whose labels differ:
- ``cites``: one thread's text or ``why`` names the other: its URL, ``owner/repo#N``, or a bare
  ``#N`` in a thread of the same repository (GitHub issues and pull requests share the numbers);
- ``similar``: the two texts' TF-IDF cosine similarity (word uni- and bigrams) is at least
  ``SIMILAR``: the same traceback or template pasted twice.
Either may be two failures that share words (the excessive-worker warning beside a real stall), or
one failure labelled twice: the same-problem rule (README.md, "rules") was found so. Every flagged
pair needs a review in ``audited.toml`` (its two thread ids: the stem without the label, in
either order; the check; ``finding``: why the classes differ, or the rule that made them agree),
as a secrets scanner's baseline records each finding a person has looked at. A review whose pair
is no longer flagged (relabelled to agree, or a text changed) is stale and listed, so the file
does not rot. ``tests/test_threads_corpus.py`` runs the audit: a new batch that brings a
contradiction fails until someone has read both threads.
"""
from __future__ import annotations

import json
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
AUDITED = HERE / "audited.toml"
#: the similarity at which two texts count as one paste: on the corpus of session 38, 0.6 flags
#: 26 pairs of different labels (and about 170 of the same); 0.5 would flag about 90, mostly
#: shared boilerplate (the excessive-worker warning, the worker-death template)
SIMILAR = 0.6
#: a review of a `similar` pair stays current down to SIMILAR - this (another scikit-learn's float
#: arithmetic must not turn a pair at 0.60 into a stale review)
STALE_MARGIN = 0.05
LABEL_PREFIX = re.compile(r"^(?:[a-e]|none)-")
GITHUB = re.compile(r"github\.com/([\w.-]+)/([\w.-]+)/(?:issues|pull|discussions)/(\d+)", re.IGNORECASE)
SHORT = re.compile(r"(?<![\w/])([\w.-]+)/([\w.-]+)#(\d+)\b")
BARE = re.compile(r"(?<![\w/#&])#(\d+)\b")


@dataclass(frozen=True)
class Thread:
    """One scored thread: its id (the stem without the label), label, source, text and ``why``."""

    id: str
    stem: str
    label: str
    url: str
    text: str
    why: str


@dataclass(frozen=True)
class Flag:
    """A pair of threads with different labels, and the check that flagged it."""

    a: str
    b: str
    check: str
    detail: str
    score: float = 1.0


def thread_id(stem: str) -> str:
    """The stem without its label prefix: stable when a thread is relabelled."""
    return LABEL_PREFIX.sub("", stem, count=1)


def load(folder: Path = HERE) -> list[Thread]:
    """Every scored thread (not ambiguous) of the folder."""
    out = []
    for meta_path in sorted(folder.glob("*.meta.json")):
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if meta.get("ambiguous"):
            continue
        stem = meta_path.name[: -len(".meta.json")]
        text = (folder / f"{stem}.md").read_text(encoding="utf-8")
        out.append(Thread(thread_id(stem), stem, meta["label"], meta["source_url"], text, meta.get("why", "")))
    return out


def _repo_number(url: str) -> tuple[str, str] | None:
    m = GITHUB.search(url)
    return (f"{m[1]}/{m[2]}".lower(), m[3]) if m else None


def cited(threads: list[Thread]) -> list[Flag]:
    """Pairs of different label where one thread names the other."""
    by_key = {}
    for t in threads:
        key = _repo_number(t.url)
        if key:
            by_key[key] = t
    flags = {}
    for t in threads:
        own = _repo_number(t.url)
        said = t.text + "\n" + t.why
        refs = {(f"{m[1]}/{m[2]}".lower(), m[3]) for m in GITHUB.finditer(said)}
        refs |= {(f"{m[1]}/{m[2]}".lower(), m[3]) for m in SHORT.finditer(said)}
        if own:
            refs |= {(own[0], m[1]) for m in BARE.finditer(said)}
        for ref in refs:
            other = by_key.get(ref)
            if other and other.id != t.id and other.label != t.label:
                pair = tuple(sorted((t.id, other.id)))
                flags[pair] = Flag(*pair, "cites", f"{t.stem} names {ref[0]}#{ref[1]} ({other.stem})")
    return list(flags.values())


def similar(threads: list[Thread], at_least: float = SIMILAR) -> list[Flag]:
    """Pairs of different label whose texts (not their ``why``) are near copies."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    if len(threads) < 2:
        return []
    # words in a third of the corpus or more (and words met once) say nothing of a copy; a folder too
    # small for document frequencies keeps every word
    big = len(threads) >= 50
    vectors = TfidfVectorizer(sublinear_tf=True, min_df=2 if big else 1, max_df=0.3 if big else 1.0,
                              ngram_range=(1, 2)).fit_transform([t.text for t in threads])
    sims = (vectors @ vectors.T).tocoo()
    flags = []
    for i, j, s in zip(sims.row, sims.col, sims.data):
        if i < j and s >= at_least and threads[i].label != threads[j].label:
            a, b = sorted((threads[i], threads[j]), key=lambda t: t.id)
            flags.append(Flag(a.id, b.id, "similar", f"cosine {s:.2f}: {a.stem} / {b.stem}", float(s)))
    return flags


def reviews(path: Path = AUDITED) -> dict[tuple[str, str, str], str]:
    """The recorded reviews: (id, id, check) -> finding."""
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = {}
    for row in data.get("review", []):
        a, b = sorted((row["a"], row["b"]))
        out[(a, b, row["check"])] = row["finding"]
    return out


def audit(folder: Path = HERE, audited: Path = AUDITED) -> tuple[list[Flag], list[Flag], list[tuple[str, str, str]]]:
    """(all flags, flags with no review, reviews whose pair is no longer flagged)."""
    threads = load(folder)
    cites = cited(threads)
    near = similar(threads, SIMILAR - STALE_MARGIN)
    flags = cites + [f for f in near if f.score >= SIMILAR]
    done = reviews(audited)
    keys = {(f.a, f.b, f.check) for f in cites + near}
    return flags, [f for f in flags if (f.a, f.b, f.check) not in done], sorted(k for k in done if k not in keys)


def main(argv: list[str]) -> int:
    try:
        flags, open_, stale = audit()
    except ImportError as e:  # scikit-learn: run it in the project's environment
        print(f"Error: {e}; run it with the project installed (pip install -e .)", file=sys.stderr)
        return 2
    done = reviews()
    shown = flags if "--all" in argv else open_
    for f in sorted(shown, key=lambda f: (f.check, f.a, f.b)):
        finding = done.get((f.a, f.b, f.check))
        print(f"{f.check}: {f.detail}" + (f"\n    reviewed: {finding}" if finding else "\n    not reviewed"))
    for a, b, check in stale:
        print(f"stale review ({check}): {a} / {b} is no longer flagged; remove it from {AUDITED.name}")
    print(f"{len(flags)} flagged pair(s), {len(open_)} not reviewed, {len(stale)} stale review(s)", file=sys.stderr)
    return 1 if open_ or stale else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
