"""``dllogscan summary results.parquet``: class x node, class x day, top signatures, jobs per class."""
from __future__ import annotations

import sys
from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("summary", epilog="[bold]Examples[/bold]\n\n  dllogscan summary results.parquet\n"
                                   "  dllogscan summary results.jsonl --format md > report.md")
    def summary(
        results: Path = typer.Argument(..., help="A results file from `dllogscan batch --out` (.parquet, .csv, .jsonl)."),
        fmt: str = typer.Option("text", "--format", "-f", help="text (rich tables) | md | csv"),
        top: int = typer.Option(15, help="How many signatures to list (at least 1)."),
    ) -> None:
        """Summarize a batch's results: where and when each class of failure happened."""
        from ..checks import check_at_least_one
        from ..output import fail
        from ...core.errors import DllogscanError
        from ...core.printable import escape

        if fmt not in ("text", "md", "csv"):
            raise fail(f"unknown format {fmt!r}; choose text, md or csv")
        try:
            check_at_least_one("--top", top)
        except DllogscanError as exc:
            raise fail(str(exc))
        if results.is_dir():
            raise fail(f"{results}: is a directory; give the results file a batch wrote")
        if not results.is_file():
            raise fail(f"{results}: no such file")
        from ...batch import read_results
        from ...batch.summary import print_rich, render, summaries

        try:
            table = read_results(results)
            if table.attrs.get("cut"):  # a batch killed while it wrote a row (SIGKILL, the OOM killer)
                sys.stderr.write(f"partial: {escape(str(results))} ends inside a row (its batch was killed?); "
                                 f"summarized the {len(table)} whole rows before it\n")
            if table.attrs.get("skipped"):  # lines that are no row: garbled, or another tool's
                first = "the first, " if table.attrs["skipped"] > 1 else ""
                sys.stderr.write(f"skipped: {escape(str(results))}: {_lines(table.attrs['skipped'])} of a batch "
                                 f"({first}{table.attrs['fault']}); summarized the {len(table)} rows\n")
            tables = summaries(table, top)
        except DllogscanError as exc:
            raise fail(str(exc))
        except Exception as exc:  # noqa: BLE001 - a corrupt results file is one line, not a traceback
            raise fail(f"{results}: cannot read results: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
        if fmt == "text":
            print_rich(tables)
        else:
            sys.stdout.write(render(tables, fmt))


def _lines(count: int) -> str:
    """``1 line is not a row`` / ``2 lines are not rows``."""
    return "1 line is not a row" if count == 1 else f"{count} lines are not rows"
