"""Issue-thread JSON (GitHub, GitLab, Discourse, notebooks) of the right shape with the wrong
contents, and JSON that is no thread, through every way in: the flattening, ``dllogscan FILE``,
``paste``, the Python API and ``batch``. Each is read as a thread or as plain text, in bounded
time and memory, never a traceback or a lost row."""
from __future__ import annotations

import codecs
import json
import subprocess
import sys

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from dllogscan.batch import Config, run_batch
from dllogscan.sources import documents
from dllogscan.sources.documents import (MAX_DOCUMENT_BYTES, MAX_DOCUMENT_VALUES, flatten_bytes, json_values_bound,
                                         json_values_over)
from dllogscan.sources.html_text import HtmlTexts, html_to_text
from dllogscan import report
from tests.conftest import FIXTURES
from tests.hostile.test_issue_fields import BUS
from tests.hostile.test_properties import LIMIT, RUN, UNSAFE, scanned

ISSUE = {"title": "loader dies", "body": BUS, "comments": [{"body": "same here", "author": {"login": "b"}}]}


@pytest.mark.timeout(60)
def test_a_batch_row_says_which_document_it_read(tmp_path):
    """A thread among logs gets its row with the ``document`` it was read as, as ``dllogscan
    FILE --format json`` says: its evidence lines are those of the flattened text (before, the
    batch's objects left ``document`` out)."""
    (tmp_path / "issue.json").write_text(json.dumps(ISSUE))
    (tmp_path / "job.log").write_text(BUS + "\n")
    records = []
    run_batch([str(tmp_path)], records.append, Config(), progress=False)
    found = {r.result.source.rsplit("/", 1)[-1]: r.result for r in records}
    assert found["issue.json"].document == "github-issue" and found["job.log"].document is None
    assert found["issue.json"].to_dict()["document"] == "github-issue"
    assert [d.cls for d in found["issue.json"].diagnoses] == ["A"]


