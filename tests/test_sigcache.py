"""A validated set of signature files is remembered: the next load neither compiles nor runs
examples; a changed file, a bad file or a corrupt cache entry is validated (or refused) afresh."""
from __future__ import annotations

import pytest

from dllogscan.signatures import database as signatures, loader as sigloader
from dllogscan.core.errors import SignatureError
from dllogscan.signatures.loader import load_database

import test_signatures_loader as loader_tests

# the loader tests' good entry, with a pattern that captures a group
GOOD = loader_tests.GOOD.replace("pattern = 'Bus error'", "pattern = '(?i)bus error (?P<where>\\w+)'")
assert "(?P<where>" in GOOD


@pytest.fixture
def compiles(tmp_path, monkeypatch):
    """Count pattern compilations, with the cache in a fresh folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    calls = []
    real = signatures.compile_pattern
    for module in (signatures, sigloader):  # the model compiles on use, the loader to validate
        monkeypatch.setattr(module, "compile_pattern", lambda *a: calls.append(a) or real(*a))
    return calls


def _write(tmp_path, text):
    path = tmp_path / "user.toml"
    path.write_text(text)
    return path


def test_second_load_skips_validation_and_compiles_on_use(tmp_path, compiles):
    path = _write(tmp_path, GOOD)
    first = load_database([path], include_default=False)
    assert len(compiles) == 1 and list((tmp_path / "cache" / "dllogscan").glob("sig-*.ok"))
    second = load_database([path], include_default=False)
    assert len(compiles) == 1  # nothing compiled at load
    assert second.signatures == first.signatures
    assert second.by_id["X.one"].compiled.search("Bus error in x").group("where") == "in"
    assert len(compiles) == 2  # compiled once, on first use
    second.by_id["X.one"].compiled.search("again")
    assert len(compiles) == 2


def test_changed_bad_file_is_refused_after_a_good_one_was_cached(tmp_path, compiles):
    path = _write(tmp_path, GOOD)
    load_database([path], include_default=False)
    _write(tmp_path, GOOD.replace('examples = ["Bus error here"]', 'examples = ["Bus error"]'))
    with pytest.raises(SignatureError, match="example does not match"):
        load_database([path], include_default=False)
    _write(tmp_path, GOOD.replace("(?P<where>\\w+)", "(unclosed"))
    with pytest.raises(SignatureError, match="does not compile"):
        load_database([path], include_default=False)


def test_corrupt_or_unwritable_cache_just_revalidates(tmp_path, compiles):
    path = _write(tmp_path, GOOD)
    load_database([path], include_default=False)
    [entry] = (tmp_path / "cache" / "dllogscan").glob("sig-*.ok")
    entry.write_bytes(b"\x00garbage")
    db = load_database([path], include_default=False)
    assert len(compiles) == 2 and db.by_id["X.one"].compiled
    entry.write_bytes(b"")
    load_database([path], include_default=False)
    assert len(compiles) == 3


def test_cache_folder_that_cannot_be_made_is_no_error(tmp_path, monkeypatch, compiles):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    path = _write(tmp_path, GOOD)
    assert load_database([path], include_default=False).by_id["X.one"]
    assert load_database([path], include_default=False).by_id["X.one"]
    assert len(compiles) == 2  # validated each time: nowhere to remember it
