"""Issue-tracker exports and HTML threads are flattened before scanning; plain logs are not."""
from __future__ import annotations

import io
import json
import re

import pytest

from dllogscan.pipeline import runner as pipeline
from dllogscan.sources import streams as sources
from dllogscan.sources.documents import MAX_DOCUMENT_BYTES, flatten_bytes, flatten_stream, html_to_text
from tests.conftest import FIXTURES, progress_lines

DOCS = FIXTURES / "documents"


def run(data: bytes, scanner):
    return pipeline.run(sources.from_bytes(data, "doc"), scanner)


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), start=1) if needle in line)


def test_github_error_in_the_third_comment(mini_scanner):
    data = (DOCS / "gh-third-comment.json").read_bytes()
    flat, kind = flatten_bytes(data)
    text = flat.decode()
    assert kind == "github-issue"
    order = [text.index(s) for s in ("# Training dies", "--- issue", "comment 1 by maint", "comment 2 by op",
                                     "comment 3 by op", "comment 4 by maint")]
    assert order == sorted(order)
    r = run(data, mini_scanner)
    assert r.document == "github-issue" and r.to_dict()["document"] == "github-issue"
    top = r.diagnoses[0]
    assert (top.cls, top.subclass) == ("B", "getitem")
    assert top.evidence[0].line == line_of(text, "Caught KeyError in DataLoader worker process 0")
    assert top.evidence[0].line > line_of(text, "comment 3 by op")


def test_gitlab_notes_in_order_system_notes_skipped(mini_scanner):
    data = (DOCS / "gitlab.json").read_bytes()
    flat, kind = flatten_bytes(data)
    assert kind == "gitlab-issue" and b"changed the description" not in flat
    r = run(data, mini_scanner)
    assert r.diagnoses[0].cls == "B" and r.diagnoses[0].subclass == "oom"
    lines = {e.line for e in r.diagnoses[0].evidence}
    text = flat.decode()
    assert {line_of(text, "killed by signal: Killed"), line_of(text, "Killed process 1234")} <= lines


def test_discourse_cooked_html_becomes_text(mini_scanner):
    data = (DOCS / "discourse.json").read_bytes()
    flat, kind = flatten_bytes(data)
    text = flat.decode()
    assert kind == "discourse-topic"
    assert "dataloader's workers" in text and "it works & is slow" in text and "<code" not in text
    assert "With `num_workers=0` it works" in text and "Use `--shm-size=8g`." in text  # inline code as markdown
    r = run(data, mini_scanner)
    assert r.diagnoses[0].cls == "A"
    assert r.diagnoses[0].evidence[0].line == line_of(text, "killed by signal: Bus error")


def test_html_thread_drops_scripts_keeps_pre_lines(mini_scanner):
    data = (DOCS / "thread.html").read_bytes()
    flat, kind = flatten_bytes(data)
    text = flat.decode()
    assert kind == "html" and "var x" not in text and "color: red" not in text
    assert "step 10\nRuntimeError: DataLoader worker (pid 99)" in text
    assert "> did the OOM killer fire?" in text
    r = run(data, mini_scanner)
    assert [d.cls for d in r.diagnoses] == ["B"]  # the <script> text is not evidence


def test_markdown_paste_with_fences_and_quotes(mini_scanner):
    data = (DOCS / "paste-fences-quotes.md").read_bytes()
    assert flatten_bytes(data) == (data, None)
    r = run(data, mini_scanner)
    assert r.document is None
    d = r.diagnoses[0]
    assert d.cls == "A" and d.evidence[0].line == 5
    assert d.evidence[0].text.startswith("RuntimeError: DataLoader worker (pid 363)")
    assert r.facts.get("num_workers") == "8" or d.facts.get("num_workers") == "8"


@pytest.mark.parametrize("data", [
    b'{"level": "info", "msg": "step 1"}\n{"level": "error", "msg": "x"}\n',  # JSON lines log
    b'{"some": "other json"}',
    b'{ not json at all',
    b"<6>[ 12.3] kernel: eth0 up\n",
])
def test_other_json_and_angle_brackets_pass_through(data):
    assert flatten_bytes(data) == (data, None)


def test_plain_log_streams_untouched():
    head = progress_lines(50).encode()
    rest = io.BytesIO(b"more")
    assert flatten_stream(head, rest) == (head, None)
    assert rest.read() == b"more"  # nothing was consumed


def test_document_over_the_cap_keeps_every_byte():
    doc = json.dumps({"title": "t", "body": "x" * 500, "comments": []}).encode()
    head, rest = doc[:100], io.BytesIO(doc[100:])
    out, kind = flatten_stream(head, rest, limit=200)
    assert kind is None and out + rest.read() == doc
    assert MAX_DOCUMENT_BYTES == 20 * 1024 * 1024


def test_html_entities_and_lists():
    assert html_to_text("<ul><li>a &lt;b&gt;</li><li>c</li></ul>") == "- a <b>\n- c\n"


def test_inline_code_reads_as_markdown_writes_it():
    """Inline ``<code>`` is written between backticks, as the markdown it was rendered from (the
    corpus threads are markdown, and their signatures and words read them so): two with spaces
    around code that holds one, none around empty code; one pair for nested code. A code block
    (``<pre>``, its ``<code>`` inside) keeps its lines as they are."""
    assert html_to_text("<p>Set <code>num_workers=0</code> and <code>pin_memory</code>.</p>") == \
        "Set `num_workers=0` and `pin_memory`.\n"
    assert html_to_text("<pre><code>x = `a`\n  y</code></pre><pre><span><code>z</code></span></pre>") == "x = `a`\n  y\nz\n"
    assert html_to_text("<p>run <code>a`b</code> <code></code><code> </code>now</p>") == "run `` a`b `` now\n"
    assert html_to_text("<p>a<code>x<code>y</code>z</code>b</p>") == "a`xyz`b\n"
    assert html_to_text("<blockquote><p><code>/dev/shm</code> is full,<br><code>df</code> says</p></blockquote>") == \
        "> `/dev/shm` is full,\n> `df` says\n"
    for hidden in ('<code class="sidebar">x</code>', "<code hidden>x</code>", "<button><code>x</code></button>",
                   "<script><code>x</code></script>"):  # dropped with what holds it, backticks too
        assert html_to_text(f"<p>a {hidden}b</p>").replace("\n", " ").split() == ["a", "b"], hidden


