"""Issue-tracker exports and Jupyter notebooks: recognise the JSON shape and read its parts in order
(title, body and comments; a notebook's cells, each with its outputs)."""
from __future__ import annotations

import json
from typing import Any, Callable

from ..core.sections import header
from .html_text import html_to_text


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


def chronological(items: list[Any], *keys: str) -> list[Any]:
    """``items`` oldest first when each holds one of ``keys`` as the same type (an ISO 8601
    ``created_at``, a post number), else as given. GitLab's notes API answers newest first."""
    def when(item: Any) -> Any:
        return next((item[k] for k in keys if isinstance(item, dict) and item.get(k) is not None), None)

    values = [when(item) for item in items]
    kinds = {type(v) for v in values}
    if len(kinds) != 1 or kinds - {str, int}:
        return items
    return [item for _, item in sorted(zip(values, items), key=lambda pair: pair[0])]


def _section(label: str, author: str, text: str) -> str:
    return f"{header(label, author)}\n{text.strip()}\n"


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
    parts = [f"# {doc['title']}\n", _section("issue", _author(doc), text_of(doc.get("body")))]
    comments = doc.get("comments")
    for i, c in enumerate(chronological(comments, "createdAt", "created_at") if isinstance(comments, list) else [],
                          start=1):
        if isinstance(c, dict):
            parts.append(_section(f"comment {i}", _author(c), text_of(c.get("body"))))
    return "\n".join(parts)


def is_gitlab(doc: Any) -> bool:
    return (isinstance(doc, dict) and isinstance(doc.get("title"), str) and "description" in doc
            and isinstance(doc.get("notes", []), list))


def gitlab(doc: dict[str, Any]) -> str:
    """A GitLab issue export: title, description, then ``notes[].body`` (system notes skipped)."""
    parts = [f"# {doc['title']}\n", _section("issue", _author(doc), text_of(doc.get("description")))]
    notes = [n for n in doc.get("notes") or [] if isinstance(n, dict) and not n.get("system")]
    notes = chronological(notes, "created_at")
    for i, n in enumerate(notes, start=1):
        parts.append(_section(f"note {i}", _author(n), text_of(n.get("body"))))
    return "\n".join(parts)


def is_discourse(doc: Any) -> bool:
    return (isinstance(doc, dict) and isinstance(doc.get("post_stream"), dict)
            and isinstance(doc["post_stream"].get("posts"), list))


def discourse(doc: dict[str, Any]) -> str:
    """A Discourse topic (``/t/<id>.json``): the title, then each post's cooked HTML as text."""
    parts = [f"# {text_of(doc.get('title') or doc.get('fancy_title'))}\n"]
    for p in chronological(doc["post_stream"]["posts"], "post_number"):
        if isinstance(p, dict):
            cooked = p.get("cooked")
            text = html_to_text(text_of(cooked)) if cooked else text_of(p.get("raw"))
            parts.append(_section(f"post {text_of(p.get('post_number', '?'))}", _author(p), text))
    return "\n".join(parts)


def is_notebook(doc: Any) -> bool:
    """A Jupyter notebook (``.ipynb``; Colab and Kaggle save the same): ``nbformat`` 4's ``cells``,
    or version 3's ``worksheets`` of them."""
    return isinstance(doc, dict) and _is_count(doc.get("nbformat")) and (
        isinstance(doc.get("cells"), list) or isinstance(doc.get("worksheets"), list))


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
            parts.append(_section(f"cell {i}", "", source))
        outputs = [_output(o) for o in cell.get("outputs") or [] if isinstance(o, dict)]
        printed = "\n".join(o.rstrip("\n") for o in outputs if o.strip())
        if printed:
            parts.append(_section(f"output {i}", "", printed))
    return "\n".join(parts)


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
