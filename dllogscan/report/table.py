"""Flat rows (one per diagnosis, or one per source when nothing was found): CSV and Parquet.

CSV cells are made safe to open in a spreadsheet (OWASP, "CSV Injection"): a text cell of two or
more characters that starts with ``=``, ``+``, ``-``, ``@``, a tab, a carriage return or a newline (which a
spreadsheet may run as a formula), after any blanks (an importer that trims spaces, or a user,
would leave ``=`` first), gets a leading ``'``; so does one that starts with ``'``, so that
``csv_value`` can take exactly that quote off again when results are read back. A carriage
return inside a cell is written as a newline: with ``\n`` line ends Python's csv module would
leave a lone ``\r`` unquoted and break the row.
"""
from __future__ import annotations

import csv
import io
import re
from typing import Any, Sequence

from ..core.models import ScanResult

COLUMNS = ["source", "member", "class", "subclass", "confidence", "title", "count", "evidence_line",
           "evidence_text", "top_fix", "top_command", "signatures", "error", "note"]


FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n", "'")
#: a cell a spreadsheet may run: one of ``FORMULA_START`` first, after any blanks (Unicode spaces,
#: zero-width space, byte-order mark)
FORMULA_RE = re.compile(f"[\\s\u200b\ufeff]*[{re.escape(''.join(FORMULA_START))}]")


def csv_cell(value: Any) -> Any:
    """``value`` as a CSV cell that no spreadsheet runs as a formula."""
    if not isinstance(value, str):
        return value
    if "\r" in value:
        value = value.replace("\r\n", "\n").replace("\r", "\n")
    return "'" + value if len(value) > 1 and FORMULA_RE.match(value) else value


def csv_row(row: dict[str, Any]) -> dict[str, Any]:
    return {k: csv_cell(v) for k, v in row.items()}


def csv_value(cell: str) -> str:
    """The value ``csv_cell`` wrote as ``cell`` (its guard quote taken off)."""
    if len(cell) > 2 and cell[0] == "'" and FORMULA_RE.match(cell, 1):
        return cell[1:]
    return cell


def rows(results: Sequence[ScanResult]) -> list[dict[str, Any]]:
    out = []
    for r in results:
        base = {"source": r.source, "member": r.member, "error": r.error}
        if not r.diagnoses:
            out.append({**{c: None for c in COLUMNS}, **base, "note": r.notes[0] if r.notes else None})
            continue
        for d in r.diagnoses:
            ev = d.evidence[0] if d.evidence else None
            fix = d.fixes[0] if d.fixes else None
            out.append({
                **base, "class": d.cls, "subclass": d.subclass, "confidence": round(d.confidence, 3),
                "title": d.title, "count": d.count, "evidence_line": ev.line if ev else None,
                "evidence_text": ev.text if ev else None, "top_fix": fix.title if fix else None,
                "top_command": fix.commands[0] if fix and fix.commands else None,
                "signatures": " ".join(d.signatures), "note": d.notes[0] if d.notes else None,
            })
    return out


def to_csv(results: Sequence[ScanResult]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(csv_row(row) for row in rows(results))
    return buf.getvalue()


def to_parquet(results: Sequence[ScanResult], path: str) -> None:
    import pandas as pd  # noqa: PLC0415 - only this format needs pandas

    pd.DataFrame(rows(results), columns=COLUMNS).to_parquet(path, index=False)
