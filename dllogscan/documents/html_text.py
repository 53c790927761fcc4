"""HTML to plain text with the stdlib parser: blocks become lines, ``<pre>`` keeps its lines."""
from __future__ import annotations

import re
from html.parser import HTMLParser

WHITESPACE_RE = re.compile(r"\s+")

BLOCK_TAGS = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote",
              "section", "article", "header", "footer", "table", "ul", "ol", "hr", "aside", "title",
              "details", "summary", "dd", "dt"}
SKIP_TAGS = {"script", "style", "head", "noscript", "svg", "template"}


class _TextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.pre = 0
        self.skip = 0
        self.quote = 0

    def _newline(self) -> None:
        if self.parts and not self.parts[-1].endswith("\n"):
            self.parts.append("\n")

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in SKIP_TAGS and tag != "head":
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

    def handle_endtag(self, tag: str) -> None:
        if tag in SKIP_TAGS and tag != "head":
            self.skip = max(0, self.skip - 1)
        elif tag == "pre":
            self.pre = max(0, self.pre - 1)
            self._newline()
        elif tag == "blockquote":
            self.quote = max(0, self.quote - 1)
            self._newline()
        elif tag in BLOCK_TAGS:
            self._newline()

    def handle_data(self, data: str) -> None:
        if self.skip:
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


def html_to_text(html: str) -> str:
    """The readable text of an HTML page or fragment: paragraphs on their own lines, ``<pre>``
    and code blocks line for line (log evidence), entities decoded, scripts and styles dropped."""
    parser = _TextParser()
    parser.feed(html)
    parser.close()
    lines = [line.rstrip() for line in "".join(parser.parts).splitlines()]
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
