"""HTML to plain text: blocks become lines, ``<pre>`` keeps its lines, quotes get ``> ``, inline
``<code>`` its backticks (`` `x` ``, as the markdown a tracker rendered it from wrote it).

The page goes through libxml2's HTML parser (``lxml``) as a stream of events (start tag, text, end
tag) into ``_TextBuilder``; no tree is built. It is linear in its input on every crafted shape
tried: the stdlib ``html.parser`` is quadratic before CPython 3.11.13 (``'<a ' * 13000``, 39 KB:
19 s), and an HTML5 tree builder (Lexbor, via selectolax) is quadratic in nesting depth
(``'<div>' * 40000``: 7 s); libxml2 reads a 1 MB ``'<a '`` run in 0.03 s and 400 000 nested
``<div>`` in 0.9 s.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from .thread_page import ThreadPage

WHITESPACE_RE = re.compile(r"\s+")

BLOCK_TAGS = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote",
              "section", "article", "header", "footer", "table", "ul", "ol", "hr", "aside", "title",
              "details", "summary", "dd", "dt"}
SKIP_TAGS = {"script", "style", "noscript", "svg", "template"}
#: a saved page's chrome, not the thread: navigation, forms and buttons, what is hidden, and ARIA
#: landmarks around the content (a site's header, footer, sidebar of linked questions: a "Linked:
#: DataLoader worker exited unexpectedly" there is not the reporter's error). Elements and roles;
#: a class is read only to find a side pane (``SIDE_PANE_WORDS``), and that is kept if it holds content.
CHROME_TAGS = {"nav", "form", "button", "dialog", "select", "textarea"}
CHROME_ROLES = {"banner", "navigation", "contentinfo", "complementary", "search", "menu", "menubar", "dialog",
                "alertdialog", "toolbar", "tooltip"}
#: a <header> or <footer> outside these is the page's banner or contentinfo (HTML-AAM); inside, an
#: article's own (a post's title, its signature) and kept. An <aside> outside them (or in <main>
#: alone) is the page's complementary landmark (related topics, a blog's sidebar); inside, a post's
#: own note, kept
SECTIONING = {"article", "aside", "main", "nav", "section"}
VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
             "track", "wbr"}
#: a sidebar that a site marks by name, not by ARIA: a word of a class, the id or ``data-testid``
#: (GitHub's ``Layout-sidebar``, ``partial-discussion-sidebar``, React's ``issue-viewer-metadata-pane``;
#: GitLab's ``right-sidebar``) naming a side pane, whose Assignees, Labels, Milestone and participants
#: are the tracker's fields, not the thread
SIDE_PANE_WORDS = {"sidebar", "metadata"}
#: an ``<aside>`` that a forum marks as a quote of a post (Discourse's ``<aside class="quote">``
#: around a reply's quoted lines) is the post's own text wherever it stands, not the page's
#: complementary landmark: a single reply saved or pasted alone keeps the error it quotes. A link
#: preview (``onebox``) stays out, like a sidebar's linked threads: another page's text
QUOTE_WORDS = {"quote"}
#: the attributes of an element that has none
NO_ATTRIBUTES: Mapping[str, str] = MappingProxyType({})
NAME_WORD_RE = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
#: what the page's content is in: a named side pane holding one of these is no side pane (a
#: ``<div class="has-sidebar">`` around the thread) and is kept
MAIN_TAGS = {"main", "article", "h1"}
#: never a side pane, whatever their class says (``<body class="sidebar-open">``)
PAGE_TAGS = {"html", "body", "main", "article"}


def names_side_pane(attrib: object) -> bool:
    """Whether a class, the id or the ``data-testid`` of an element names a side pane
    (``SIDE_PANE_WORDS`` among its words; a BEM modifier such as ``Layout--sidebarPosition-end``
    describes the block it is on, and is not read)."""
    return _named(attrib, SIDE_PANE_WORDS)


def names_quote(attrib: object) -> bool:
    """Whether a class, the id or the ``data-testid`` of an element names a quote (``QUOTE_WORDS``)."""
    return _named(attrib, QUOTE_WORDS)


def _named(attrib: object, words: set[str]) -> bool:
    get = getattr(attrib, "get", None)
    if get is None:
        return False
    names = (get("class") or "").split() + [get("id") or "", get("data-testid") or ""]
    return any(word.lower() in words for name in names for word in NAME_WORD_RE.findall(name.split("--")[0]))


@dataclass
class _SidePane:
    """An element named as a side pane, open: its tag, how many of that tag were open with it,
    where its text starts, and whether it holds the page's content (kept if so)."""

    tag: str
    level: int
    start: int
    thread: int  # where the thread page's reading stood before it (``ThreadPage.mark``)
    main: bool = False