def _empty_comments(size: int) -> bytes:
    """An issue whose comments are ``{}`` until the document is ``size`` bytes."""
    head, tail = b'{"title": "x", "body": "", "comments": [', b"]}"
    return head + b",".join([b"{}"] * ((size - len(head) - len(tail)) // 3)) + tail


def test_past_the_value_cap_a_document_is_read_as_text(monkeypatch):
    """JSON of more values than ``MAX_DOCUMENT_VALUES`` is scanned as it is, never decoded."""
    doc = json.dumps({**ISSUE, "comments": [{"body": "x"}] * 9}).encode()
    monkeypatch.setattr(documents, "MAX_DOCUMENT_VALUES", json_values_bound(doc))
    assert flatten_bytes(doc)[1] == "github-issue"
    monkeypatch.setattr(documents, "MAX_DOCUMENT_VALUES", json_values_bound(doc) - 1)
    assert flatten_bytes(doc) == (doc, None)


def test_a_log_quoted_in_a_body_counts_as_one_value():
    """The commas and colons of a log pasted into a body are no values: 20 000 lines of
    ``key: a, b`` quoted in a comment leave a thread of ten values and keys (the triage page's count,
    ``json_values_over``; counting them too, the bound is past 60 000)."""
    log = "".join(f"12:00:{i % 60:02d} step {i}: loss 0.1, lr 3e-4, shm: 64M\n" for i in range(20_000))
    doc = json.dumps({**ISSUE, "comments": [{"body": "log:\n" + log}]}).encode()
    assert json_values_bound(doc) > 60_000 and not json_values_over(doc, 10) and json_values_over(doc, 9)


@pytest.mark.parametrize("padding", [b'"a",', b'":",', b'":"', b'"",', b"{},"])
def test_counting_values_outside_strings_holds_no_copy(padding):
    """20 MB of small strings (or strings of marks, or strings with no mark between them) are
    found over the triage page's room in constant memory and a few thousand steps: taking the
    strings out with ``re.sub`` first held about 900 MB."""
    import time
    import tracemalloc

    data = b'{"text": "x", "pad": [' + padding * (20_000_000 // len(padding)) + b'""]}'
    tracemalloc.start()
    start = time.process_time()
    assert json_values_over(data, 4096)
    elapsed, peak = time.process_time() - start, tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1_000_000 and elapsed < 1, (peak, elapsed)


@pytest.mark.parametrize("name", ["gh-third-comment.json", "gitlab.json", "discourse.json", "colab-bus-error.ipynb",
                                  "jupyter-interrupted-hang.ipynb"])
def test_real_exports_of_the_largest_size_stay_under_the_value_cap(name):
    """An export as dense as the shipped ones (11 to 21 bytes a value) is decoded up to
    ``MAX_DOCUMENT_BYTES``: the cap only stops what no tracker writes."""
    data = (FIXTURES / "documents" / name).read_bytes()
    assert json_values_bound(data) * MAX_DOCUMENT_BYTES <= MAX_DOCUMENT_VALUES * len(data)


_PEAK = """
import sys
import dllogscan
def hwm():
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")) >> 10
dllogscan.scan_text("warm up")
before = hwm()
result = dllogscan.scan_file(sys.argv[1])
print(result.document, hwm() - before)
"""


@pytest.mark.timeout(120)
def test_twenty_mib_of_empty_comments_costs_no_more_than_text(tmp_path):
    """Before, 20 MiB of ``{},`` comments were decoded (7 million dicts) and flattened to a
    180 MB text of empty sections: 1.3 GB of memory and 17 s. Past the value cap they are text."""
    path = tmp_path / "issue.json"
    path.write_bytes(_empty_comments(MAX_DOCUMENT_BYTES - 100))
    proc = subprocess.run([sys.executable, "-c", _PEAK, str(path)], capture_output=True, text=True, timeout=110)
    document, extra_mb = proc.stdout.split()
    assert document == "None" and int(extra_mb) < 300, proc.stdout


# -- every field of every shape, of any type -------------------------------------------------------

#: strings a reporter (or an attacker) can put in any field: JSON's lone surrogates, controls, markup
PIECES = st.sampled_from([BUS, "\ud800", "\udcff", "\x00", "\x1b[2J", "\u009b", "\u202e", "`", "```", "@all",
                          "<script>x</script>", "<p>", "</pre>", "&amp;", "\n", "\r", "--- comment 1 ---", "{", "]"])
TEXT = st.lists(st.one_of(PIECES, st.text(max_size=8)), max_size=5).map("".join)
#: any JSON value, NaN and the infinities included (Python's ``json`` reads and writes them)
ANY = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
                   lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
                   max_leaves=8)


def field(good: st.SearchStrategy) -> st.SearchStrategy:
    """A field as a tracker writes it, or any other JSON value in its place."""
    return st.one_of(good, ANY)


def record(required: dict, optional: dict) -> st.SearchStrategy:
    return st.fixed_dictionaries({k: field(v) for k, v in required.items()},
                                 optional={k: field(v) for k, v in optional.items()})


WHEN = st.one_of(st.just("2024-01-01T00:00:00Z"), st.integers(0, 9))
AUTHOR = st.one_of(TEXT, record({"login": TEXT}, {"username": TEXT, "name": TEXT}))
REPLY = record({"body": TEXT}, {"author": AUTHOR, "user": AUTHOR, "createdAt": WHEN, "created_at": WHEN,
                                "system": st.booleans(), "noteable_type": TEXT})
POST = record({"post_number": st.integers(1, 9)}, {"cooked": TEXT.map(lambda t: f"<p>{t}</p>"), "raw": TEXT,
                                                    "username": TEXT})
EVENT = record({"event": st.sampled_from(["commented", "reviewed", "labeled"]), "node_id": TEXT},
               {"actor": AUTHOR, "body": TEXT, "user": AUTHOR, "submitted_at": WHEN})
OUTPUT = record({"output_type": st.sampled_from(["error", "pyerr", "stream", "execute_result"])},
                {"traceback": st.lists(TEXT, max_size=3), "text": TEXT, "ename": TEXT, "evalue": TEXT,
                 "data": record({"text/plain": st.lists(TEXT, max_size=2)}, {})})
CELL = record({}, {"source": st.lists(TEXT, max_size=3), "input": TEXT, "outputs": st.lists(OUTPUT, max_size=3)})
THREAD = st.one_of(
    record({"title": TEXT, "body": TEXT}, {"comments": st.one_of(st.lists(REPLY, max_size=4), st.integers(0, 9)),
                                           "author": AUTHOR}),
    record({"title": TEXT, "description": TEXT}, {"notes": st.lists(REPLY, max_size=4)}),
    record({"title": TEXT, "post_stream": record({"posts": st.lists(POST, max_size=4)}, {})}, {"fancy_title": TEXT}),
    record({"nbformat": st.sampled_from([3, 4])}, {"cells": st.lists(CELL, max_size=3),
                                                   "worksheets": st.lists(record({"cells": st.lists(CELL, max_size=3)}, {}),
                                                                          max_size=2)}),
)
DOCUMENT = st.one_of(THREAD, st.lists(st.one_of(REPLY, POST, EVENT, THREAD), min_size=1, max_size=4))


def _spelled(doc, ascii_only: bool, duplicate: bool, encoding: str) -> bytes:
    """``doc`` as a file: escaped or raw (a lone surrogate as its invalid UTF-8 bytes), an object
    with a key given twice (``"body": 5`` first: the decoder keeps the last), in UTF-8, UTF-8 with
    a BOM or UTF-16 with one."""
    text = json.dumps(doc, ensure_ascii=ascii_only)
    if duplicate and isinstance(doc, dict) and len(text) > 2:
        text = '{"body": 5, "title": null, ' + text[1:]
    if encoding == "utf-16":
        return codecs.BOM_UTF16_LE + text.encode("utf-16-le", "surrogatepass")
    return (codecs.BOM_UTF8 if encoding == "utf-8-sig" else b"") + text.encode("utf-8", "surrogatepass")


@LIMIT
@RUN
@given(DOCUMENT, st.booleans(), st.booleans(), st.sampled_from(["utf-8", "utf-8-sig", "utf-16"]))
@example({"nbformat": 4, "cells": [{"source": BUS, "outputs": 5}]}, True, False, "utf-8")  # the long run's find
def test_any_thread_with_any_field_reads_and_replies_safely(doc, ascii_only, duplicate, encoding):
    """A thread of every shape flattens, with a field of the wrong type anywhere, and its
    diagnosis replies as markdown with no raw control character (a notebook cell's ``"outputs": 5``
    raised before)."""
    data = _spelled(doc, ascii_only, duplicate, encoding)
    if encoding != "utf-16":
        flat, kind = flatten_bytes(data)
        assert isinstance(flat, bytes) and (kind is None) == (flat == data)
    result = scanned(data)
    assert result.error is None
    reply = report.render([result], "md")
    assert not UNSAFE.search(reply.replace("\n", "")) and reply.encode("utf-8")  # (no lone surrogate either)


def _count(value) -> int:
    if isinstance(value, dict):
        return 1 + len(value) + sum(_count(v) for v in value.values())
    return 1 + sum(_count(v) for v in value) if isinstance(value, list) else 1


@LIMIT
@RUN
@given(ANY, st.booleans())
def test_the_value_bound_never_falls_short(doc, indent):
    """``json_values_bound`` is at least the values and keys a document decodes to."""
    assert _count(doc) <= json_values_bound(json.dumps(doc, indent=1 if indent else None).encode())


@LIMIT
@RUN
@given(ANY, st.booleans())
def test_values_over_never_falls_short(doc, indent):
    """``json_values_over`` never says a document holds no more values and keys than it decodes
    to, whatever its strings hold."""
    data = json.dumps(doc, indent=1 if indent else None).encode()
    values = _count(doc)
    assert values == 1 or json_values_over(data, values - 1)


DEEP = "[" * 10_000 + "]" * 10_000


@pytest.mark.timeout(30)
@pytest.mark.parametrize("doc", [
    '{"title": "x", "body": %s}', '{"title": "x", "body": "b", "comments": [{"body": %s, "user": "u"}]}',
    '{"title": %s, "body": "b"}', '{"title": "x", "post_stream": {"posts": [{"cooked": %s, "post_number": 1}]}}',
    '{"nbformat": 4, "cells": [{"source": "s", "outputs": %s}]}', '[{"body": "b", "user": "u"}, %s]',
    '{"log": %s}\n{"log": "x"}\n',
])
def test_json_nested_ten_thousand_deep_anywhere(doc):
    """Nested past the decoder's depth in any field: read as text, never a RecursionError."""
    data = (doc % DEEP).encode()
    assert flatten_bytes(data) == (data, None)
    assert scanned(data).error is None


@pytest.mark.timeout(30)
def test_a_first_line_nested_past_the_depth_within_the_sniffed_bytes(tmp_path):
    """The sniffing decodes a first line under 4 KB to tell JSON lines from a document: one nested
    2000 deep raised RecursionError out of ``scan``, ``paste`` and ``dllogscan.scan_file``."""
    data = ('{"a": ' + "[" * 2000 + "]" * 2000 + '}\n{"log": "' + BUS + '"}\n').encode()
    assert flatten_bytes(data) == (data, None)
    result = scanned(data)
    assert result.error is None and [d.cls for d in result.diagnoses] == ["A"]


# -- a topic's posts: one HTML parser for all ------------------------------------------------------

@pytest.mark.parametrize("doc", [
    {"title": "t", "post_stream": {"posts": [{"cooked": f"<p>post {i}</p>", "post_number": i} for i in range(50)]}},
    [{"cooked": f"<p>post {i}</p>", "post_number": i} for i in range(50)],
])
def test_a_topic_parses_its_posts_with_one_parser(monkeypatch, doc):
    """Each post's cooked HTML took a parser of its own (31 us for ``<p>a</p>``: 400 000 posts, the
    most the value cap lets through, took 18-22 s); now one reads them all (10 us a post: 6.5-6.9 s)."""
    from lxml import etree

    made = []
    parser = etree.HTMLParser
    monkeypatch.setattr(etree, "HTMLParser", lambda *a, **k: made.append(1) or parser(*a, **k))
    flat, kind = flatten_bytes(json.dumps(doc).encode())
    assert kind in ("discourse-topic", "discourse-post-list") and len(made) == 1
    assert "--- post 49 ---\npost 49\n" in flat.decode()


HTML_PIECES = st.sampled_from(["<p>", "</p>", "<pre>", "</pre>", "<script>", "</script>", "<code>", "<blockquote>",
                               "<aside class=quote>", "</aside>", "<nav>", "<title>", "<h1>", "<div hidden>", "<br>",
                               '<bdi class="js-issue-title">', '<div class="markdown-body">', "&amp;", "&#0;", "\ud800",
                               "<!--", "<![CDATA[", "<", "x", " ", "\n", BUS])


@LIMIT
@RUN
@given(st.lists(st.lists(HTML_PIECES, max_size=12).map("".join), max_size=6))
def test_a_parser_read_again_leaves_nothing_behind(fragments):
    """Fragments read one after another by one ``HtmlTexts`` give what each gives alone: an
    element left open, a script, a thread page's title, a comment never closed do not carry over."""
    to_text = HtmlTexts()
    assert [to_text(f) for f in fragments] == [html_to_text(f) for f in fragments]
