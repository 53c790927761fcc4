"""The typer app: ``scan``, ``explain``, ``signatures``, and every module of ``commands/``.
Thin: each command calls one library function and prints its result. Exit codes: ``output``."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from ..core.classes import letter_range, letters
from ..core.errors import DllogscanError
from .options import FORMAT_HELP, OUT_HELP, REDACT_HELP, Classifier, ExitZero, OldEngine, Prefilter, classifier_of, prefilter_of
from .output import (EXIT_ERROR, check_out, emit, error_line, fail, final_code, format_of, out_path, pipe_exit, report_errors,
                     scan_paths, starts_with_scan_option)

app = typer.Typer(
    add_completion=False, no_args_is_help=True, rich_markup_mode="rich",
    help="Diagnose PyTorch DataLoader worker crashes and stalls from logs.\n\n"
         "Run [bold]dllogscan job.log[/bold] (the same as [bold]dllogscan scan job.log[/bold]).",
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.command(epilog="""[bold]Examples[/bold]

  dllogscan job.log                       # rich report on the terminal
  dllogscan slurm-4242.out.gz --format json
  kubectl logs trainer-0 | dllogscan -    # standard input
  dllogscan job.log --format md > reply.md
""")
def scan(
    paths: List[str] = typer.Argument(..., help="Log files (.gz .bz2 .xz too), or - for standard input."),
    fmt: Optional[str] = typer.Option(None, "--format", "-f", help=FORMAT_HELP),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help=OUT_HELP, callback=out_path),
    signatures: List[Path] = typer.Option([], "--signatures", "-s", help="Extra signature file or folder (repeatable)."),
    min_confidence: float = typer.Option(0.5, help="Report only diagnoses at least this sure (0 to 1)."),
    max_bytes: Optional[int] = typer.Option(None, help="Stop reading a source after this many bytes (stdin: 512 MiB)."),
    prefilter: Prefilter = "auto",
    classifier: Classifier = "auto",
    redact: bool = typer.Option(False, "--redact", help=REDACT_HELP),
    exit_zero: ExitZero = False,
    engine: OldEngine = None,
) -> None:
    """Diagnose DataLoader worker failures in one or more logs."""
    from .. import api

    from .checks import check_scan_options

    engine, classifier = prefilter_of(prefilter, engine), classifier_of(classifier)
    try:
        check_scan_options(min_confidence, max_bytes)
        check_out(out, paths)
        fmt = format_of(fmt, out)
        api.pipeline.get_scanner([str(s) for s in signatures], engine)
    except (DllogscanError, ImportError) as exc:
        raise fail(str(exc))
    results = scan_paths(paths, [str(s) for s in signatures], engine, min_confidence, max_bytes, classifier)
    if redact:  # before anything is printed, error lines included
        from ..report.redact import redact_results
        results = redact_results(results)
    report_errors(results)
    emit(results, fmt, out)
    raise typer.Exit(final_code(results, exit_zero))


@app.command(epilog="[bold]Example[/bold]\n\n  dllogscan explain job.log")
def explain(
    path: str = typer.Argument(..., help="A log file, or - for standard input."),
    signatures: List[Path] = typer.Option([], "--signatures", "-s", help="Extra signature file or folder."),
) -> None:
    """Show every signature hit, the facts found and how they combined into the verdict."""
    from .explain import explain as run_explain

    try:
        text = run_explain(path, [str(s) for s in signatures])
    except DllogscanError as exc:
        raise fail(str(exc))
    sys.stdout.write(text)


#: Why ``signatures --class H`` lists nothing (its help and its stderr line say it).
NO_H_ENTRIES = "H has no entries of its own: its verdicts are A-E ones that data/scope.toml moves"


def _class_option(cls: Optional[str]) -> Optional[str]:
    """``--class``'s value as a signature's class (``a`` is ``A``); a usage error for a letter or
    word no signature can have."""
    from .checks import check_choice

    if cls is None:
        return None
    try:
        return check_choice("--class", cls.upper() if cls.upper() in letters() else cls, (*letters(), "none"))
    except DllogscanError as exc:
        raise fail(str(exc))


@app.command("signatures", epilog="[bold]Example[/bold]\n\n  dllogscan signatures --class A")
def list_signatures(
    cls: Optional[str] = typer.Option(None, "--class", help=f"Only this class ({letter_range()}; {NO_H_ENTRIES}), "
                                                            "or none (facts and context)."),
    signatures: List[Path] = typer.Option([], "--signatures", "-s", help="Extra signature file or folder."),
) -> None:
    """List the signature database (and check that it loads: examples included)."""
    from ..signatures.loader import load_database

    cls = _class_option(cls)
    try:
        db = load_database([str(s) for s in signatures])
    except DllogscanError as exc:
        raise fail(str(exc))
    listed = [sig for sig in db.signatures if cls is None or sig.cls == cls]
    for sig in listed:
        sys.stdout.write(f"{sig.id:<48} {sig.cls:<4} {sig.role:<8} {sig.weight:.2f}  {sig.title}\n")
    if cls and not listed:
        sys.stderr.write(f"dllogscan: no signature of class {cls}" + (f" ({NO_H_ENTRIES})" if cls == "H" else "") + "\n")


def _register_commands() -> set[str]:
    """Add the commands of ``dllogscan/commands/*.py``; return every command name."""
    import importlib
    import pkgutil

    from . import commands

    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.register(app)
    return {c.name or c.callback.__name__ for c in app.registered_commands}  # type: ignore[union-attr]


def _misread(first: str, names: set[str]) -> Optional[str]:
    """Why the first word cannot mean what it says, or None: a mistyped command that names no
    file (it would be scanned as a missing log), a file whose name starts with ``-`` (it would be
    read as an option)."""
    if first in names or first == "-":
        return None
    if first.startswith("-"):
        return (f"{first} is a file, but a word starting with '-' is read as an option: give it as ./{first} "
                "or after --") if Path(first).is_file() else None
    if Path(first).exists():
        return None
    import difflib

    close = difflib.get_close_matches(first, sorted(names), n=1, cutoff=0.75)
    return f"{first}: no such file or command (did you mean `dllogscan {close[0]}`?)" if close else None


def main(argv: Optional[List[str]] = None) -> None:
    """Entry point: ``dllogscan FILE`` means ``dllogscan scan FILE``; a reader that closed the
    pipe early is exit 141, as in ``fast.main``."""
    names = _register_commands()
    args = list(sys.argv[1:] if argv is None else argv)
    misread = _misread(args[0], names) if args else None
    if misread:
        error_line(misread)
        sys.exit(EXIT_ERROR)
    if args and args[0] not in names and (not args[0].startswith("-") or starts_with_scan_option(args)):
        args.insert(0, "scan")
    try:
        with pipe_exit():  # before typer, whose own handler would make a closed pipe exit 1
            app(args=args, prog_name="dllogscan", standalone_mode=True)
    except KeyboardInterrupt:
        sys.stderr.write("Error: interrupted\n")
        sys.exit(130)


if __name__ == "__main__":  # pragma: no cover
    main()
