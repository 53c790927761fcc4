"""Wire the stages for one source: open -> sniff -> scan -> correlate -> advise -> ScanResult."""
from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import TYPE_CHECKING, BinaryIO, Iterable

from ..advise.fixes import advise, fill
from ..advise.platform import default_start
from ..correlate.candidates import correlate, filter_hits, rests_on_kill, with_silence, without_steady_kill
from ..correlate.likely_causes import name_cause, needs_naming
from ..core.errors import SourceError
from ..core.models import Diagnosis, ScanResult
from ..scan.prefilter import ENGINES
from ..scan.scanner import Scanner
from ..scan.output import ScanOutput
from ..signatures.database import Database
from ..signatures.loader import load_database
from ..sources.streams import (STREAM_ERRORS, SNIFF_BYTES, KeepReadError, PeekedStream, Source, describe_read_error,
                               sniff)
from ..normalize.encoding import Transcoded, text_encoding

if TYPE_CHECKING:
    from ..correlate.stall import Stall

DEFAULT_MIN_CONFIDENCE = 0.5
#: what ``run``'s ``classifier`` may be (see ``run``); the CLI's ``--classifier`` takes the same words
CLASSIFIERS = ("auto", "weak", "on", "off")
#: the classes ``dllogscan/data/scope.toml`` may set aside (tests/test_scope.py keeps them in step)
SCOPED_CLASSES = frozenset({"C", "D"})
TAKES_SIGNATURES = "give a signature file's path (str, os.PathLike) or an iterable of them"


@lru_cache(maxsize=8)
def _cached_db(extra: tuple[str, ...]) -> Database:
    return load_database(extra)


@lru_cache(maxsize=8)
def _cached_scanner(extra: tuple[str, ...], engine: str) -> Scanner:
    return Scanner(_cached_db(extra), engine=engine)


def get_scanner(signatures: Iterable[str] = (), engine: str = "auto") -> Scanner:
    """A compiled scanner for the shipped database plus user signature files (cached)."""
    return _cached_scanner(tuple(str(s) for s in signatures), engine)


CLASSIFY_SMALL_INPUT = 256 * 1024


def scan_source(source: Source, scanner: Scanner) -> tuple[ScanOutput | None, str | None]:
    """Open, sniff and scan one source: its scanner output (None if unreadable) and any error."""
    try:
        stream = source.open()
    except SourceError as exc:
        return None, str(exc)
    try:
        with stream:
            try:
                head = stream.read(SNIFF_BYTES)
                reader: BinaryIO = stream
                encoding = text_encoding(head)
                if encoding:  # UTF-16/32: read on as UTF-8
                    reader = Transcoded(PeekedStream(head, stream), encoding)  # type: ignore[assignment]
                    head = reader.read(SNIFF_BYTES)
            except STREAM_ERRORS as exc:
                return None, f"{source.name}: {describe_read_error(exc)}"
            reason = sniff(head)
            if reason:
                return None, f"{source.name}: {reason}; not scanned"
            ahead = KeepReadError(reader)
            document = None
            if source.as_is:  # already decoded and flattened (an upload to the page)
                document = source.document
            elif head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"{", b"<", b"["):  # may be a document
                from ..sources.documents import flatten_stream  # noqa: PLC0415 - a plain log never needs it

                head, document = flatten_stream(head, ahead)
            out = scanner.scan(PeekedStream(head, reader, ahead.error), source.first_line)
            out.document = document
            if out.read_error:
                named = out.read_error.startswith(f"{source.name}: ")
                return out, out.read_error if named else f"{source.name}: {out.read_error}"
            if getattr(stream, "cut", False):
                return out, f"{source.name}: input cut at {source.limit} bytes (--max-bytes); scanned what came before"
            return out, None
    except SourceError as exc:
        return None, str(exc)


