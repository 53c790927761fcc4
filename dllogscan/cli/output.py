"""What every command shares on the way out: the exit codes, the writers, the ``Error:`` line.

Exit codes (also in the README):
  0  nothing found: no DataLoader worker failure in the input
  1  at least one failure diagnosed
  2  usage error, or an input that cannot be read at all (one line on stderr)
  3  nothing found, but part of the input could not be read (cut or corrupt)
  141  the reader of the output closed the pipe early (``pipe_exit``)

No typer here: the plain scan (``fast``) uses this module before typer is ever imported.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional, Sequence

EXIT_CLEAN, EXIT_FOUND, EXIT_ERROR, EXIT_PARTIAL = 0, 1, 2, 3
EXIT_PIPE = 141  # 128 + SIGPIPE, as for any tool whose reader closed the pipe
GLOBAL_OPTIONS = ("-h", "--help", "--version", "-V")
#: ``--out``'s spelling of standard output
STDOUT_NAME = "-"


def out_path(value: "str | Path | None") -> Optional[Path]:
    """``--out``'s value: ``-`` is standard output (None, as without ``--out``), never a file
    named ``-`` in the current folder."""
    if value is None or str(value) == STDOUT_NAME:
        return None
    return Path(value)


class PipeClosed(BaseException):
    """The reader of standard output closed the pipe. Raised in place of BrokenPipeError, which
    click and rich catch and turn into exit 1; a BaseException, so no ``except Exception`` of a
    command turns it into an ``Error:`` line."""


class OutputFailed(BaseException):
    """Standard output cannot be written (a full disk, ``> /dev/full``): one ``Error:`` line, exit 2,
    however deep in a writer it happened (a BaseException, as PipeClosed)."""


class _GuardedStdout:
    """Standard output whose BrokenPipeError (on write or flush) is raised as PipeClosed, and any
    other OSError as OutputFailed."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise PipeClosed from None
        except OSError as exc:
            raise OutputFailed(exc.strerror or str(exc)) from None

    def write_bytes(self, data: bytes) -> None:
        """``data`` as it is, past the text layer's encoding (flushed first, so the order holds); a
        stream with no bytes below it (a StringIO a caller put in place) takes the text."""
        try:
            buffer = getattr(self._stream, "buffer", None)
            if buffer is None:
                self._stream.write(data.decode("utf-8", "backslashreplace"))
                return
            self._stream.flush()
            buffer.write(data)
        except BrokenPipeError:
            raise PipeClosed from None
        except OSError as exc:
            raise OutputFailed(exc.strerror or str(exc)) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise PipeClosed from None
        except OSError as exc:
            raise OutputFailed(exc.strerror or str(exc)) from None

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


@contextmanager
def sigterm_as_ctrl_c() -> Iterator[None]:
    """SIGTERM (``kill``, ``timeout``, a scheduler's cancel) raises KeyboardInterrupt while the
    block runs, so a command ends as Ctrl-C ends it (``watch`` with its summary, ``batch`` with
    its output finished: a Parquet file keeps its footer). The handler before is put back after."""
    import signal

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


@contextmanager
def pipe_exit() -> Iterator[None]:
    """Run a command so that a reader that closed the pipe early (``| head``) ends it with exit
    141 (EXIT_PIPE) and nothing on stderr, whichever command or writer met the closed pipe (an
    output that cannot be written at all, one ``Error:`` line and exit 2).
    Standard output is flushed at the end of the block, so a short output meets it here too."""
    stream = sys.stdout
    if stream is None or isinstance(stream, _GuardedStdout):
        yield
        return
    sys.stdout = _GuardedStdout(stream)
    try:
        try:
            yield
        finally:
            sys.stdout.flush()
    except (PipeClosed, BrokenPipeError, OutputFailed) as exc:
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())  # no second error at exit
        if isinstance(exc, OutputFailed):
            error_line(f"cannot write the output: {exc}")
            sys.exit(EXIT_ERROR)
        sys.exit(EXIT_PIPE)
    finally:
        sys.stdout = stream


def exit_code(results) -> int:
    """1 found; 2 where no input could be read at all (each an error with no line read); 3 where
    part of the input could not be read; else 0."""
    if any(r.diagnoses for r in results):
        return EXIT_FOUND
    if results and all(r.error and not r.lines for r in results):
        return EXIT_ERROR
    if any(r.error for r in results):
        return EXIT_PARTIAL
    return EXIT_CLEAN


