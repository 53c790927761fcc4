"""A saved thread page (a GitHub issue, a Stack Exchange question) read as its thread: its title
and posts alone, under the part headers the JSON exports get (data:
``dllogscan/data/thread_pages.toml``).

Each site is known by its markup, never by its words: a title element and post elements named by
class, id or attribute (GitHub's ``js-issue-title`` and ``comment-body``, React's
``data-testid="markdown-body"``; Stack Exchange's ``question-hyperlink``, ``js-post-body`` or
``post-text``, ``comment-copy``). On such a page only these are the thread: the site's header, the
thread's number, votes, timeline events, tags, "Not the answer you're looking for?", reactions, the
sign-up notice and the footer are the site's, and their words would tip a short thread's verdict.
Every site's markup is looked for in the same pass; a page that holds one site's title and one of
its posts is that site's thread (the site whose title came first, if two did). Where a "save as"
tool or a reader mode unwrapped the title element, the heading around it (``h1.gh-header-title``,
the ``<h1>`` in ``#question-header``) stands for it. A selector may name an element inside another,
as CSS's descendant combinator does (``.user-details a``: a Stack Exchange post's author's link);
the open elements such outer selectors name are counted as the page is read.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterator, Mapping

from ..core.errors import SignatureError
from ..core.paths import DATA_DIR, data_entries
from ..core.sections import HEADER, header, section

DATA = DATA_DIR / "thread_pages.toml"
FIELDS = {"name", "source", "title", "posts", "first", "reply"}
OPTIONAL = {"headings", "comments", "skip", "authors", "author"}
#: a table's lists of selectors, by the kind of element they name, in the order they are tried
KINDS = {"title": "title", "headings": "heading", "posts": "post", "comments": "comment", "authors": "author",
         "skip": "skip"}
#: where a post's author's name stands: before its text (in its header), or after it (its signature)
PLACES = {"before", "after"}
#: the longest name read as a post's author (a GitHub login has 39 characters at most)
AUTHOR_MAX = 100
#: a selector: an optional tag, then one or more ``.class``, ``#id``, ``[name]`` or ``[name=value]``
SELECTOR_RE = re.compile(r"(?P<tag>[a-z][a-z0-9-]*)?(?P<rest>(?:\.[\w-]+|#[\w-]+|\[[\w-]+(?:=[^\]]*)?\])+)")
SIMPLE_RE = re.compile(r"\.(?P<cls>[\w-]+)|#(?P<id>[\w-]+)|\[(?P<name>[\w-]+)(?:=(?P<value>[^\]]*))?\]")
TAG_RE = re.compile(r"[a-z][a-z0-9-]*")
#: a selector's elements, each inside the one before, apart by white space (not inside ``[...]``)
STEP_RE = re.compile(r"(?:\[[^\]]*\]|[^\s\[])+")
STEPS_RE = re.compile(rf"\s*{STEP_RE.pattern}(?:\s+{STEP_RE.pattern})*\s*")
#: the most elements one selector names, each inside the one before (``#question-header h1``)
MAX_STEPS = 3
#: the header of a comment under a post (Stack Exchange's)
COMMENT = "comment"
NO_CLASSES: frozenset[str] = frozenset()


@dataclass(frozen=True, eq=False)
class Selector:
    """What one element must have: its tag (None: any), class words, attributes (a value of None:
    any value), and the element it must be inside (None: anywhere). Each is itself (hashed by
    identity: a page's elements look them up by the thousand)."""

    tag: str | None
    classes: frozenset[str]
    attrs: tuple[tuple[str, str | None], ...]
    within: Selector | None = None

    def matches(self, tag: str, get: Callable[[str], str | None], classes: frozenset[str],
                inside: Mapping[Selector, int]) -> bool:
        """Whether an element of ``tag``, attributes read through ``get``, class words ``classes``
        is one this selector names, ``inside`` counting the open elements each ``within`` names."""
        if (self.tag is not None and tag != self.tag) or not self.classes <= classes:
            return False
        if self.within is not None and not inside.get(self.within):
            return False
        for name, value in self.attrs:
            got = get(name)
            if got is None or (value is not None and got.strip() != value):
                return False
        return True

    def outer(self) -> Iterator[Selector]:
        """The selectors this one must be inside, innermost first."""
        within = self.within
        while within is not None:
            yield within
            within = within.within


def _compound(text: str, where: str, bare: bool) -> Selector:
    """One element's selector; ``bare``: a tag alone will do (it is inside another's)."""
    found = SELECTOR_RE.fullmatch(text)
    if found is None and bare and TAG_RE.fullmatch(text):
        return Selector(text, NO_CLASSES, ())
    if found is None:
        raise SignatureError(f"{where}: bad selector {text!r}: a tag, then .class, #id, [name] or [name=value] "
                             "(a tag alone only inside another element)")
    classes: set[str] = set()
    attrs: list[tuple[str, str | None]] = []
    for simple in SIMPLE_RE.finditer(found["rest"]):
        if simple["cls"]:
            classes.add(simple["cls"])
        elif simple["id"]:
            attrs.append(("id", simple["id"]))
        else:
            attrs.append((simple["name"], simple["value"]))
    return Selector(found["tag"], frozenset(classes), tuple(attrs))


def parse_selector(text: str, where: str) -> Selector:
    """``a.question-hyperlink``, ``[data-testid=issue-title]``; ``.user-details a``: an element
    inside another (each written as one; all but the outermost may be a tag alone); anything else
    raises ``SignatureError`` naming ``where``."""
    steps = STEP_RE.findall(text) if isinstance(text, str) and STEPS_RE.fullmatch(text) else []
    if not steps or len(steps) > MAX_STEPS:
        raise SignatureError(f"{where}: bad selector {text!r}: one to {MAX_STEPS} elements, each inside the one "
                             "before, each a tag, then .class, #id, [name] or [name=value] (all but the first may "
                             "be a tag alone)")
    selector = _compound(steps[0], where, bare=False)
    for step in steps[1:]:
        inner = _compound(step, where, bare=True)
        selector = Selector(inner.tag, inner.classes, inner.attrs, selector)
    return selector


@dataclass(frozen=True)
class Site:
    """One site's markup: ``(kind, selector)`` pairs (kind ``title``, ``heading``, ``post``,
    ``comment``, ``author`` or ``skip``), the header of the first post, the word of the numbered replies, and
    whether an author's name stands ``before`` or ``after`` the text it wrote."""

    name: str
    rules: tuple[tuple[str, Selector], ...]
    first: str
    reply: str
    author: str = ""

    def kind_of(self, tag: str, get: Callable[[str], str | None], classes: frozenset[str],
                inside: Mapping[Selector, int]) -> str | None:
        """The kind of the first rule that names this element, else None."""
        return next((kind for kind, sel in self.rules if sel.matches(tag, get, classes, inside)), None)


@dataclass(frozen=True)
class PageTable:
    """The sites, and what an element needs to be named by any of them: one of ``words`` among its
    classes, one of the attributes ``names`` with one of its values (None: any value), or (inside an
    element one of the ``outer`` selectors names) one of the ``bare`` tags."""

    sites: tuple[Site, ...]
    words: frozenset[str]
    names: tuple[tuple[str, frozenset[str] | None], ...]
    outer: tuple[Selector, ...] = ()
    bare: frozenset[str] = frozenset()


def _header_word(word: object, numbered: bool, where: str) -> str:
    """``word`` where ``core.sections.HEADER`` knows the header it makes, else ``SignatureError``."""
    label = f"{word} 1" if numbered else str(word)
    if not isinstance(word, str) or not HEADER.fullmatch(header(label, "")):
        raise SignatureError(f"{where}: {word!r} makes no part header core/sections.py knows")
    return word


def _site(raw: dict, where: str) -> Site:
    if (not FIELDS <= set(raw) <= FIELDS | OPTIONAL or not raw["title"] or not raw["posts"]
            or not all(isinstance(raw.get(key, []), list) for key in KINDS)
            or bool(raw.get("authors")) != (raw.get("author") in PLACES)):
        raise SignatureError(f"{where}: needs {', '.join(sorted(FIELDS))} (title and posts lists, not empty), "
                             f"may have {', '.join(sorted(OPTIONAL))} (authors with author = before or after)")
    rules = tuple((kind, parse_selector(text, f"{where}: {key}"))
                  for key, kind in KINDS.items() for text in raw.get(key, []))
    return Site(raw["name"], rules, _header_word(raw["first"], False, where), _header_word(raw["reply"], True, where),
                raw.get("author", ""))


@lru_cache(maxsize=2)
def load_pages(path: Path = DATA) -> PageTable:
    """Read and validate the table; a malformed entry or selector names itself."""
    sites = tuple(_site(raw, f"{path}: page #{i}") for i, raw in enumerate(data_entries(path, "page"), start=1))
    named = [sel for site in sites for _, sel in site.rules]
    outer = tuple(dict.fromkeys(within for sel in named for within in sel.outer()))
    selectors = named + list(outer)
    words = frozenset(word for sel in selectors for word in sel.classes)
    values: dict[str, set[str] | None] = {}
    for name, value in (sel.attrs[0] for sel in selectors if not sel.classes and sel.attrs):
        known = values.setdefault(name, set())
        if known is None or value is None:
            values[name] = None
        else:
            known.add(value)
    names = tuple((name, None if known is None else frozenset(known)) for name, known in sorted(values.items()))
    bare = frozenset(sel.tag for sel in selectors if sel.tag and not sel.classes and not sel.attrs)
    return PageTable(sites, words, names, outer, bare)


@dataclass
class _Open:
    """An element being read (a title, post or comment; or a skipped element inside one): its
    kind, its tag, how many of that tag were open with it, where its text starts in the page's."""

    kind: str
    tag: str
    level: int
    start: int


@dataclass
class _Post:
    """A post or comment kept: its kind, its text, who wrote it (empty: the page does not say)."""

    kind: str
    text: str
    author: str = ""


@dataclass
class _SiteReader:
    """One site's title and posts, collected while the whole page is read."""

    site: Site
    title: str = ""
    titled: int = 0  # the order in which the title (else the heading) was read among the sites' (0: none)
    #: the heading that holds the title (its text, its order, while it is read): the title where
    #: the page lost its title element
    heading: str = ""
    headed: int = 0
    heading_open: _Open | None = None
    heading_holes: list[tuple[int, int]] = field(default_factory=list)  # its skipped stretches (its number)
    posts: list[_Post] = field(default_factory=list)
    reading: _Open | None = None
    skipping: _Open | None = None
    holes: list[tuple[int, int]] = field(default_factory=list)  # skipped stretches of ``reading``
    #: the author read since the last part (``before``: the next one's), or whether the last post
    #: kept is still the one an author read now signs (``after``: no part has started since)
    author: str = ""
    signable: bool = False

    def start(self, kind: str, tag: str, level: int, at: int) -> None:
        """An element of ``kind`` opens: read it, unless a part is being read (then a ``skip``
        element inside it is left out of it) or it repeats the title. A heading is read beside
        the title element inside it."""
        if kind == "heading":
            if self.reading is None and self.heading_open is None and not self.heading:
                self.heading_open = _Open(kind, tag, level, at)
        elif kind == "skip":
            if self.skipping is None and (self.heading_open is not None if self.reading is None
                                          else self.reading.kind != "title"):
                self.skipping = _Open("heading" if self.reading is None else kind, tag, level, at)
        elif self.reading is None and not (kind == "title" and self.title):
            self.reading = _Open(kind, tag, level, at)
            self.signable = self.signable and kind == "author"

    def end(self, tag: str, level: int | None, parts: list[str], order: int) -> str | None:
        """An element closes; ``"title"``, ``"heading"`` or ``"post"`` when it ends a part that is kept."""
        skip = self.skipping
        if skip is not None and skip.tag == tag and skip.level == level:
            (self.heading_holes if skip.kind == "heading" else self.holes).append((skip.start, len(parts)))
            self.skipping = None
            return None
        heading = self.heading_open
        if heading is not None and heading.tag == tag and heading.level == level:
            kept = self._kept(heading.start, len(parts), self.heading_holes)
            self.heading = " ".join("".join(piece for a, b in kept for piece in parts[a:b]).split())
            self.heading_open, self.heading_holes, self.headed = None, [], order
            return "heading" if self.heading else None
        part = self.reading
        if part is None or part.tag != tag or part.level != level:
            return None
        kept = self._kept(part.start, len(parts), self.holes)
        text = "".join(piece for a, b in kept for piece in parts[a:b]).strip()
        self.reading, self.holes = None, []
        if part.kind == "author":
            self._signed(" ".join(text.split()))
        elif part.kind == "title" and text:
            self.title, self.titled = " ".join(text.split()), order
            return "title"
        elif part.kind != "title" and text:
            self.posts.append(_Post(part.kind, text, self.author if self.site.author == "before" else ""))
            self.author, self.signable = "", True
            return "post"
        return None

    def _signed(self, name: str) -> None:
        """An author's name was read: the next post's (``before``), or the last post's if none has
        started since (``after``; the last name read wins: a signature follows its editor's)."""
        if not name or len(name) > AUTHOR_MAX:
            return
        if self.site.author == "before":
            self.author = name
        elif self.signable:
            self.posts[-1].author = name

    @staticmethod
    def _kept(start: int, end: int, holes: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """The stretches of ``start:end`` outside the skipped ones, ``holes``."""
        kept, at = [], start
        for a, b in holes:
            kept.append((at, a))
            at = b
        return kept + [(at, end)]

    def forget(self, kind: str) -> None:
        """Forget the title, heading or last post kept (it was in a side pane, dropped)."""
        if kind == "title":
            self.title, self.titled = "", 0
        elif kind == "heading":
            self.heading, self.headed = "", 0
        else:
            self.posts.pop()
            self.signable = False

    def clamp(self, length: int) -> None:
        """The page's text was cut at ``length`` (a side pane inside the part being read)."""
        for holes in (self.holes, self.heading_holes):
            while holes and holes[-1][0] >= length:  # in order: those in the pane are last
                holes.pop()

    def text(self) -> str:
        """``# title`` and each post under its header: the first post under ``first``, then
        ``reply N`` and ``comment N``, numbered each in page order, ``by`` its author where the page
        names one."""
        counts: dict[str, int] = {}
        sections = []
        for post in self.posts:
            word = COMMENT if post.kind == "comment" else self.site.reply
            if post.kind == "post" and not counts.get("first"):
                label, counts["first"] = self.site.first, 1
            else:
                counts[word] = counts.get(word, 0) + 1
                label = f"{word} {counts[word]}"
            sections.append(section(label, post.author, post.text))
        return "\n".join([f"# {self.title or self.heading}\n", *sections])

    def order(self) -> int:
        """When its title was read (its heading's, where it has no title element); 0: neither."""
        return self.titled if self.title else self.headed


class ThreadPage:
    """The title and posts of each site's markup on a page, collected while the whole page is
    read; the page is a thread page when one site's title and posts were both there."""

    def __init__(self, table: PageTable | None = None) -> None:
        self.table = table or load_pages()
        self.readers = [_SiteReader(site) for site in self.table.sites]
        self.titles = 0
        #: what was kept, in order: a reader's index and what it kept, ``"title"``, ``"heading"`` or
        #: ``"post"`` (undone by ``restore``)
        self.kept: list[tuple[int, str]] = []
        #: the open elements that a selector's ``within`` names: how many of each, and (tag, level,
        #: the selectors it matched) for each, innermost last
        self.inside: dict[Selector, int] = {}
        self.outer: list[tuple[str, int, tuple[Selector, ...]]] = []

    def start(self, tag: str, attrib: object, level: int, at: int) -> None:
        """An element opens, the ``level``-th open ``tag``, its text from ``at`` in the page's parts."""
        get = getattr(attrib, "get", None)
        if get is None or not (attrib or (self.inside and tag in self.table.bare)):
            return
        words = get("class")
        classes = frozenset(words.split()) if words else NO_CLASSES
        if (classes.isdisjoint(self.table.words) and not self._named(get)
                and not (self.inside and tag in self.table.bare)):
            return
        for reader in self.readers:
            kind = reader.site.kind_of(tag, get, classes, self.inside)
            if kind is not None:
                reader.start(kind, tag, level, at)
        around = tuple(sel for sel in self.table.outer if sel.matches(tag, get, classes, self.inside))
        if around:
            self.outer.append((tag, level, around))
            for sel in around:
                self.inside[sel] = self.inside.get(sel, 0) + 1

    def _named(self, get: Callable[[str], str | None]) -> bool:
        """Whether the element has an attribute a selector without a class names, with its value."""
        for name, values in self.table.names:
            got = get(name)
            if got is not None and (values is None or got.strip() in values):
                return True
        return False

    def end(self, tag: str, level: int | None, parts: list[str]) -> None:
        """An element closes (before it is counted closed); a title or post it ends is kept."""
        for i, reader in enumerate(self.readers):
            if reader.reading is not None or reader.heading_open is not None:
                kept = reader.end(tag, level, parts, self.titles + 1)
                if kept is not None:
                    self.titles += kept != "post"
                    self.kept.append((i, kept))
        if self.outer and self.outer[-1][:2] == (tag, level):
            for sel in self.outer.pop()[2]:
                self.inside[sel] -= 1
                if not self.inside[sel]:
                    del self.inside[sel]

    def mark(self) -> int:
        """Where the reading stands, to go back to (``restore``)."""
        return len(self.kept)

    def restore(self, mark: int, length: int) -> None:
        """Forget the titles and posts kept since ``mark``: they were in a side pane, whose text
        (from ``length`` on) was dropped."""
        while len(self.kept) > mark:
            index, kind = self.kept.pop()
            self.readers[index].forget(kind)
        for reader in self.readers:
            reader.clamp(length)

    def text(self) -> str | None:
        """The thread as a thread export is flattened, from the site whose title came first among
        those with a title (or the heading that holds it) and a post; None when no site had both."""
        found = [reader for reader in self.readers if reader.order() and reader.posts]
        return min(found, key=_SiteReader.order).text() if found else None
