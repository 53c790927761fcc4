"""Issue-tracker exports and Jupyter notebooks: recognise the JSON shape and read its parts in order
(title, body and comments; a notebook's cells, each with its outputs)."""
from __future__ import annotations

import json
from typing import Any, Callable, Iterable, TypeVar

from ..core.sections import section
from .html_text import HtmlTexts, html_to_text

T = TypeVar("T")


def text_of(value: Any) -> str:
    """A field of an untrusted export as text, whatever its JSON type: a string as is, null as
    empty, a number, list or object as its JSON (``"body": 5`` is the text ``5``, never a crash)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (ValueError, RecursionError):
        return ""


def _author(item: dict[str, Any]) -> str:
    author = item.get("author") or item.get("user") or item.get("username") or ""
    if isinstance(author, dict):
        author = author.get("login") or author.get("username") or author.get("name") or ""
    return text_of(author)


def _when(item: Any, keys: tuple[str, ...]) -> Any:
    return next((item[k] for k in keys if isinstance(item, dict) and item.get(k) is not None), None)


def in_order(dated: list[tuple[Any, T]]) -> list[T]:
    """The values of ``(when, value)`` pairs sorted by ``when`` when every ``when`` has the same
    type (an ISO 8601 string, a post number), else as given."""
    kinds = {type(when) for when, _ in dated}
    if len(kinds) != 1 or kinds - {str, int}:
        return [value for _, value in dated]
    return [value for _, value in sorted(dated, key=lambda pair: pair[0])]


def chronological(items: list[Any], *keys: str) -> list[Any]:
    """``items`` oldest first when each holds one of ``keys`` as the same type (an ISO 8601
    ``created_at``, a post number), else as given. GitLab's notes API answers newest first."""
    return in_order([(_when(item, keys), item) for item in items])


def is_github(doc: Any) -> bool:
    """``comments`` is a list in ``gh issue view --json`` and a count in the REST issue object
    (``GET /repos/{owner}/{repo}/issues/{n}``)."""
    comments = doc.get("comments", []) if isinstance(doc, dict) else None
    return (isinstance(doc, dict) and isinstance(doc.get("title"), str) and "body" in doc
            and (isinstance(comments, list) or _is_count(comments)) and "description" not in doc)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def github(doc: dict[str, Any]) -> str:
    """``gh issue view N --json title,body,comments`` (also the REST issue object, whose
    ``comments`` is how many there are: the issue alone is read)."""
    parts = [f"# {doc['title']}\n", section("issue", _author(doc), text_of(doc.get("body")))]
    comments = doc.get("comments")
    for i, c in enumerate(chronological(comments, "createdAt", "created_at") if isinstance(comments, list) else [],
                          start=1):
        if isinstance(c, dict):
            parts.append(section(f"comment {i}", _author(c), text_of(c.get("body"))))
    return "\n".join(parts)


def is_gitlab(doc: Any) -> bool:
    return (isinstance(doc, dict) and isinstance(doc.get("title"), str) and "description" in doc
            and isinstance(doc.get("notes", []), list))


def gitlab(doc: dict[str, Any]) -> str:
    """A GitLab issue export: title, description, then ``notes[].body`` (system notes skipped)."""
    parts = [f"# {doc['title']}\n", section("issue", _author(doc), text_of(doc.get("description")))]
    notes = [n for n in doc.get("notes") or [] if isinstance(n, dict) and not n.get("system")]
    notes = chronological(notes, "created_at")
    for i, n in enumerate(notes, start=1):
        parts.append(section(f"note {i}", _author(n), text_of(n.get("body"))))
    return "\n".join(parts)


def is_discourse(doc: Any) -> bool:
    return (isinstance(doc, dict) and isinstance(doc.get("post_stream"), dict)
            and isinstance(doc["post_stream"].get("posts"), list))


