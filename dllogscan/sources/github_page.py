"""A saved GitHub issue page (Ctrl-S of ``github.com/O/R/issues/N``) read as its thread.

The page is known by its markup, in both of GitHub's layouts: the issue's title
(``<bdi class="js-issue-title markdown-title">``; React's ``data-testid="issue-title"``) and the
rendered markdown of the issue and of each comment (``<td class="comment-body markdown-body
js-comment-body">`` in a ``js-timeline-item``; React's ``data-testid="markdown-body"``). On such a
page only these are the thread: the repository header (Notifications, Fork, Star, the Code and
Issues tabs), the issue number beside the title, the timeline's own lines ("X commented on ...",
"X added the bug label", "X closed this as completed"), reactions, the logged-out "Sign up for
free" notice and the footer are GitHub's, and their words would tip a short thread's verdict.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..core.sections import header

#: the issue's title: a class word (old layout) or the ``data-testid`` (React); the first one read
#: is the title (the old layout's sticky header repeats it)
TITLE_CLASSES = {"js-issue-title"}
TITLE_TESTIDS = {"issue-title"}
#: the issue's or a comment's rendered markdown, code blocks included; one inside another (React's
#: ``data-testid="markdown-body"`` around a ``class="markdown-body"``) is the same post
BODY_CLASSES = {"comment-body", "js-comment-body", "markdown-body"}
BODY_TESTIDS = {"markdown-body"}


def part_of_thread(attrib: object) -> str | None:
    """``"title"`` or ``"body"`` for an element that holds the issue's title or a post's text on
    a GitHub issue page, else None."""
    get = getattr(attrib, "get", None)
    if get is None:
        return None
    words, testid = set((get("class") or "").split()), (get("data-testid") or "").strip()
    if testid in TITLE_TESTIDS or words & TITLE_CLASSES:
        return "title"
    if testid in BODY_TESTIDS or words & BODY_CLASSES:
        return "body"
    return None


@dataclass
class _Open:
    """A title or body element being read: which, its tag, how many of that tag were open with
    it, and where its text starts in the page's text."""

    kind: str
    tag: str
    level: int
    start: int


class ThreadParts:
    """The title and posts of a GitHub issue page, collected while the whole page is read; the
    page is a GitHub issue page when it had both."""

    def __init__(self) -> None:
        self.title = ""
        self.bodies: list[str] = []
        self.reading: _Open | None = None

    def start(self, tag: str, attrib: object, level: int, at: int) -> None:
        """An element opens, the ``level``-th open ``tag``, its text from ``at`` in the page's parts."""
        if self.reading is None:
            kind = part_of_thread(attrib)
            if kind is not None:
                self.reading = _Open(kind, tag, level, at)

    def end(self, tag: str, level: int | None, parts: list[str]) -> None:
        """An element closes (before it is counted closed); a title or body it ends is kept."""
        part = self.reading
        if part is None or part.tag != tag or part.level != level:
            return
        self.reading = None
        text = "".join(parts[part.start:]).strip()
        if part.kind == "title":
            self.title = self.title or " ".join(text.split())
        elif text:
            self.bodies.append(text)

    def drop_from(self, count: int) -> None:
        """Forget the posts read after the first ``count`` (they were in a side pane, dropped)."""
        del self.bodies[count:]

    def text(self) -> str | None:
        """``# title`` and each post under its header (``--- issue ---``, ``--- comment 1 ---``),
        as a thread export is flattened; None unless the page had a title and a post."""
        if not (self.title and self.bodies):
            return None
        labels = ["issue"] + [f"comment {i}" for i in range(1, len(self.bodies))]
        posts = [f"{header(label, '')}\n{body}\n" for label, body in zip(labels, self.bodies)]
        return "\n".join([f"# {self.title}\n", *posts])
