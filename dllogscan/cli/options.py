"""The option vocabulary, one definition per option (as typer annotations), so every command
spells and explains an option the same way; and the way out that ``slurm`` and ``k8s`` share with
``scan`` (redact, errors on stderr, the format, the exit status).

``--prefilter`` is the literal matcher in every command; ``--engine`` (with ``--scheduler``) is
where ``batch`` runs. The old spelling ``--engine`` for the matcher is accepted, hidden, for one
release: ``OldEngine`` plus ``checks.renamed`` print the deprecation line."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, List, Optional

import typer

from ..core.models import ScanResult
from .output import out_path

FORMAT_HELP = "text | json | jsonl | md | csv | github | parquet (default: what --out's extension names, else text)."
Format = Annotated[Optional[str], typer.Option("--format", "-f", help=FORMAT_HELP)]
#: --out's help; ``-`` names standard output (``output.out_path``)
OUT_HELP = "Write to this file instead of standard output (-: standard output)."
Out = Annotated[Optional[Path], typer.Option("--out", "-o", help=OUT_HELP, callback=out_path)]
Signatures = Annotated[List[Path], typer.Option("--signatures", "-s", help="Extra signature file or folder (repeatable).")]
MinConfidence = Annotated[float, typer.Option(help="Report only diagnoses at least this sure.")]
MaxBytes = Annotated[Optional[int], typer.Option(help="Stop reading a log after this many bytes.")]
Prefilter = Annotated[str, typer.Option("--prefilter", help="Literal prefilter: auto | hyperscan | ahocorasick | python.")]
OldEngine = Annotated[Optional[str], typer.Option("--engine", hidden=True, help="Deprecated spelling of --prefilter.")]
Classifier = Annotated[str, typer.Option(help="Text classifier: auto (when no signature decides) | weak (only to weigh weak verdicts) | on | off.")]
REDACT_HELP = "Hide credentials, hosts, users, IPs, job ids, pod names and e-mails."
Redact = Annotated[bool, typer.Option("--redact", help=REDACT_HELP)]
ExitZero = Annotated[bool, typer.Option("--exit-zero", help="Exit 0 even when failures are found (errors still exit 2).")]
Timeout = Annotated[float, typer.Option(help="Seconds each cluster tool may take.")]
#: the least ``repro --timeout`` and ``doctor --timeout`` take (a duration, as ``watch``'s, read by
#: ``checks.check_duration``): a rung or a sample has at least a second to load its batch
LEAST_HANG = 1.0


def check_format(fmt: Optional[str], out: Optional[Path]) -> str:
    """The format to write (``output.format_of``); a bad one is a usage error, found before any
    tool runs."""
    from ..core.errors import DllogscanError
    from .output import fail, format_of

    try:
        return format_of(fmt, out)
    except DllogscanError as exc:
        raise fail(str(exc))


def prefilter_of(prefilter: str, old_engine: Optional[str]) -> str:
    """``--prefilter``, or its deprecated spelling ``--engine`` (a line on stderr); a usage error
    when both disagree or the value is not a matcher's name."""
    from ..core.errors import DllogscanError
    from .checks import PREFILTERS, check_choice, renamed
    from .output import fail

    try:
        value = renamed("--engine", "--prefilter", old_engine, prefilter, "auto")
        return check_choice("--prefilter" if old_engine is None else "--engine", value, PREFILTERS)
    except DllogscanError as exc:
        raise fail(str(exc))


def classifier_of(classifier: str) -> str:
    """``--classifier``'s value, or a usage error naming its words."""
    from ..core.errors import DllogscanError
    from .checks import CLASSIFIERS, check_choice
    from .output import fail

    try:
        return check_choice("--classifier", classifier, CLASSIFIERS)
    except DllogscanError as exc:
        raise fail(str(exc))


def config(signatures: List[Path], engine: str, min_confidence: float, classifier: str):
    """The scan configuration, the signature files loaded (and checked) now."""
    from ..batch.worker import Config, database
    from .output import fail
    from ..core.errors import DllogscanError

    cfg = Config(tuple(str(s) for s in signatures), True, engine, min_confidence, classifier=classifier_of(classifier))
    try:
        database(cfg)
    except (DllogscanError, ImportError) as exc:
        raise fail(str(exc))
    return cfg


def deliver(result: ScanResult, fmt: str, out: Optional[Path], redact: bool, exit_zero: bool) -> "typer.Exit":
    """Print ``result`` as ``scan`` would and return the exit to raise."""
    from .output import final_code, report_errors, write

    results = [result]
    if redact:
        from ..report.redact import redact_results
        results = redact_results(results)
    report_errors(results)
    write(results, fmt, out)
    sys.stdout.flush()
    return typer.Exit(final_code(results, exit_zero))
