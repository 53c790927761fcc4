"""``dllogscan report``: a ready-to-file issue body for a log (environment, signatures, evidence,
duplicate key)."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..options import OUT_HELP, REDACT_HELP, OldEngine, Prefilter
from ..output import out_path


def register(app: typer.Typer) -> None:
    @app.command("report", epilog="""[bold]Examples[/bold]

  dllogscan report job.log --redact > issue.md
  dllogscan report - < job.log           # standard input (or a paste: end with Ctrl-D)
""")
    def report_cmd(
        target: str = typer.Argument(..., help="A log file, or - for standard input."),
        out: Optional[Path] = typer.Option(None, "--out", "-o", help=OUT_HELP, callback=out_path),
        redact: bool = typer.Option(False, "--redact", help=REDACT_HELP),
        max_bytes: Optional[int] = typer.Option(None, help="Stop reading after this many bytes."),
        signatures: List[Path] = typer.Option([], "--signatures", "-s", help="Extra signature file or folder."),
        prefilter: Prefilter = "auto",
        engine: OldEngine = None,
    ) -> None:
        """Write an issue body: environment facts, signature ids, evidence and a duplicate key."""
        from ..output import check_out, exit_code, fail, report_errors, write_text
        from ...core.errors import DllogscanError
        from ...report.issue_body import to_issue_body
        from ...triage import scan_one

        from ..checks import check_max_bytes

        from ..options import prefilter_of

        engine = prefilter_of(prefilter, engine)
        try:
            check_max_bytes(max_bytes)
            check_out(out, [target])
            result = scan_one(target, [str(s) for s in signatures], engine, max_bytes)
        except (DllogscanError, ImportError) as exc:
            raise fail(str(exc))
        results = [result]
        if redact:
            from ...report.redact import redact_results
            results = redact_results(results)
        if result.error:
            report_errors(results)
            if not result.lines:
                raise typer.Exit(exit_code(results))
        try:
            write_text(to_issue_body(results), out)
        except DllogscanError as exc:
            raise fail(str(exc))
        raise typer.Exit(exit_code(results))
