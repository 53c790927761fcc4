"""Lines that differ only in digits (a crash loop's pids, ports, line numbers): the matcher
remembers a line that matched nothing by its shape, each digit sent to the first digit no live
signature tells it from (``scan/digits.py``), and gives a line of a known shape no search. The
hits, counts and verdicts must be those of matching every line."""
from __future__ import annotations

import io
import random
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dllogscan.normalize import lines as normalize
from dllogscan.pipeline import runner as pipeline
from dllogscan.scan import digits, limits, matcher
from dllogscan.sources import streams as sources

TEMPLATES = [
    "RuntimeError: DataLoader worker (pid {}) is killed by signal: Killed.",
    "RuntimeError: DataLoader worker (pid {}) is killed by signal: Bus error.",
    "RuntimeError: DataLoader worker (pid {}) is killed by signal: User defined signal {}: {}",
    "RuntimeError: DataLoader worker (pid(s) {}, {}) exited unexpectedly",
    "OSError: [Errno {}] Too many open files: '/tmp/pymp-{}/listener'",
    "RuntimeError: DataLoader timed out after {} seconds",
    '  File "/opt/conda/lib/python3.{}/site-packages/torch/utils/data/dataloader.py", line {}, in _try_get_data',
    "OSError: [Errno {}] Too many open files. Communication with the",
    "workers is no longer possible. Please increase the limit using `ulimit -n` {}",
    "RuntimeError: received {} items of ancdata",
    "[rank{}]: ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared "
    "memory (shm).",
    '{{"log": "RuntimeError: DataLoader worker (pid {}) exited unexpectedly\\n", "n": {}}}',
    "the workers are fine at step {}",
]


def _scan(data: bytes, shapes: bool):
    """The scanner's hits and counts and the pipeline's verdicts, with or without shapes."""
    pipeline._cached_scanner.cache_clear()  # noqa: SLF001 - a fresh scanner: nothing remembered
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(limits, "MAX_HITS_PER_SIGNATURE", 6)  # caps reached within a short log
        if not shapes:
            patch.setattr(matcher.LineMatcher, "_shape", lambda *args: (None, None))
        out = pipeline.get_scanner().scan(io.BytesIO(data))
        pipeline._cached_scanner.cache_clear()  # noqa: SLF001
        result = pipeline.run(sources.Source("r.log", lambda: io.BytesIO(data)), pipeline.get_scanner(),
                              classifier="off")
    pipeline._cached_scanner.cache_clear()  # noqa: SLF001
    return out, [(d.cls, d.subclass, d.count, d.evidence) for d in result.diagnoses]


def _line(template: str, rnd: random.Random) -> str:
    return template.format(*(rnd.choice(["1", "2", "3", "24", "23", "10", "12", "99", "13004", "40"])
                             for _ in range(template.count("{}"))))


@settings(max_examples=40, derandomize=True, deadline=None, database=None)
@given(st.lists(st.sampled_from(TEMPLATES), min_size=1, max_size=60), st.integers(0, 1000))
def test_lines_of_one_shape_scan_as_if_each_were_matched(templates, seed):
    rnd = random.Random(seed)
    data = "\n".join(_line(t, rnd) for t in templates for _ in range(3)).encode() + b"\n"
    (fast, fast_verdicts), (plain, plain_verdicts) = _scan(data, True), _scan(data, False)
    assert fast.hits == plain.hits
    assert fast.counts == plain.counts
    assert fast_verdicts == plain_verdicts


@pytest.mark.parametrize("line, counted", [
    ("RuntimeError: DataLoader worker (pid(s) {}) exited unexpectedly", "B.oom-suspected.exited-unexpectedly"),
    ("RuntimeError: DataLoader worker (pid {}) is killed by signal: Killed.", "B.oom.killed-by-sigkill"),
    ("OSError: [Errno 24] Too many open files: '/tmp/pymp-{}/listener'", "C.fd-exhausted.errno-24"),
])
def test_a_crash_loop_is_decided_once_per_shape(monkeypatch, line, counted):
    """300 failures that differ in their pids: once the message's own signature is at its cap,
    those that share its keywords but never match it (a paraphrase, another signal, the macOS
    wording, whose ``[12]`` tells two digits apart and is widened) are searched for on a few
    lines, not on every one; the failure is still counted on each."""
    rnd = random.Random(5)
    text = "".join(line.format(rnd.randrange(1000, 99999)) + "\n" for _ in range(300)).encode()
    decided: list[int] = []
    original = matcher.LineMatcher._decide

    def counting(self, data, start, end, lineno, live, memo):
        decided.append(lineno)
        return original(self, data, start, end, lineno, live, memo)

    monkeypatch.setattr(matcher.LineMatcher, "_decide", counting)
    monkeypatch.setattr(limits, "MAX_HITS_PER_SIGNATURE", 10)
    pipeline._cached_scanner.cache_clear()  # noqa: SLF001
    out = pipeline.get_scanner().scan(io.BytesIO(text))
    pipeline._cached_scanner.cache_clear()  # noqa: SLF001
    assert out.counts[counted] == 300
    assert [h.line for h in out.hits if h.signature == counted] == list(range(1, 11))
    assert len(decided) < 60, len(decided)  # 300 before: every line searched, alone and joined


def _sig(pattern: str, flags: str = "", user: bool = False):
    return SimpleNamespace(pattern=pattern, flags=flags, user=user)