def test_github_rest_issue_object_whose_comments_is_a_count(mini_scanner):
    """``GET /repos/{o}/{r}/issues/{n}`` (what ``gh api`` and a saved API response hold): the
    same fields as ``gh issue view --json``, but ``comments`` is how many there are."""
    doc = {"url": "https://api.github.com/repos/o/r/issues/7", "html_url": "https://github.com/o/r/issues/7",
           "number": 7, "title": "Loader dies", "user": {"login": "op", "id": 1, "type": "User"},
           "labels": [{"name": "bug"}], "state": "open", "comments": 3, "created_at": "2023-07-28T20:30:00Z",
           "body": "It crashes:\n\n```\nstep 10\nRuntimeError: DataLoader worker (pid 99) is killed by signal: "
                   "Bus error.\n```\n", "reactions": {"total_count": 0}}
    flat, kind = flatten_bytes(json.dumps(doc, indent=2).encode())
    text = flat.decode()
    assert kind == "github-issue"
    assert text.startswith("# Loader dies\n") and "--- issue by op ---" in text and '"html_url"' not in text
    r = run(json.dumps(doc).encode(), mini_scanner)
    assert r.document == "github-issue"
    [e] = r.diagnoses[0].evidence
    assert e.text == "RuntimeError: DataLoader worker (pid 99) is killed by signal: Bus error."
    assert e.line == line_of(text, "killed by signal")
    for not_a_count in (True, "3", 2.5):
        assert flatten_bytes(json.dumps({**doc, "comments": not_a_count}).encode())[1] is None


SAVED_PAGE = """<!DOCTYPE html><html><head><title>Loader crash - Q&amp;A</title></head><body>
<header class="topbar"><a href="/">Home</a><form role="search"><input name="q"><button>Search</button></form></header>
<nav aria-label="Global"><ul><li><a href="/q">Questions</a></li></ul></nav>
<div id="content"><article><header><h1>Loader crash</h1></header>
<div class="post"><p>Training prints</p><pre><code>step 10
RuntimeError: DataLoader worker (pid 99) is killed by signal: Bus error.
</code></pre><button aria-label="Copy">Copy</button></div></article>
<div id="sidebar" role="complementary"><h4>Linked</h4>
<a href="/q/1">DataLoader worker (pid(s) 12) exited unexpectedly</a></div>
<div id="ajax-error" hidden>RuntimeError: DataLoader timed out after 5 seconds</div>
<form class="js-comment-update"><textarea name="body">Traceback: CUDA error: initialization error</textarea></form>
</div><footer role="contentinfo"><a href="/terms">Terms</a> Cannot re-initialize CUDA in forked subprocess</footer>
</body></html>"""


def test_saved_page_chrome_is_not_thread_text(mini_scanner):
    """A saved page's navigation, forms, buttons, hidden parts, sidebar and site footer are not
    the thread: an error text there (a linked question's title) is no evidence."""
    flat, kind = flatten_bytes(SAVED_PAGE.encode())
    text = flat.decode()
    assert kind == "html"
    for chrome in ("Questions", "Search", "Copy", "Linked", "exited unexpectedly", "timed out", "CUDA", "Terms"):
        assert chrome not in text, chrome
    assert "Loader crash\nTraining prints\nstep 10\nRuntimeError: DataLoader worker (pid 99)" in text  # an article's header stays
    r = run(SAVED_PAGE.encode(), mini_scanner)
    assert [(d.cls, d.subclass) for d in r.diagnoses] == [("A", "bus-error")]
    assert html_to_text("<p>a</p><img hidden><br hidden><p>b</p>") == "a\nb\n"  # a void element skips nothing


def test_an_aside_outside_a_post_is_chrome(mini_scanner):
    """A page of no known site: an ``<aside>`` outside any article or section (in ``<main>`` too) is
    the page's complementary landmark (HTML-AAM), a "Related topics" list whose error texts are not
    the thread's; one inside a post is the post's own note, kept."""
    page = ('<html><body><header><a href="/">Forum</a></header><main><h1>Loader crash</h1><article><p>Training prints</p>'
            '<pre>RuntimeError: DataLoader worker (pid 99) is killed by signal: Bus error.</pre>'
            '<aside><p>Note: runs in Docker</p></aside></article>'
            '<aside><h3>Related</h3><a href="/t/1">DataLoader worker (pid(s) 12) exited unexpectedly</a></aside></main>'
            '<aside class="widget">Cannot re-initialize CUDA in forked subprocess</aside>'
            '<section><aside>Section note</aside></section></body></html>')
    assert html_to_text(page) == ("Loader crash\nTraining prints\nRuntimeError: DataLoader worker (pid 99) is killed by "
                                  "signal: Bus error.\nNote: runs in Docker\nSection note\n")
    r = run(page.encode(), mini_scanner)
    assert [(d.cls, d.subclass) for d in r.diagnoses] == [("A", "bus-error")]


def test_comments_are_read_oldest_first_whatever_order_the_export_lists():
    """GitLab's notes API answers newest first (``sort=desc`` by default); a thread is read in
    the order it was written, by ``created_at`` (GitHub: ``createdAt``; Discourse: post number)."""
    notes = [{"body": f"note written {day}", "system": False, "author": {"username": "u"},
              "created_at": f"2023-07-{day}T10:00:00.000Z"} for day in (30, 29, 28)]
    gitlab_doc = {"iid": 1, "title": "t", "description": "d", "notes": notes}
    gh_doc = {"title": "t", "body": "b", "comments": [{"body": n["body"], "createdAt": n["created_at"][:19] + "Z"}
                                                      for n in notes]}
    posts = [{"post_number": k, "cooked": f"<p>note written {d}</p>"} for k, d in ((3, 30), (2, 29), (1, 28))]
    for doc in (gitlab_doc, gh_doc, {"title": "t", "post_stream": {"posts": posts}}):
        text = flatten_bytes(json.dumps(doc).encode())[0].decode()
        where = [text.index(f"note written {day}") for day in (28, 29, 30)]
        assert where == sorted(where), text
    unsortable = [{"body": "first"}, {"body": "second", "created_at": "2023-07-01T00:00:00Z"}]  # kept as given
    text = flatten_bytes(json.dumps({"title": "t", "body": "b", "comments": unsortable}).encode())[0].decode()
    assert text.index("first") < text.index("second")


