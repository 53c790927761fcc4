"""Corpus threads as saved pages: does a page read as the thread it holds?

    python bench/saved_pages.py [--threads 24] [--out DIR]

Each of ``--threads`` corpus threads (``corpus/threads/*.md``, not ambiguous, spread over the
labels) is rendered as a saved page of each layout ``sources/thread_page.py`` knows (a Stack
Overflow question; a GitHub issue, server-rendered and React), with its title element as the site
marks it and without (the element unwrapped to its text, as some "save as" tools and reader modes
leave it), and as a page of no known site. Each page and the plain thread are diagnosed as
``dllogscan FILE --format json`` does (``api.scan_text``); a page agrees when it gives the plain
thread's verdicts (class and subclass of each diagnosis) and quotes the same evidence lines. The
markup is this script's own, shaped like the sites' saved pages (their class names, ids and
attributes; site chrome around the thread: top bar, navigation, a sidebar whose linked question
holds an error text, a sign-in prompt, a footer). ``--out`` keeps the pages.
"""
from __future__ import annotations

import argparse
import html
import json
import re
import sys
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
THREADS = ROOT / "corpus" / "threads"
FENCE_RE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE_RE = re.compile(r"`([^`\n]+)`")
HEADING_RE = re.compile(r"^(#{1,6})\s+(.*)$")
#: a linked question in a sidebar, or a cross-referenced issue: an error text that is not the thread's
LINKED = "RuntimeError: DataLoader worker (pid(s) 15332) exited unexpectedly"


def _inline(text: str) -> str:
    """One line of markdown prose as HTML: escaped, inline code as ``<code>``."""
    parts = INLINE_CODE_RE.split(text)
    return "".join(f"<code>{html.escape(part)}</code>" if i % 2 else html.escape(part) for i, part in enumerate(parts))


def markdown_html(body: str) -> str:
    """A thread's markdown as a tracker renders it: fenced blocks in ``<pre><code>``, headings,
    paragraphs whose lines keep their breaks (``<br>``, as GitHub and Stack Overflow comments show them)."""
    out: list[str] = []
    para: list[str] = []
    code: list[str] | None = None

    def flush() -> None:
        if para:
            out.append("<p>" + "<br>\n".join(_inline(line) for line in para) + "</p>")
            para.clear()

    for line in body.splitlines():
        if code is not None:
            if FENCE_RE.match(line):
                out.append('<pre><code class="hljs">' + html.escape("\n".join(code)) + "\n</code></pre>")
                code = None
            else:
                code.append(line)
        elif FENCE_RE.match(line):
            flush()
            code = []
        elif not line.strip():
            flush()
        elif (heading := HEADING_RE.match(line)) is not None:
            flush()
            level = len(heading[1])
            out.append(f"<h{level}>{_inline(heading[2])}</h{level}>")
        else:
            para.append(line)
    flush()
    if code is not None:
        out.append('<pre><code class="hljs">' + html.escape("\n".join(code)) + "\n</code></pre>")
    return "\n".join(out)


def split_thread(text: str) -> tuple[str, str]:
    """A corpus thread's title (its first ``# `` line) and the rest."""
    first, _, rest = text.partition("\n")
    return (first[2:].strip(), rest) if first.startswith("# ") else ("", text)


def _head(title: str, og_title: str, canonical: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>\n'
            f'<meta property="og:title" content="{html.escape(og_title)}">\n'
            f'<link rel="canonical" href="{canonical}">\n<script>window.x = 1;</script></head>\n')


