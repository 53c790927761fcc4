"""``dllogscan watch FILE``: follow a growing training log; report a failure or a stall live."""
from __future__ import annotations

from typing import Optional

import typer

from ..options import MinConfidence, Prefilter, Signatures

PID_HELP = ("The job's process: once it has gone, read the rest of the log, report a failure it shows and "
            "end (reason exited); no stall is reported after it. Without it, the processes on this machine "
            "that hold the log open for writing are taken for the job (Linux).")
NO_WRITERS_HELP = "Do not look for the processes that write the log (without --pid, only the log says when it ends)."
TIMEOUT_HELP = ("How long to watch in all, from the start (90s, 30m, 2h; a bare number is seconds), whatever the "
                "job does: then stop, reason timeout, exit 0 unless something was reported (a failure still "
                "settling is decided first). No threshold for a silence (that is --stall), unlike repro's "
                "--timeout, after which a rung is a hang.")
STALL_HELP = ("Report a stall after this long without a progress line (90s, 30m, 2h). Default: the larger of "
              "10 min and 30 times the interval at which progress has been arriving.")


def register(app: typer.Typer) -> None:
    @app.command("watch", epilog="""[bold]Examples[/bold]

  dllogscan watch train.log                # until a failure or a stall
  dllogscan watch slurm-4242.out --stall 30m
  dllogscan watch job.log --keep-going -f json >> events.jsonl
  dllogscan watch run.log --from-start --timeout 2h
  python train.py > train.log 2>&1 & dllogscan watch train.log --pid $!

How it ends ("reason" in JSON): found (a report ended it), exited (the
--pid process has gone; without --pid, the processes on this machine that
write the log, found in /proc, have gone, but for orphaned children that
write nothing more, which are named), finished (the log said the run
finished, e.g. Lightning's "`Trainer.fit` stopped: `max_epochs=3` reached.",
and then went quiet for as long as a stall takes), timeout, interrupted
(Ctrl-C or SIGTERM).

Exit codes: 0 nothing found (exited, finished, --timeout, Ctrl-C or SIGTERM);
1 a failure or a stall reported (at --timeout, Ctrl-C or SIGTERM too, a
failure still settling is decided and reported first); 2 a usage error (a --pid that runs no
process), or a file that cannot be read or is not a text log.
""")
    def watch_cmd(
        path: str = typer.Argument(..., help="The log file to follow (it may not exist yet)."),
        fmt: str = typer.Option("text", "--format", "-f",
                                help="text (the report) | json | jsonl (both: one JSON object a line, an event each)."),
        stall: Optional[str] = typer.Option(None, "--stall", metavar="DURATION", help=STALL_HELP),
        keep_going: bool = typer.Option(False, "--keep-going",
                                        help="Print each report and go on watching (exit 1 at the end if any)."),
        timeout: Optional[str] = typer.Option(None, "--timeout", metavar="DURATION", help=TIMEOUT_HELP),
        interval: str = typer.Option("1s", "--interval", metavar="DURATION", help="How often to look at the file."),
        settle: str = typer.Option("2s", "--settle", metavar="DURATION",
                                   help="Quiet time after a failure's first words before deciding (a traceback "
                                        "comes in several writes)."),
        from_start: bool = typer.Option(False, "--from-start",
                                        help="Read the whole file first (default: start at its end, like tail -F)."),
        pid: Optional[int] = typer.Option(None, "--pid", metavar="PID", help=PID_HELP),
        no_writers: bool = typer.Option(False, "--no-writers", help=NO_WRITERS_HELP),
        signatures: Signatures = [],
        min_confidence: MinConfidence = 0.5,
        prefilter: Prefilter = "auto",
    ) -> None:
        """Follow a growing log; report a DataLoader failure or a stall as it happens."""
        import sys

        from ..checks import check_choice, check_duration, check_min_confidence
        from ..output import fail, sigterm_as_ctrl_c
        from ..options import prefilter_of
        from ...core.errors import DllogscanError
        from ...watch import Options, Reporter, watch
        from ...watch.events import FORMATS

        try:
            options = Options(interval=check_duration("--interval", interval), stall=check_duration("--stall", stall),
                              keep_going=keep_going, timeout=check_duration("--timeout", timeout),
                              from_start=from_start, settle=check_duration("--settle", settle),
                              signatures=tuple(str(s) for s in signatures), prefilter=prefilter_of(prefilter, None),
                              min_confidence=check_min_confidence(min_confidence), pid=pid,
                              writers=not no_writers)
            reporter = Reporter(check_choice("--format", fmt, FORMATS))
            with sigterm_as_ctrl_c():
                outcome = watch(path, options, reporter.event, lambda text: sys.stderr.write(f"dllogscan: {text}\n"))
        except (DllogscanError, ImportError) as exc:
            raise fail(str(exc))
        if outcome.reason != "found":
            reporter.end(outcome)
        raise typer.Exit(1 if outcome.reports else 0)