def test_the_tools_own_part_headers_are_neither_read_nor_cited():
    """A flattened thread's ``--- post 1 by octo-reporter ---`` is the tool's line: before, the
    classifier read it (an author's name as a feature) and cited it as evidence for A."""
    from dllogscan.classify.digest import own_words
    from dllogscan.core.sections import HEADER, header

    prose = ("Pipelines on our cluster get containers with only 64MB of shared memory (/dev/shm), too little "
             "for PyTorch DataLoaders with several workers, so they fail with shared-memory errors.")
    doc = {"title": "Add shm_size support to the orchestrator",
           "post_stream": {"posts": [{"post_number": 1, "username": "octo-reporter", "cooked": f"<p>{prose}</p>"}]}}
    result = pipeline.run(sources.from_bytes(json.dumps(doc).encode(), "t.json"), pipeline.get_scanner())
    cited = [e.text for d in result.diagnoses for e in d.evidence]
    assert result.diagnoses and not any(HEADER.fullmatch(t) for t in cited)
    for label, author in (("issue", "op"), ("comment 12", "a b"), ("note 3", ""), ("post 7", "x"), ("question", ""),
                          ("answer 2", "y")):
        assert HEADER.fullmatch(header(label, author))
    lines = [(1, "--- comment 2 by bob ---"), (2, "RuntimeError: x"), (3, "--- not a header ---")]
    assert own_words(lines) == lines[1:]


BUS_LINE = "RuntimeError: DataLoader worker (pid 99) is killed by signal: Bus error."


def gh_comment(login: str, day: int, body: str) -> dict:
    """A comment as ``gh api repos/O/R/issues/N/comments`` lists it."""
    return {"url": f"https://api.github.com/repos/o/r/issues/comments/{day}", "id": day,
            "user": {"login": login, "id": day, "type": "User"}, "created_at": f"2023-07-{day}T10:00:00Z",
            "author_association": "NONE", "body": body, "reactions": {"total_count": 0}}


def test_arrays_of_thread_parts_read_like_the_single_object_forms(mini_scanner):
    """``gh api .../issues/N/comments`` (an array of comments), GitLab's ``/notes`` (newest first,
    system notes among them), a Discourse post list and ``gh issue list --json`` are threads: each
    element a part under its header, oldest first, like ``gh issue view --json`` or a topic."""
    comments = [gh_comment("op", 28, "It crashes."), gh_comment("maint", 29, "Full log?"),
                gh_comment("op", 30, f"```\nstep 10\n{BUS_LINE}\n```")]
    data = json.dumps(comments, indent=2).encode()
    flat, kind = flatten_bytes(data)
    text = flat.decode()
    assert kind == "github-comment-list" and '"url"' not in text
    assert text.startswith("--- comment 1 by op ---\nIt crashes.\n")
    assert "--- comment 3 by op ---\n```\nstep 10\n" + BUS_LINE in text
    r = run(data, mini_scanner)
    assert r.document == "github-comment-list" and r.diagnoses[0].cls == "A"
    assert r.diagnoses[0].evidence[0].line == line_of(text, "killed by signal")
    # the REST issue object in front of its comments reads as ``gh issue view --json`` does
    issue = {"title": "Loader dies", "user": {"login": "op"}, "comments": 2, "body": "It crashes.",
             "created_at": "2023-07-27T10:00:00Z"}
    viewed = {"title": "Loader dies", "author": {"login": "op"}, "body": "It crashes.",
              "comments": [{**c, "author": c["user"]} for c in comments]}
    assert flatten_bytes(json.dumps([issue, *comments]).encode())[0] == flatten_bytes(json.dumps(viewed).encode())[0]

    notes = [{"id": 3, "body": BUS_LINE, "author": {"username": "op"}, "system": False, "noteable_type": "Issue",
              "created_at": "2023-07-30T10:00:00.000Z"},
             {"id": 2, "body": "changed the description", "author": {"username": "bot"}, "system": True,
              "noteable_type": "Issue", "created_at": "2023-07-29T10:00:00.000Z"},
             {"id": 1, "body": "Any log?", "author": {"username": "maint"}, "system": False, "noteable_type": "Issue",
              "created_at": "2023-07-28T10:00:00.000Z"}]
    flat, kind = flatten_bytes(json.dumps(notes).encode())
    assert (kind, flat.decode()) == ("gitlab-note-list", "--- note 1 by maint ---\nAny log?\n\n"
                                                         f"--- note 2 by op ---\n{BUS_LINE}\n")

    posts = [{"id": 12, "post_number": 2, "username": "maint", "created_at": "2023-07-29T10:00:00.000Z",
              "cooked": f"<pre><code class=\"lang-auto\">{BUS_LINE}\n</code></pre>"},
             {"id": 11, "post_number": 1, "username": "op", "created_at": "2023-07-28T10:00:00.000Z",
              "cooked": "<p>It &amp; the loader crash.</p>"}]
    flat, kind = flatten_bytes(json.dumps(posts).encode())
    assert (kind, flat.decode()) == ("discourse-post-list", f"--- post 1 by op ---\nIt & the loader crash.\n\n"
                                                        f"--- post 2 by maint ---\n{BUS_LINE}\n")

    listed = [{"number": 8, "title": "Loader dies", "body": BUS_LINE}, {"number": 7, "title": "Docs typo", "body": "x"}]
    flat, kind = flatten_bytes(json.dumps(listed).encode())
    assert kind == "github-issue-list"
    assert flat.decode() == f"# Loader dies\n\n--- issue ---\n{BUS_LINE}\n\n# Docs typo\n\n--- issue ---\nx\n"


