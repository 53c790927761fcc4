"""Name a diagnosis's likely cause from what its text names, where its failure text names none.

Data: one file per class in ``dllogscan/data/`` (``CUE_FILES``; why, and what each measured, in
the files). A file names the class and the ``plain`` subclass it renames: a hang that names no
sub-cause (E ``hang``), a worker death whose failure line names no cause (B ``oom-suspected``, a
bare "exited unexpectedly"). Such a diagnosis takes the cause of the file's first entry whose
``pattern`` matches a line of the text (not a package listing's line: ``listing``, where the file
has one; not one that asks or advises: ``hedged``, where it has one; not a line the entry's
``unless`` matches), as ``<subclass>-likely``: its fixes are the cause's
(``Database.fixes_for`` falls back from ``E.fork-threads-likely`` to ``E.fork-threads``), the line
is cited, and a note says it is what the text names, not the failure itself, that points there.
An entry marked ``fork_only`` (a hazard of forking: a tokenizer's or OpenCV's threads, an HDF5
handle, a lock) is passed over where the text shows the workers did not fork (spawn on Windows, spawn
by macOS's default, forkserver by Python 3.14's: ``advise.platform.default_start``), and a note says so.
Other diagnoses pass unchanged.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

from ..core.errors import SignatureError
from ..core.models import Diagnosis, Evidence
from ..core.paths import DATA_DIR, data_document, data_pattern

#: the cue files, one per class, and the (class, subclass) each renames; the files say the same
#: (checked when read), this copy lets ``needs_naming`` answer without reading them
CUE_FILES = {"hang_causes.toml": ("E", "hang"), "exit_causes.toml": ("B", "oom-suspected")}
RENAMED = frozenset(CUE_FILES.values())
#: the (class, subclass) of the cue files' ``fork_only`` entries, which a stack frame's signature
#: also names (``E.fork-threads.opencv-frame``): checked against the files when read, so that
#: ``needs_naming`` answers without reading them
FORK_HAZARDS = frozenset({("E", "tokenizers-fork"), ("E", "fork-handle"), ("E", "fork-threads"), ("E", "fork-lock")})
FIELDS = {"subclass", "pattern", "names", "title", "examples", "counter_examples"}
OPTIONAL = {"unless", "fork_only"}
TOP_FIELDS = {"class", "plain", "unconfirmed"}
#: the title of a diagnosis a cue file's plain subclass stands for: where a hazard of forking is
#: taken back (the workers did not fork), the diagnosis returns to it
TOP_OPTIONAL = {"plain_title"}
#: the suffix of a cause named from what a text names, not from its failure text or a stack frame
LIKELY = "-likely"
#: how much of the naming line is cited, and what its evidence's signature field says
CITED_CHARS = 600
CITED_AS = "likely-cause"
NOTE_MARK = " likely: line "
#: a package listing's line is short; a longer line is never taken for one (and the pattern never
#: runs over a hostile 1 MB line)
LISTING_CHARS = 300


@dataclass(frozen=True)
class LikelyCause:
    subclass: str
    pattern: Any  # a compiled ``regex`` pattern
    names: str
    title: str
    examples: tuple[str, ...]
    counter_examples: tuple[str, ...]
    unless: Any = None  # a line this matches names nothing here (GPU memory for host memory)
    fork_only: bool = False  # a hazard of forking, which spawned workers do not meet

    def named_by(self, text: str) -> bool:
        return bool(self.pattern.search(text)) and not (self.unless is not None and self.unless.search(text))


@dataclass(frozen=True)
class CauseCues:
    """One class's cues: the subclass they rename, the entries in order, the note's tail."""

    cls: str
    plain: str
    #: what the note adds: why the cause is only likely, and what would confirm it
    unconfirmed: str
    causes: tuple[LikelyCause, ...]
    listing: Any = None  # a line that lists an installed package with its version names nothing
    listing_examples: tuple[str, ...] = ()
    listing_counter_examples: tuple[str, ...] = ()
    hedged: Any = None  # a line that asks or advises ("check dmesg for the OOM killer") names nothing
    hedged_examples: tuple[str, ...] = ()
    hedged_counter_examples: tuple[str, ...] = ()
    plain_title: str | None = None

    def hazard(self, diagnosis: Diagnosis) -> LikelyCause | None:
        """The hazard of forking of this file that ``diagnosis`` names (a ``fork_only`` entry whose
        subclass it has, from a stack frame's signature), or None."""
        if diagnosis.cls != self.cls:
            return None
        return next((c for c in self.causes if c.fork_only and c.subclass == diagnosis.subclass), None)

    def renames(self, diagnosis: Diagnosis) -> bool:
        return diagnosis.cls == self.cls and diagnosis.subclass == self.plain

    def is_listing(self, text: str) -> bool:
        return self.listing is not None and len(text) <= LISTING_CHARS and bool(self.listing.search(text))

    def names_nothing(self, text: str) -> bool:
        """A package listing's line, or one that asks or advises."""
        return self.is_listing(text) or (self.hedged is not None and bool(self.hedged.search(text)))


@lru_cache(maxsize=4)
def load_cues(path: Path) -> CauseCues:
    """Read and validate one cue file, its entries in the file's order (the first that matches wins)."""
    doc = data_document(path)
    if any(not isinstance(doc.get(key), str) for key in TOP_FIELDS):
        raise SignatureError(f"{path}: needs {', '.join(sorted(TOP_FIELDS))} (strings)")
    if any(key in doc and not isinstance(doc[key], str) for key in TOP_OPTIONAL):
        raise SignatureError(f"{path}: {', '.join(sorted(TOP_OPTIONAL))} is a string")
    if (declared := CUE_FILES.get(path.name)) and declared != (doc["class"], doc["plain"]):
        raise SignatureError(f"{path}: renames class {doc['class']} / {doc['plain']}, but "
                             f"likely_causes.CUE_FILES says {declared[0]} / {declared[1]}")
    out = []
    for i, raw in enumerate(doc.get("cause", []), start=1):
        if not FIELDS <= set(raw) <= FIELDS | OPTIONAL:
            raise SignatureError(f"{path}: cause #{i} needs {', '.join(sorted(FIELDS))} (and may have "
                                 f"{', '.join(sorted(OPTIONAL))})")
        unless = data_pattern(path, raw["subclass"] + " unless", raw["unless"]) if "unless" in raw else None
        if not isinstance(raw.get("fork_only", False), bool):
            raise SignatureError(f"{path}: cause #{i}: fork_only is true or false")
        out.append(LikelyCause(raw["subclass"], data_pattern(path, raw["subclass"], raw["pattern"]), raw["names"],
                               raw["title"], tuple(raw["examples"]), tuple(raw["counter_examples"]), unless,
                               raw.get("fork_only", False)))
    optional = {name: data_pattern(path, name, doc[name]) if isinstance(doc.get(name), str) else None
                for name in ("listing", "hedged")}
    hazards = {(doc["class"], c.subclass) for c in out if c.fork_only}
    if not hazards <= FORK_HAZARDS:
        raise SignatureError(f"{path}: fork_only entries {sorted(h[1] for h in hazards - FORK_HAZARDS)} are not in "
                             "likely_causes.FORK_HAZARDS")
    return CauseCues(doc["class"], doc["plain"], doc["unconfirmed"], tuple(out), optional["listing"],
                     tuple(doc.get("listing_examples", ())), tuple(doc.get("listing_counter_examples", ())),
                     optional["hedged"], tuple(doc.get("hedged_examples", ())),
                     tuple(doc.get("hedged_counter_examples", ())), doc.get("plain_title"))


def all_cues() -> tuple[CauseCues, ...]:
    return tuple(load_cues(DATA_DIR / name) for name in CUE_FILES)


def needs_naming(diagnoses: Sequence[Diagnosis]) -> bool:
    """Whether some diagnosis has a subclass that a cue file renames, or a hazard of forking that
    it may take back (the files are read only then)."""
    return any((d.cls, d.subclass) in RENAMED | FORK_HAZARDS for d in diagnoses)


def name_cause(diagnosis: Diagnosis, lines: Sequence[tuple[int, str]],
               cues: Sequence[CauseCues] | None = None, started: tuple[str, str] | None = None) -> Diagnosis:
    """``diagnosis`` with the likely cause its text names, if its subclass is one a cue file
    renames and a line names one; else unchanged. ``started``: how the workers started, and why,
    where the text shows it was not fork (``advise.platform.default_start``): no hazard of forking
    is named then, and the first one a line names is noted as passed over; a diagnosis that a stack
    frame gave such a hazard (``E.fork-threads.opencv-frame``) returns to the plain subclass, with
    a note, and may then take another cause."""
    for data in all_cues() if cues is None else cues:
        if started and (hazard := data.hazard(diagnosis)) is not None:
            diagnosis = _unforked(diagnosis, data, hazard, started)
        if data.renames(diagnosis):
            return _named(diagnosis, lines, data, started)
    return diagnosis


def _unforked(diagnosis: Diagnosis, data: CauseCues, hazard: LikelyCause, started: tuple[str, str]) -> Diagnosis:
    """``diagnosis`` back at the plain subclass: its ``hazard`` of forking cannot be the cause, the
    workers having started with ``started``."""
    prefix = f"{diagnosis.cls}.{diagnosis.subclass}."
    line = next((e.line for e in diagnosis.evidence if (e.signature or "").startswith(prefix)), None)
    shown = f"line {line} shows {hazard.names}" if line is not None else f"the text shows {hazard.names}"
    note = (f"cause {diagnosis.subclass} not named: {shown}, a hazard of forking, but the workers started with "
            f"{started[0]} ({started[1]})")
    return dataclasses.replace(diagnosis, subclass=data.plain, title=data.plain_title or diagnosis.title,
                               notes=diagnosis.notes + (note,))


def _named(diagnosis: Diagnosis, lines: Sequence[tuple[int, str]], data: CauseCues,
           started: tuple[str, str] | None) -> Diagnosis:
    lines = [(number, text) for number, text in lines if not data.names_nothing(text)]
    passed_over = None
    for cause in data.causes:
        if started and cause.fork_only:
            if passed_over is None:
                passed_over = next(((cause, number) for number, text in lines if cause.named_by(text)), None)
            continue
        for number, text in lines:
            if cause.named_by(text):
                cited = diagnosis.evidence
                if all(e.line != number for e in cited):
                    cited += (Evidence(number, text[:CITED_CHARS], CITED_AS),)
                note = f"cause {cause.subclass}{NOTE_MARK}{number} names {cause.names}; {data.unconfirmed}"
                return dataclasses.replace(diagnosis, subclass=cause.subclass + LIKELY, title=cause.title,
                                           evidence=cited, notes=diagnosis.notes + (note,))
    if passed_over is not None and started is not None \
            and not any(n.startswith(f"cause {passed_over[0].subclass} not named:") for n in diagnosis.notes):
        cause, number = passed_over
        note = (f"cause {cause.subclass} not named: line {number} names {cause.names}, a hazard of forking, "
                f"but the workers started with {started[0]} ({started[1]})")
        return dataclasses.replace(diagnosis, notes=diagnosis.notes + (note,))
    return diagnosis


def without_guess(diagnosis: Diagnosis) -> tuple[tuple[Evidence, ...], tuple[str, ...]]:
    """The diagnosis's evidence and notes less what this step added (for proof from elsewhere
    that replaces the guess: ``batch/crossfile.py``)."""
    evidence = tuple(e for e in diagnosis.evidence if e.signature != CITED_AS)
    return evidence, tuple(n for n in diagnosis.notes if not (n.startswith("cause ") and NOTE_MARK in n))