@pytest.mark.parametrize("pattern, to", [
    (r"worker \(pid (?P<pid>\d+)\) is killed", "0000000000"),
    (r"\[Errno 24\] Too many", "0020400000"),
    (r"User defined signal [12]: \d{1,3}(?![\d:])", "0110000000"),
    (r"exit code [^0]", "0111111111"),
    (r"python3\.(?P<minor1>\w+) x{2,13}", "0003000000"),  # the 3 of python3; not the 1 of a name
    (r"(?i:\bline \d+\b)|[0-4]", "0000055555"),
    (r"[0-9][0-9a-fA-F]\D", "0000000000"),
])
def test_a_table_sends_each_digit_to_the_first_one_it_cannot_be_told_from(pattern, to):
    found = digits.table([_sig(pattern)])
    assert found is not None and found[48:58] == to.encode()


@pytest.mark.parametrize("pattern", [
    r"\[Errno 24\] ([1-9])\1",  # a back-reference compares two digits
    r"(?P<d>\d)(?P=d)",
    r"[[:digit:]]x",  # POSIX classes: regex and re read them apart
    r"(?:pid 7){e<=1}",  # fuzzy matching
    r"\p{Nd}x",
    r"(?(1)a|b)",
    r"0123456789",  # every digit told from every other: a table would change nothing
    "(unbalanced",
])
def test_no_table_where_it_cannot_say_or_changes_nothing(pattern):
    assert digits.table([_sig(pattern)]) is None


def test_a_users_signature_gets_no_table():
    assert digits.table([_sig(r"pid \d+")]) is not None
    assert digits.table([_sig(r"pid \d+", user=True)]) is None
    assert digits.table([_sig(r"pid \d+"), _sig(r"(a)\1")]) is None


PIECES = ["0", "1", "7", "24", " ", "\t", "\r", "\\n", "\x1b[31m", "\x1b[0;1m", "\x1b]0;t1\x07", "\x9b2K", "\x85",
          "\u202e", "é", ">", "# ", "[rank3]: ", "[default1]: ", "12: ", "2024-05-17T10:00:01.5Z stdout F ",
          "│ ", " │", "RuntimeError: DataLoader worker (pid ", ") exited", "\x00", "\x7f"]


@settings(max_examples=400, derandomize=True, deadline=None, database=None)
@given(st.lists(st.sampled_from(PIECES), max_size=14),
       st.lists(st.sampled_from("0123456789"), min_size=10, max_size=10), st.binary(max_size=3))
def test_line_views_read_every_digit_alike(pieces, to, tail):
    """The premise of a shape: outside a structured record (a line with ``{``), sending digits
    to other digits in a line sends them so in its views and changes nothing else."""
    raw = "".join(pieces).encode() + tail.replace(b"{", b"")
    table = bytes.maketrans(b"0123456789", "".join(to).encode())
    texts, _ = normalize.views(raw)
    shaped, _ = normalize.views(raw.translate(table))
    assert shaped == [t.translate(str.maketrans("0123456789", "".join(to))) for t in texts]


@pytest.mark.parametrize("pattern, wide", [
    (r"pid (?P<pid>\d+)", r"pid (?P<pid>\d+)"),
    (r"(?P<n1>x)1[12]{2}", r"(?P<n1>x)\d[0-912]{2}"),
    (r"signal [12]: \d{1,3}(?![\d:])", r"signal [0-912]: \d{1,3}(?![\d:])"),
    (r"(?<=pid 1)x|Errno 24", r"(?<=pid \d)x|Errno \d\d"),
    (r"a(?!1)b", None),  # wider under a negative lookahead: it would match less
    (r"a(?<!1)b", None),
    (r"x(?>1|12)", None),  # an atomic group commits to its first way
    (r"1++", None),
    (r"[^1]", None),
    (r"(?i:1)", None),
    (r"\x31", None),
    (r"(a)\1", None),
])
def test_widen_accepts_every_digit_where_one_was_told_apart(pattern, wide):
    assert digits.widen(pattern) == wide


@settings(max_examples=300, derandomize=True, deadline=None, database=None)
@given(st.data())
def test_a_widened_pattern_matches_wherever_its_signature_does(data):
    """Each signature's widened pattern reads every digit alike and finds a match in each text
    its own pattern finds one in (its examples, their digits redrawn)."""
    db = pipeline.get_scanner().db
    sig = data.draw(st.sampled_from([s for s in db.signatures if s.examples]), label="signature")
    wide = digits.widen(sig.pattern, sig.flags)
    if wide is None:
        return
    assert digits.splitting_sets(wide, sig.flags) == []
    compiled = digits.build([digits._Wide(wide, sig.flags)])  # noqa: SLF001
    for text in sig.examples:
        text = "".join(data.draw(st.sampled_from("0123456789")) if c.isdigit() else c for c in text)
        if sig.compiled.search(text):
            assert compiled.search(text), (sig.id, text)


def test_without_re_private_parser_no_line_is_shaped(monkeypatch):
    """A Python whose ``re`` keeps its parser elsewhere: every pattern is unsure, no line gets a
    shape, and the scan is what matching every line gives (before, importing the matcher failed)."""
    monkeypatch.setattr(digits, "_parser", None)
    monkeypatch.setattr(digits, "_SETS", {})
    assert digits.splitting_sets(r"Errno 24") is None and digits.widen(r"Errno 24") is None
    rnd = random.Random(7)
    data = "".join(_line(rnd.choice(TEMPLATES[:6]), rnd) + "\n" for _ in range(200)).encode()
    shaped, plain = _scan(data, shapes=True), _scan(data, shapes=False)
    assert shaped[1] == plain[1] and shaped[1]
    assert shaped[0].counts == plain[0].counts
