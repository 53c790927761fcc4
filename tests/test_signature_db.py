"""Every shipped signature's examples and counter-examples, through the real scanner.

Each example must yield its own signature when scanned alone with that one entry and when
scanned with the whole database (no other entry may hide it); each counter-example must not.
Each pattern must stay fast on hostile input.
"""
from __future__ import annotations

import io
import time

import pytest

from dllogscan.scan.scanner import Scanner
from dllogscan.signatures.database import Database
from dllogscan.signatures.loader import load_database

DB = load_database()
FULL = Scanner(DB, engine="python")
SIGS = DB.signatures
EXAMPLES = [(s.id, i, ex) for s in SIGS for i, ex in enumerate(s.examples)]
COUNTERS = [(s.id, i, ex) for s in SIGS for i, ex in enumerate(s.counter_examples)]
PADDING = "Epoch 2:  41%|####1     | 410/1000 [01:02<01:30, 6.5it/s, loss=0.231]\n" * 5


def hits_for(scanner: Scanner, text: str) -> set[tuple[str, int]]:
    out = scanner.scan(io.BytesIO((PADDING + text + "\n" + PADDING).encode()))
    return {(h.signature, h.line) for h in out.hits}


def test_database_is_not_empty_and_covers_every_class():
    assert {s.cls for s in SIGS if s.role == "failure"} >= {"A", "B", "C", "D", "E"}


@pytest.mark.parametrize("sig_id, n, example", EXAMPLES, ids=[f"{s}#{i}" for s, i, _ in EXAMPLES])
def test_example_matches_alone_and_with_the_whole_database(sig_id, n, example):
    sig = DB.by_id[sig_id]
    alone = Scanner(Database([sig], []), engine="python")
    assert any(s == sig_id for s, _ in hits_for(alone, example)), f"{sig_id} misses its example alone"
    assert any(s == sig_id for s, _ in hits_for(FULL, example)), f"{sig_id} misses its example in the full database"


@pytest.mark.parametrize("sig_id, n, counter", COUNTERS, ids=[f"{s}#{i}" for s, i, _ in COUNTERS])
def test_counter_example_does_not_match(sig_id, n, counter):
    assert not any(s == sig_id for s, _ in hits_for(FULL, counter))


def test_every_class_and_subclass_has_fixes():
    for sig in SIGS:
        if sig.role in ("failure", "cause") and sig.cls in "ABCDE":
            assert len(DB.fixes_for(sig.cls, sig.subclass)) >= 2, f"{sig.id}: fewer than 2 fixes"


@pytest.mark.parametrize("sig_id", [s.id for s in SIGS])
def test_pattern_is_fast_on_hostile_input(sig_id):
    sig = DB.by_id[sig_id]
    fragments = "".join(k[: max(1, len(k) - 1)] + " " for k in sig.keywords) + "(pid 1, 2, 3 "
    hostile = [
        (fragments * (1_000_000 // len(fragments) + 1))[:1_000_000],
        "a" * 1_000_000,
        ("9" * 50 + " ") * 20000,
        bytes(range(128, 256)).decode("utf-8", errors="replace") * 4000,
    ]
    for text in hostile:
        t0 = time.perf_counter()
        sig.compiled.search(text)
        assert time.perf_counter() - t0 < 0.5, f"{sig_id} is slow on hostile input"