def discourse(doc: dict[str, Any]) -> str:
    """A Discourse topic (``/t/<id>.json``): the title, then each post's cooked HTML as text."""
    parts = [f"# {text_of(doc.get('title') or doc.get('fancy_title'))}\n"]
    to_text = HtmlTexts()
    for p in chronological(doc["post_stream"]["posts"], "post_number"):
        if isinstance(p, dict):
            parts.append(section(f"post {text_of(p.get('post_number', '?'))}", _author(p), _post_text(p, to_text)))
    return "\n".join(parts)


def is_notebook(doc: Any) -> bool:
    """A Jupyter notebook (``.ipynb``; Colab and Kaggle save the same): ``nbformat`` 4's ``cells``,
    or version 3's ``worksheets`` of them."""
    return isinstance(doc, dict) and _is_count(doc.get("nbformat")) and (
        isinstance(doc.get("cells"), list) or isinstance(doc.get("worksheets"), list))


def _listed(value: Any) -> list[Any]:
    """A field that should hold a list: itself where it does, else no items (``"outputs": 5``)."""
    return value if isinstance(value, list) else []


def _joined(value: Any) -> str:
    """A notebook text field: a string, or a list of strings (the file's lines) run together."""
    if isinstance(value, list):
        return "".join(v if isinstance(v, str) else text_of(v) for v in value)
    return text_of(value)


def _output(out: dict[str, Any]) -> str:
    """What a cell printed: a stream's text, an error's traceback (its ANSI colours are the
    scanner's to strip), a result's plain-text form."""
    kind = out.get("output_type")
    if kind in ("error", "pyerr"):
        lines = out.get("traceback")
        if isinstance(lines, list) and lines:
            return "\n".join(_joined(line) for line in lines)
        return f"{text_of(out.get('ename'))}: {text_of(out.get('evalue'))}"
    if kind == "stream":
        return _joined(out.get("text"))
    data = out.get("data")
    return _joined(data.get("text/plain")) if isinstance(data, dict) else _joined(out.get("text"))


def notebook(doc: dict[str, Any]) -> str:
    """Each cell's source under ``--- cell N ---`` (markdown cells too: they hold the author's
    words), then what it printed under ``--- output N ---``; cells in notebook order."""
    cells = doc.get("cells")
    if not isinstance(cells, list):  # nbformat 3
        cells = [c for w in doc["worksheets"] if isinstance(w, dict) and isinstance(w.get("cells"), list)
                 for c in w["cells"]]
    parts = []
    for i, cell in enumerate((c for c in cells if isinstance(c, dict)), start=1):
        source = _joined(cell.get("source", cell.get("input")))
        if source.strip():
            parts.append(section(f"cell {i}", "", source))
        outputs = [_output(o) for o in _listed(cell.get("outputs")) if isinstance(o, dict)]
        printed = "\n".join(o.rstrip("\n") for o in outputs if o.strip())
        if printed:
            parts.append(section(f"output {i}", "", printed))
    return "\n".join(parts)


def _post_text(post: dict[str, Any], to_text: Callable[[str], str] = html_to_text) -> str:
    """A Discourse post's text: its cooked HTML as text (``to_text``: the topic's ``HtmlTexts``),
    else its raw markdown."""
    cooked = post.get("cooked")
    return to_text(text_of(cooked)) if cooked else text_of(post.get("raw"))


#: kind name -> (recogniser, flattener); the first that recognises the document wins
SHAPES: dict[str, tuple[Callable[[Any], bool], Callable[[Any], str]]] = {
    "gitlab-issue": (is_gitlab, gitlab),
    "discourse-topic": (is_discourse, discourse),
    "github-issue": (is_github, github),
    "notebook": (is_notebook, notebook),
}


def flatten_json(doc: Any) -> tuple[str, str] | None:
    """``(kind, text)`` for a known export shape, None for any other JSON."""
    for kind, (recognise, flatten) in SHAPES.items():
        if recognise(doc):
            return kind, flatten(doc)
    return None


