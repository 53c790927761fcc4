"""A failure text pasted with Unicode blanks or invisible characters (a rendered page's no-break
spaces, a chat's zero-width spaces, a word processor's soft hyphens) gets the diagnosis of the
plain text; folding keeps every line's length, so the byte grid and line numbers stay the raw
file's, and streaming or splitting the scan folds each line the same way."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

import dllogscan
from dllogscan.normalize import blanks
from dllogscan.normalize.blanks import INVISIBLE, SPACES, fold, fold_line
from dllogscan.scan import limits
from dllogscan.signatures.loader import load_database

CANONICAL = [s for s in load_database().signatures if s.canonical]
HEALTHY = "".join(f"Epoch 3:  45%|████▌     | {i}/1000 [01:10<01:25,  6.4it/s, loss=0.231]\n" for i in range(40))
#: how each kind of paste spoils the text: every space, or a character inside a word
SPOILERS = {
    "no-break spaces": lambda t: t.replace(" ", "\u00a0"),
    "narrow no-break spaces": lambda t: t.replace(" ", "\u202f"),
    "ideographic spaces": lambda t: t.replace(" ", "\u3000"),
    "zero-width spaces in words": lambda t: t.replace("Loader", "Load\u200ber").replace("open", "op\u200ben")
    .replace("timed", "tim\u200bed").replace("CUDA", "CU\u200bDA").replace("Bus", "B\u00adus"),
    "word joiners and marks": lambda t: t.replace(" ", "\u2060 \u200e"),
}


def _verdict(text: str) -> list[tuple[str, str]]:
    result = dllogscan.scan(HEALTHY + text + "\n" + HEALTHY, name="job.log")
    return [(d.cls, d.subclass) for d in result.diagnoses]


@pytest.mark.parametrize("spoil", SPOILERS, ids=list(SPOILERS))
@pytest.mark.parametrize("sig", CANONICAL, ids=[s.id for s in CANONICAL])
def test_every_canonical_example_pasted_with_blanks_gets_the_plain_verdict(sig, spoil):
    for example in sig.examples:
        plain = _verdict(example)
        assert plain, f"{sig.id}: {example!r} finds nothing even plain"
        assert _verdict(SPOILERS[spoil](example)) == plain, example


def test_the_evidence_shows_plain_spaces():
    result = dllogscan.scan("RuntimeError:\u00a0DataLoader\u00a0worker (pid\u202f363) is killed by signal:\u00a0Bus"
                            "\u200b error\n", name="pasted.txt")
    d = result.diagnoses[0]
    assert d.cls == "A" and d.evidence[0].line == 1
    assert d.evidence[0].text == "RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error"


def test_line_numbers_stay_those_of_the_raw_file():
    text = "".join(f"step\u00a0{i}\u200b\u3000ok\n" for i in range(500)) + "OSError: [Errno\u00a024] Too many open files\n"
    d = dllogscan.scan(text, name="job.log").diagnoses[0]
    assert d.cls == "C" and d.evidence[0].line == 501


def test_a_blank_cut_by_a_round_boundary_is_folded_in_the_next_round(monkeypatch):
    monkeypatch.setattr(limits, "CHUNK", 4096)
    monkeypatch.setattr(limits, "LOOKAHEAD", 512)
    monkeypatch.setattr(limits, "LOOKBEHIND", 256)
    monkeypatch.setattr(limits, "MAX_LINE", 200)
    line = "RuntimeError: DataLoader worker (pid 363) is killed by signal:\u00a0Bus error\n".encode()
    cut = line.index(b"\xc2\xa0") + 1  # the no-break space's two bytes on either side of a read
    for boundary in (4096, 4096 - 512):  # the end of a read; the end of what a round matches
        for shift in range(-3, 4):
            before = boundary - cut + shift
            data = (b"x" * 59 + b"\n") * (before // 60) + b"y" * (before % 60)
            data = data[:-1] + b"\n" + line
            assert data.index(b"\xc2\xa0") + 1 == boundary + shift
            result = dllogscan.scan(data, name="job.log")
            assert [d.cls for d in result.diagnoses] == ["A"], (boundary, shift)


def test_a_line_longer_than_max_line_is_left_as_it_is():
    long_line = ("x" * 40 + "\u00a0") * 2
    assert fold(long_line.encode() + b"\n", True, 50) == long_line.encode() + b"\n"
    assert fold(long_line.encode() + b"\n", True, 200) == (("x" * 40 + " ") * 2).encode() + b"  \n"


def test_ascii_is_returned_as_it_is():
    data = b"plain ascii\nlines\n"
    assert fold(data, True, 100) is data


def test_a_line_ending_in_cr_keeps_it_last():
    assert fold_line("a\u00a0b\u200b\r".encode()) == b"a b    \r"


ALPHABET = st.sampled_from(list(SPACES + INVISIBLE) + ["a", " ", "\n", "\r", "é", "█", "—"])
RAW = st.one_of(
    st.lists(ALPHABET, max_size=120).map(lambda cs: "".join(cs).encode()),
    st.binary(max_size=120),  # not UTF-8 at all
    st.lists(st.sampled_from([c.encode() for c in SPACES + INVISIBLE] + [b"\xe2", b"\x80", b"\n", b"a"]),
             max_size=60).map(b"".join),
)


def _fold(data: bytes, final: bool, max_line: int) -> bytes:
    """``fold``, checked to give the same line by line as in one pass over every line."""
    results = set()
    for dense_bytes in (0, 1 << 40):  # never dense; always dense
        saved, blanks.DENSE_BYTES = blanks.DENSE_BYTES, dense_bytes
        try:
            results.add(fold(data, final, max_line))
        finally:
            blanks.DENSE_BYTES = saved
    assert len(results) == 1
    return results.pop()


@settings(max_examples=400, deadline=None)
@given(RAW, RAW, st.integers(4, 80))
def test_fold_keeps_lines_and_streams(a, b, max_line):
    fold = _fold
    once = fold(a + b, True, max_line)
    # the newlines stay where they were: line numbers and the scanner's byte grid are the raw file's
    assert len(once) == len(a + b)
    assert [i for i, c in enumerate(once) if c == 10] == [i for i, c in enumerate(a + b) if c == 10]
    # folding is a fixpoint, and a round that folds its complete lines first changes nothing
    assert fold(once, True, max_line) == once
    assert fold(fold(a, False, max_line) + b, True, max_line) == once
    # a folded line shows none of the characters; a line left (too long) is the raw one
    for raw_line, line in zip((a + b).split(b"\n"), once.split(b"\n")):
        if len(raw_line) <= max_line:
            assert not any(c.encode() in line for c in SPACES + INVISIBLE)
        else:
            assert line == raw_line


def test_a_log_full_of_them_is_folded_in_one_pass_every_round(monkeypatch):
    """Each round's start is the last round's end, folded already: the density is read from the
    round's own bytes, or every round after the first would go line by line (ten times slower)."""
    monkeypatch.setattr(limits, "CHUNK", 64 << 10)
    monkeypatch.setattr(limits, "LOOKAHEAD", 8 << 10)
    monkeypatch.setattr(limits, "LOOKBEHIND", 4 << 10)
    monkeypatch.setattr(blanks, "DENSE_SAMPLE", 2 << 10)  # shorter than what a round carries over
    calls = []
    real = blanks.fold_line
    monkeypatch.setattr(blanks, "fold_line", lambda line: calls.append(line) or real(line))
    line = "INFO\u00a0trainer:\u00a0step\u00a012345\u200b done\u3000(pasted)\n"
    text = line * (1_000_000 // len(line)) + "OSError:\u00a0[Errno 24] Too many open files\n"
    assert [d.cls for d in dllogscan.scan(text, name="pasted.log").diagnoses] == ["C"]
    assert len(calls) < 10


def test_a_saved_page_whose_code_block_has_nbsp_entities(tmp_path):
    """A forum's page keeps the alignment of a pasted log with ``&nbsp;``: the parsed text has
    U+00A0 where the log had spaces (before the fold: a bus error read as a worker's crash)."""
    page = tmp_path / "thread.html"
    page.write_text("<html><body><p>Training dies at epoch 2:</p><pre><code>RuntimeError: DataLoader worker"
                    " (pid&nbsp;363) is killed by signal:&nbsp;Bus&nbsp;error</code></pre></body></html>")
    assert [(d.cls, d.subclass) for d in dllogscan.scan(page).diagnoses] == [("A", "bus-error")]


def test_explain_says_when_the_scan_read_blanks_as_spaces(tmp_path):
    from dllogscan.cli.explain import explain
    from dllogscan.pipeline import runner as pipeline
    from dllogscan.sources import streams as sources

    pasted, unicode_only = tmp_path / "pasted.log", tmp_path / "bars.log"
    pasted.write_text(HEALTHY + "RuntimeError: DataLoader worker (pid 363) is killed by signal:\u00a0Bus error\n")
    unicode_only.write_text(HEALTHY + "“quoted” — 训练 RuntimeError: DataLoader worker (pid 363) is killed by signal: "
                            "Bus error\n")
    scanner = pipeline.get_scanner()
    outs = {p.name: pipeline.scan_source(sources.from_path(p), scanner)[0] for p in (pasted, unicode_only)}
    assert outs["pasted.log"].folded and not outs["bars.log"].folded
    note = [line for line in explain(str(pasted), []).splitlines() if line.startswith("normalize:")]
    assert len(note) == 1 and "read as spaces" in note[0]
    assert not any(line.startswith("normalize:") for line in explain(str(unicode_only), []).splitlines())