def stack_overflow(title: str, body: str, marked: bool = True) -> str:
    """A Stack Overflow question page (2024 markup) holding the thread as its question."""
    link = f'<a href="/questions/10000099/q" class="question-hyperlink">{html.escape(title)}</a>' if marked \
        else html.escape(title)
    return (_head(f"python - {title} - Stack Overflow", title, "https://stackoverflow.com/questions/10000099/q")
            + '<body class="question-page">\n<header class="s-topbar"><a class="s-topbar--logo" href="/">Stack Overflow'
            '</a><ol class="s-navigation"><li><a href="/questions">Questions</a></li></ol>'
            '<a href="/users/login">Log in</a> <a href="/users/signup">Sign up</a></header>\n'
            '<div class="container"><div id="left-sidebar" class="left-sidebar"><nav role="navigation"><ol>'
            '<li><a href="/">Home</a></li><li><a href="/tags">Tags</a></li></ol></nav></div>\n'
            '<div id="content"><div itemprop="mainEntity" itemscope itemtype="https://schema.org/Question">\n'
            f'<div id="question-header" class="d-flex"><h1 itemprop="name" class="fs-headline1">{link}</h1>'
            '<div class="aside-cta"><a href="/questions/ask" class="s-btn">Ask Question</a></div></div>\n'
            '<div class="d-flex fw-wrap"><div class="flex--item"><span>Asked</span> <time>3 months ago</time></div>'
            '<div class="flex--item" title="Viewed 2,345 times"><span>Viewed</span> 2k times</div></div>\n'
            '<div id="mainbar" role="main" aria-label="question and answers">\n'
            '<div class="question js-question" data-questionid="10000099" id="question"><div class="post-layout">'
            '<div class="votecell post-layout--left"><div class="js-vote-count" itemprop="upvoteCount">4</div></div>\n'
            '<div class="postcell post-layout--right"><div class="s-prose js-post-body" itemprop="text">\n'
            f'{markdown_html(body)}\n</div>\n'
            '<div class="post-taglist"><a href="/questions/tagged/pytorch" class="post-tag">pytorch</a></div>\n'
            '<div class="post-signature owner"><div class="user-info"><div class="user-action-time">asked '
            '<span class="relativetime">Mar 2 at 9:10</span></div><div class="user-details" itemprop="author">'
            '<a href="/users/4040404/q-asker">q-asker</a><span class="d-none" itemprop="name">q-asker</span>'
            '<div class="-flair"><span class="reputation-score">87</span></div></div></div></div>\n'
            '</div></div></div>\n<h2 class="bottom-notice">Not the answer you\'re looking for? Browse other questions '
            'tagged <a href="/questions/tagged/pytorch" class="post-tag">pytorch</a>.</h2></div>\n'
            '<div id="sidebar" role="complementary" aria-label="sidebar"><div class="module sidebar-linked">'
            f'<h4>Linked</h4><a href="/questions/60101168/x" class="question-hyperlink">{html.escape(LINKED)}</a>'
            '</div></div></div></div></div>\n<footer id="footer" class="site-footer" role="contentinfo"><p>Site '
            'design / logo &#169; 2024 Stack Exchange Inc; user contributions licensed under CC BY-SA.</p></footer>\n'
            '</body></html>\n')