#: what an array element that is one part of a thread is called, by shape: the label of its header
#: and the kind of an array of them
PART_KINDS = {"comment": "github-comment-list", "note": "gitlab-note-list", "post": "discourse-post-list"}
#: an array holding a GitHub issue timeline's elements (``gh api repos/O/R/issues/N/timeline``)
TIMELINE_KIND = "github-timeline"
#: the timeline's elements that are posts, read as comments (a pull request review's text too); every
#: other one (labeled, closed, committed, cross-referenced with the other issue's text) is GitHub's
#: record of an action, no part of the thread
TIMELINE_POSTS = {"commented", "reviewed"}
#: what orders the elements of an array: the first of these each element has (a review: submitted_at)
DATES = ("created_at", "createdAt", "submitted_at", "post_number")


def timeline_event(item: Any) -> str | None:
    """The ``event`` of an element of a GitHub issue timeline (a string ``event`` with the
    ``node_id`` or the ``actor`` object GitHub gives each), else None: a log record's ``event``
    field is none."""
    if not isinstance(item, dict):
        return None
    event = item.get("event")
    if isinstance(event, str) and ("node_id" in item or isinstance(item.get("actor"), dict)):
        return event
    return None


def part_kind(item: Any) -> str | None:
    """``comment``, ``note`` or ``post`` for an element of an exported list of replies, else None:
    a GitHub comment (``body`` and ``user``: ``gh api .../issues/N/comments``; ``author``: ``gh``'s
    JSON; a timeline's post), a GitLab note (the same, with ``system`` or ``noteable_type``:
    ``/notes``), a Discourse post (``post_number`` with ``cooked`` or ``raw``); ``event`` for a
    timeline's other elements."""
    if not isinstance(item, dict):
        return None
    event = timeline_event(item)
    if event is not None:
        return "comment" if event in TIMELINE_POSTS else "event"
    if "post_number" in item and ("cooked" in item or "raw" in item):
        return "post"
    if "body" in item and ("user" in item or "author" in item) and "title" not in item:
        return "note" if "system" in item or "noteable_type" in item else "comment"
    return None


def flatten_array(items: Iterable[Any]) -> tuple[str, str] | None:
    """``(kind, text)`` for a JSON array of thread parts, None as soon as an element is not one.

    Each element is an issue or topic of a shape in ``SHAPES`` (``gh issue list --json``, GitLab's
    ``/issues``), flattened as such, or a reply (``part_kind``) under its header; oldest first by
    ``created_at``/``createdAt``/``submitted_at``/``post_number`` where each has one; GitLab's
    system notes are skipped, and so are a GitHub timeline's elements that are no post. ``items``
    is read one element at a time and only each element's text is kept, so an array of anything
    else is given up on at its first element. The kind names a timeline (``github-timeline``, its
    text empty where it holds no post), else a list of the first reply's kind
    (``github-comment-list``), else of the first issue's (``github-issue-list``)."""
    dated: list[tuple[Any, tuple[str, str, str]]] = []  # (when, (header label, author, text))
    reply_kind = issue_kind = ""
    timeline = False
    to_text: HtmlTexts | None = None  # made at the first post: a list of comments needs no parser
    for item in items:
        label = part_kind(item)
        timeline = timeline or timeline_event(item) is not None
        if label is None:
            whole = flatten_json(item)
            if whole is None:
                return None
            issue_kind = issue_kind or whole[0] + "-list"
            dated.append((_when(item, DATES), ("", "", whole[1])))
        elif label != "event" and not (label == "note" and item.get("system")):
            reply_kind = reply_kind or PART_KINDS[label]
            if label == "post":  # numbered as in the topic
                to_text = to_text or HtmlTexts()
                label, text = f"post {text_of(item.get('post_number'))}", _post_text(item, to_text)
            else:
                text = text_of(item.get("body"))
            dated.append((_when(item, DATES), (label, _author(item), text)))
    if not dated and not timeline:
        return None
    parts: list[str] = []
    count = dict.fromkeys(PART_KINDS, 0)
    for label, author, text in in_order(dated):
        if label in count:
            count[label] += 1
            label = f"{label} {count[label]}"
        parts.append(section(label, author, text) if label else text)  # an issue: flattened already
    return TIMELINE_KIND if timeline else reply_kind or issue_kind, "\n".join(parts)
