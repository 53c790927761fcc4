"""One flat row per source (the DataFrame's columns) and one contract object per source (JSONL).
Names that are not UTF-8 come out escaped (``names.printable``), so every writer can write them;
the values read off names and first lines (node, pod, container, ...) are names too: their
controls come out as visible escapes (``printable.escape``), as the source's own name does."""
from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..core.models import ScanResult
from ..core.names import SURROGATE_RE, printable_values
from ..core.printable import escape
from .archives import LINK_TAIL, is_link
from .clock import earliest
from .layouts import from_name
from .worker import Record

if TYPE_CHECKING:
    from ..report.redact import Redactor

#: the columns of a batch table; ``first_time``, ``last_time`` and ``first_failure_time`` are text,
#: ``YYYY-MM-DDTHH:MM:SS`` as the log wrote it, plus ``+HH:MM`` where its stamp names a zone
#: (``batch/clock.py``, the README's Batch section)
COLUMNS = ["source", "member", "kind", "job", "array_task", "node", "namespace", "pod", "container",
           "rank", "status", "class", "subclass", "confidence", "title", "method", "first_failure_time",
           "first_time", "last_time", "evidence_line", "evidence_text", "cross_file_source", "top_fix",
           "top_command", "signatures", "diagnoses", "lines", "bytes", "error", "note"]
RANK_RE = re.compile(r"\[rank ?(\d+)\]", re.I)
#: a link's error row names its target, itself a source whose row may come later
LINK_TARGET_RE = re.compile(rf"is a (?:symbolic|hard) link to (?P<target>.+?)(?:, scanned under that name)?"
                            rf"{re.escape(LINK_TAIL)}$")
META_KEYS = ("kind", "job", "array_task", "node", "namespace", "pod", "container", "rank",
             "first_time", "last_time")


def status(record: Record) -> str:
    err = record.result.error
    if not err:
        return "ok"
    if is_link(err):
        return "link"
    return "skipped" if err.endswith("not scanned") else "error"


def first_note(r: ScanResult) -> str | None:
    """The one note a table row has room for: the top diagnosis's own (why it was named so, or set
    aside), else the result's (a lead of a text with no diagnosis, a diagnosis set aside)."""
    notes = (r.diagnoses[0].notes if r.diagnoses else ()) or r.notes
    return notes[0] if notes else None


def meta_values(record: Record) -> dict[str, Any]:
    """The batch fields of a record (``META_KEYS``), controls in them shown as escapes: a node or
    a container is a directory's name, and ``nodes/n1\x1b]0;title\x07`` must not retitle the
    terminal that shows a summary."""
    return {k: escape(v) if isinstance(v, str) else v for k in META_KEYS for v in (record.meta.get(k),)}


def redacted(record: Record, redactor: "Redactor") -> Record:
    """The record as ``batch --redact`` writes it, by the output's one ``Redactor`` (in the process
    that writes the rows, so a value has one placeholder in every row): its fields read off names
    first, so that its source's name and text hide them too, then its result. What its name alone
    says is learnt too (a folder's node where the log's lines name another), and a link's target
    is read as a name, its fields learnt now: its own row may come later. A name shown with
    escapes (``\\x1b``: a control, an undecodable byte) is not read so: its ``\\`` would split it."""
    r = record.result
    meta = redactor.fields(record.meta)
    link = LINK_TARGET_RE.search(r.error) if is_link(r.error) else None
    for name in (r.source, r.member, link and link["target"]):
        if name and "\\" not in name:
            redactor.fields(from_name(name))
    if link:
        target = link["target"]
        r = replace(r, error=r.error.replace(target, redactor.path(target) or target))  # type: ignore[union-attr]
    return replace(record, result=redactor.result(r), meta=meta)


def to_row(record: Record) -> dict[str, Any]:
    r = record.result
    row: dict[str, Any] = {c: None for c in COLUMNS}
    row.update(meta_values(record))
    row.update(source=r.source, member=r.member, status=status(record), error=r.error,
               lines=r.lines, bytes=r.bytes_read, diagnoses=len(r.diagnoses), note=first_note(r))
    if r.diagnoses:
        d = r.diagnoses[0]
        ev = d.evidence[0] if d.evidence else None
        fix = d.fixes[0] if d.fixes else None
        times = [t for x in r.diagnoses if (t := x.facts.get("time"))]
        row.update({"class": d.cls, "subclass": d.subclass, "confidence": round(d.confidence, 3),
                    "title": d.title, "method": d.method, "evidence_line": ev.line if ev else None,
                    "evidence_text": ev.text if ev else None, "top_fix": fix.title if fix else None,
                    "top_command": fix.commands[0] if fix and fix.commands else None,
                    "signatures": " ".join(d.signatures), "cross_file_source": d.facts.get("kernel_source"),
                    "first_failure_time": earliest(times) if times else None})
        if row["rank"] is None:
            m = RANK_RE.search(" ".join(e.text for e in d.evidence))
            row["rank"] = d.facts.get("rank") or (m.group(1) if m else None)
    return printable_values(row)


def to_object(record: Record, escaped: bool = True) -> dict[str, Any]:
    """The contract's per-source object: ``source``, ``diagnoses``, ``error`` and the batch fields
    (``escaped=False``: names not yet escaped, for a writer that checks its text for them)."""
    out = record.result.to_dict()
    r = record.result
    out["source"] = f"{r.source}!/{r.member}" if r.member else r.source
    out["path"] = r.source
    out["member"] = r.member
    out["status"] = status(record)
    out.update(meta_values(record))
    return printable_values(out) if escaped else out


def to_json(record: Record) -> str:
    """``to_object`` as one JSON line (without its newline); the object is walked to escape
    names only when its text holds a lone surrogate (an undecodable byte), which is rare."""
    out = to_object(record, escaped=False)
    text = json.dumps(out, ensure_ascii=False)
    return json.dumps(printable_values(out), ensure_ascii=False) if SURROGATE_RE.search(text) else text
