"""Write rows as they arrive, so an interrupted batch keeps what it finished: JSONL lines are
appended and flushed, CSV likewise, Parquet goes out in row groups (pyarrow ParquetWriter)."""
from __future__ import annotations

import csv
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..core.errors import UsageError
from ..report import SUFFIXES
from ..report.table import csv_row
from .rows import COLUMNS, redacted, to_json, to_row
from .worker import Record

if TYPE_CHECKING:
    from ..report.redact import Redactor

ROW_GROUP = 2000
#: what ``batch --format`` may name (its rows are a table: no terminal report, no markdown)
BATCH_FORMATS = ("jsonl", "csv", "parquet")
#: the extensions batch writes, named as every command's ``--out`` names them
FORMATS = {suffix: fmt for suffix, fmt in SUFFIXES.items() if fmt in BATCH_FORMATS}


def format_for(path: Path) -> str:
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise UsageError(f"{path}: unknown output type; name it .parquet, .csv or .jsonl")
    return fmt


def check_out(path: Path) -> None:
    """Refuse an output that cannot be written (a missing folder, a directory) before any work,
    in the scan's ``--out`` words."""
    if path.is_dir():
        raise UsageError(f"--out {path}: is a directory; name a file")
    if not path.parent.is_dir():
        raise UsageError(f"--out {path}: the folder {path.parent} does not exist")


def check_writable(path: Path) -> None:
    """Refuse a file that cannot be opened for writing, leaving it as it was: an existing file is
    not emptied, a new one is not left behind (the batch may still stop before its first row)."""
    existed = path.exists()
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise UsageError(f"--out {path}: cannot write: {exc.strerror or exc}") from None
    if not existed:
        path.unlink(missing_ok=True)


class Writer:
    """Appends records to one output (a file, or a text stream for JSONL). A file is checked at
    once and created with the first row, so a batch that stops before any row (no input found)
    leaves no empty output behind and an earlier one untouched. With a ``redactor`` (``--redact``)
    every record is redacted here, as it is written: one numbering for the whole output."""

    def __init__(self, fmt: str, path: Path | None = None, stream: IO[str] | None = None,
                 redactor: "Redactor | None" = None) -> None:
        self.fmt, self.path, self.rows, self.count, self.redactor = fmt, path, [], 0, redactor
        self._parquet: Any = None
        self._csv: Any = None
        self.stream = stream
        if path is not None:
            check_out(path)
            if fmt == "parquet" and path.exists() and not path.is_file():
                raise UsageError(f"--out {path}: is not a regular file, and Parquet is written to one (pyarrow "
                                 "seeks in it); for a pipe or a terminal use --format jsonl or csv")
            check_writable(path)
        if stream is not None and fmt == "csv":
            self._start_csv()

    def _open(self) -> None:
        """Open the output file for the first row (JSONL, CSV; Parquet opens its own writer)."""
        try:
            self.stream = open(self.path, "w", encoding="utf-8", newline="")  # type: ignore[arg-type]
        except OSError as exc:
            raise UsageError(f"--out {self.path}: cannot write: {exc.strerror or exc}") from None
        if self.fmt == "csv":
            self._start_csv()

    def _start_csv(self) -> None:
        self._csv = csv.DictWriter(self.stream, fieldnames=COLUMNS, lineterminator="\n")  # type: ignore[arg-type]
        self._csv.writeheader()

    def write(self, record: Record) -> None:
        if self.stream is None and self.fmt in ("jsonl", "csv"):
            self._open()
        if self.redactor is not None:
            record = redacted(record, self.redactor)
        if self.fmt == "jsonl":
            line = to_json(record) + "\n"
            put = getattr(self.stream, "write_bytes", None)  # the CLI's standard output: UTF-8 whatever its encoding
            if put is not None:
                put(line.encode("utf-8", "backslashreplace"))
            else:
                self.stream.write(line)  # type: ignore[union-attr]
            self.count += 1  # counted once it is in the output (an interrupt may come at any line)
            self.stream.flush()  # type: ignore[union-attr]
        elif self.fmt == "csv":
            self._csv.writerow(csv_row(to_row(record)))
            self.count += 1
            self.stream.flush()  # type: ignore[union-attr]
        else:
            self.rows.append(to_row(record))
            self.count += 1
            if len(self.rows) >= ROW_GROUP:
                self._flush_parquet()

    def _flush_parquet(self) -> None:
        import pyarrow as pa  # noqa: PLC0415 - only Parquet output needs pyarrow
        import pyarrow.parquet as pq  # noqa: PLC0415

        if self._parquet is None:
            self._parquet = pq.ParquetWriter(str(self.path), schema())
        self._parquet.write_table(pa.Table.from_pylist(self.rows, schema=schema()))
        self.rows = []

    def close(self) -> None:
        """Finish the output; with no row begun, there is no output file to finish."""
        if self.path is not None and self.stream is None and self._parquet is None and not self.rows:
            return
        if self.fmt == "parquet":
            if self.rows or self._parquet is None:
                self._flush_parquet()
            self._parquet.close()
        elif self.path is not None and self.stream is not None:
            self.stream.close()


def schema():
    import pyarrow as pa  # noqa: PLC0415

    types = {"confidence": pa.float64(), "evidence_line": pa.int64(), "diagnoses": pa.int64(),
             "lines": pa.int64(), "bytes": pa.int64()}
    return pa.schema([(c, types.get(c, pa.string())) for c in COLUMNS])