class _TextBuilder:
    """Collects the text of a document from its start tags, end tags and text, in order."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.pre = 0
        self.code = 0  # how many inline <code> elements are open (outside <pre>)
        self.code_at = 0  # where the outermost one's text starts, after its opening backtick
        self.quote = 0
        self.skip = 0
        self.sections = 0
        self.chrome: str | None = None  # the tag of the chrome element being skipped
        self.chrome_depth = 0  # how many of that tag are open inside it
        self.open: dict[str, int] = {}  # how many elements of each tag are open
        self.sides: list[_SidePane] = []  # the named side panes open, outermost first
        self.title: list[str] | None = None  # the <title>'s text while it is open
        self.title_text = ""
        self.h1 = False  # an <h1> was read: the <title> repeats it
        self.thread = ThreadPage()  # the page's title and posts, if it is a thread page

    def _is_chrome(self, tag: str, attrib: object) -> bool:
        if tag in VOID_TAGS:  # nothing inside, and no end event to wait for
            return False
        if (tag in CHROME_TAGS or (tag in ("header", "footer") and not self.sections)
                or (tag == "aside" and self.sections <= self.open.get("main", 0) and not names_quote(attrib))):
            return True
        get = getattr(attrib, "get", None)
        if get is None:
            return False
        role = (get("role") or "").strip().lower()
        return (role in CHROME_ROLES or get("hidden") is not None
                or (get("aria-hidden") or "").strip().lower() == "true")

    def _newline(self) -> None:
        if self.parts and not self.parts[-1].endswith("\n"):
            self.parts.append("\n")

    def start(self, tag: str, attrib: object = None) -> None:
        """An element opens (the lxml parser target interface)."""
        if not attrib:  # lxml's mapping for no attributes reads each key through collections.abc
            attrib = NO_ATTRIBUTES
        if self.title is not None:  # a <title> holds text only
            self._end_title()
        if tag not in VOID_TAGS:
            self.open[tag] = self.open.get(tag, 0) + 1
        if self.sides and tag in MAIN_TAGS:
            self.sides[-1].main = True
        if self.chrome is not None:
            self.chrome_depth += tag == self.chrome
            return
        if self._is_chrome(tag, attrib):
            self.chrome, self.chrome_depth = tag, 1
            self._newline()
            return
        if tag not in VOID_TAGS and tag not in PAGE_TAGS and names_side_pane(attrib):
            self._newline()
            self.sides.append(_SidePane(tag, self.open[tag], len(self.parts), self.thread.mark()))
        if tag not in VOID_TAGS:
            self.thread.start(tag, attrib, self.open[tag], len(self.parts))
        if tag == "title" and not self.skip:
            self.title = []
        self.h1 = self.h1 or tag == "h1"
        if tag in SECTIONING:
            self.sections += 1
        if tag in SKIP_TAGS:
            self.skip += 1
        elif tag == "pre":
            self._newline()
            self.pre += 1
        elif tag == "blockquote":
            self._newline()
            self.quote += 1
        elif tag in BLOCK_TAGS:
            self._newline()
        elif tag == "code" and not (self.pre or self.skip):
            self._open_code()
        if tag == "li":
            self.parts.append("- ")

    def end(self, tag: str) -> None:
        """An element closes."""
        self.thread.end(tag, self.open.get(tag), self.parts)
        if self.sides and self.sides[-1].tag == tag and self.sides[-1].level == self.open.get(tag):
            self._end_side()
        if tag in self.open:
            self.open[tag] -= 1
        if self.chrome is not None:
            if tag == self.chrome:
                self.chrome_depth -= 1
                if not self.chrome_depth:
                    self.chrome = None
            return
        if tag == "title" and self.title is not None:
            self._end_title()
        if tag in SECTIONING:
            self.sections = max(0, self.sections - 1)
        if tag in SKIP_TAGS:
            self.skip = max(0, self.skip - 1)
        elif tag == "pre":
            self.pre = max(0, self.pre - 1)
            self._newline()
        elif tag == "blockquote":
            self.quote = max(0, self.quote - 1)
            self._newline()
        elif tag in BLOCK_TAGS:
            self._newline()
        elif tag == "code" and self.code:
            self._close_code()

    def _open_code(self) -> None:
        """Inline code opens: a backtick before its text, as markdown writes it (the outermost one
        of nested ``<code>`` elements)."""
        self.code += 1
        if self.code == 1:
            self.data("`")
            self.code_at = len(self.parts)

    def _close_code(self) -> None:
        """Inline code closes: a backtick after its text; two, with spaces, around a text that holds
        one (```` `` a`b `` ````); none for an empty one."""
        self.code -= 1
        if self.code or self.code_at > len(self.parts):  # nested; or itself a side pane, dropped
            return
        inside = "".join(self.parts[self.code_at:])
        opener = self.parts[self.code_at - 1]
        if not inside.strip():
            self.parts[self.code_at - 1:] = [opener[:-1]] if opener[:-1] else []
        elif "`" in inside:
            self.parts[self.code_at - 1] = opener[:-1] + "`` "
            self.data(" ``")
        else:
            self.data("`")

    def _end_title(self) -> None:
        if self.title is not None and not self.title_text:
            self.title_text = WHITESPACE_RE.sub(" ", "".join(self.title)).strip()
        self.title = None

    def _end_side(self) -> None:
        """The innermost named side pane ends: its text is dropped unless it held the page's
        content (then so does the pane around it)."""
        pane = self.sides.pop()
        if not pane.main:
            del self.parts[pane.start:]
            self.thread.restore(pane.thread, pane.start)
        elif self.sides:
            self.sides[-1].main = True

    def data(self, data: str) -> None:
        """Text, in one piece or several."""
        if self.skip or self.chrome is not None:
            return
        if self.title is not None:
            self.title.append(data)
            return
        if not self.pre:
            data = WHITESPACE_RE.sub(" ", data)
            if data.startswith(" ") and (not self.parts or self.parts[-1].endswith(("\n", " "))):
                data = data[1:]
            if not data:
                return
        if self.quote and (not self.parts or self.parts[-1].endswith("\n")):
            data = "> " * self.quote + data.lstrip()
        self.parts.append(data)

    def comment(self, text: str) -> None:
        """Comments are not text."""

    def close(self) -> str:
        """The text; the page's <title> first where it has no <h1> (the title repeats the <h1>,
        with the site's name: ``Loader dies · Issue #7 · o/r · GitHub``). A thread page (a GitHub
        issue, a Stack Exchange question) is its title and posts alone (``thread_page``)."""
        while self.sides:
            self._end_side()
        thread = self.thread.text()
        title = [self.title_text, "\n"] if self.title_text and not self.h1 else []
        text = thread if thread is not None else "".join(title + self.parts)
        self.__init__()  # type: ignore[misc] - read again from the start: its parser may take the next fragment
        return text


class HtmlTexts:
    """``html_to_text`` for many fragments in a row (a Discourse topic's posts): one parser reads
    each in turn, its builder fresh after each, which costs a third of a new parser (a post of
    ``<p>a</p>``: 10 us instead of 31; 400 000 posts took 18 s)."""

    def __init__(self) -> None:
        from lxml import etree  # noqa: PLC0415 - only documents need it (~30 ms)

        # bytes in one known encoding: a <meta charset> cannot override it, and a lone surrogate
        # (a JSON "\ud800" in a Discourse post) becomes "?" instead of an encoding error
        self.parser = etree.HTMLParser(target=_TextBuilder(), recover=True, no_network=True, encoding="utf-8")

    def __call__(self, html: str) -> str:
        """The text of one page or fragment (``html_to_text``)."""
        try:
            self.parser.feed(html.encode("utf-8", errors="replace"))
            text = self.parser.close()
        except BaseException:
            self.__init__()  # type: ignore[misc] - a builder left half way is never read again
            raise
        out: list[str] = []
        for line in (line.rstrip() for line in text.splitlines()):
            if line.strip() or (out and out[-1]):
                out.append(line.lstrip() if not line.startswith(" " * 2) else line)
        return "\n".join(out).strip("\n") + "\n"


def html_to_text(html: str) -> str:
    """The readable text of an HTML page or fragment: paragraphs on their own lines, ``<pre>``
    and code blocks line for line (log evidence), entities decoded, scripts and styles dropped."""
    return HtmlTexts()(html)


def looks_like_html(text: str) -> bool:
    """A page or a fragment of one (starts with a tag, holds closing tags)."""
    head = text.lstrip()[:1000].lower()
    return head.startswith(("<!doctype html", "<html", "<body", "<div", "<p>", "<article", "<section",
                            "<table", "<h1", "<h2", "<head")) and "</" in text
