"""Batch over many logs and archives: one row per source, cross-file evidence, summaries.

``scan_many(paths)`` returns a pandas DataFrame (one row per source); with ``out=`` the rows
go to a .parquet / .csv / .jsonl file as they finish and the DataFrame is read back from it.

A way in. May import: the stages (``core`` ... ``report``) and ``pipeline``; not ``cli``.
"""
from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Iterable

from .archives import Limits
from .runner import Stats, run_batch
from .worker import Config, Record

__all__ = ["scan_many", "run_batch", "Config", "Limits", "Record", "Stats"]


def scan_many(paths: str | Iterable[str], *, out: str | Path | None = None, signatures: Iterable[str] = (),
              default_signatures: bool = True, engine: str = "local", jobs: int | None = None,
              scheduler: str | None = None, min_confidence: float = 0.5, limits: Limits | None = None,
              progress: bool = False, prefilter: str = "auto", classifier: str = "weak", redact: bool = False):
    """Diagnose every source under ``paths`` (files, directories, globs, archives); return a
    DataFrame with one row per source (see ``dllogscan.batch.rows.COLUMNS``). ``paths``: one path
    (``str``, ``bytes``, ``os.PathLike``) or an iterable of them (a generator too); ``engine``:
    ``local`` or ``dask`` (``scheduler``: its address). ``redact``: as
    ``batch --redact``, every row redacted with one numbering for all of them (and the file
    ``out`` names written redacted). TypeError for a value of the wrong type (``paths=5``, a file
    object, ``limits=5``), ValueError for one no call can mean (``jobs=-1``, ``prefilter="foo"``)."""
    import pandas as pd

    from .rows import COLUMNS, redacted, to_row
    from .writers import Writer, format_for

    from ..pipeline.runner import check_options, signature_files

    check_options(prefilter, min_confidence, classifier, engine_argument="prefilter")
    paths = _path_list(paths)
    _check_types(out, jobs, limits, engine)
    config = Config(signature_files(signatures), default_signatures, prefilter, min_confidence,
                    limits or Limits(), classifier)
    redactor = None
    if redact:  # loaded only when redacting, as in the CLI
        from ..report.redact import Redactor

        redactor = Redactor()
    if out is None:
        rows: list[dict] = []
        run_batch(paths, lambda r: rows.append(to_row(redacted(r, redactor) if redactor else r)),
                  config, engine, jobs, scheduler, progress)
        return pd.DataFrame(rows, columns=COLUMNS)
    out = Path(out)
    writer = Writer(format_for(out), out, redactor=redactor)
    try:
        run_batch(paths, writer.write, config, engine, jobs, scheduler, progress, skip=[str(out)])
    finally:
        writer.close()
    return read_results(out)


TAKES_PATHS = "a path (str, bytes, os.PathLike) or an iterable of paths"


def _path_list(paths: object) -> list[str]:
    """``scan_many``'s ``paths`` as a list of names; TypeError for what holds no paths (before,
    ``b"logs"`` was read as one path per byte, ``[5]`` as a file named ``5``, ``5`` was Python's
    own "'int' object is not iterable")."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        return [os.fsdecode(paths)]
    if isinstance(paths, (bytearray, memoryview, io.IOBase)) or not isinstance(paths, Iterable):
        hint = " (to diagnose one file object, use dllogscan.scan)" if isinstance(paths, io.IOBase) else ""
        raise TypeError(f"scan_many takes {TAKES_PATHS}, not {type(paths).__name__}{hint}")
    names = list(paths)
    for name in names:
        if not isinstance(name, (str, bytes, os.PathLike)):
            raise TypeError(f"scan_many takes {TAKES_PATHS}, not an iterable holding {type(name).__name__}")
    return [os.fsdecode(name) for name in names]


def _check_types(out: object, jobs: object, limits: object, engine: object) -> None:
    """TypeError / ValueError for ``scan_many``'s ``out``, ``jobs``, ``limits`` and ``engine`` of
    the wrong kind (before: Python's own messages from deep inside, ``engine`` a ``UsageError``)."""
    from .engines import ENGINES

    if engine not in ENGINES:
        raise ValueError(f"engine={engine!r}: choose one of {', '.join(ENGINES)}")
    if out is not None and not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"out: give a file name (str, os.PathLike) or None, not {type(out).__name__}")
    if jobs is not None and (not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 0):
        raise ValueError(f"jobs={jobs!r}: give a number of processes (0 or None: as many as the cores)")
    if limits is not None and not isinstance(limits, Limits):
        raise TypeError(f"limits: give a dllogscan.batch.Limits or None, not {type(limits).__name__}")