def check_options(engine: str, min_confidence: float, classifier: str, max_bytes: int | None = None,
                  engine_argument: str = "engine") -> None:
    """ValueError for an argument no call can mean (``engine="foo"``, ``min_confidence=5``):
    a caller's mistake, unlike an input that cannot be read, is not a result. The Python API's
    check (``engine_argument``: what the caller calls the prefilter)."""
    for argument, value, choices in ((engine_argument, engine, ENGINES), ("classifier", classifier, CLASSIFIERS)):
        if value not in choices:
            raise ValueError(f"{argument}={value!r}: choose one of {', '.join(choices)}")
    if not (isinstance(min_confidence, (int, float)) and 0.0 <= min_confidence <= 1.0):  # nan fails too
        raise ValueError(f"min_confidence={min_confidence!r}: give a probability between 0 and 1")
    if max_bytes is not None and not (isinstance(max_bytes, int) and max_bytes >= 1):
        raise ValueError(f"max_bytes={max_bytes!r}: give a positive number of bytes, or None")


def signature_files(signatures: object) -> tuple[str, ...]:
    """``signatures=`` of the Python API as paths: one path (``str``, ``os.PathLike``) or an
    iterable of them; TypeError for anything else (before, a ``str`` was read as one file per
    character, ``5`` was Python's own "'int' object is not iterable")."""
    import os

    if isinstance(signatures, (str, os.PathLike)):
        return (os.fspath(signatures),)  # type: ignore[return-value]
    if isinstance(signatures, (bytes, bytearray, memoryview)) or not isinstance(signatures, Iterable):
        raise TypeError(f"signatures: {TAKES_SIGNATURES}, not {type(signatures).__name__}")
    files = tuple(signatures)
    for f in files:
        if not isinstance(f, (str, os.PathLike)):
            raise TypeError(f"signatures: {TAKES_SIGNATURES}, not an iterable holding {type(f).__name__}")
    return tuple(os.fspath(f) for f in files)  # type: ignore[misc]


def run(source: Source, scanner: Scanner | None = None,
        min_confidence: float = DEFAULT_MIN_CONFIDENCE, classifier: str = "auto",
        model=None) -> ScanResult:
    """Diagnose one source. Read errors become ``ScanResult.error``, never an exception.

    ``classifier``: ``auto`` consults the text classifier when no signature decides and the input
    is report-sized or had weak hits; ``weak`` only when there are weak hits (a batch of healthy
    job logs is not read by the classifier); ``on`` always when none decides; ``off`` never. ``model``
    replaces the shipped classifier (the evaluation passes one trained on its train split)."""
    scanner = scanner or get_scanner()
    out, error = scan_source(source, scanner)
    if out is None:
        return ScanResult(source=source.name, error=error)
    timing: list[str] = []
    weak, facts = assess(out, scanner, timing)
    diagnoses, notes = decide(weak, out, min_confidence, classifier, model)
    notes = tuple(timing) + notes
    if not diagnoses:
        diagnoses = _canonical_left(out, scanner)
    if not diagnoses:
        notes = notes + _leads(out, scanner.db)
    if needs_naming(diagnoses):
        diagnoses = _likely_causes_named(diagnoses, out, facts)
    diagnoses = [advise(_with_config(d, facts), scanner.db) for d in diagnoses]
    return ScanResult(source=source.name, diagnoses=tuple(diagnoses), error=error, lines=out.lines,
                      bytes_read=out.bytes_read, hits=tuple(out.hits), facts=facts,
                      document=out.document, notes=notes)


def run_stalled(source: Source, scanner: Scanner, stall: Stall, job_pid: int | None = None) -> ScanResult:
    """Diagnose a source whose progress stopped while it was followed (``correlate.stall.Stall``,
    seen by ``watch``): the hang the stall makes (``with_silence``), its fixes filled in with the
    text's configuration facts and ``job_pid``, the stalled job's own process where the watch knows
    it (the pid its py-spy dump takes). The stall was seen, not read from the text: whatever else the
    text holds, the verdict is this hang."""
    out, error = scan_source(source, scanner)
    if out is None:
        return ScanResult(source=source.name, error=error)
    _, facts = correlate(out.hits, scanner.db, min_confidence=0.0)
    if job_pid is not None:
        facts = {**facts, "job_pid": str(job_pid)}
    diagnoses = tuple(advise(_with_config(d, facts), scanner.db) for d in with_silence([], stall))
    return ScanResult(source=source.name, diagnoses=diagnoses, error=error, lines=out.lines,
                      bytes_read=out.bytes_read, hits=tuple(out.hits), facts=facts)


