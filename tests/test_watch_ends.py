"""watch/ends.py and its data, ``dllogscan/data/run_ends.toml``: each line that says a run finished
comes from the code that prints it, matches its examples and none of the counter-examples."""
from __future__ import annotations

import re

import pytest

from dllogscan.core.errors import SignatureError
from dllogscan.watch.ends import ends_pattern, load_ends

ENDS = load_ends()


def test_the_known_libraries_are_there_each_with_the_file_that_prints_its_line():
    names = " ".join(end.name for end in ENDS)
    assert all(library in names for library in ("Lightning", "Hugging Face", "torchrun"))
    for end in ENDS:
        assert re.match(r"[\w.-]+/[\w.-]+, [\w/.-]+\.py, \w", end.source), end.source


@pytest.mark.parametrize("end", ENDS, ids=[end.name for end in ENDS])
def test_each_entry_matches_its_examples_and_no_counter_example(end):
    combined = ends_pattern()
    for line in end.examples:
        assert end.pattern.search(line) and combined.search(line.encode()), line
    for line in end.counter_examples:
        assert not combined.search(line.encode()), line


def test_a_malformed_table_names_its_file_and_entry(tmp_path):
    bad = tmp_path / "ends.toml"
    bad.write_text('[[end]]\nname = "x"\nsource = "a/b, c.py, f"\npattern = "(unclosed"\n'
                   'examples = ["x"]\ncounter_examples = []\n')
    with pytest.raises(SignatureError, match=r"ends\.toml: end #1 \(x\): bad pattern"):
        load_ends(bad)
    bad.write_text('[[end]]\nname = "x"\npattern = "x"\nexamples = ["x"]\n')
    with pytest.raises(SignatureError, match=r"ends\.toml: end #1 needs exactly"):
        load_ends(bad)
