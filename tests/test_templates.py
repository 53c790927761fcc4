"""Issue-template furniture (dllogscan/data/templates.toml): the text classifier and the prose rules
read a report filed through a bug template as the reporter wrote it; nothing the reporter wrote goes."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from dllogscan import api
from dllogscan.core.errors import SignatureError
from dllogscan.normalize import lines as normalize
from dllogscan.normalize import templates

ROOT = Path(__file__).resolve().parent.parent
#: real templates as GitHub renders them into an issue body (bench/env_shift/templates/README.md)
RENDERED = sorted((ROOT / "bench" / "env_shift" / "templates").glob("*.txt"))
BODY = "With num_workers=8 my DataLoader hangs forever at the start of epoch 2; no error, GPU utilization 0%."


def _numbered(text: str) -> list[tuple[int, str]]:
    """Numbered clean lines, as the digest gives them (markdown heading marks cleaned off)."""
    clean = [(n, normalize.clean(line.encode())) for n, line in enumerate(text.split("\n"), 1)]
    return [(n, line) for n, line in clean if line]


def _kept(text: str) -> list[str]:
    lines = _numbered(text)
    drop = templates.template_lines(lines)
    return [t for n, t in lines if n not in drop]


@pytest.mark.parametrize("path", RENDERED, ids=lambda p: p.stem)
def test_a_rendered_template_leaves_the_reporters_words(path):
    kept = _kept(path.read_text(encoding="utf-8").replace("{body}", BODY).replace("{versions}", "Versions here."))
    assert BODY in kept and "Versions here." in kept
    # what may stay: a dropdown's answer (Ultralytics' component) and the environment slot's own prose
    others = [t for t in kept if t not in (BODY, "Versions here.")]
    assert all(t == "Other" or "collect_env" not in t and "bug" not in t.lower() for t in others), others
    assert not any("error report" in t or "- [" in t or "_No response_" in t for t in kept)


def test_the_reporters_own_lines_stay_even_beside_template_words():
    text = ("Environment\nThe bug: training hangs with 4 workers.\nMy environment is a Docker image.\n"
            "- Python version: 3.10\nSteps to reproduce: run train.py with --workers 4\nBug\n")
    assert _kept(text) == ["The bug: training hangs with 4 workers.", "My environment is a Docker image.",
                           "Steps to reproduce: run train.py with --workers 4"]


def test_an_html_comment_goes_and_an_unclosed_one_stops_hiding_lines():
    text = "<!-- A clear and concise description\nof what the bug is. -->\nThe loader hangs.\n<!-- one line -->\nEnd."
    assert _kept(text) == ["The loader hangs.", "End."]
    unclosed = "<!-- never closed\n" + "\n".join(f"line {i}" for i in range(100))
    assert _kept(unclosed) == [f"line {i}" for i in range(templates.MAX_COMMENT_LINES - 1, 100)]


def test_the_verdict_does_not_move_when_a_report_is_filed_through_a_template():
    for path in RENDERED:
        text = path.read_text(encoding="utf-8").replace("{body}", BODY).replace("{versions}", "")
        plain, filed = api.scan_text(BODY), api.scan_text(text)
        assert [d.cls for d in plain.diagnoses] == ["E"]
        assert [d.cls for d in filed.diagnoses] == ["E"], path.stem
        # only a dropdown's answer (Ultralytics' component) is left to read beside the body
        assert abs(filed.diagnoses[0].confidence - plain.diagnoses[0].confidence) < 0.01, path.stem


def test_a_long_line_is_read_to_its_first_characters_only():
    lines = [(1, "- [X] " + "a" * 1_000_000), (2, "<!-- " + "-" * 1_000_000), (3, "Bug" + " " * 1_000_000)]
    t0 = time.perf_counter()
    assert templates.template_lines(lines) == {1, 2, 3}
    assert time.perf_counter() - t0 < 0.5


@pytest.mark.parametrize("body, message", [
    ("max_chars = 400\nsections = '('\nboilerplate = []\n", "error"),
    ("max_chars = 400\nsections = 'a'\nboilerplate = [1]\n", "TypeError"),
    ("max_chars = 400\nboilerplate = []\n", "KeyError"),
    ("max_chars = 0\nsections = 'a'\nboilerplate = []\n", "at least 1"),
    ("max_chars = [\n", "cannot load"),
])
def test_a_malformed_file_names_itself(tmp_path, body, message):
    bad = tmp_path / "templates.toml"
    bad.write_text(body, encoding="utf-8")
    with pytest.raises(SignatureError, match=message):
        templates.shipped_shapes(bad)
