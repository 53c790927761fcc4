"""The screen (``screen.py``): loosened patterns match wherever the originals do, and the round
screen's premise (``normalize.plain_lines``) means every matched text is a substring."""
from __future__ import annotations

import random
import re

import io

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from dllogscan.normalize import lines as normalize
from dllogscan.pipeline import runner as pipeline
from dllogscan.scan import limits, screen
from dllogscan.sources import streams as sources


@pytest.mark.parametrize("pattern, loose", [
    (r"^foo\b bar$", "foo bar"),
    (r"(?P<pid>\d+) (?!Bus error)x(?<=x)", r"(?:\d+) x"),
    (r"[\b^$](?=a)b", r"[\b^$]b"),
    (r"[^]a]\Aq\Z", r"[^]a]q"),
    (r"(?:^|[\w.]{1,80}: )Caught", r"(?:|[\w.]{1,80}: )Caught"),
    (r"(a)\1", None),
    (r"(?P<x>a)(?P=x)", None),
    (r"(?i)abc", None),
    (r"(?>a|ab)c", None),
    (r"a++b", None),
])
def test_loosen(pattern, loose):
    assert screen.loosen(pattern) == loose


def test_loose_patterns_match_every_example():
    db = pipeline.get_scanner(engine="python").db
    loosened = 0
    for sig in db.signatures:
        loose = screen.loosen(sig.pattern)
        if loose is None:
            continue
        loosened += 1
        compiled = regex.compile(loose, regex.IGNORECASE if "i" in sig.flags else 0)
        for example in sig.examples:
            assert compiled.search(example), (sig.id, example)
    assert loosened >= len(db.signatures) * 0.9


@pytest.mark.parametrize("branch, trimmed", [
    (r"[A-Z]\w{0,40}Error\(24", r"Error\(24"),
    (r"(?:|\s)\w{0,40}worker_init \(", r"worker_init \("),
    (r"s?x{2}ab", "ab"),
    (r"a+b", "a+b"),
    (r"\d+\.x", r"\.x"),
    (r"[^]x]{1,3}.y", "y"),
    (r"\w*", r"\w*"),  # nothing required: left whole
])
def test_trim_head(branch, trimmed):
    assert screen.trim_head(branch) == trimmed


@pytest.mark.parametrize("pattern, parts", [
    (r"a|b(?:c|d)|e", ["a", "b(?:c|d)", "e"]),
    (r"(?:Using |(?:--w|w=)(?:\s{0,4}))(?:\d{1,4})",
     [r"Using (?:\d{1,4})", r"--w(?:\s{0,4})(?:\d{1,4})", r"w=(?:\s{0,4})(?:\d{1,4})"]),
    (r"(?:x|\s)\w{0,9}init", [r"x\w{0,9}init", "init"]),
    (r"(?:a|b)?c", ["c"]),
    (r"[|(]x", ["x"]),
])
def test_pieces(pattern, parts):
    assert screen.pieces(pattern) == parts


def test_round_pieces_match_every_example():
    """The round screen searches a signature's pieces one by one: together they pass every
    example the signature matches, as the whole loosened pattern does."""
    db = pipeline.get_scanner(engine="python").db
    for sig in db.signatures:
        parts = screen._round_parts(sig)  # noqa: SLF001
        if parts is None:
            continue
        for example in sig.examples:
            assert any(p.search(example) for p in parts), (sig.id, example)


def test_a_group_screen_passes_what_any_member_matches():
    db = pipeline.get_scanner(engine="python").db
    sigs = db.by_keyword["open files"]
    group = screen.build(sigs)
    assert group is not None
    for sig in sigs:
        for example in sig.examples:
            assert group.search(example), (sig.id, example)
    assert not group.search("accept4() failed (24: Too many open files)")


def test_a_line_screen_keeps_every_assertion_and_passes_every_example_of_its_group():
    """The group screen (searched in the texts the signatures are searched in) is its members'
    patterns with group names made plain: it finds something exactly where a member does."""
    assert screen.unnamed(r"^OS:\s(?P<os>\w+)\b(?!/)(?<=x)") == r"^OS:\s(?:\w+)\b(?!/)(?<=x)"
    assert screen.unnamed(r"[(?P<x>]a") == r"[(?P<x>]a"
    assert screen.unnamed(r"(?P<x>a)(?P=x)") is None and screen.unnamed(r"(a)\1") is None
    db = pipeline.get_scanner(engine="python").db
    for sigs in db.by_keyword.values():
        group = screen.build(sigs)
        assert group is not None, [s.id for s in sigs]
        for sig in sigs:
            for example in sig.examples:
                assert group.search(example), (sig.id, example)
            for counter in sig.counter_examples:
                assert bool(group.search(counter)) == any(s.compiled.search(counter) for s in sigs), (sig.id, counter)
    os_group = screen.build(db.by_keyword["OS |"])
    assert os_group.search("OS | Windows 10") and not os_group.search("the OS | Windows 10 table")
    shm = screen.build(db.by_keyword["/dev/shm"])
    assert not shm.search("worker 3 wrote /dev/shm/cache/shard-17.npy (123456 bytes)")


@pytest.mark.parametrize("seed", range(40))
def test_plain_lines_means_each_line_is_its_own_view(seed):
    rng = random.Random(seed)
    alphabet = ["a", "b", " ", "\t", "1", ":", ">", "[rank0]: ", "[RANK 2]", "[default3]: ", "12: ", "|", "\\n", "\r", "\x1b[31m", "é", "2024-05-17T", "x" * 50]
    for _ in range(300):
        lines = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(rng.randint(1, 6))]
        data = "\n".join(lines).encode()
        if not normalize.plain_lines(data):
            continue
        flat = data.replace(b"\n", b" ").decode()
        for i, line in enumerate(lines):
            views, _ = normalize.views(line.encode())
            assert views == ([line.strip()] if line.strip() else []), line
            if i and lines[i - 1].strip() and line.strip():
                assert normalize.clean(lines[i - 1].encode()) + " " + views[0] in flat


