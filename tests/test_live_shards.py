"""Counting and fingerprinting what a rung's loader yields (in-process: no DataLoader run)."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch.utils.data import default_collate  # noqa: E402

from dllogscan.live.child import batch_size_reader  # noqa: E402
from dllogscan.live.shards import (  # noqa: E402
    SAMPLED, Yielded, fingerprint, more_than_the_stream, repeated_batches, samples_in, unsharded)


@pytest.mark.parametrize("sample", [
    torch.zeros(4), 7, 2.5, "text", (torch.zeros(2), 1, "a"), {"x": torch.zeros(2), "y": 0},
    ["tok", "ens"], [torch.zeros(1), torch.ones(1)],
])
def test_the_default_collates_batch_size_is_read_whatever_the_sample(sample):
    assert samples_in(default_collate([sample] * 3)) == 3


def test_a_batch_size_is_not_guessed_where_it_cannot_be_read():
    assert samples_in(torch.tensor(1.0)) is None and samples_in([]) is None and samples_in(object()) is None
    assert batch_size_reader(True, lambda b: b)(torch.zeros(5, 3)) is None  # a collate_fn of the user's
    assert batch_size_reader(False, None)(torch.zeros(5, 3)) == 1  # batch_size=None: one sample a batch


def test_equal_batches_share_a_fingerprint_and_different_ones_do_not():
    a = default_collate([(torch.arange(6.0), 1, "x")] * 2)
    same = default_collate([(torch.arange(6.0), 1, "x")] * 2)
    assert fingerprint(a) == fingerprint(same) and len(fingerprint(a)) == 16
    assert fingerprint(a) != fingerprint(default_collate([(torch.arange(6.0), 2, "x")] * 2))
    assert fingerprint(torch.zeros(2, 3)) != fingerprint(torch.zeros(3, 2))  # same bytes, other shape
    assert fingerprint(torch.zeros(4, dtype=torch.bfloat16)) != fingerprint(torch.zeros(4, dtype=torch.float16))


def test_a_fingerprint_reads_a_sample_of_a_large_array():
    import numpy as np

    big = torch.zeros(64, 3, 128, 128)
    other = big.clone()
    other.view(-1)[0] = 1  # the first element is always read
    assert fingerprint(big) != fingerprint(other)
    assert fingerprint(np.zeros((8, 8))) == fingerprint(np.zeros((8, 8))) != fingerprint(np.ones((8, 8)))
    assert fingerprint(big.permute(1, 0, 2, 3)) is not None  # not contiguous
    assert SAMPLED <= 4096


def test_what_it_cannot_read_has_no_fingerprint():
    import numpy as np

    assert fingerprint([object()]) is None
    assert fingerprint(np.array([object()], dtype=object)) is None


def test_counts_stop_counting_samples_once_one_batch_is_unknown():
    y = Yielded(iterable=True)
    y.add(torch.zeros(2), 2)
    y.add(torch.zeros(2), None)
    y.add(torch.zeros(2), 2)
    assert (y.batches, y.samples) == (3, None)
    assert Yielded.from_dict(y.to_dict()) == y and Yielded.from_dict(None) is None


def counts(batches: int, samples: int | None, exhausted: bool = True, prints: str = "") -> Yielded:
    return Yielded(iterable=True, batches=batches, samples=samples, exhausted=exhausted,
                   fingerprints=list(prints) or [f"{i:x}" for i in range(min(batches, 64))])


@pytest.mark.parametrize("whole, got, workers, times", [
    (counts(150, 300), counts(300, 600), 2, 2.0),  # each worker yields the whole stream
    (counts(150, 300), counts(600, 1200), 4, 4.0),
    (counts(151, 301), counts(151, 301), 2, None),  # split: the same samples
    (counts(150, 300), counts(150, 301), 2, None),  # a random filter keeps a few more in the workers
    # batches only (a collate_fn of the user's): each worker's last batch may be short
    (counts(2, None), counts(3, None), 2, None),  # 4 items, batch 2, split 3 + 1: 2 + 1 batches
    (counts(2, None), counts(4, None), 2, 2.0),
    (counts(1, None), counts(2, None), 2, None),  # one batch: split or not, two workers give two
    (counts(8, 16, exhausted=False), counts(8, 16, exhausted=False), 2, None),  # both cut at the cap
    (counts(5, 10), counts(8, 16, exhausted=False), 2, 1.6),  # cut, yet already more than the stream
    (counts(5, 10), counts(8, 12, exhausted=False), 4, None),  # cut below half way to 4 times
])
def test_more_than_the_stream_only_where_no_split_could_give_it(whole, got, workers, times):
    assert more_than_the_stream(whole, got, workers) == times


@pytest.mark.parametrize("reference, got, found", [
    ("abcdefgh", "aabbccdd", (4, 2)),  # two workers, the same stream
    ("abcdefgh", "aaaabbbb", (6, 4)),
    ("abcdefgh", "aebfcgdh", (0, 1)),  # split in halves: the first worker's first batch is the stream's
    ("abcdefgh", "ijklmnop", (0, 0)),  # split every other item: no batch of the stream's
    ("aabbccdd", "aabbccdd", (0, 0)),  # the data repeats itself: no sign of the workers
])
def test_repeated_batches_are_those_of_the_stream_arriving_again(reference, got, found):
    assert repeated_batches(list(reference), list(got)) == found


def test_no_fingerprint_is_no_repeat():
    assert repeated_batches([None, None], [None, None]) == (0, 0)
    assert repeated_batches([None, "b"], ["b", "b"]) == (1, 0)


def rung(workers: int, yielded: Yielded | None, result: str = "pass"):
    from dllogscan.live.repro import Rung

    return Rung(workers=workers, result=result, yielded=yielded)


def test_no_warning_without_a_single_process_rung_to_compare_with_or_a_passed_worker_rung():
    doubled = counts(300, 600)
    assert unsharded([rung(2, doubled), rung(4, counts(600, 1200))]) is None
    assert unsharded([rung(0, counts(150, 300)), rung(2, doubled, "fail")]) is None
    assert unsharded([rung(0, None, "fail"), rung(1, counts(150, 300)), rung(2, doubled)]) is not None
    mapped = Yielded(iterable=False, batches=150, samples=300, exhausted=True, fingerprints=["a"] * 64)
    assert unsharded([rung(0, mapped), rung(2, mapped)]) is None


def test_a_users_collate_fn_is_told_in_batches():
    warning = unsharded([rung(0, counts(150, None)), rung(2, counts(300, None))])
    assert warning["evidence"][0] == "num_workers=0: 150 batches, the whole stream"
    assert warning["evidence"][1].startswith("num_workers=2: 300 batches, 2.0 times num_workers=0's")


def test_beyond_the_fingerprinted_batches_it_says_how_many_it_compared():
    endless = Yielded(iterable=True, batches=200, samples=400, fingerprints=[f"{i // 2:x}" for i in range(64)])
    warning = unsharded([rung(0, counts(200, 400, exhausted=False)), rung(2, endless)])
    assert warning["evidence"] == [
        "num_workers=0: cut at --batches 200 (400 samples), the first 64 different",
        "num_workers=2: cut at --batches 200 (400 samples); 32 of its first 64 batches repeat earlier ones "
        "(num_workers=0's first batch arrived 2 times)"]
    assert warning["rungs"] == [{"workers": 2, "times": None, "repeated_batches": 32, "first_batch_arrivals": 2}]