def check_agrees(fmt: Optional[str], out: Optional[Path], named: Optional[str]) -> None:
    """A ``--format`` that ``--out``'s extension contradicts (it names ``named``) is a usage error,
    in ``scan`` and ``batch`` alike."""
    from ..core.errors import UsageError

    if fmt is not None and named is not None and fmt != named:
        raise UsageError(f"--format {fmt} and --out {out} ({named}) disagree; leave out --format to write {named}")


def format_of(fmt: Optional[str], out: Optional[Path], default: str = "text") -> str:
    """The format to write: ``--format`` when given, else the one ``--out``'s extension names (as
    ``batch --out`` reads it), else ``default``. UsageError for an unknown format, one that
    ``--out`` contradicts, or Parquet without ``--out``."""
    from ..core.errors import UsageError
    from ..report import FORMATS, SUFFIXES

    if fmt is not None and fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    named = SUFFIXES.get(out.suffix.lower()) if out is not None else None
    check_agrees(fmt, out, named)
    chosen = fmt or named or default
    if chosen == "parquet" and out is None:
        raise UsageError("--format parquet needs --out FILE")
    return chosen


def check_out(out: Optional[Path], inputs: Sequence[str] = ()) -> None:
    """Refuse an ``--out`` that cannot be written (a missing folder, a directory) or that is one of
    ``inputs`` (writing would destroy it) before any work."""
    from ..core.errors import UsageError

    if out is None:
        return
    if out.is_dir():
        raise UsageError(f"--out {out}: is a directory; name a file")
    if not out.parent.is_dir():
        raise UsageError(f"--out {out}: the folder {out.parent} does not exist")
    same = _input_at(out, inputs)
    if same is not None:
        raise UsageError(f"--out {out}: is an input too ({same}); name another file")


def _input_at(out: Path, inputs: Sequence[str]) -> Optional[str]:
    """The input that is the regular file ``out`` under any name (itself, a link, ``-`` redirected
    from it), as batch's ``runner.without`` knows its output; None when there is none."""
    import os
    import stat

    try:
        target = out.stat()
    except (OSError, ValueError):
        return None  # not there yet: nothing to overwrite
    if not stat.S_ISREG(target.st_mode):
        return None  # /dev/null, /dev/full: writing them destroys nothing
    for name in inputs:
        try:
            found = os.fstat(sys.stdin.fileno()) if name == "-" else os.stat(name)
        except (OSError, ValueError, AttributeError):
            continue
        if (found.st_dev, found.st_ino) == (target.st_dev, target.st_ino):
            return "standard input" if name == "-" else name
    return None


def _writing(out: Path, put) -> None:
    """Run ``put()``, which writes ``out``; an OSError becomes a UsageError naming the file."""
    from ..core.errors import UsageError

    try:
        put()
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot write: {exc.strerror or exc}") from None


#: the formats a program reads: UTF-8 on standard output as in ``--out``, whatever the terminal's
#: encoding (an ASCII or code-page one would otherwise show what it cannot encode as escapes)
UTF8_FORMATS = ("json", "jsonl", "csv")


def write_text(text: str, out: Optional[Path], fmt: str = "text") -> None:
    """``text`` to standard output, or to ``out`` (a write error raises UsageError)."""
    if out is None and fmt in UTF8_FORMATS and hasattr(sys.stdout, "write_bytes"):
        sys.stdout.write_bytes(text.encode("utf-8", "backslashreplace"))
    elif out is None:
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
    write_text(report.render(results, fmt), out, fmt)


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


def starts_with_scan_option(args: Sequence[str]) -> bool:
    """``dllogscan --format json job.log``: options before the path belong to the plain scan."""
    return bool(args) and args[0].startswith("-") and args[0] != "-" and args[0] not in GLOBAL_OPTIONS


def fail(message: str, code: int = EXIT_ERROR):
    """Print one ``Error: ...`` line on stderr; return the ``typer.Exit(code)`` to raise."""
    import typer  # noqa: PLC0415 - only the typer commands fail this way

    error_line(message)
    return typer.Exit(code)


def emit(results, fmt: str, out: Optional[Path]) -> None:
    """Write results in ``fmt`` (from ``format_of``) to ``out`` or standard output (a typer
    command's way out)."""
    from ..core.errors import DllogscanError

    try:
        write(results, fmt, out)
    except DllogscanError as exc:
        raise fail(str(exc))