#: the columns ``summary`` reads: a table without them is not a batch's results file
SUMMARY_COLUMNS = ("status", "class", "subclass", "node", "job", "signatures", "first_failure_time",
                   "first_time", "last_time")


def read_results(path: str | Path):
    """A results file written by ``dllogscan batch`` (.parquet, .csv or .jsonl) as a DataFrame
    (a CSV or JSONL file that a killed batch left inside a row: the rows before it, and the
    table's ``attrs["cut"]`` true; a JSONL file's lines that are no row are skipped, counted in
    ``attrs["skipped"]``, ``attrs["fault"]`` naming the first);
    a file that is not one (a scan's own output) raises ``UsageError`` naming what it lacks."""
    import pandas as pd

    from .rows import COLUMNS
    from .writers import FORMATS

    path = Path(path)
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:  # a log given by mistake: what it is not, not how to name an output
        raise _not_results(path, "its name ends in none of .parquet, .csv, .jsonl")
    if fmt == "jsonl":
        return _read_jsonl(path)
    if fmt == "parquet":
        table = pd.read_parquet(path)
    else:
        from ..report.table import csv_value

        text = _whole_rows(path)
        try:
            table = pd.read_csv(path if text is None else io.BytesIO(text), dtype=str, keep_default_na=False)
        except UnicodeDecodeError:  # pandas' text names a byte of its own chunk, not of the file
            raise _not_results(path, "it is not UTF-8 text (a binary file, or one saved in another "
                                     "encoding?)") from None
        table = table.map(csv_value).replace("", None)
        table.attrs["cut"] = text is not None
    _require(path, [c for c in SUMMARY_COLUMNS if c not in table.columns], "column")
    table = table.reindex(columns=COLUMNS)  # a column a summary does not need may be missing
    return table if fmt == "parquet" else _typed(table)


def _whole_rows(path: Path) -> bytes | None:
    """A CSV file that a killed batch left inside a row (rows are written and flushed
    line by line, so its last line is unfinished) up to that row; ``None`` when it ends whole
    (a last row that is complete without its newline, as an editor may leave it, included)."""
    with open(path, "rb") as fh:
        if fh.seek(0, io.SEEK_END) == 0:
            return None
        fh.seek(-1, io.SEEK_END)
        if fh.read(1) == b"\n":
            return None
        fh.seek(0)
        data = fh.read()
    cut = data.rfind(b"\n") + 1
    return None if _complete_row(data, data[cut:]) else data[:cut]


def _complete_row(data: bytes, last: bytes) -> bool:
    """Whether ``last``, the CSV file's last line, is a whole row: as many cells as the header
    names, no quote left open."""
    import csv

    text = last.decode("utf-8", "replace")
    header = data[:data.find(b"\n")].decode("utf-8", "replace")
    if text.count('"') % 2:
        return False
    cells = next(csv.reader([text]), [])
    return len(cells) == len(next(csv.reader([header]), []))


def _not_results(path: Path, why: str) -> Exception:
    from ..core.errors import UsageError

    return UsageError(f"{path}: not a results file of `dllogscan batch --out`: {why}")


def _require(path: Path, missing: list[str], what: str) -> None:
    """Raise ``UsageError`` when ``missing`` names fields a batch's results always have."""
    if missing:
        names = ", ".join(missing[:4]) + (", ..." if len(missing) > 4 else "")
        raise _not_results(path, f"missing {what}{'s' if len(missing) > 1 else ''} {names} "
                                 "(a scan's own output is not one)")


def _read_jsonl(path: Path):
    """The rows of a JSONL results file (``results_jsonl``): a table whose ``attrs`` say whether
    the file is ``cut`` and how many lines were ``skipped`` (``fault``: why the first was)."""
    import pandas as pd

    from .results_jsonl import read_rows
    from .rows import COLUMNS, to_row

    rows = read_rows(path, lambda obj: to_row(_record(obj)))
    if rows.skipped and not rows.objects:
        raise _not_results(path, rows.first_fault)
    table = pd.DataFrame(rows.objects, columns=COLUMNS)
    table.attrs.update(cut=rows.cut, skipped=rows.skipped, fault=rows.first_fault)
    return table


def _record(obj: dict) -> Record:
    """A batch JSONL object as the record it was written from."""
    from ..core.models import Diagnosis, Evidence, Fix, ScanResult

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
    return Record(result, meta)


def _typed(df):
    for col in ("confidence",):
        df[col] = df[col].astype(float)
    for col in ("evidence_line", "diagnoses", "lines", "bytes"):
        df[col] = df[col].astype("Int64")
    return df
