"""Summaries of a results table: class x node, class x day, top signatures, jobs per class."""
from __future__ import annotations

import re
from typing import Any

from ..core.printable import escape

#: the columns the tables show, read off names and logs: escaped again here, so a results file
#: written before its node names were escaped cannot reach a terminal raw either
SHOWN = ("node", "job", "class", "subclass", "signatures")


def summaries(df: Any, top: int = 15) -> dict[str, Any]:
    """Named DataFrames, each ready to print."""
    import pandas as pd

    found = df[df["class"].notna()].copy()
    for col in SHOWN:
        found[col] = found[col].map(lambda v: escape(v) if isinstance(v, str) else v)
    found["node"] = found["node"].fillna("(unknown)")
    when = found["first_failure_time"].fillna(found["last_time"]).fillna(found["first_time"])
    # the day the log wrote: a time with a zone keeps its own clock (``batch/clock.py``), and one
    # column of times with and without offsets is no column of datetimes
    dates = when.map(lambda v: v[:10] if isinstance(v, str) else None)
    day = pd.to_datetime(dates, format="%Y-%m-%d", errors="coerce")
    found["day"] = day.dt.strftime("%Y-%m-%d").fillna("(unknown)")
    out: dict[str, Any] = {}
    out["sources"] = pd.DataFrame({
        "status": ["scanned", "with a failure", "skipped (binary, not a file)", "links not followed", "unreadable"],
        "sources": [int((df["status"] == "ok").sum()), len(found), int((df["status"] == "skipped").sum()),
                    int((df["status"] == "link").sum()), int((df["status"] == "error").sum())]})
    by_node = pd.crosstab(found["node"], found["class"]) if len(found) else pd.DataFrame()
    out["class x node"] = by_node.reindex(sorted(by_node.index, key=natural_key)) if len(by_node) else by_node
    out["class x day"] = pd.crosstab(found["day"], found["class"]) if len(found) else pd.DataFrame()
    sigs = found["signatures"].fillna("").str.split().explode().dropna()
    sigs = sigs[sigs != ""]
    # ties in name order: rows come in the order they finished, which differs from run to run
    counts = sigs.value_counts().rename_axis("signature").reset_index(name="sources")
    out["top signatures"] = _most_first(counts, "sources", "signature").head(top)
    jobs = found[found["job"].notna()]
    label = jobs["class"] + jobs["subclass"].fillna("").map(lambda s: f" / {s}" if s else "")
    per_class = jobs.assign(verdict=label).groupby("verdict")["job"].nunique().rename("jobs").reset_index()
    out["jobs per class"] = _most_first(per_class, "jobs", "verdict")
    return out


def _most_first(table: Any, count: str, name: str) -> Any:
    """``table`` by ``count``, most first, equal counts in ``name`` order; numbered afresh."""
    return table.sort_values([count, name], ascending=[False, True], kind="stable").reset_index(drop=True)


def natural_key(name: Any) -> list[Any]:
    """Node names in the order people count them: ``gpu2`` before ``gpu10``, ``<host-2>`` before
    ``<host-10>`` (a crosstab's own order is the characters')."""
    parts = re.split(r"(\d+)", str(name))
    return [int(p) if i % 2 else p for i, p in enumerate(parts)]


def render(tables: dict[str, Any], fmt: str) -> str:
    """``md`` or ``csv`` text of the summaries."""
    parts = []
    for name, table in tables.items():
        if fmt == "md":
            body = _markdown(table) if len(table) else "(none)"
            parts.append(f"## {name}\n\n{body}\n")
        else:
            parts.append(f"# {name}\n{_csv(table)}")
    return "\n".join(parts)


def _csv(table: Any) -> str:
    """The table as CSV, its text cells (nodes, signature ids: input) safe for a spreadsheet; the
    index is a column only where it means something (a crosstab's node or day, not row numbers)."""
    from ..report.table import csv_cell

    safe = table.map(csv_cell)
    safe.index = safe.index.map(csv_cell)
    safe.columns = safe.columns.map(csv_cell)  # a crosstab's columns are the results file's classes
    return safe.to_csv(index=_labelled(table))


def _labelled(table: Any) -> bool:
    """Whether the table's index holds labels (a named one), not the row numbers of a table
    whose columns say everything (``sources``, ``top signatures``, ``jobs per class``)."""
    return bool(table.index.name)


def _markdown(table: Any) -> str:
    flat = table.reset_index() if table.index.name else table
    from ..report.markdown import cell

    cols = [cell(c) for c in flat.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in flat.itertuples(index=False)]
    return "\n".join(lines)


def print_rich(tables: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console()
    for name, table in tables.items():
        t = Table(title=name, title_justify="left")
        index = table.index.name or ""
        keep_index = _labelled(table)
        if keep_index:
            t.add_column(Text(str(index)))
        for col in table.columns:  # a crosstab's columns are values of the results file: no markup
            t.add_column(Text(str(col)), justify="right" if table[col].dtype.kind in "iuf" else "left")
        for idx, row in table.iterrows():
            t.add_row(*([Text(str(idx))] if keep_index else []), *[Text(str(v)) for v in row])  # no markup
        if not len(table):
            t.add_row(*(["(none)"] + [""] * (len(t.columns) - 1)) if t.columns else [])
        console.print(t)
