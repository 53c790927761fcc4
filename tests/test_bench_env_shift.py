"""``bench/env_shift.py``: the blocks it appends are real collect_env output, a thread never gets
one from its own repository, and the thread's text stays byte for byte above the block."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import env_shift  # noqa: E402

from dllogscan.evaluation.corpus import load_items  # noqa: E402

THREADS = load_items(parts=("threads",))


def test_the_blocks_are_collect_env_output_from_more_than_one_source():
    blocks = env_shift.corpus_blocks(THREADS) + env_shift.shipped_blocks()
    assert len(blocks) >= 10 and len({s for s, _ in blocks}) >= 3
    assert all(len(b.splitlines()) >= env_shift.MIN_LINES for _, b in blocks)
    assert all(b.lstrip().startswith(("Collecting environment information", "PyTorch version: ")) for _, b in blocks)
    [(_, mine)] = env_shift.shipped_blocks()
    assert "Versions of relevant libraries:" in mine and "Is CUDA available:" in mine


def test_a_thread_gets_a_block_of_another_repository_below_its_own_text(tmp_path):
    blocks = env_shift.corpus_blocks(THREADS) + env_shift.shipped_blocks()
    pytorch = next(i for i in THREADS if i.scenario == "pytorch/pytorch" and not i.ambiguous)
    other = env_shift.with_block(pytorch, blocks, tmp_path)
    text, original = other.path.read_text(encoding="utf-8"), pytorch.path.read_text(encoding="utf-8")
    assert other.path.parent == tmp_path and other.path.name == pytorch.path.name and other.label == pytorch.label
    assert text.startswith(original.rstrip("\n")) and f"\n\n{env_shift.HEADING}\n\n```\n" in text
    appended = text[len(original.rstrip("\n")):]
    own = [b for s, b in blocks if s == "pytorch/pytorch"]
    assert own and not any(b.strip() in appended for b in own)


def test_a_thread_filed_through_a_template_keeps_its_title_first_and_its_body_whole(tmp_path):
    blocks = env_shift.corpus_blocks(THREADS) + env_shift.shipped_blocks()
    templates = env_shift.shipped_templates()
    assert len(templates) == 5 and all("{body}" in t and "{versions}" in t for t in templates)
    item = next(i for i in THREADS if i.label == "E" and not i.ambiguous)
    title, _, body = item.path.read_text(encoding="utf-8").strip("\n").partition("\n")
    filed = env_shift.in_template(item, blocks, templates, tmp_path).path.read_text(encoding="utf-8")
    assert filed.startswith(title + "\n\n") and body.strip("\n") in filed
    assert "{body}" not in filed and "{versions}" not in filed and "```\n" in filed