def test_paginated_arrays_are_one_thread():
    """``gh api --paginate`` writes one array a page (``[...][...]``); with ``--slurp``, an array
    of the pages (``[[...],[...]]``): both are the comments in order."""
    pages = [[gh_comment("op", 28, "first")], [gh_comment("maint", 29, "second")]]
    expected = "--- comment 1 by op ---\nfirst\n\n--- comment 2 by maint ---\nsecond\n"
    for data in ("".join(json.dumps(p) for p in pages), "\n".join(json.dumps(p, indent=2) for p in pages),
                 json.dumps(pages)):
        assert flatten_bytes(data.encode()) == (expected.encode(), "github-comment-list"), data


def timeline_event(event: str, day: int, **fields) -> dict:
    """An element of ``gh api repos/O/R/issues/N/timeline`` that is no post."""
    return {"id": day, "node_id": f"LE_{day}", "url": f"https://api.github.com/repos/o/r/issues/events/{day}",
            "actor": {"login": "maint", "id": 2, "type": "User"}, "event": event, "commit_id": None,
            "created_at": f"2023-07-{day}T09:00:00Z", **fields}


def test_a_github_timeline_is_its_posts():
    """``gh api repos/O/R/issues/N/timeline`` lists the comments among GitHub's records of what
    happened (labeled, cross-referenced, committed, closed): the comments are read as a comment
    list's are, a pull request review's text too; the other events are no part of the thread (a
    cross-reference holds the other issue, and its error is not this thread's)."""
    other = {"number": 9, "title": "DataLoader worker (pid(s) 12) exited unexpectedly",
             "body": "RuntimeError: DataLoader worker (pid(s) 12) exited unexpectedly"}
    elements = [timeline_event("labeled", 27, label={"name": "bug", "color": "d73a4a"}),
                {**gh_comment("maint", 28, "Any log?"), "event": "commented", "actor": {"login": "maint"},
                 "node_id": "IC_28", "html_url": "https://github.com/o/r/issues/7#issuecomment-28"},
                {"event": "cross-referenced", "actor": {"login": "alice", "id": 3},
                 "created_at": "2023-07-29T09:00:00Z", "updated_at": "2023-07-29T09:00:00Z",
                 "source": {"type": "issue", "issue": other}},
                {"sha": "9f2c", "node_id": "C_9f2c", "url": "https://api.github.com/repos/o/r/git/commits/9f2c",
                 "message": "Raise /dev/shm for the loader tests", "event": "committed"},
                {**gh_comment("op", 30, f"```\nstep 10\n{BUS_LINE}\n```"), "event": "commented",
                 "actor": {"login": "op"}, "node_id": "IC_30"},
                timeline_event("closed", 31, state_reason="completed")]
    expected = f"--- comment 1 by maint ---\nAny log?\n\n--- comment 2 by op ---\n```\nstep 10\n{BUS_LINE}\n```\n"
    assert flatten_bytes(json.dumps(elements, indent=2).encode()) == (expected.encode(), "github-timeline")
    r = pipeline.run(sources.from_bytes(json.dumps(elements).encode(), "timeline.json"), pipeline.get_scanner())
    assert r.document == "github-timeline" and [(d.cls, d.subclass) for d in r.diagnoses][:1] == [("A", "bus-error")]
    assert {e.text for d in r.diagnoses for e in d.evidence} == {BUS_LINE}
    review = {"id": 5, "node_id": "PRR_5", "user": {"login": "maint"}, "body": "The loader test needs --shm-size.",
              "state": "COMMENTED", "submitted_at": "2023-07-29T12:00:00Z", "event": "reviewed"}
    flat, kind = flatten_bytes(json.dumps(elements[:2] + [review]).encode())
    assert kind == "github-timeline" and flat.decode().endswith(
        "--- comment 2 by maint ---\nThe loader test needs --shm-size.\n")
    # a timeline of events alone holds no post: an empty thread, not its JSON read as text
    assert flatten_bytes(json.dumps([elements[0], elements[2], elements[5]]).encode()) == (b"", "github-timeline")


@pytest.mark.parametrize("data", [
    b"[1, 2, 3]",
    b'["a", "b"]',
    b"[]",
    b'[{"level": "info", "msg": "step 1"}, {"level": "error", "msg": "x"}]',  # an array of log records
    b'[{"event": "epoch 1 done", "level": "info", "actor": "trainer"}]',  # structlog's event: no timeline
    b'[{"body": "no author"}]',
    b'[{"body": "x", "user": {"login": "op"}}, 5]',  # one element is no part of a thread
    b'[{"body": "x", "user": {"login": "op"}}, {"ts": 1}]',
    b'[{"body": "x", "user": {"login": "op"}}',  # cut short
    b'[{"body": "x", "user": {"login": "op"}}] trailing',
    b'[{"body": "x", "system": true, "author": {"username": "bot"}}]',  # nothing but system notes
    b'[{"ts": 1, "msg": "a"}]\n[{"ts": 2, "msg": "b"}]\n',  # JSON lines whose lines are arrays
    b"[rank0]: RuntimeError: DataLoader worker (pid 5) is killed by signal: Bus error.\n",
    b"[2024-01-01 10:00:00] INFO step 1\n[2024-01-01 10:00:01] INFO step 2\n",
])
def test_arrays_of_other_things_stay_text(data):
    assert flatten_bytes(data) == (data, None)


@pytest.mark.timeout(30)
def test_hostile_arrays_are_bounded():
    """An array nested past the decoder's depth, or megabytes of elements that are no part of a
    thread, is read as text: the first element decides (no parse of the rest), nothing raises."""
    import time
    import tracemalloc

    deep = b'[{"body": ' + b"[" * 200_000 + b"]" * 200_000 + b', "user": {}}]'
    assert flatten_bytes(deep) == (deep, None)
    assert flatten_bytes(b"[[" + b"[" * 200_000) == (b"[[" + b"[" * 200_000, None)
    records = b"[" + b",".join([b'{"ts": 1, "msg": "x"}'] * 400_000) + b"]"  # 9 MB
    tracemalloc.start()
    start = time.perf_counter()
    assert flatten_bytes(records) == (records, None)
    elapsed, peak = time.perf_counter() - start, tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert elapsed < 2 and peak < 3 * len(records)  # json.loads holds 400 000 dicts: 10 times the bytes
    comments = json.dumps([gh_comment("op", 28, "x" * 500)] * 10).encode()
    head, rest = comments[:100], io.BytesIO(comments[100:])
    out, kind = flatten_stream(head, rest, limit=1000)  # over the cap: every byte, as text
    assert kind is None and out + rest.read() == comments