def assess(out: ScanOutput, scanner: Scanner, notes: list[str] | None = None) -> tuple[list[Diagnosis], dict[str, str]]:
    """The signature diagnoses of a scanned source, at every confidence (the silence after its
    last progress line weighed in where timing can matter; a time-limit kill of a job whose
    progress kept its cadence, or a silence the program ended itself, set aside with a note added to
    ``notes``; a note too where the silence could not be measured, its stamps being in two time
    zones, and no diagnosis or only a time-limit kill is left), and its configuration facts."""
    weak, facts = correlate(out.hits, scanner.db, min_confidence=0.0)
    if _wants_timing(weak):
        from ..correlate.cadence import steady_end, timing

        silence, two_zones = timing(out.end, out.end_line)
        weak = with_silence(weak, silence)
        if silence is not None and not silence.stopped and notes is not None and not any(d.cls == "E" for d in weak):
            notes.append(f"{silence.describe()}; nothing after it says the run was stopped or failed, and "
                         "the program went on by itself: a pause (a final evaluation, a checkpoint, an "
                         "upload), not a hang")
        if rests_on_kill(weak):
            weak, said = without_steady_kill(weak, steady_end(out.end, out.end_line))
            if notes is not None:
                notes.extend(said)
        if two_zones is not None and notes is not None and all(d.cls != "E" or rests_on_kill([d]) for d in weak):
            notes.append(two_zones.describe())  # no verdict, or one the timing would have weighed
    return weak, facts


def decide(weak: list[Diagnosis], out: ScanOutput, min_confidence: float = DEFAULT_MIN_CONFIDENCE,
           classifier: str = "auto", model=None) -> tuple[list[Diagnosis], tuple[str, ...]]:
    """The verdict from ``assess``'s diagnoses: those at ``min_confidence``, merged with the
    classifier's view where it is consulted (see ``run``), less a verdict from words alone that the
    text itself rules out (``combine.words_ruled_out``) and those another program's; and the notes
    of those set aside."""
    diagnoses = [d for d in weak if d.confidence >= min_confidence]
    ruled_out: tuple[str, ...] = ()
    if classifier != "off" and _wants_classifier(weak, out, classifier):
        consulted = _with_classifier(weak, out, min_confidence, model)
        if consulted is not None:
            merged, unsure = consulted
            diagnoses, ruled_out = _words_ruled_out(merged, out)
            ruled_out += unsure
    diagnoses, notes = _in_scope(diagnoses, out)
    return diagnoses, ruled_out + notes


def _words_ruled_out(diagnoses: list[Diagnosis], out: ScanOutput) -> tuple[list[Diagnosis], tuple[str, ...]]:
    """Less a verdict only words vouch for where the text itself rules it out
    (``combine.words_ruled_out``), with the note of each set aside."""
    from ..classify.combine import from_words_alone, words_ruled_out
    from ..classify.digest import digest_lines

    if not any(map(from_words_alone, diagnoses)):  # the text is read again only for such a verdict
        return diagnoses, ()
    return words_ruled_out(diagnoses, digest_lines(out))


def _in_scope(diagnoses, out: ScanOutput):
    """The diagnoses the text does not show to be another program's (``correlate/scope.py``),
    and the notes of those set aside."""
    if not any(d.cls in SCOPED_CLASSES for d in diagnoses):  # keeps the rules unread on most runs
        return diagnoses, ()
    from ..classify.digest import digest_lines  # noqa: PLC0415 - read only when there is a verdict to check
    from ..correlate import scope  # noqa: PLC0415

    return scope.set_aside(diagnoses, digest_lines(out))


