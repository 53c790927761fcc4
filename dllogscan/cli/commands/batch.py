"""``dllogscan batch PATH...``: every log under directories, globs and archives, one row each."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..options import Prefilter, Redact
from ..output import out_path

EPILOG = """[bold]Examples[/bold]

  dllogscan batch /var/log/slurm/ --out results.parquet
  dllogscan batch 'logs/**/*.out' pods.tar.gz node07-dmesg.log --out results.csv
  dllogscan batch archive.zip --format jsonl > results.jsonl
  dllogscan batch logs/ --redact --out shared.csv    # hosts, pods, jobs, users as <host-1>, ...
  dllogscan batch logs/ --engine dask --scheduler tcp://10.0.0.5:8786 --out results.parquet
  dllogscan summary results.parquet
"""


def register(app: typer.Typer) -> None:
    @app.command("batch", epilog=EPILOG)
    def batch(
        paths: List[str] = typer.Argument(..., help="Files, directories (recursive), globs, .tar/.tar.gz/.zip archives, .gz/.bz2/.xz logs."),
        out: Optional[Path] = typer.Option(None, "--out", "-o", callback=out_path, help="Write rows to this .parquet, .csv or .jsonl file as they finish (-: standard output, jsonl)."),
        fmt: Optional[str] = typer.Option(None, "--format", "-f", help="jsonl on standard output (one object per source); "
                                                                     "with --out, it names the rows' format (else --out's extension does)."),
        jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help="Most worker processes at once, started as the work needs them (default: the usable cores; at most 4 a core)."),
        engine: str = typer.Option("local", help="Where the batch runs: local (process pool) | dask."),
        scheduler: Optional[str] = typer.Option(None, help="A Dask scheduler, tcp://HOST:PORT (implies --engine dask); it has DLLOGSCAN_SCHEDULER_TIMEOUT seconds to answer (default 5)."),
        signatures: List[Path] = typer.Option([], "--signatures", "-s", help="Extra signature file or folder (repeatable)."),
        no_default_signatures: bool = typer.Option(False, "--no-default-signatures", help="Use only the --signatures files."),
        min_confidence: float = typer.Option(0.5, help="Report only diagnoses at least this sure (0 to 1)."),
        prefilter: Prefilter = "auto",
        classifier: str = typer.Option("weak", help="Text classifier: weak (only to weigh weak signature verdicts) | auto | on | off."),
        progress: Optional[bool] = typer.Option(None, "--progress/--no-progress", help="Progress bar (default: on a terminal)."),
        redact: Redact = False,
        old_defaults: bool = typer.Option(False, "--no-no-default-signatures", hidden=True,
                                          help="Deprecated: the default (the shipped signatures are used)."),
    ) -> None:
        """Diagnose every log under PATHs (directories, globs, archives); one row per source.

        Exit status: 0 nothing found, 1 failures found, 2 usage error, 3 nothing found but some
        sources could not be read, 130 interrupted (Ctrl-C or SIGTERM: --out keeps the rows done)."""
        from ..batch_run import run
        from ..checks import deprecated

        if old_defaults:
            deprecated("--no-no-default-signatures")
        raise typer.Exit(run(paths, out, fmt, jobs, engine, scheduler, [str(s) for s in signatures],
                             not no_default_signatures, min_confidence, prefilter, classifier, progress, redact))