def github_issue(title: str, body: str, marked: bool = True) -> str:
    """A GitHub issue page in its server-rendered layout (the timeline) holding the thread as the issue."""
    bdi = f'<bdi class="js-issue-title markdown-title">{html.escape(title)}</bdi>' if marked else html.escape(title)
    return (_head(f"{title} · Issue #4321 · acme/vision · GitHub", f"{title} · Issue #4321 · acme/vision",
                  "https://github.com/acme/vision/issues/4321")
            + '<body class="logged-out env-production">\n<div class="position-relative js-header-wrapper">'
            '<a href="#start-of-content" class="px-2 py-4 show-on-focus">Skip to content</a>'
            '<header class="Header-old header-logged-out" role="banner"><a href="/login">Sign in</a> '
            '<a href="/signup">Sign up</a></header></div>\n<div class="application-main">'
            '<main id="js-repo-pjax-container"><div id="repository-container-header"><strong itemprop="name">'
            '<a href="/acme/vision">vision</a></strong><ul class="pagehead-actions"><li>Notifications</li>'
            '<li>Star 9k</li></ul><nav class="js-repo-nav" aria-label="Repository"><a href="/acme/vision">Code</a>'
            '<a href="/acme/vision/issues">Issues 1k</a></nav></div>\n<div class="clearfix container-xl">'
            '<div id="show_issue" class="js-issues-results js-socket-channel"><div id="partial-discussion-header" '
            f'class="gh-header mb-3"><div class="gh-header-show"><h1 class="gh-header-title mb-2">\n{bdi}\n'
            '<span class="f1-light color-fg-muted">#4321</span></h1></div><div class="gh-header-meta"><span '
            'class="State State--open" title="Status: Open">Open</span> <a class="author Link--secondary" '
            'href="/reporter-x">reporter-x</a> opened this issue on Mar 2 · 3 comments</div></div>\n'
            '<div id="discussion_bucket" class="Layout Layout--sidebarPosition-end"><div class="Layout-main">'
            '<div class="js-discussion"><div class="TimelineItem js-comment-container"><div class="timeline-comment">'
            '<div class="timeline-comment-header"><h3 class="f5"><strong><a class="author Link--primary" '
            'href="/reporter-x">reporter-x</a></strong> commented <relative-time>Mar 2</relative-time></h3></div>'
            '<table class="d-block"><tbody class="d-block"><tr class="d-block"><td class="d-block comment-body '
            f'markdown-body js-comment-body">\n{markdown_html(body)}\n</td></tr></tbody></table>'
            '<div class="comment-reactions">👍 3</div></div></div>\n'
            '<div class="TimelineItem"><a class="author" href="/bot-x">bot-x</a> mentioned this issue '
            f'<a href="/acme/vision/issues/77">{html.escape(LINKED)} #77</a></div>\n'
            '<div class="flash flash-warn">Sign up for free <strong>to join this conversation on GitHub</strong>. '
            'Already have an account? <a href="/login">Sign in to comment</a></div></div></div>\n'
            '<div class="Layout-sidebar" id="partial-discussion-sidebar"><div class="discussion-sidebar-item">'
            '<div class="discussion-sidebar-heading">Assignees</div>No one assigned</div>'
            '<div class="discussion-sidebar-item"><div class="discussion-sidebar-heading">Labels</div>'
            '<a class="IssueLabel">bug</a></div></div></div></div></div></main></div>\n'
            '<footer class="footer" role="contentinfo"><p>© 2024 GitHub, Inc.</p><nav aria-label="Footer">'
            '<a href="/site/terms">Terms</a></nav></footer>\n</body></html>\n')


def github_react(title: str, body: str, marked: bool = True) -> str:
    """A GitHub issue page in its React layout holding the thread as the issue."""
    bdi = (f'<bdi data-testid="issue-title" class="markdown-title HeaderViewer-module__titleBdi__x1">'
           f'{html.escape(title)}</bdi>') if marked else html.escape(title)
    return (_head(f"{title} · Issue #4321 · acme/vision · GitHub", f"{title} · Issue #4321 · acme/vision",
                  "https://github.com/acme/vision/issues/4321")
            + '<body class="logged-in env-production">\n<div class="js-header-wrapper"><header class="AppHeader" '
            'role="banner"><a href="/">Dashboard</a> <nav aria-label="Global"><a href="/pulls">Pull requests</a>'
            '</nav></header></div>\n<div class="application-main"><main id="js-repo-pjax-container">'
            '<div id="repository-container-header"><strong itemprop="name"><a href="/acme/vision">vision</a></strong>'
            '</div>\n<react-app app-name="issues-react"><div data-testid="issue-viewer-container">'
            '<div data-testid="issue-header" class="HeaderViewer-module__headerContainer__x2">'
            f'<div data-component="PH_Title"><h1 class="prc-PageHeader-Title-x3">{bdi}'
            '<span class="HeaderViewer-module__issueNumberText__x4"> #4321</span></h1></div>'
            '<div data-component="PH_Actions"><a href="/acme/vision/issues/new/choose">New issue</a></div>'
            '<div data-testid="issue-metadata-fixed"><span data-testid="header-state">Open</span> '
            '<a data-testid="issue-body-header-author" href="/reporter-x">reporter-x</a> opened on Mar 2</div></div>\n'
            '<div class="IssueViewer-module__mainContainer__x5"><div data-testid="issue-body">'
            '<div data-testid="issue-body-header"><a data-testid="avatar-link" href="/reporter-x">reporter-x</a></div>'
            f'<div data-testid="markdown-body" class="markdown-body">\n{markdown_html(body)}\n</div></div>\n'
            '<div data-testid="issue-timeline"><div class="TimelineItem"><a href="/bot-x">bot-x</a> mentioned this '
            f'<a href="/acme/vision/issues/77">{html.escape(LINKED)}</a></div></div>\n'
            '<div data-testid="issue-viewer-metadata-pane"><h3>Assignees</h3>No one assigned<h3>Labels</h3>bug</div>'
            '</div></div></react-app></main></div>\n<footer class="footer" role="contentinfo"><p>© 2024 GitHub, Inc.'
            '</p></footer>\n</body></html>\n')


