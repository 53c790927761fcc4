"""``bench/style_shift/``: each rewrite belongs to a scored thread of the corpus, keeps that thread's
code blocks byte for byte and none of our narration; the bench's table counts what it is given."""
from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import style_shift  # noqa: E402

from dllogscan.evaluation.corpus import load_items  # noqa: E402
from dllogscan.evaluation.evaluate import Scores  # noqa: E402

REWRITES = sorted(p for p in style_shift.REWRITES.glob("*.md") if p.name != "README.md")
THREADS = {i.path.stem: i for i in load_items(parts=("threads",))}
NARRATION = re.compile(r"\b(?:the reporter|a commenter|the maintainer|a user asks)\b", re.I)


def test_every_rewrite_pairs_with_a_scored_thread():
    assert len(REWRITES) == 1031
    stems = [p.stem for p in REWRITES]
    assert all(s in THREADS and not THREADS[s].ambiguous for s in stems)
    assert all(style_shift.rewrite_of(THREADS[s]) == p for s, p in zip(stems, REWRITES))
    counts = Counter(THREADS[s].label for s in stems)
    # the first draw (15 A, 40 B, 20 C, 25 D, 50 E, 50 none) and the second (every other scored C, D
    # and E thread, 300 more look-alikes): bench/style_shift/README.md; relabelled later by written
    # rules: 10 look-alikes (other-framework-loader 3 E, 1 B; slow-start 6 E), 2 E (same-problem)
    assert counts == {"A": 15, "B": 41, "C": 105, "D": 133, "E": 395, "none": 342}


@pytest.mark.parametrize("rewrite", REWRITES, ids=lambda p: p.stem)
def test_rewrite_keeps_output_verbatim_and_drops_narration(rewrite: Path):
    original = THREADS[rewrite.stem].path.read_text(encoding="utf-8")
    text = rewrite.read_text(encoding="utf-8")
    assert style_shift.code_blocks(text) == style_shift.code_blocks(original)
    prose = style_shift.FENCE.sub("", text)
    assert not NARRATION.search(prose)
    assert 0.5 < len(text) / len(original) < 2


def test_a_thread_without_rewrite_is_not_paired():
    unpaired = next(i for s, i in THREADS.items() if not (style_shift.REWRITES / f"{s}.md").exists())
    assert style_shift.rewrite_of(unpaired) is None


def test_table_rows_per_system_and_version():
    written, rewritten = Scores(), Scores()
    for truth, a, b in (("E", "E", "none"), ("none", "none", "none"), ("B", "B", "B")):
        written.add(truth, a, "x", None)
        rewritten.add(truth, b, "x", None)
    lines = style_shift.table({"combined": {"written": written, "rewritten": rewritten}})
    assert len(lines) == 4
    assert "| combined | written | 3 |" in lines[2] and "0.0% (0/1)" in lines[2]
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines]
    e_col = cells[0].index("E recall")
    assert cells[2][e_col] == "1.00" and cells[3][e_col] == "0.00"