GITHUB_PAGE = """<!DOCTYPE html><html><head><title>Loader dies · Issue #7 · o/r · GitHub</title></head><body>
<div class="application-main"><main id="js-repo-pjax-container">
<div id="partial-discussion-header"><h1 class="gh-header-title"><bdi class="js-issue-title">Loader dies</bdi>
<span>#7</span></h1></div>
<div class="Layout Layout--flowRow-until-md Layout--sidebarPosition-end">
<div class="Layout-main"><div class="TimelineItem js-comment-container"><td class="comment-body markdown-body">
<p dir="auto">Training prints</p><pre><code>step 10
RuntimeError: DataLoader worker (pid 99) is killed by signal: Bus error.
</code></pre></td></div></div>
<div class="Layout-sidebar"><div id="partial-discussion-sidebar">
<div class="discussion-sidebar-item"><div class="discussion-sidebar-heading">Assignees</div>No one assigned</div>
<div class="discussion-sidebar-item"><h2 class="discussion-sidebar-heading">Labels</h2><a>bug</a></div>
<div class="discussion-sidebar-item"><div class="discussion-sidebar-heading">Milestone</div>No milestone</div>
<div class="discussion-sidebar-item"><div class="discussion-sidebar-heading">Development</div>No branches</div>
<div class="discussion-sidebar-item"><div class="discussion-sidebar-heading">3 participants</div></div>
</div></div></div></main></div></body></html>"""
REACT_PAGE = """<html><head><title>Loader dies · Issue #7 · o/r</title></head><body>
<div data-testid="issue-viewer-container"><div data-testid="issue-header"><h1><bdi data-testid="issue-title">Loader dies
</bdi></h1></div><div data-testid="issue-body"><div data-testid="markdown-body" class="markdown-body">
<pre><code>RuntimeError: DataLoader worker (pid 99) is killed by signal: Bus error.</code></pre></div></div>
<div data-testid="issue-viewer-metadata-pane"><div data-testid="sidebar-section"><h3>Assignees</h3>No one</div>
<div data-testid="sidebar-section"><h3>Labels</h3><span>bug</span></div>
<div data-testid="sidebar-section"><h3>Projects</h3>None yet</div>
<div><div><h3>Notifications</h3><span>Customize</span></div></div></div></div></body></html>"""


def test_a_saved_github_page_drops_its_sidebar_and_repeated_title(mini_scanner):
    """GitHub marks its issue sidebar by name (``Layout-sidebar``, ``partial-discussion-sidebar``,
    React's ``data-testid="issue-viewer-metadata-pane"``), not by ARIA: its Assignees, Labels,
    Milestone are the tracker's fields, not the thread. The ``<title>`` repeats the ``<h1>``."""
    untitled = [page.replace("js-issue-title", "").replace('"issue-title"', '""') for page in (GITHUB_PAGE, REACT_PAGE)]
    unmarked = [page.replace("gh-header-title", "").replace('"issue-header"', '""') for page in untitled]
    for page in (GITHUB_PAGE, REACT_PAGE, *untitled, *unmarked):  # unmarked: no GitHub issue page, read as any page
        text = html_to_text(page)
        for field in ("Assignees", "Labels", "bug", "Milestone", "Projects", "Development", "participants",
                      "Notifications", "· Issue #7"):
            assert field not in text, (field, text)
        assert text.startswith(("# Loader dies\n", "Loader dies")) and BUS_LINE in text
    assert html_to_text(GITHUB_PAGE) == f"# Loader dies\n\n--- issue ---\nTraining prints\nstep 10\n{BUS_LINE}\n"
    # the title element lost, the <h1> around it is the title, less the issue's number; lost too, a page
    assert [html_to_text(page) for page in untitled] == [html_to_text(GITHUB_PAGE), html_to_text(REACT_PAGE)]
    assert html_to_text(unmarked[0]) == f"Loader dies #7\nTraining prints\nstep 10\n{BUS_LINE}\n"
    # a post's markup in the side pane is the pane's (a milestone's description), dropped with it
    in_pane = GITHUB_PAGE.replace("No milestone", '<div class="markdown-body">Fix the loader by v2</div>')
    assert html_to_text(in_pane) == html_to_text(GITHUB_PAGE)
    r = run(GITHUB_PAGE.encode(), mini_scanner)
    assert r.document == "html" and [(d.cls, d.subclass) for d in r.diagnoses] == [("A", "bus-error")]
    # a page without an <h1> has its <title> as its one heading; a wrapper named for the sidebar
    # beside it holds the content, and is kept (so is a <body> or <main> whatever its class)
    assert html_to_text("<title>Ticket  42</title><p>It crashes</p>") == "Ticket 42\nIt crashes\n"
    assert html_to_text('<div class="has-sidebar"><article><p>It crashes</p></article>'
                        '<div id="sidebar">Linked</div></div>') == "It crashes\n"
    assert html_to_text('<body class="sidebar-open"><main class="with-sidebar"><p>It crashes</p></main>'
                        '<aside class="sidebar"><p>Related</p></aside></body>') == "It crashes\n"


