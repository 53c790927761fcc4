"""The body of ``dllogscan batch``, without typer: the typer command (``commands/batch.py``) and
the plain fast path (``fast.try_batch``) both run it, so a batch starts without typer's ~0.13 s of
option adapters and gives the same rows, lines and exit status either way."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional, Sequence

from .output import (EXIT_CLEAN, EXIT_ERROR, EXIT_FOUND, EXIT_PARTIAL, check_agrees, error_line,
                     sigterm_as_ctrl_c)


def run(paths: Sequence[str], out: Optional[Path] = None, fmt: Optional[str] = None, jobs: Optional[int] = None,
        engine: str = "local", scheduler: Optional[str] = None, signatures: Sequence[str] = (),
        default_signatures: bool = True, min_confidence: float = 0.5, prefilter: str = "auto",
        classifier: str = "weak", progress: Optional[bool] = None, redact: bool = False) -> int:
    """Diagnose every log under ``paths``; write the rows (in ``fmt``, else the format ``out``'s
    extension names, which must not name another; jsonl on standard output where ``out`` is None,
    as the options read ``--out -`` too: ``output.out_path``), redacted with ``redact``; return the
    exit status. A usage error or a batch that cannot run is one ``Error: ...`` line on stderr and
    exit 2."""
    from ..batch import Config
    from ..batch.runner import run_batch
    from ..batch.writers import BATCH_FORMATS, Writer, format_for
    from ..report import SUFFIXES
    from ..core.errors import DllogscanError
    from ..core.printable import escape
    from .checks import CLASSIFIERS, PREFILTERS, check_at_least_one, check_choice, check_min_confidence

    try:
        check_min_confidence(min_confidence)
        check_choice("--prefilter", prefilter, PREFILTERS)
        check_choice("--classifier", classifier, CLASSIFIERS)
        check_at_least_one("--jobs", jobs)
        _say_jobs_held(jobs, scheduler)
        if fmt is not None:
            check_choice("--format", fmt, BATCH_FORMATS)
        redactor = _redactor() if redact else None
        if out is not None:  # --format decides, as in scan; an extension of another format contradicts it
            check_agrees(fmt, out, SUFFIXES.get(out.suffix.lower()))
            writer = Writer(fmt or format_for(out), out, redactor=redactor)
        elif fmt in (None, "jsonl"):
            writer = Writer("jsonl", stream=sys.stdout, redactor=redactor)
        else:
            error_line(f"--format {fmt} needs --out FILE; standard output (no --out, or --out -) takes jsonl")
            return EXIT_ERROR
        config = Config(tuple(signatures), default_signatures, prefilter, min_confidence, classifier=classifier)
        interrupted = True
        try:
            with sigterm_as_ctrl_c():  # a Parquet output gets its footer, as on Ctrl-C
                stats = run_batch(list(paths), writer.write, config, engine, jobs, scheduler, progress,
                                  skip=[str(out)] if out is not None else [])
            interrupted = False
        finally:
            writer.close()
            if interrupted and out is not None and writer.count:  # said before "Error: interrupted"
                rows = f"{writer.count} row{'s' if writer.count != 1 else ''}"
                sys.stderr.write(f"partial: {escape(str(out))} holds the {rows} finished before it stopped\n")
    except BrokenPipeError:
        raise
    except (DllogscanError, ImportError, OSError) as exc:
        # our own messages whole (a name in them may hold a newline: error_line escapes it), others' first line
        error_line(str(exc) if isinstance(exc, DllogscanError) else (str(exc).splitlines() or [type(exc).__name__])[0])
        return EXIT_ERROR
    if out is not None:  # counts and the output's own name: nothing read off the logs
        links = f", {stats.links} links not followed" if stats.links else ""
        sys.stderr.write(f"{stats.sources} sources, {stats.found} with failures, {stats.errors} unreadable "
                         f"or skipped{links}, {stats.bytes / 1e6:,.1f} MB in {stats.seconds:.1f}s -> {escape(str(out))}\n")
    return EXIT_FOUND if stats.found else EXIT_PARTIAL if stats.errors else EXIT_CLEAN


def _say_jobs_held(jobs: Optional[int], scheduler: Optional[str]) -> None:
    """One line on stderr when ``--jobs`` asks for more local workers than a batch runs."""
    from ..batch.engines import JOBS_PER_CORE, jobs_ceiling

    if jobs is not None and not scheduler and jobs > jobs_ceiling():
        sys.stderr.write(f"--jobs {jobs}: held at {jobs_ceiling()} worker processes "
                         f"({JOBS_PER_CORE} per usable core)\n")


def _redactor():
    from ..report.redact import Redactor

    return Redactor()
