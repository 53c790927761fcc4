"""Environment reports (dllogscan/data/environment.toml): the text classifier and the prose rules
read a report without its collect_env block; error lines and prose beside a block stay."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from dllogscan import api
from dllogscan.classify.digest import digest_lines
from dllogscan.core.errors import SignatureError
from dllogscan.normalize import environment
from dllogscan.pipeline import runner as pipeline

ROOT = Path(__file__).resolve().parent.parent
#: real collect_env output (this project's own machine, bench/env_shift/) and blocks quoted in
#: corpus/threads: torch's collect_env of 2020 and of 2024, MMDetection's, detectron2's,
#: transformers-cli env
CORPUS_BLOCKS = {
    "c-pytorch-pytorch-41465.md": "PyTorch version: 1.5.1",
    "e-pytorch-pytorch-129224.md": "PyTorch version: ",
    "none-open-mmlab-mmdetection-8319.md": "sys.platform: linux",
    "b-facebookresearch-mask2former-128.md": "sys.platform            linux",
    "b-huggingface-transformers-15340.md": "- `transformers` version: 4.15.0",
}


def _numbered(text: str) -> list[tuple[int, str]]:
    return [(n, line) for n, line in enumerate(text.split("\n"), 1) if line.strip()]


def _block(name: str, start: str) -> str:
    lines = (ROOT / "corpus" / "threads" / name).read_text(encoding="utf-8").split("\n")
    first = next(i for i, line in enumerate(lines) if line.startswith(start))
    end = next(i for i in range(first, len(lines)) if lines[i].startswith("```"))
    return "\n".join(lines[first:end])


def _blocks() -> list[str]:
    shipped = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "bench" / "env_shift").glob("*.txt"))]
    return shipped + [_block(name, start) for name, start in CORPUS_BLOCKS.items()]


@pytest.mark.parametrize("block", _blocks(), ids=["this-machine", *CORPUS_BLOCKS])
def test_a_whole_block_goes_and_the_report_around_it_stays(block):
    report = ("The loader hangs at epoch 3 with num_workers=8.\n\n### Versions\n\n```\n" + block.strip()
              + "\n```\nRuntimeError: DataLoader worker (pid 77) is killed by signal: Killed.\n")
    lines = _numbered(report)
    kept = [t for n, t in lines if n not in environment.environment_lines(lines)]
    assert kept == ["The loader hangs at epoch 3 with num_workers=8.",
                    "RuntimeError: DataLoader worker (pid 77) is killed by signal: Killed."]


def test_an_error_or_a_symptom_next_to_a_block_is_never_taken_with_it():
    lines = _numbered("PyTorch version: 2.1.0\nIs debug build: False\nCUDA used to build PyTorch: 12.1\n"
                      "ERROR: Unexpected bus error encountered in worker.\n- the workers freeze after epoch 2\n"
                      "num_workers: 8\nGPU 0: NVIDIA A100")
    assert environment.environment_lines(lines) == {1, 2, 3}


def test_fewer_than_three_report_fields_or_a_config_dump_are_not_a_report():
    assert not environment.environment_lines(_numbered("Python version: 3.10\nPyTorch version: 2.1\nlr: 0.1"))
    assert not environment.environment_lines(_numbered("batch_size: 32\nlr: 0.1\nepochs: 90\ndevice: cuda\n"
                                                       "torch 2.1.0\nnumpy 1.26.4"))


def test_a_blank_line_ends_a_block_unless_a_report_field_follows():
    lines = _numbered("PyTorch version: 2.1\nOS: Ubuntu 22.04\nPython version: 3.10\n\nIs CUDA available: True\n"
                      "\nmodel: resnet50\nThe job stops here.")
    assert environment.environment_lines(lines) == {1, 2, 3, 5}


def test_the_classifier_and_prose_rules_read_a_report_without_its_block(tmp_path):
    block = _blocks()[0]
    path = tmp_path / "report.md"
    path.write_text("Training stops at epoch 2 with num_workers=4, no error.\n\n```\n" + block + "\n```\n",
                    encoding="utf-8")
    out, _ = pipeline.scan_source(api.as_source(path, None, None), pipeline.get_scanner())
    assert [t for _, t in digest_lines(out)] == ["Training stops at epoch 2 with num_workers=4, no error."]


def test_the_verdict_does_not_move_when_a_block_is_appended():
    """What bench/env_shift.py measures on corpus/threads, on two short reports: a hang told in
    prose, and a look-alike that names CUDA and workers with nothing wrong."""
    block = _blocks()[0]
    for text in ("With num_workers=8 my DataLoader hangs forever at the start of epoch 2; no error, "
                 "GPU utilization 0%. With num_workers=0 it runs.",
                 "How do I choose num_workers for my DataLoader? Training on 4 GPUs runs fine."):
        versioned = text + "\n\n### Versions\n\n```\n" + block + "\n```\n"
        got = [[(d.cls, round(d.confidence, 6)) for d in api.scan_text(t).diagnoses] for t in (text, versioned)]
        assert got[0] == got[1]


def test_a_long_line_is_read_to_its_first_characters_only():
    shapes = environment.shipped_shapes()
    lines = [(1, "PyTorch version: " + "9" * 1_000_000), (2, "OS: " + "a: " * 300_000), (3, "Python version: 3.11")]
    t0 = time.perf_counter()
    assert environment.environment_lines(lines, shapes) == {1, 2, 3}
    assert time.perf_counter() - t0 < 0.5


@pytest.mark.parametrize("body, message", [
    ("min_strong = 3\nmax_chars = 240\nveto = 'x'\nfence = 'x'\nheading = 'x'\nstrong = ['(']\nweak = []\n",
     "error"),
    ("min_strong = 3\nmax_chars = 240\nveto = 'x'\nstrong = 'a'\nweak = []\n", "TypeError"),
    ("min_strong = 3\nmax_chars = 240\nstrong = ['a']\nweak = []\n", "KeyError"),
    ("min_strong = 0\nmax_chars = 240\nveto = 'x'\nfence = 'x'\nheading = 'x'\nstrong = ['a']\nweak = []\n",
     "at least 1"),
    ("min_strong = [\n", "cannot load"),
])
def test_a_malformed_file_names_itself(tmp_path, body, message):
    bad = tmp_path / "environment.toml"
    bad.write_text(body, encoding="utf-8")
    with pytest.raises(SignatureError, match=message):
        environment.shipped_shapes(bad)