#: what the two saved pages below hold of the thread: the title, each post under its header (with
#: its author, as the JSON exports have it), the code blocks line for line; none of GitHub's own
#: lines around them
SAVED_ISSUE_THREADS = {
    "github-issue-page.html": """# DataLoader workers die in Docker

--- issue by octo-reporter ---
Training in a container stops in the first epoch with `num_workers=8`:
Traceback (most recent call last):
  File "train.py", line 41, in <module>
    for batch in loader:
RuntimeError: DataLoader worker (pid 2241) is killed by signal: Bus error. It is possible that dataloader's \
workers are out of shared memory. Please try to raise your shared memory limit.
It runs with `num_workers=0`.

--- comment 1 by maint-bot ---
Docker gives a container 64 MB of `/dev/shm`. Start it with more:
docker run --shm-size=8g acme/train

--- comment 2 by octo-reporter ---
That fixed it, thanks!
""",
    "github-issue-page-react.html": """# Workers hang after the first epoch with persistent_workers

--- issue by octo-reporter ---
With `persistent_workers=True` the loop stops after epoch 1; py-spy shows the main process in:
Thread 0x7f3a (idle): "MainThread"
    _poll (multiprocessing/connection.py:424)
    get (multiprocessing/queues.py:113)
    _try_get_data (torch/utils/data/dataloader.py:1133)

--- comment 1 by maint-bot ---
The dataset opens an HDF5 file in `__init__`; open it in each worker instead:
def worker_init_fn(worker_id):
    info = torch.utils.data.get_worker_info()
    info.dataset.open()
""",
}
#: GitHub's words around a thread on a saved issue page (repository header, issue number, timeline
#: events, reactions, the logged-out notice, sidebar, footer), in either layout
GITHUB_CHROME = ("Skip to content", "Notifications", "Fork 1k", "Star 9k", "Pull requests", "#1234", "#5678",
                 "commented", "opened", "added", "label", "mentioned this", "exited unexpectedly", "closed this",
                 "completed", "Member", "Author", "Sign up", "Sign in", "join this conversation", "Assignees",
                 "Milestone", "participants", "Terms", "Closed", "New issue", "Activity")


def read_saved_page(name: str, thread: str, chrome: tuple[str, ...], scanner):
    """The fixture page ``name`` flattened, which must be ``thread`` exactly, none of the site's
    ``chrome`` words in it; and its scan, whose evidence is quoted from the lines it cites."""
    data = (DOCS / name).read_bytes()
    flat, kind = flatten_bytes(data)
    text = flat.decode()
    assert kind == "html" and text == thread
    for words in chrome:
        assert words not in text, words
    r = run(data, scanner)
    assert r.document == "html"
    for d in r.diagnoses:
        for e in d.evidence:
            assert e.text in text.splitlines()[e.line - 1]
    return text, r


@pytest.mark.parametrize("name", SAVED_ISSUE_THREADS)
def test_a_saved_github_issue_page_reads_as_its_thread(name, mini_scanner):
    """Ctrl-S of an issue page, in GitHub's server-rendered layout (``js-timeline-item``,
    ``timeline-comment``, ``comment-body``) and its React one (``data-testid="issue-title"``,
    ``"markdown-body"``): the issue's title and the posts' text, code blocks included, nothing of
    GitHub's own; an error's words in a cross-referenced issue's title are no evidence."""
    text, r = read_saved_page(name, SAVED_ISSUE_THREADS[name], GITHUB_CHROME, mini_scanner)
    assert r.diagnoses
    if name == "github-issue-page.html":
        assert [(d.cls, d.subclass) for d in r.diagnoses] == [("A", "bus-error")]
        assert [e.line for e in r.diagnoses[0].evidence] == [line_of(text, "is killed by signal: Bus error")]


def test_pages_not_from_github_issues_are_read_as_before():
    """Only a page with both an issue title and a post's markup is a GitHub issue page: a README or
    a documentation site styled with GitHub's ``markdown-body``, or an issue title alone, keeps
    every part the generic reading keeps."""
    readme = ('<html><head><title>vision/README.md at main · acme/vision</title></head><body><h1>acme/vision</h1>'
              '<article class="markdown-body entry-content"><h2>Install</h2><pre>pip install vision</pre></article>'
              '<p>Contributors 12</p></body></html>')
    assert html_to_text(readme) == "acme/vision\nInstall\npip install vision\nContributors 12\n"
    title_only = '<h1><bdi class="js-issue-title">Loader dies</bdi> <span>#7</span></h1><p>It crashes</p>'
    assert html_to_text(title_only) == "Loader dies #7\nIt crashes\n"
    posts_marked = SAVED_PAGE.replace('class="post"', 'class="post comment-body markdown-body"')
    assert html_to_text(posts_marked) == html_to_text(SAVED_PAGE)
    assert "Loader crash\nTraining prints" in html_to_text(SAVED_PAGE)


#: what the two saved Stack Overflow pages below hold of the thread: the title, the question, each
#: comment and answer in page order under its header (with its author: an answer's, not the editor
#: whose signature comes before it), code blocks line for line
SAVED_QA_THREADS = {
    "so-question-page.html": """# DataLoader worker killed by Bus error inside Docker

--- question by Lena K ---
Training in a Docker container stops in the first epoch as soon as `num_workers` is above 0:
Traceback (most recent call last):
  File "train.py", line 52, in <module>
    for images, labels in loader:
RuntimeError: DataLoader worker (pid 2241) is killed by signal: Bus error. It is possible that dataloader's \
workers are out of shared memory. Please try to raise your shared memory limit.
With `num_workers=0` it trains, only slowly. How do I keep the workers?

--- comment 1 by helper-pat ---
What does `df -h /dev/shm` print inside the container?

--- comment 2 by Lena K ---
@helper-pat shm 64M 64M 0 100% /dev/shm

--- answer 1 by helper-pat ---
Docker gives a container 64 MB of `/dev/shm`, and every worker hands its batches to the main process \
through it. Start the container with more:
docker run --shm-size=8g my-image python train.py
or share the host's with `--ipc=host`.

--- comment 3 by Lena K ---
That was it, with `--shm-size=8g` all 8 workers run. Thanks!

--- answer 2 by k8s-ops ---
On Kubernetes there is no `--shm-size`; mount a memory-backed `emptyDir` at `/dev/shm` instead.
""",
    "so-question-page-2017.html": """# Pytorch DataLoader hangs when num_workers > 0 [duplicate]

--- question by dmitry ---
The loop over my `DataLoader` never returns a batch when `num_workers=2`; py-spy on the main process shows it \
waiting:
Thread 0x7F3A (idle): "MainThread"
    _poll (multiprocessing/connection.py:414)
    get (multiprocessing/queues.py:104)
    _get_batch (torch/utils/data/dataloader.py:250)
The dataset opens an LMDB environment in `__init__`. With `num_workers=0` everything works.

--- comment 1 by helper-sam ---
An LMDB environment cannot be shared by forked processes; open it in `worker_init_fn`.

--- answer 1 by helper-sam ---
Open the environment lazily, once per worker:
def __getitem__(self, i):
    if self.env is None:
        self.env = lmdb.open(self.path, readonly=True, lock=False)
Each worker then has its own handle after the fork.
""",
}
#: Stack Overflow's words around a thread on a saved question page, in its 2024 and its 2017 markup
#: (top bar, Ask Question, Asked/Modified/Viewed, votes, tags, the post menu, signatures, the answer
#: count and sort, notices, the answer form, the sidebar's linked, related and hot questions, the
#: footer, the cookie banner)
SO_CHROME = ("Stack Overflow", "Log in", "Log In", "Sign up", "Ask Question", "Asked", "Modified", "Viewed",
             "up vote", "favorite", "pytorch-dataloader", "Share", "Improve this", "improve this",
             "Follow", "asked", "answered", "edited", "reputation", "badge", "2 Answers", "1 Answer", "Sorted by",
             "Highest score", "accepted", "Add a comment", "add a comment", "Highly active", "Your Answer",
             "Not the answer", "Browse other questions", "Overflow Blog", "Linked", "Related", "exited unexpectedly",
             "timed out", "Hot Network Questions", "out of memory at idle", "already has an answer",
             "Site design", "cc by-sa", "Accept all cookies", "privacy", "JavaScript", "Jan B", "tidy-ed")


