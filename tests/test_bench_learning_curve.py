"""``bench/learning_curve.py``'s training subsets: a share keeps whole repositories (no repository
split across the kept and the dropped side), a smaller share is a subset of a larger one, the
written corpus is never dropped, and the full share keeps everything."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import learning_curve  # noqa: E402

from dllogscan.evaluation.corpus import load_items  # noqa: E402

SHARES = (0.2, 0.4, 0.6, 0.8, 1.0)


def test_shares_keep_whole_repositories_and_nest():
    items = load_items()
    threads = [i for i in items if i.kind == "thread"]
    kept = {s: {str(i.path) for i in items if learning_curve.kept(i, s)} for s in SHARES}
    for small, large in zip(SHARES, SHARES[1:]):
        assert kept[small] <= kept[large]
        assert len(kept[small]) < len(kept[large])
    assert kept[1.0] == {str(i.path) for i in items}
    for share in SHARES:
        by_group: dict[str, set[bool]] = {}
        for item in threads:
            by_group.setdefault(item.group, set()).add(str(item.path) in kept[share])
        assert all(len(v) == 1 for v in by_group.values())
    written = [i for i in items if i.kind != "thread"]
    assert written and all(learning_curve.kept(i, 0.2) for i in written)
    share_of_threads = sum(learning_curve.kept(i, 0.4) for i in threads) / len(threads)
    assert 0.25 < share_of_threads < 0.55  # a hash of the name: about the share asked for
