"""The planned pure-Python prefilter reports exactly what one ``find`` loop per anchor reports,
whatever plan the data's byte frequencies lead to (rare bytes, shared substrings, re-plans)."""
from __future__ import annotations

import random

import pytest

from dllogscan.pipeline import runner as pipeline
from dllogscan.scan import prefilter, probe


@pytest.fixture(scope="module")
def keywords():
    return pipeline.get_scanner(engine="python").db.keywords


def _data(rng: random.Random, keywords: list[str], alphabet: bytes) -> bytes:
    parts = []
    for _ in range(rng.randint(20, 300)):
        parts.append(bytes(rng.choice(alphabet) for _ in range(rng.choice((0, 3, 40, 400)))))
        if rng.random() < 0.4:
            parts.append(rng.choice(keywords).encode())
    return b"".join(parts)


@pytest.mark.parametrize("seed", range(16))
def test_probe_positions_equal_one_find_per_anchor(keywords, monkeypatch, seed):
    rng = random.Random(seed)
    monkeypatch.setattr(probe, "SAMPLE", rng.choice((16, 256, 4096)))
    monkeypatch.setattr(probe, "REPLAN_EVERY", rng.choice((100, 1 << 20)))
    # skewed alphabets make different bytes rare, so the plans differ from seed to seed
    alphabet = bytes(rng.sample(range(32, 127), rng.randint(3, 60))) + b"\n\r"
    data = _data(rng, keywords, alphabet)
    fast, ref = probe.ProbePrefilter(keywords), prefilter.FindPrefilter(keywords)
    step = rng.choice((50, 333, 5000, len(data) + 1))
    for start in range(0, len(data), step):
        end = min(len(data), start + step)
        assert fast.positions(data, start, end) == ref.positions(data, start, end), (seed, start)


def test_plan_covers_every_anchor_once(keywords):
    anchors = prefilter.anchors(keywords)
    sample = b"0123456789 |loss 2.31 lr 3e-4 step 17 [rank3]: \r" * 50
    probes = probe.plan(anchors, probe.shared_substrings(anchors), sample)
    covered = [a for _, group in probes for a, _ in group]
    assert sorted(covered) == sorted(anchors)
    for needle, group in probes:
        assert all(anchor[off: off + len(needle)] == needle for anchor, off in group)
    # a rare byte is shared: fewer passes than anchors
    assert len(probes) < len(anchors)


def test_shared_substrings_are_common_to_two_anchors():
    subs = probe.shared_substrings([b"num_workers", b"persistent_workers", b"shm"])
    assert b"_workers" in subs and all(sum(s in a for a in (b"num_workers", b"persistent_workers")) == 2
                                        for s in subs)