def forum_page(title: str, body: str, marked: bool = True) -> str:
    """A page of no site the reader knows (a forum's): landmarks and sectioning elements only (no
    title element: ``marked`` changes nothing)."""
    return (_head(f"{title} - Forum", title, "https://forum.example.org/t/99")
            + '<body><header><a href="/">Forum</a> <a href="/login">Log in</a></header>\n'
            '<nav><a href="/latest">Latest</a> <a href="/categories">Categories</a></nav>\n'
            f'<main><h1>{html.escape(title)}</h1><article>{markdown_html(body)}</article></main>\n'
            f'<aside><h3>Related topics</h3><a href="/t/5">{html.escape(LINKED)}</a></aside>\n'
            '<div role="navigation"><a href="/t/98">Previous topic</a></div>\n'
            '<footer><a href="/tos">Terms of service</a></footer></body></html>\n')


#: the layouts, by name: each a renderer of (title, body, marked)
LAYOUTS: dict[str, Callable[..., str]] = {"stackoverflow": stack_overflow, "github": github_issue,
                                          "github-react": github_react, "forum": forum_page}


def pick_threads(count: int) -> list[Path]:
    """``count`` corpus threads, not ambiguous, taken in turn from each label's sorted list."""
    by_label: dict[str, list[Path]] = {}
    for meta in sorted(THREADS.glob("*.meta.json")):
        info = json.loads(meta.read_text())
        if not info.get("ambiguous"):
            thread = meta.with_name(meta.name[:-len(".meta.json")] + ".md")
            by_label.setdefault(str(info.get("label")), []).append(thread)
    picked: list[Path] = []
    step = 0
    while len(picked) < count and any(step * 37 < len(paths) for paths in by_label.values()):
        for label in sorted(by_label):
            paths = by_label[label]
            if step * 37 < len(paths) and len(picked) < count:
                picked.append(paths[step * 37])
        step += 1
    return picked


def reading(result) -> tuple[tuple[tuple[str, str], ...], frozenset[str]]:
    """What a diagnosis says: each verdict (class, subclass), and the evidence lines it quotes."""
    verdicts = tuple((d.cls, d.subclass) for d in result.diagnoses)
    evidence = frozenset(" ".join(e.text.split()) for d in result.diagnoses for e in d.evidence)
    return verdicts, evidence


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=24)
    parser.add_argument("--out", type=Path, default=None, help="write the pages here")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from dllogscan import api  # noqa: PLC0415 - after the path is set

    counts: dict[str, list[int]] = {}
    for path in pick_threads(args.threads):
        text = path.read_text()
        plain = reading(api.scan_text(text, name=path.name))
        title, body = split_thread(text)
        for layout, render in LAYOUTS.items():
            for marked in (True, False) if layout != "forum" else (True,):
                key = f"{layout}{'' if marked else ' (no title element)'}"
                page = render(title, body, marked)
                if args.out is not None:
                    args.out.mkdir(parents=True, exist_ok=True)
                    (args.out / f"{path.stem}.{layout}{'' if marked else '.untitled'}.html").write_text(page)
                result = api.scan_text(page, name=path.name)
                verdicts, evidence = reading(result)
                row = counts.setdefault(key, [0, 0, 0, 0])
                row[0] += 1
                row[1] += _is_thread(page)
                row[2] += verdicts == plain[0]
                row[3] += verdicts == plain[0] and evidence == plain[1]
    print(f"{'layout':36} {'pages':>5} {'thread':>6} {'verdict':>7} {'+evidence':>9}")
    for key, (pages, thread, verdict, both) in counts.items():
        print(f"{key:36} {pages:5} {thread:6} {verdict:7} {both:9}")
    return 0


def _is_thread(page: str) -> bool:
    """Whether the page reads as a thread (its flattening has a first post's header)."""
    from dllogscan.sources.html_text import html_to_text  # noqa: PLC0415

    return "\n--- " in html_to_text(page)


if __name__ == "__main__":
    sys.exit(main())
