"""The entry point, and the plain ``dllogscan FILE ...`` and ``dllogscan batch PATH ...`` runs
without typer.

typer builds a pydantic ``TypeAdapter`` for every option before it runs a command (and imports
pydantic to do it): most of a plain run's start. A plain scan or batch is parsed here with
``argparse`` instead and runs the same body as the typer command (``output.scan_paths``,
``batch_run.run``; the scan's deprecated ``--engine`` is read here too); anything else (help,
other commands, a bad option or value, batch's deprecated spelling) returns ``None`` and goes
through typer, which prints its usual help and errors (the checks both paths share, such as
``output.format_of``'s, print the same ``Error:`` line here).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional, Sequence

from .checks import CLASSIFIERS, PREFILTERS
from .output import (EXIT_ERROR, check_out, error_line, final_code, format_of, out_path, pipe_exit, report_errors,
                     scan_paths, starts_with_scan_option, write)

CHOICES = {"prefilter": PREFILTERS, "classifier": CLASSIFIERS}


class _Fallback(Exception):
    """The arguments are not a plain, valid scan: let typer handle them."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # type: ignore[override]
        raise _Fallback(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(add_help=False, allow_abbrev=False, prog="dllogscan")
    p.add_argument("paths", nargs="+")
    p.add_argument("--format", "-f", dest="fmt")
    p.add_argument("--out", "-o", type=out_path)
    p.add_argument("--signatures", "-s", action="append", default=[], type=lambda s: str(Path(s)))
    p.add_argument("--min-confidence", type=float, default=0.5)
    p.add_argument("--max-bytes", type=int)
    p.add_argument("--prefilter", default="auto", choices=CHOICES["prefilter"])
    p.add_argument("--engine", dest="old_engine", choices=CHOICES["prefilter"])  # deprecated: --prefilter
    p.add_argument("--classifier", default="auto", choices=CHOICES["classifier"])
    p.add_argument("--exit-zero", action="store_true")
    return p


def _batch_parser() -> argparse.ArgumentParser:
    """``dllogscan batch``'s options as the typer command defines them (``commands/batch.py``);
    the deprecated spellings are left to typer, which prints their line."""
    p = _Parser(add_help=False, allow_abbrev=False, prog="dllogscan batch")
    p.add_argument("paths", nargs="+")
    p.add_argument("--out", "-o", type=out_path)
    p.add_argument("--format", "-f", dest="fmt")
    p.add_argument("--jobs", "-j", type=int)
    p.add_argument("--engine", default="local")
    p.add_argument("--scheduler")
    p.add_argument("--signatures", "-s", action="append", default=[], type=lambda s: str(Path(s)))
    p.add_argument("--no-default-signatures", action="store_true")
    p.add_argument("--min-confidence", type=float, default=0.5)
    p.add_argument("--prefilter", default="auto")
    p.add_argument("--classifier", default="weak")
    p.add_argument("--progress", dest="progress", action="store_true", default=None)
    p.add_argument("--no-progress", dest="progress", action="store_false")
    p.add_argument("--redact", action="store_true")
    return p


def _parsed(parser: argparse.ArgumentParser, args: Sequence[str]) -> Optional[argparse.Namespace]:
    """``args`` parsed, or None for help or anything the parser refuses (typer answers those)."""
    if any(a in ("-h", "--help") for a in args):
        return None
    try:
        return parser.parse_args(list(args))
    except _Fallback:
        return None


def try_batch(args: Sequence[str]) -> Optional[int]:
    """Run ``dllogscan batch ARGS`` without typer and return its exit code, or ``None`` when the
    arguments are not a plain, valid batch (help, a bad option or value: typer answers those)."""
    ns = _parsed(_batch_parser(), args)
    if ns is None:
        return None
    from .batch_run import run

    return run(ns.paths, ns.out, ns.fmt, ns.jobs, ns.engine, ns.scheduler, ns.signatures, not ns.no_default_signatures,
               ns.min_confidence, ns.prefilter, ns.classifier, ns.progress, ns.redact)


def try_run(args: Sequence[str]) -> Optional[int]:
    """Run ``args`` (without ``scan``) as a plain scan and return its exit code, or ``None``."""
    from ..core.errors import DllogscanError

    ns = _parsed(_parser(), args)
    if ns is None:
        return None
    from ..pipeline import runner as pipeline

    from .checks import check_scan_options, renamed

    try:
        engine = renamed("--engine", "--prefilter", ns.old_engine, ns.prefilter, "auto")
        check_scan_options(ns.min_confidence, ns.max_bytes)
        check_out(ns.out, ns.paths)
        fmt = format_of(ns.fmt, ns.out)
        pipeline.get_scanner(ns.signatures, engine)
        results = scan_paths(ns.paths, ns.signatures, engine, ns.min_confidence, ns.max_bytes, ns.classifier)
        report_errors(results)
        write(results, fmt, ns.out)
    except (DllogscanError, ImportError) as exc:
        error_line(exc)
        return EXIT_ERROR
    return final_code(results, ns.exit_zero)


def _looks_like_input(arg: str) -> bool:
    """An existing file or ``-`` that names no command (command modules are listed, not imported)."""
    import pkgutil

    from . import commands

    if arg in ("scan", "explain", "signatures") or arg in {i.name for i in pkgutil.iter_modules(commands.__path__)}:
        return False
    return arg == "-" or Path(arg).is_file()


def main(argv: Optional[Sequence[str]] = None) -> None:
    """``dllogscan``: a plain scan runs here; everything else goes to the typer app (``cli``).
    A reader that closes the pipe early (``| head``) ends the run quietly, exit 141
    (``output.pipe_exit``).

    Run as the program (``argv`` None), it ends with every object the run made frozen out of the
    cyclic collector's sight (``gc.freeze``): the interpreter's last full collection at exit has
    nothing to walk, 7-10 ms of a plain scan's or a batch's wall time. Its outputs are closed by
    then (``with`` blocks, the batch writer's ``close``); standard streams are flushed at exit
    as always."""
    for stream in (sys.stdout, sys.stderr):  # an ASCII or code-page output (cp1252 redirected on
        if stream is not None and hasattr(stream, "reconfigure"):  # Windows) shows what it cannot encode
            stream.reconfigure(errors="backslashreplace")  # as \u2014, never a UnicodeEncodeError
    try:
        with pipe_exit():
            _main(argv)
    finally:
        if argv is None:
            import gc

            gc.freeze()


def _main(argv: Optional[Sequence[str]] = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if any(a == "" and not (i and args[i - 1].startswith("-")) for i, a in enumerate(args)):
        # ``dllogscan "$LOG"`` with LOG unset; an option's empty value keeps that option's own error
        error_line("an empty argument (an unset shell variable?): give a log or a folder")
        sys.exit(EXIT_ERROR)
    if args[:1] in (["--version"], ["-V"]):
        from .. import __version__

        sys.stdout.write(f"dllogscan {__version__}\n")
        sys.exit(0)
    if args[:1] == ["batch"]:
        try:
            code = try_batch(args[1:])
        except KeyboardInterrupt:
            sys.stderr.write("Error: interrupted\n")
            sys.exit(130)
        if code is not None:
            sys.exit(code)
    if args and (args[0] == "scan" or _looks_like_input(args[0]) or starts_with_scan_option(args)):
        try:
            code = try_run(args[1:] if args[0] == "scan" else args)
        except KeyboardInterrupt:
            sys.stderr.write("Error: interrupted\n")
            sys.exit(130)
        if code is not None:
            sys.exit(code)
    from .app import main as typer_main

    typer_main(args)
