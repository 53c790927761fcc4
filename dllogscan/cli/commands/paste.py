"""``dllogscan paste``: diagnose what is pasted into the terminal (until Ctrl-D) or piped in."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..options import OUT_HELP, REDACT_HELP, Format, OldEngine, Prefilter
from ..output import out_path


def register(app: typer.Typer) -> None:
    @app.command(epilog="""[bold]Examples[/bold]

  dllogscan paste --format md            # paste, press Ctrl-D, get a ready reply
  pbpaste | dllogscan paste --redact     # macOS clipboard, identifiers hidden
  gh issue view 123 --json title,body,comments | dllogscan paste -f md
""")
    def paste(
        fmt: Format = None,
        out: Optional[Path] = typer.Option(None, "--out", "-o", help=OUT_HELP, callback=out_path),
        redact: bool = typer.Option(False, "--redact", help=REDACT_HELP),
        max_bytes: Optional[int] = typer.Option(None, help="Stop reading after this many bytes (default 20 MiB)."),
        signatures: List[Path] = typer.Option([], "--signatures", "-s", help="Extra signature file or folder."),
        min_confidence: float = typer.Option(0.5, help="Report only diagnoses at least this sure (0 to 1)."),
        prefilter: Prefilter = "auto",
        engine: OldEngine = None,
    ) -> None:
        """Diagnose a paste: a log, a traceback, or an issue thread (GitHub/GitLab/Discourse JSON, HTML)."""
        from ..output import check_out, emit, exit_code, fail, format_of, report_errors
        from ...core.errors import DllogscanError
        from ...triage import read_paste

        from ..checks import check_scan_options

        from ..options import prefilter_of

        engine = prefilter_of(prefilter, engine)
        try:
            check_scan_options(min_confidence, max_bytes)
            check_out(out, ["-"])  # the paste is standard input
            fmt = format_of(fmt, out)
            result = read_paste([str(s) for s in signatures], engine, max_bytes, min_confidence)
        except (DllogscanError, ImportError) as exc:
            raise fail(str(exc))
        results = [result]
        if redact:
            from ...report.redact import redact_results
            results = redact_results(results)
        report_errors(results)
        emit(results, fmt, out)
        raise typer.Exit(exit_code(results))