@pytest.mark.parametrize("name", SAVED_QA_THREADS)
def test_a_saved_stack_overflow_question_reads_as_its_thread(name, mini_scanner):
    """Ctrl-S of a Stack Overflow question (any Stack Exchange site: the same markup), in its
    current markup (``s-prose js-post-body``, ``li.comment``) and its 2017 one (``post-text`` in a
    ``td.postcell``/``answercell``, ``tr.comment``): the title, the question, the answers and the
    comments under them, nothing of the site's; a linked question's title in the sidebar, or the
    question it duplicates named at the top of its text, is no evidence."""
    text, r = read_saved_page(name, SAVED_QA_THREADS[name], SO_CHROME, mini_scanner)
    if name == "so-question-page.html":
        assert [(d.cls, d.subclass) for d in r.diagnoses] == [("A", "bus-error")]
        assert [e.line for e in r.diagnoses[0].evidence] == [line_of(text, "is killed by signal: Bus error")]
    else:  # read as a page, the duplicate's title "DataLoader worker (pid(s) 1234) exited unexpectedly" was B
        assert "B" not in {d.cls for d in r.diagnoses}


def test_pages_not_from_stack_exchange_questions_are_read_as_before():
    """A Stack Exchange page is one with a question's title link (``a.question-hyperlink``), or the
    ``<h1>`` in ``#question-header`` that holds it, and a post's text (``js-post-body``; ``post-text``
    with ``itemprop="text"``): a tag's list of questions (their title links and excerpts), a blog
    whose posts are styled ``post-text``, the title alone, a page with neither, read as any page."""
    listing = ('<html><body><h1>Questions tagged [pytorch]</h1><div class="question-summary">'
               '<h3><a href="/questions/1/x" class="question-hyperlink">DataLoader worker exited unexpectedly</a></h3>'
               '<div class="excerpt">It dies at epoch 3</div></div></body></html>')
    assert html_to_text(listing) == ("Questions tagged [pytorch]\nDataLoader worker exited unexpectedly\n"
                                     "It dies at epoch 3\n")
    blog = ('<html><body><h1><a class="question-hyperlink" href="/p/1">Notes</a></h1><div class="post-text">'
            '<p>Bus error in Docker</p></div><div class="comments"><p>Raise --shm-size</p></div></body></html>')
    assert html_to_text(blog) == "Notes\nBus error in Docker\nRaise --shm-size\n"
    question = (DOCS / "so-question-page.html").read_text()
    untitled = question.replace("question-hyperlink", "title-link")  # the <h1> in #question-header is the title
    assert html_to_text(untitled) == SAVED_QA_THREADS["so-question-page.html"]
    generic = html_to_text(untitled.replace("question-header", "header"))
    assert generic.startswith("DataLoader worker killed by Bus error inside Docker\nAsk Question\nAsked 9 months ago\n")
    assert "\n--- question ---\n" not in generic and "Not the answer you're looking for?" in generic


#: a thread page's title element (a link, a <bdi>) as some "save as" tools and reader modes leave it:
#: its text alone, in the heading around it
TITLE_ELEMENT_RE = re.compile(r'<(a|bdi)\b[^>]*(?:question-hyperlink|js-issue-title|"issue-title")[^>]*>(.*?)</\1>', re.S)


@pytest.mark.parametrize("name", [*SAVED_ISSUE_THREADS, *SAVED_QA_THREADS])
def test_a_saved_page_that_lost_its_title_element_reads_as_its_thread(name):
    """Where the page lost its title element, the heading around it (GitHub's ``h1.gh-header-title``,
    React's ``<h1>`` in ``data-testid="issue-header"``, the ``<h1>`` in Stack Exchange's
    ``#question-header``) is the title, and with a post tells the site's page: the same thread as the
    page with its title element, the issue's number in the heading left out."""
    page = (DOCS / name).read_text()
    untitled, count = TITLE_ELEMENT_RE.subn(r"\2", page)
    assert count and not TITLE_ELEMENT_RE.search(untitled)
    flat, kind = flatten_bytes(untitled.encode())
    assert kind == "html" and flat.decode() == {**SAVED_ISSUE_THREADS, **SAVED_QA_THREADS}[name]


