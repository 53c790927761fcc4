"""``dllogscan batch PATH...``: every log under directories, globs and archives, one row each."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from ..options import Prefilter

EPILOG = """[bold]Examples[/bold]

  dllogscan batch /var/log/slurm/ --out results.parquet
  dllogscan batch 'logs/**/*.out' pods.tar.gz node07-dmesg.log --out results.csv
  dllogscan batch archive.zip --format jsonl > results.jsonl
  dllogscan batch logs/ --engine dask --scheduler tcp://10.0.0.5:8786 --out results.parquet
  dllogscan summary results.parquet
"""


def register(app: typer.Typer) -> None:
    @app.command("batch", epilog=EPILOG)
    def batch(
        paths: List[str] = typer.Argument(..., help="Files, directories (recursive), globs, .tar/.tar.gz/.zip archives, .gz/.bz2/.xz logs."),
        out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write rows to this .parquet, .csv or .jsonl file as they finish."),
        fmt: str = typer.Option("jsonl", "--format", "-f", help="Without --out: jsonl on standard output (one object per source)."),
        jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help="Worker processes (default: all cores)."),
        engine: str = typer.Option("local", help="Where the batch runs: local (process pool) | dask."),
        scheduler: Optional[str] = typer.Option(None, help="A Dask scheduler, tcp://HOST:PORT (implies --engine dask)."),
        signatures: List[Path] = typer.Option([], "--signatures", "-s", help="Extra signature file or folder (repeatable)."),
        no_default_signatures: bool = typer.Option(False, "--no-default-signatures", help="Use only the --signatures files."),
        min_confidence: float = typer.Option(0.5, help="Report only diagnoses at least this sure (0 to 1)."),
        prefilter: Prefilter = "auto",
        classifier: str = typer.Option("weak", help="Text classifier: weak (only to weigh weak signature verdicts) | auto | on | off."),
        progress: Optional[bool] = typer.Option(None, "--progress/--no-progress", help="Progress bar (default: on a terminal)."),
        old_defaults: bool = typer.Option(False, "--no-no-default-signatures", hidden=True,
                                          help="Deprecated: the default (the shipped signatures are used)."),
    ) -> None:
        """Diagnose every log under PATHs (directories, globs, archives); one row per source.

        Exit status: 0 nothing found, 1 failures found, 2 usage error, 3 nothing found but some
        sources could not be read."""
        from ...batch import Config
        from ...batch.runner import run_batch
        from ...batch.writers import Writer, format_for
        from ..output import EXIT_CLEAN, EXIT_FOUND, EXIT_PARTIAL, fail
        from ...core.errors import DllogscanError

        from ..checks import check_min_confidence, deprecated

        if old_defaults:
            deprecated("--no-no-default-signatures")

        try:
            check_min_confidence(min_confidence)
            if out is not None:
                writer = Writer(format_for(out), out)
            elif fmt == "jsonl":
                writer = Writer("jsonl", stream=sys.stdout)
            else:
                raise fail(f"--format {fmt} needs --out FILE; standard output takes jsonl")
            config = Config(tuple(str(s) for s in signatures), not no_default_signatures, prefilter, min_confidence,
                            classifier=classifier)
            try:
                stats = run_batch(paths, writer.write, config, engine, jobs, scheduler, progress,
                                  skip=[str(out)] if out is not None else [])
            finally:
                writer.close()
        except BrokenPipeError:
            raise
        except (DllogscanError, ImportError, OSError) as exc:
            raise fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        if out is not None:
            sys.stderr.write(f"{stats.sources} sources, {stats.found} with failures, {stats.errors} unreadable "
                             f"or skipped, {stats.bytes / 1e6:,.1f} MB in {stats.seconds:.1f}s -> {out}\n")
        raise typer.Exit(EXIT_FOUND if stats.found else EXIT_PARTIAL if stats.errors else EXIT_CLEAN)
