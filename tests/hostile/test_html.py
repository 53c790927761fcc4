"""Crafted HTML costs linear time: the stdlib html.parser took 19 s on 39 KB of ``'<a ' * 13000``
(quadratic before CPython 3.11.13); every shape below must flatten in well under 2 s."""
from __future__ import annotations

import gc
import subprocess
import sys
import time
import tracemalloc

import pytest

from dllogscan.pipeline import runner as pipeline
from dllogscan.sources import streams as sources
from dllogscan.sources.documents import flatten_bytes, html_to_text

BUS = "RuntimeError: DataLoader worker (pid 1) is killed by signal: Bus error."
HEAD = f"<div>{BUS}</div>"
SHAPES = {
    "unclosed-tags-39KB": HEAD + "<a " * 13_000,            # the reproduction
    "unclosed-tags-1MB": HEAD + "<a " * 330_000,
    "unclosed-comment": HEAD + "<!--" + "<a " * 100_000,
    "end-tags-with-attrs": HEAD + "</a " * 100_000,
    "nested-div-100k": "<div>" * 100_000 + HEAD,
    "nested-table-50k": "<table><tr><td>" * 50_000 + HEAD,
    "nested-inline-200k": "<b><i>" * 100_000 + HEAD,
    "many-attributes": "<div " + "a=1 " * 200_000 + ">" + BUS + "</div>",
    "open-quotes": HEAD + '<a href="' * 100_000,
    "nested-side-panes-100k": '<div class="sidebar">' * 100_000 + "<article>" + HEAD,  # kept: holds an article
    "many-class-names": '<div class="' + "Layout--sidebar-x " * 100_000 + '">' + BUS + "</div>",
    # a GitHub issue page (its title, then posts): one post in 100 000 nested, or 100 000 posts
    "nested-github-posts-100k": '<bdi class="js-issue-title">t</bdi>' + '<div class="markdown-body">' * 100_000 + HEAD,
    "many-github-posts-100k": ('<bdi class="js-issue-title">t</bdi>' + '<td class="comment-body">x</td>' * 100_000
                               + f'<td class="comment-body">{BUS}</td>'),
    # a Stack Exchange question: nested posts, many comments, what a post skips (a duplicate's
    # notice) nested or beside side panes inside the post
    "nested-so-posts-100k": '<a class="question-hyperlink">t</a>' + '<div class="js-post-body">' * 100_000 + HEAD,
    "many-so-comments-100k": ('<a class="question-hyperlink">t</a><div class="js-post-body">q</div>'
                              + '<span class="comment-copy">x</span>' * 100_000 + f'<span class="comment-copy">{BUS}</span>'),
    "nested-so-skips-100k": ('<a class="question-hyperlink">t</a><div class="js-post-body">' + HEAD
                             + '<div class="question-status">' * 100_000),
    "so-skips-and-panes-50k": ('<a class="question-hyperlink">t</a><div class="js-post-body">'
                               + '<p class="question-status">x</p><div class="sidebar">y</div>' * 50_000 + HEAD + '</div>'),
    # authors' names: many before one GitHub post, many after one Stack Exchange comment
    "many-github-authors-100k": ('<bdi class="js-issue-title">t</bdi>' + '<a class="author">x</a>' * 100_000
                                 + f'<div class="comment-body">{BUS}</div>'),
    "many-so-authors-100k": ('<a class="question-hyperlink">t</a>' + f'<div class="js-post-body">{BUS}</div>'
                             + '<span class="comment-copy">c</span>' + '<a class="comment-user">x</a>' * 100_000),
    # a question's signatures (a link inside a .user-details): 50 000 after one post, or 100 000 nested
    "many-so-signatures-50k": ('<a class="question-hyperlink">t</a>' + f'<div class="js-post-body">{BUS}</div>'
                               + '<div class="user-details"><a href="/u/1">x</a></div>' * 50_000),
    "nested-so-signatures-100k": ('<a class="question-hyperlink">t</a>' + f'<div class="js-post-body">{BUS}</div>'
                                  + '<div class="user-details">' * 100_000 + '<a>x</a><b itemprop="name">y</b>'),
    # a heading that holds the title (its number skipped): 100 000 skips nested in it, or 100 000 headings
    "nested-github-heading-skips-100k": ('<h1 class="gh-header-title">t' + '<span>' * 100_000 + '</h1>'
                                         + f'<div class="comment-body">{BUS}</div>'),
    "many-so-headings-100k": ('<div id="question-header">' + '<h1>t</h1>' * 100_000 + '</div>'
                              + f'<div class="js-post-body">{BUS}</div>'),
    # inline code, written between backticks: nested, many, each a side pane
    "nested-code-200k": "<code>" * 200_000 + HEAD,
    "many-code-spans-100k": "<p>" + "<code>x</code> " * 100_000 + "</p>" + HEAD,
    "code-side-panes-100k": '<code class="sidebar">x</code>' * 100_000 + HEAD,
}
#: CPU seconds (this process's: a shared machine's other work is not the reader's); the 100k-element
#: shapes take about 1 s on a 2-core machine
BUDGET_S = 2.0


def cpu_seconds(html: str) -> tuple[float, str]:
    """The reader's CPU time on html, the better of two runs, each after a full collection.

    A collection of garbage that earlier tests left is charged to whichever call triggers it
    (one run took 2.04 s in CI against 0.8-0.9 s as a rule); a reader that is slow by itself is slow
    on both runs.
    """
    best, text = float("inf"), ""
    for _ in range(2):
        gc.collect()
        start = time.process_time()
        text = html_to_text(html)
        best = min(best, time.process_time() - start)
        if best < BUDGET_S:
            break
    return best, text


@pytest.mark.parametrize("name", SHAPES)
def test_crafted_html_flattens_in_bounded_time_and_memory(name):
    html = SHAPES[name]
    elapsed, text = cpu_seconds(html)
    assert elapsed < BUDGET_S, f"{name}: {elapsed:.2f} s"
    assert BUS in text
    tracemalloc.start()
    html_to_text(html)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 10 * len(html) + (8 << 20), f"{name}: {peak >> 20} MiB for {len(html) >> 10} KiB"


def test_crafted_html_file_is_diagnosed_quickly(tmp_path):
    path = tmp_path / "slow.html"
    path.write_text(SHAPES["unclosed-tags-39KB"])
    start = time.perf_counter()
    result = pipeline.run(sources.from_path(path))
    assert time.perf_counter() - start < BUDGET_S
    assert result.document == "html" and result.diagnoses[0].cls == "A"
    proc = subprocess.run([sys.executable, "-m", "dllogscan", str(path), "--format", "json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and '"class": "A"' in proc.stdout and "Traceback" not in proc.stderr


def test_crafted_html_through_the_server():
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from dllogscan.serve.app import create_app

    client = TestClient(create_app(), base_url="http://127.0.0.1:8765")
    start = time.perf_counter()
    r = client.post("/api/diagnose", json={"text": SHAPES["unclosed-tags-1MB"]})
    assert time.perf_counter() - start < BUDGET_S
    assert r.status_code == 200 and r.json()["document"] == "html" and r.json()["diagnoses"][0]["class"] == "A"


def test_lone_surrogates_and_meta_charset_do_not_break_flattening():
    assert html_to_text('<meta charset="latin-1"><p>café \ud800 x</p>') == "café ? x\n"
    flat, kind = flatten_bytes(b'<html><body><p>caf\xc3\xa9</p><pre>a\nb</pre></body></html>')
    assert kind == "html" and flat == "café\na\nb\n".encode()