@pytest.mark.parametrize("seed", range(20))
def test_a_plain_line_takes_the_short_way_to_the_same_views(seed):
    """``views`` skips the cleaning rules for a ``plain_line``: the same views and rank as with
    every rule applied, for lines built from what the rules look for."""
    rng = random.Random(seed)
    alphabet = ["a", "b", " ", "\t", "1", "12", ":", ": ", ">", "#", "# ", "[rank0]: ", "[RANK 2]", "[default3]: ",
                "12: ", "12345: ", "|", "\\n", "\r", "\x1b[31m", "\x7f", "\x00", "\x1c", "é", "\u202e",
                "2024-05-17T10:00:00Z stdout F ", "2024-05-17 ", "x" * 50]
    plain = 0
    for _ in range(500):
        raw = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10))).encode()
        plain += normalize.plain_line(raw)
        assert normalize.views(raw) == normalize.views_in_full(raw), raw
    assert plain > 50
    for raw in (b"", b"x" * normalize.MAX_VIEW_CHARS, b"x" * (normalize.MAX_VIEW_CHARS + 1), b"a \\n b"):
        assert normalize.views(raw) == normalize.views_in_full(raw), raw


def test_plain_lines_refuses_what_cleaning_changes():
    assert normalize.plain_lines(b"error one\nerror two\n")
    for data in (b" > a", b"a\r b", b"\x1b[31ma", b"[rank1]: a", b"a\n> b", b"a \nb", b"a\n\tb", b"12: x", b"a\\nb",
                 "caf\u00e9".encode(), b"x" * (normalize.MAX_VIEW_CHARS + 1)):
        assert not normalize.plain_lines(data), data


def _plain_lines_by_splitting(data: bytes) -> bool:
    """``plain_lines`` as it read until session 64: four searches for a blank next to a newline,
    and the longest line from a split into every line."""
    if data.translate(None, normalize.PLAIN_BYTES) or b"\\n" in data:
        return False
    if data[:1] in (b" ", b"\t") or any(pair in data for pair in (b" \n", b"\t\n", b"\n ", b"\n\t")):
        return False
    if normalize.PREFIX_START_RE.match(data) or re.search(rb"\n(?:" + normalize.PREFIX_STARTS + rb")", data):
        return False
    return max(map(len, data.split(b"\n"))) <= normalize.MAX_VIEW_CHARS


@settings(max_examples=400, derandomize=True, deadline=None, database=None)
@given(st.lists(st.sampled_from(["a", " ", "\t", "\n", "\n ", " \n", "\n\t", "\t\n", "> ", "[rank1]: ", "12: ", "#",
                                 "\\n", "\r", "x" * 1500]), max_size=12))
def test_plain_lines_answers_as_splitting_did(parts):
    """One search for the line starts and a walk from newline to newline for the longest line
    (``lines_at_most``) give the old answer, long lines and lines of blanks included."""
    data = "".join(parts).encode()
    assert normalize.plain_lines(data) == _plain_lines_by_splitting(data), data
    for most in (0, 1, 3, 1500, 3000):
        assert normalize.lines_at_most(data, most) == (max(map(len, data.split(b"\n"))) <= most), (data, most)


def _examples_and_near_misses() -> list[str]:
    db = pipeline.get_scanner(engine="python").db
    found = []
    for sig in db.signatures:
        found += [e for e in sig.examples + sig.counter_examples if "\n" not in e]
    return sorted(set(found))


LINES = _examples_and_near_misses()
NEAR = ["2024/05/17 10:00:0{} [crit] 12#12: *{} accept4() failed (24: Too many open files)",
        "the workers are fine, epoch {} took {}s", "shared memory in use: {} of {}", "killed {} of {} zombies"]


def _scan(data: bytes, engine: str):
    pipeline._cached_scanner.cache_clear()  # noqa: SLF001 - a fresh scanner: nothing remembered
    scanner = pipeline.get_scanner(engine=engine)
    return pipeline.run(sources.Source("p.log", lambda: io.BytesIO(data)), scanner, classifier="off")


@settings(max_examples=40, derandomize=True, deadline=None, database=None)
@given(st.lists(st.one_of(st.sampled_from(LINES),
                          st.builds(lambda f, a, b: f.format(a, b), st.sampled_from(NEAR), st.integers(0, 9), st.integers(0, 99))),
                min_size=1, max_size=60),
       st.sampled_from(["python", "ahocorasick"]))
def test_round_screen_and_dead_anchors_change_nothing(lines, engine):
    """With the round screen (and the anchors it shows to lead nowhere) on every round, a log of
    signature examples, their near misses and look-alike lines gives the very hits and verdicts
    it gives with the screen off."""
    data = ("\n".join(lines) + "\n").encode()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(limits, "SCREEN_MIN_POSITIONS", 1)
        screened = _scan(data, engine)
        patch.setattr(limits, "SCREEN_MIN_POSITIONS", 1 << 60)
        plain = _scan(data, engine)
    assert screened.hits == plain.hits
    assert [(d.cls, d.subclass, d.count) for d in screened.diagnoses] == [(d.cls, d.subclass, d.count) for d in plain.diagnoses]
