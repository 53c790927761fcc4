"""The entry point, and the plain ``dllogscan FILE ...`` run without typer.

typer 0.29 builds a pydantic ``TypeAdapter`` for every option before it runs a command: about
0.5 s of a 0.6 s start. A plain scan is parsed here with ``argparse`` instead and runs the same
body as ``dllogscan scan``; anything else (help, other commands, a bad option or value) returns
``None`` and goes through typer, which prints its usual help and errors.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional, Sequence

EXIT_CLEAN, EXIT_FOUND, EXIT_ERROR, EXIT_PARTIAL = 0, 1, 2, 3
CHOICES = {"engine": ("auto", "hyperscan", "ahocorasick", "python"), "classifier": ("auto", "weak", "on", "off")}


class _Fallback(Exception):
    """The arguments are not a plain, valid scan: let typer handle them."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # type: ignore[override]
        raise _Fallback(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(add_help=False, allow_abbrev=False, prog="dllogscan")
    p.add_argument("paths", nargs="+")
    p.add_argument("--format", "-f", dest="fmt", default="text")
    p.add_argument("--out", "-o", type=Path)
    p.add_argument("--signatures", "-s", action="append", default=[], type=lambda s: str(Path(s)))
    p.add_argument("--min-confidence", type=float, default=0.5)
    p.add_argument("--max-bytes", type=int)
    p.add_argument("--engine", default="auto", choices=CHOICES["engine"])
    p.add_argument("--classifier", default="auto", choices=CHOICES["classifier"])
    p.add_argument("--exit-zero", action="store_true")
    return p


def exit_code(results) -> int:
    if any(r.diagnoses for r in results):
        return EXIT_FOUND
    if len(results) == 1 and results[0].error and not results[0].lines:
        return EXIT_ERROR
    if any(r.error for r in results):
        return EXIT_PARTIAL
    return EXIT_CLEAN


def check_out(out: Optional[Path]) -> None:
    """Refuse an ``--out`` that cannot be written (a missing folder, a directory) before any work."""
    from ..core.errors import UsageError

    if out is None:
        return
    if out.is_dir():
        raise UsageError(f"--out {out}: is a directory; name a file")
    if not out.parent.is_dir():
        raise UsageError(f"--out {out}: the folder {out.parent} does not exist")


def _writing(out: Path, put) -> None:
    """Run ``put()``, which writes ``out``; an OSError becomes a UsageError naming the file."""
    from ..core.errors import UsageError

    try:
        put()
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot write: {exc.strerror or exc}") from None


def write_text(text: str, out: Optional[Path]) -> None:
    """``text`` to standard output, or to ``out`` (a write error raises UsageError)."""
    if out is None:
        sys.stdout.write(text)
    else:
        _writing(out, lambda: out.write_text(text, encoding="utf-8"))


def write(results, fmt: str, out: Optional[Path]) -> None:
    """Write results in an already-checked ``fmt`` to ``out`` or standard output."""
    from .. import report

    if fmt == "parquet":
        from ..report.table import to_parquet
        _writing(out, lambda: to_parquet(results, str(out)))  # type: ignore[arg-type]
        return
    if fmt == "text" and out is None:
        from ..report.terminal import print_results
        print_results(results)
        return
    write_text(report.render(results, fmt), out)


def scan_paths(paths: Sequence[str], signatures: Sequence[str], engine: str, min_confidence: float,
               max_bytes: Optional[int], classifier: str) -> list:
    """One ScanResult per path (``-`` is standard input)."""
    from .. import api

    return [api.scan(p if p == "-" else Path(p), signatures=list(signatures), engine=engine,
                     min_confidence=min_confidence, max_bytes=max_bytes, classifier=classifier)
            for p in paths]


def error_line(message: object) -> None:
    """``Error: message`` on stderr, one line, controls in it (a name from the command line)
    shown as escapes."""
    from ..core.printable import escape

    sys.stderr.write(f"Error: {escape(str(message))}\n")


def report_errors(results) -> None:
    """Each source's error as one ``Error: ...`` line on stderr."""
    for r in results:
        if r.error:
            error_line(r.error)


def final_code(results, exit_zero: bool) -> int:
    """The exit status; ``--exit-zero`` turns "found" and "partly read" into 0, never an error."""
    code = exit_code(results)
    return 0 if exit_zero and code != EXIT_ERROR else code


def try_run(args: Sequence[str]) -> Optional[int]:
    """Run ``args`` (without ``scan``) as a plain scan and return its exit code, or ``None``."""
    from ..core.errors import DllogscanError
    from ..report import FORMATS

    if any(a in ("-h", "--help") for a in args):
        return None
    try:
        ns = _parser().parse_args(list(args))
    except _Fallback:
        return None
    if ns.fmt not in FORMATS or (ns.fmt == "parquet" and ns.out is None):
        return None
    from ..pipeline import runner as pipeline

    from .checks import check_scan_options

    try:
        check_scan_options(ns.min_confidence, ns.max_bytes)
        check_out(ns.out)
        pipeline.get_scanner(ns.signatures, ns.engine)
        results = scan_paths(ns.paths, ns.signatures, ns.engine, ns.min_confidence, ns.max_bytes, ns.classifier)
        report_errors(results)
        write(results, ns.fmt, ns.out)
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


GLOBAL_OPTIONS = ("-h", "--help", "--version", "-V")


def starts_with_scan_option(args: Sequence[str]) -> bool:
    """``dllogscan --format json job.log``: options before the path belong to the plain scan."""
    return bool(args) and args[0].startswith("-") and args[0] != "-" and args[0] not in GLOBAL_OPTIONS


EXIT_PIPE = 141  # 128 + SIGPIPE, as for any tool whose reader closed the pipe


def main(argv: Optional[Sequence[str]] = None) -> None:
    """``dllogscan``: a plain scan runs here; everything else goes to the typer app (``cli``).
    A reader that closes the pipe early (``| head``) ends the run quietly."""
    try:
        _main(argv)
    except BrokenPipeError:
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        sys.exit(EXIT_PIPE)


def _main(argv: Optional[Sequence[str]] = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["--version"], ["-V"]):
        from .. import __version__

        sys.stdout.write(f"dllogscan {__version__}\n")
        sys.exit(0)
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
