"""``dllogscan slurm JOBID``: a Slurm job's logs and its node's kernel log, joined; ``--epilog``
for slurm.conf's ``Epilog=``/``TaskEpilog=``."""
from __future__ import annotations

import os
import sys
from typing import List, Optional

import typer

from ..options import (Classifier, ExitZero, Format, MaxBytes, MinConfidence, OldEngine, Out, Prefilter, Redact,
                       Signatures, Timeout)

EPILOG = """[bold]Examples[/bold]

  dllogscan slurm 4242                    # stdout/stderr + kernel log of the job's window
  dllogscan slurm 4242 --format json      # the contract object, cluster facts under "facts"
  dllogscan slurm 4242_7 --kernel off     # an array task; skip the kernel log

  # slurm.conf (the epilog never fails the job, exit 0 always):
  Epilog=/usr/local/bin/dllogscan-epilog  # a script: exec dllogscan slurm --epilog
"""


def register(app: typer.Typer) -> None:
    @app.command("slurm", epilog=EPILOG, short_help="Diagnose a Slurm job: its stdout/stderr joined with its "
                                                     "node's kernel log.")
    def slurm(
        job_id: Optional[str] = typer.Argument(None, help="The job id (array task: 4242_7); --epilog: default $SLURM_JOB_ID."),
        epilog: bool = typer.Option(False, "--epilog", help="Epilog mode: write the verdict, never fail, exit 0."),
        write: List[str] = typer.Option([], "--write", help="Epilog: stderr (append to the job's stderr file) | admin-comment; default both."),
        budget: float = typer.Option(30.0, help="Epilog: give up after this many seconds."),
        kernel: str = typer.Option("auto", help="Kernel log of the job's window: auto | journalctl | dmesg | off."),
        fmt: Format = None, out: Out = None, signatures: Signatures = [], min_confidence: MinConfidence = 0.5,  # noqa: B006
        max_bytes: MaxBytes = None, prefilter: Prefilter = "auto", classifier: Classifier = "auto",
        redact: Redact = False, exit_zero: ExitZero = False, timeout: Timeout = 30.0, engine: OldEngine = None,
    ) -> None:
        """Diagnose a Slurm job: its stdout/stderr (scontrol, or sacct once it finished) and the kernel
        log of its window on this node, joined like batch's cross-file evidence.

        Exit status as for scan: 0 nothing found, 1 diagnosed, 2 usage error or scontrol/sacct
        missing or refusing or no log readable, 3 nothing found but a log could not be read.
        With --epilog: always 0."""
        from ..output import fail
        from .. import options as cli_options
        from ...integrations.epilog import WRITES, log, run_epilog
        from ...integrations.slurm import KERNEL_MODES

        bad = [w for w in write if w not in WRITES]
        if epilog:
            if bad or kernel not in KERNEL_MODES:
                log(f"ignoring unknown --write {bad} / --kernel {kernel!r}")
            from ...batch.worker import Config
            from ..checks import CLASSIFIERS, PREFILTERS

            prefilter = engine or prefilter  # the epilog never fails: an old spelling just counts
            if prefilter not in PREFILTERS or classifier not in CLASSIFIERS or not 0.0 <= min_confidence <= 1.0:
                log(f"ignoring unknown --prefilter {prefilter!r} / --classifier {classifier!r} / "
                    f"--min-confidence {min_confidence!r}; using the defaults for those")
                prefilter = prefilter if prefilter in PREFILTERS else "auto"
                classifier = classifier if classifier in CLASSIFIERS else "auto"
                min_confidence = min_confidence if 0.0 <= min_confidence <= 1.0 else 0.5
            cfg = Config(tuple(str(s) for s in signatures), True, prefilter, min_confidence, classifier=classifier)
            finished = run_epilog(job_id, [w for w in write if w in WRITES] or WRITES, budget, cfg,
                                  kernel if kernel in KERNEL_MODES else "auto")
            sys.stderr.flush()
            if not finished:  # the scan thread is still running: leave now, as promised
                os._exit(0)
            raise typer.Exit(0)
        if bad:
            raise fail(f"--write is for --epilog ({', '.join(WRITES)}); got {', '.join(bad)}")
        if kernel not in KERNEL_MODES:
            raise fail(f"unknown --kernel {kernel!r}; choose one of {', '.join(KERNEL_MODES)}")
        if not job_id:
            raise fail("give a job id (dllogscan slurm JOBID)")
        fmt = cli_options.check_format(fmt, out)
        cfg = cli_options.config(signatures, cli_options.prefilter_of(prefilter, engine), min_confidence, classifier)
        from ...core.errors import DllogscanError
        from ...integrations.slurm import diagnose_job

        try:
            _, result = diagnose_job(job_id, cfg, kernel, timeout, max_bytes)
        except DllogscanError as exc:
            raise fail(str(exc))
        raise cli_options.deliver(result, fmt, out, redact, exit_zero)
