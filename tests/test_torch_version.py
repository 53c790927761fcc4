"""The PyTorch version a text shows (the ``torch`` fact) and the fixes it cannot run yet: a fix whose
code passes a DataLoader option newer than that version goes last and says what it needs."""
from __future__ import annotations

from pathlib import Path

import pytest

import dllogscan
from dllogscan.advise import versions
from dllogscan.core.errors import SignatureError
from dllogscan.signatures.database import FixEntry

ROOT = Path(__file__).resolve().parent.parent
BUS = ("RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error. It is possible that "
       "dataloader's workers are out of shared memory. Please try to raise your shared memory limit.")
SLOW_START = "Training pauses at the start of every epoch for two minutes with num_workers=8; no error."


def diagnose(text: str):
    return dllogscan.scan_text(text, name="report.md").diagnoses[0]


@pytest.mark.parametrize("line, shown", [
    ("PyTorch version: 1.5.1", "1.5.1"),
    ("PyTorch version: 2.1.0+cu118", "2.1.0"),
    ("PyTorch: 1.10.1", "1.10.1"),
    ("- PyTorch Version (e.g., 1.0): 1.4", "1.4"),
    ("[pip3] torch==1.13.1", "1.13.1"),
    ("torch==1.4.0", "1.4.0"),
])
def test_the_version_is_a_fact_of_the_diagnosis(line, shown):
    assert diagnose(f"{line}\n{BUS}").facts["torch"] == shown


@pytest.mark.parametrize("line", ["torchvision==0.8.1", "[pip3] pytorch-lightning==1.5.10",
                                  "I upgraded torch 1.4 to 1.8 and it still crashes", "PyTorch version: N/A"])
def test_other_packages_and_prose_give_no_version(line):
    assert "torch" not in diagnose(f"{line}\n{BUS}").facts


def test_an_old_pytorch_gets_the_option_it_lacks_named_and_the_fix_moves_last():
    fixes = diagnose(f"PyTorch version: 1.5.1\n{BUS}").fixes
    needing = [f for f in fixes if "prefetch_factor=" in (f.code or "")]
    assert needing, "class A's fixes lower prefetch_factor"
    for fix in needing:
        assert fix.title.endswith("(prefetch_factor needs PyTorch 1.7 or later; the text shows PyTorch 1.5.1)")
    ranks = [f.rank for f in fixes]
    assert ranks == sorted(ranks)
    assert all(f.rank > g.rank for f in needing for g in fixes if g not in needing)


@pytest.mark.parametrize("head", ["PyTorch version: 2.1.0+cu118", "PyTorch version: 1.7.1", ""])
def test_a_new_enough_or_unknown_pytorch_keeps_the_fixes_as_they_were(head):
    plain = diagnose(BUS).fixes
    fixes = diagnose(f"{head}\n{BUS}").fixes
    assert [f.title for f in fixes] == [f.title for f in plain]
    assert not any("needs PyTorch" in f.title for f in fixes)


def test_a_slow_start_on_pytorch_1_5_says_persistent_workers_needs_1_7():
    d = diagnose(f"PyTorch version: 1.5.0\n{SLOW_START}")
    assert (d.cls, d.subclass) == ("E", "slow-start")
    persistent = [f for f in d.fixes if "persistent_workers=True" in (f.code or "")]
    assert persistent and all("persistent_workers needs PyTorch 1.7 or later; the text shows PyTorch 1.5.0"
                              in f.title for f in persistent)


def test_two_missing_options_are_named_together():
    fix = FixEntry(key="A", rank=1, title="t", why="w",
                   code="DataLoader(ds, num_workers=2, prefetch_factor=1, persistent_workers=True)")
    note = versions.needs_note(fix, {"torch": "1.6.0"})
    assert note == " (persistent_workers and prefetch_factor need PyTorch 1.7 or later; the text shows PyTorch 1.6.0)"


@pytest.mark.parametrize("code", ["DataLoader(ds, num_workers=2)", "self.prefetch_factor_override = 3",
                                  "loader.prefetch_factor = 1", None])
def test_code_that_passes_no_newer_option_needs_nothing(code):
    fix = FixEntry(key="A", rank=1, title="t", why="w", code=code)
    assert versions.missing_options(fix, {"torch": "1.2.0"}) == ()


def test_a_real_report_on_pytorch_1_5():
    """corpus/threads: an MMDetection hang reported with PyTorch 1.5 in its environment."""
    d = dllogscan.scan(ROOT / "corpus" / "threads" / "e-open-mmlab-mmdetection-3642.md").diagnoses[0]
    assert d.facts["torch"].startswith("1.5")
    assert any("persistent_workers needs PyTorch 1.7" in f.title for f in d.fixes)


@pytest.mark.parametrize("body, message", [
    ("[since]\npersistent_workers = \"soon\"\n", "major.minor"),
    ("[since]\n\"not an option\" = \"1.7\"\n", "identifier"),
    ("since = 3\n", r"\[since\] table"),
    ("[since\n", "cannot load"),
])
def test_a_malformed_file_names_itself(tmp_path, body, message):
    bad = tmp_path / "loader_options.toml"
    bad.write_text(body, encoding="utf-8")
    with pytest.raises(SignatureError, match=message):
        versions.option_releases(bad)
    assert str(bad) in str(pytest.raises(SignatureError, versions.option_releases, bad).value)
