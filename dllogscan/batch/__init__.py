"""Batch over many logs and archives: one row per source, cross-file evidence, summaries.

``scan_many(paths)`` returns a pandas DataFrame (one row per source); with ``out=`` the rows
go to a .parquet / .csv / .jsonl file as they finish and the DataFrame is read back from it.

A way in. May import: the stages (``core`` ... ``report``) and ``pipeline``; not ``cli``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

from .archives import Limits
from .runner import Stats, run_batch
from .worker import Config, Record

__all__ = ["scan_many", "run_batch", "Config", "Limits", "Record", "Stats"]


def scan_many(paths: str | Iterable[str], *, out: str | Path | None = None, signatures: Iterable[str] = (),
              default_signatures: bool = True, engine: str = "local", jobs: int | None = None,
              scheduler: str | None = None, min_confidence: float = 0.5, limits: Limits | None = None,
              progress: bool = False, prefilter: str = "auto", classifier: str = "weak"):
    """Diagnose every source under ``paths`` (files, directories, globs, archives); return a
    DataFrame with one row per source (see ``dllogscan.batch.rows.COLUMNS``)."""
    import pandas as pd

    from .rows import COLUMNS, to_row
    from .writers import Writer, format_for

    if isinstance(paths, (str, Path)):
        paths = [str(paths)]
    config = Config(tuple(str(s) for s in signatures), default_signatures, prefilter, min_confidence,
                    limits or Limits(), classifier)
    if out is None:
        rows: list[dict] = []
        run_batch([str(p) for p in paths], lambda r: rows.append(to_row(r)), config, engine, jobs, scheduler, progress)
        return pd.DataFrame(rows, columns=COLUMNS)
    out = Path(out)
    writer = Writer(format_for(out), out)
    try:
        run_batch([str(p) for p in paths], writer.write, config, engine, jobs, scheduler, progress, skip=[str(out)])
    finally:
        writer.close()
    return read_results(out)


def read_results(path: str | Path):
    """A results file written by ``dllogscan batch`` (.parquet, .csv or .jsonl) as a DataFrame."""
    import pandas as pd

    from .rows import COLUMNS, to_row
    from .writers import format_for

    path = Path(path)
    fmt = format_for(path)
    if fmt == "parquet":
        return pd.read_parquet(path)
    if fmt == "csv":
        from ..report.table import csv_value

        table = pd.read_csv(path, dtype=str, keep_default_na=False)
        return table.map(csv_value).replace("", None).pipe(_typed)
    import json

    from ..core.models import Diagnosis, Evidence, Fix, ScanResult

    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            diags = tuple(Diagnosis(d["class"], d.get("subclass"), d.get("title", ""), d["confidence"],
                                    tuple(Evidence(e["line"], e["text"], e.get("signature")) for e in d["evidence"]),
                                    tuple(d.get("signatures", ())), d.get("facts", {}), d.get("count", 1),
                                    tuple(Fix(f["rank"], f["title"], f.get("why", ""), tuple(f.get("commands", ())))
                                          for f in d.get("fixes", ())), d.get("method", "signatures"),
                                    tuple(d.get("notes", ())))
                          for d in obj["diagnoses"])
            result = ScanResult(obj["path"], diags, obj["error"], obj.get("lines", 0), obj.get("bytes", 0),
                                member=obj.get("member"), notes=tuple(obj.get("notes", ())))
            meta = {k: obj[k] for k in ("kind", "job", "array_task", "node", "namespace", "pod", "container",
                                        "rank", "first_time", "last_time") if obj.get(k) is not None}
            rows.append(to_row(Record(result, meta)))
    return pd.DataFrame(rows, columns=COLUMNS)


def _typed(df):
    for col in ("confidence",):
        df[col] = df[col].astype(float)
    for col in ("evidence_line", "diagnoses", "lines", "bytes"):
        df[col] = df[col].astype("Int64")
    return df
