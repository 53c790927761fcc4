"""Counting and fingerprinting what a rung's loader yields (in-process: no DataLoader run)."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch.utils.data import default_collate  # noqa: E402

from dllogscan.live.child import batch_size_reader  # noqa: E402
from dllogscan.live.shards import SAMPLED, Yielded, fingerprint, samples_in  # noqa: E402


@pytest.mark.parametrize("sample", [
    torch.zeros(4), 7, 2.5, "text", (torch.zeros(2), 1, "a"), {"x": torch.zeros(2), "y": 0},
    ["tok", "ens"], [torch.zeros(1), torch.ones(1)],
])
def test_the_default_collates_batch_size_is_read_whatever_the_sample(sample):
    assert samples_in(default_collate([sample] * 3)) == 3


def test_a_batch_size_is_not_guessed_where_it_cannot_be_read():
    assert samples_in(torch.tensor(1.0)) is None and samples_in([]) is None and samples_in(object()) is None
    assert batch_size_reader(2, lambda b: b)(torch.zeros(5, 3)) is None  # a collate_fn of the user's
    assert batch_size_reader(None, None)(torch.zeros(5, 3)) == 1  # batch_size=None: one sample a batch


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