def _canonical_left(out: ScanOutput, scanner: Scanner) -> list[Diagnosis]:
    """A canonical failure text that its own signature's conditions dropped, in a text with no
    verdict: its class or class H (``correlate/scope.py``), never "nothing found"."""
    canonical = [h for h in out.hits if scanner.db.by_id[h.signature].canonical]
    if not canonical:
        return []
    from ..classify.digest import digest_lines  # noqa: PLC0415 - only where such a text was dropped
    from ..correlate import scope  # noqa: PLC0415

    kept = {id(h) for h in filter_hits(list(out.hits), scanner.db)}
    dropped = [h for h in canonical if id(h) not in kept]
    return scope.unexplained(dropped, scanner.db, digest_lines(out)) if dropped else []


def _leads(out: ScanOutput, db: Database) -> tuple[str, ...]:
    """For a text with no diagnosis: the note (``lead``) of each signature with one that a line
    matched, at its first such line, whatever the signature's own conditions."""
    seen: set[str] = set()
    notes = []
    for hit in out.hits:
        sig = db.by_id.get(hit.signature)
        if sig is None or not sig.lead or sig.id in seen:
            continue
        seen.add(sig.id)
        notes.append(fill(sig.lead, {**hit.facts, "line": str(hit.line)}))
    return tuple(notes)


def _likely_causes_named(diagnoses: list[Diagnosis], out: ScanOutput, facts: dict[str, str]) -> list[Diagnosis]:
    """Plain hangs and unexplained worker deaths with the likely cause their text names
    (``correlate/likely_causes.py``); no hazard of forking where the text shows the workers did
    not fork (``advise.platform.default_start``)."""
    from ..classify.digest import digest_lines

    lines = digest_lines(out)
    return [name_cause(d, lines, started=default_start({**facts, **d.facts})) for d in diagnoses]


def _with_config(diagnosis, facts: dict[str, str]):
    """The source's configuration facts (num_workers, batch_size, ...) under the diagnosis's own,
    whichever way it was made (signatures, the classifier, the timing), so its fixes are filled in."""
    if facts.keys() <= diagnosis.facts.keys():
        return diagnosis
    return dataclasses.replace(diagnosis, facts={**facts, **diagnosis.facts})


def _wants_timing(diagnoses) -> bool:
    """Timing (cadence.py) is measured only where it can matter: a hang to weigh, or no verdict
    (weightless support of another class aside)."""
    return all(d.cls == "E" or d.confidence == 0 for d in diagnoses)


def _wants_classifier(diagnoses, out, mode: str) -> bool:
    from ..classify.combine import needs_classifier

    if not needs_classifier(diagnoses):
        return False
    if mode == "weak":  # batch: only to confirm or veto a weak signature verdict
        return bool(diagnoses)
    return mode == "on" or bool(diagnoses) or out.bytes_read <= CLASSIFY_SMALL_INPUT


def _with_classifier(diagnoses, out, min_confidence: float, model=None):
    """Signature diagnoses merged with the classifier's view, and, where none is left, the note of
    a hang the classifier read but may not give alone (``combine.unsure_hang``); None when no
    model is shipped."""
    from ..classify import light
    from ..classify.combine import combine, unsure_hang
    from ..classify.digest import digest_lines

    model = model or light.shipped()
    if model is None:
        return None
    lines = digest_lines(out)
    if not lines:
        return [d for d in diagnoses if d.confidence >= min_confidence], ()
    pred = model.predict(["\n".join(t for _, t in lines)])[0]
    merged = combine(diagnoses, pred, lines, model, min_confidence)
    if merged:
        return merged, ()
    note = unsure_hang(pred, lines, getattr(model, "thresholds", None) or {}, min_confidence)
    return merged, (note,) if note else ()


def with_source_name(result: ScanResult, name: str) -> ScanResult:
    return dataclasses.replace(result, source=name)
