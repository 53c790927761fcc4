"""HTML to plain text: blocks become lines, ``<pre>`` keeps its lines, quotes get ``> ``.

The page goes through libxml2's HTML parser (``lxml``) as a stream of events (start tag, text, end
tag) into ``_TextBuilder``; no tree is built. It is linear in its input on every crafted shape
tried: the stdlib ``html.parser`` is quadratic before CPython 3.11.13 (``'<a ' * 13000``, 39 KB:
19 s), and an HTML5 tree builder (Lexbor, via selectolax) is quadratic in nesting depth
(``'<div>' * 40000``: 7 s); libxml2 reads a 1 MB ``'<a '`` run in 0.03 s and 400 000 nested
``<div>`` in 0.9 s.
"""
from __future__ import annotations

import re

WHITESPACE_RE = re.compile(r"\s+")

BLOCK_TAGS = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote",
              "section", "article", "header", "footer", "table", "ul", "ol", "hr", "aside", "title",
              "details", "summary", "dd", "dt"}
SKIP_TAGS = {"script", "style", "noscript", "svg", "template"}
#: a saved page's chrome, not the thread: navigation, forms and buttons, what is hidden, and ARIA
#: landmarks around the content (a site's header, footer, sidebar of linked questions: a "Linked:
#: DataLoader worker exited unexpectedly" there is not the reporter's error). Elements, not classes.
CHROME_TAGS = {"nav", "form", "button", "dialog", "select", "textarea"}
CHROME_ROLES = {"banner", "navigation", "contentinfo", "complementary", "search", "menu", "menubar", "dialog",
                "alertdialog", "toolbar", "tooltip"}
#: a <header> or <footer> outside these is the page's banner or contentinfo (HTML-AAM); inside, an
#: article's own (a post's title, its signature) and kept
SECTIONING = {"article", "aside", "main", "nav", "section"}
VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
             "track", "wbr"}


class _TextBuilder:
    """Collects the text of a document from its start tags, end tags and text, in order."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.pre = 0
        self.quote = 0
        self.skip = 0
        self.sections = 0
        self.chrome: str | None = None  # the tag of the chrome element being skipped
        self.chrome_depth = 0  # how many of that tag are open inside it

    def _is_chrome(self, tag: str, attrib: object) -> bool:
        if tag in VOID_TAGS:  # nothing inside, and no end event to wait for
            return False
        if tag in CHROME_TAGS or (tag in ("header", "footer") and not self.sections):
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
        if self.chrome is not None:
            self.chrome_depth += tag == self.chrome
            return
        if self._is_chrome(tag, attrib):
            self.chrome, self.chrome_depth = tag, 1
            self._newline()
            return
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
        if tag == "li":
            self.parts.append("- ")

    def end(self, tag: str) -> None:
        """An element closes."""
        if self.chrome is not None:
            if tag == self.chrome:
                self.chrome_depth -= 1
                if not self.chrome_depth:
                    self.chrome = None
            return
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

    def data(self, data: str) -> None:
        """Text, in one piece or several."""
        if self.skip or self.chrome is not None:
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
        return "".join(self.parts)


def html_to_text(html: str) -> str:
    """The readable text of an HTML page or fragment: paragraphs on their own lines, ``<pre>``
    and code blocks line for line (log evidence), entities decoded, scripts and styles dropped."""
    from lxml import etree  # noqa: PLC0415 - only documents need it (~30 ms)

    # bytes in one known encoding: a <meta charset> cannot override it, and a lone surrogate
    # (a JSON "\ud800" in a Discourse post) becomes "?" instead of an encoding error
    parser = etree.HTMLParser(target=_TextBuilder(), recover=True, no_network=True, encoding="utf-8")
    parser.feed(html.encode("utf-8", errors="replace"))
    lines = [line.rstrip() for line in parser.close().splitlines()]
    out: list[str] = []
    for line in lines:
        if line.strip() or (out and out[-1]):
            out.append(line.lstrip() if not line.startswith(" " * 2) else line)
    return "\n".join(out).strip("\n") + "\n"


def looks_like_html(text: str) -> bool:
    """A page or a fragment of one (starts with a tag, holds closing tags)."""
    head = text.lstrip()[:1000].lower()
    return head.startswith(("<!doctype html", "<html", "<body", "<div", "<p>", "<article", "<section",
                            "<table", "<h1", "<h2", "<head")) and "</" in text