def test_a_thread_pages_authors_sign_their_own_posts():
    """A post's header names its author as the JSON exports' do where the page names them in one
    element: GitHub's login before a post (``a.author``; React's ``avatar-link``), a Stack
    Exchange comment's after it (``a.comment-user``), a question's or answer's in the last of its
    signatures (the link inside ``.user-details``, after an editor's). A timeline event's actor is not the next
    post's author when that post has its own header; a post without one is signed by no one (not
    by the post before it, nor by the next post's author); a name over 100 characters is no login."""
    github = ('<h1><bdi class="js-issue-title">Loader dies</bdi></h1>'
              '<a class="author">op</a> opened this issue<div class="comment-body">It crashes</div>'
              '<div class="TimelineItem"><a class="author">bot</a> added the bug label</div>'
              '<a class="author">maint</a><div class="comment-body">Raise shm</div>'
              '<div class="comment-body">No header</div>'
              f'<a class="author">{"x" * 101}</a><div class="comment-body">Long</div>')
    assert html_to_text(github) == ("# Loader dies\n\n--- issue by op ---\nIt crashes\n\n--- comment 1 by maint ---\n"
                                    "Raise shm\n\n--- comment 2 ---\nNo header\n\n--- comment 3 ---\nLong\n")
    # a question's or answer's signatures after its text: an editor's, then its author's (the last
    # .user-details), whose link names them; a deleted user's has no link, only itemprop="name"; an
    # author's own edit leaves an empty .user-details before theirs
    editor = '<div class="user-details"><a href="/users/1/ed">ed</a><span class="reputation-score">9</span></div>'
    stack = ('<h1><a class="question-hyperlink">Hang</a></h1><div class="js-post-body">q</div>'
             f'{editor}<div class="user-details" itemprop="author"><a href="/users/2/cy">cy</a>'
             '<span class="d-none" itemprop="name">cy</span><div class="-flair">1,234</div></div>'
             '<ul><li><span class="comment-copy">c1</span> &ndash; <a class="comment-user">ann</a></li>'
             '<li><span class="comment-copy">c2</span></li></ul>'
             '<div class="js-post-body">a1</div><span class="comment-copy">c3</span> <a class="comment-user">bo</a>'
             f'<div class="js-post-body">a2</div>{editor}<div class="user-details">gone'
             '<span class="d-none" itemprop="name">user404</span></div>'
             '<div class="js-post-body">a3</div><div class="user-details"></div>'
             '<div class="user-details"><a href="/users/3/di">di</a></div>')
    assert html_to_text(stack) == ("# Hang\n\n--- question by cy ---\nq\n\n--- comment 1 by ann ---\nc1\n\n"
                                   "--- comment 2 ---\nc2\n\n--- answer 1 ---\na1\n\n--- comment 3 by bo ---\nc3\n\n"
                                   "--- answer 2 by user404 ---\na2\n\n--- answer 3 by di ---\na3\n")
    # a link outside a .user-details names no one; nor does one after the next part started
    assert html_to_text(stack.replace('class="user-details"', 'class="user-info"')).startswith(
        "# Hang\n\n--- question ---\nq\n")


def test_a_thread_page_table_that_names_no_markup_or_header_is_refused(tmp_path):
    """``data/thread_pages.toml`` is data: a selector that names no class, id or attribute, or a
    header word ``core.sections.HEADER`` does not know (the classifier would read the header as
    the poster's), is refused with the file and the entry named."""
    from dllogscan.core.errors import SignatureError
    from dllogscan.sources.thread_page import load_pages

    page = '''[[page]]\nname = "x"\nsource = "y"\ntitle = [{title}]\nposts = [".post"]\nfirst = "{first}"\nreply = "answer"\n'''
    for title, first in (('"h1"', "question"), ('"div..x"', "question"), ('".t"', "reply"), ("3", "question"),
                         ('"a .t"', "question"), ('".a .b .c .d"', "question"), ('".t [x"', "question")):
        path = tmp_path / f"{first}{len(title)}.toml"
        path.write_text(page.format(title=title, first=first))
        with pytest.raises(SignatureError, match=f"{path}: page #1"):
            load_pages(path)
    path.write_text(page.format(title='"a.t", "[data-testid=t]"', first="question").replace('[".post"]', '".post"'))
    with pytest.raises(SignatureError, match="lists"):  # a string is no list of selectors
        load_pages(path)
    for where in ("", 'author = "inside"\n'):  # authors, but not where they stand
        path.write_text(page.format(title='".t"', first="question") + 'authors = ["a.by"]\n' + where)
        with pytest.raises(SignatureError, match="before or after"):
            load_pages(path)
    path.write_text(page.format(title='"a.t", "[data-testid=t]"', first="question"))
    (site,) = load_pages(path).sites
    assert [kind for kind, _ in site.rules] == ["title", "title", "post"]
    # an element inside another: the outermost named by its markup, those inside by a tag alone too
    path = tmp_path / "inside.toml"  # load_pages caches by path
    path.write_text(page.format(title='"#head h1", "[data-x=a b] .t span"', first="question"))
    table = load_pages(path)
    inner = [sel for _, sel in table.sites[0].rules][1]
    assert (inner.tag, inner.within.classes, inner.within.within.attrs) == ("span", {"t"}, (("data-x", "a b"),))
    assert table.bare == {"h1", "span"} and len(table.outer) == 3


def test_a_forums_quote_aside_is_the_posts_text_wherever_it_stands(mini_scanner):
    """Discourse wraps a reply's quote of an earlier post in ``<aside class="quote">``: a reply saved
    or pasted alone (no article around it) keeps the error it quotes; a link preview (``onebox``)
    is another page's text and stays out, like a sidebar's linked threads."""
    reply = ('<div class="cooked"><aside class="quote no-group" data-username="u" data-post="1" data-topic="7">'
             '<div class="title">u:</div><blockquote><p>RuntimeError: DataLoader worker (pid 99) is killed by '
             'signal: Bus error.</p></blockquote></aside><p>Same here inside Docker.</p>'
             '<aside class="onebox githubissue"><p>DataLoader worker exited unexpectedly #1</p></aside></div>')
    text = html_to_text(reply)
    assert "is killed by signal: Bus error." in text and "Same here inside Docker." in text
    assert "exited unexpectedly" not in text
    r = run(reply.encode(), mini_scanner)
    assert [(d.cls, d.subclass) for d in r.diagnoses] == [("A", "bus-error")]
