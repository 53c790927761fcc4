"""Name a hang's likely sub-cause from the library its text names, where no frame shows one.

Data: ``dllogscan/data/hang_causes.toml`` (why, and what it measured). A class-E diagnosis with
the plain ``hang`` subclass takes the sub-cause of the first entry whose ``pattern`` matches a
line of the text (not a package listing's line: ``listing``), as ``<subclass>-likely``: its fixes
are the sub-cause's (``Database.fixes_for`` falls back from ``E.fork-threads-likely`` to
``E.fork-threads``), the line is cited, and a note says it is the library named, not a stack, that
points there. Other diagnoses pass unchanged.
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

DATA = DATA_DIR / "hang_causes.toml"
FIELDS = {"subclass", "pattern", "names", "title", "examples", "counter_examples"}
#: the subclass of a hang that names no sub-cause, the only one this step renames
PLAIN = "hang"
#: the suffix of a sub-cause named from the library a text names, not from a stack frame
LIKELY = "-likely"
#: how much of the naming line is cited
CITED_CHARS = 600
#: a package listing's line is short; a longer line is never taken for one (and the pattern never
#: runs over a hostile 1 MB line)
LISTING_CHARS = 300


@dataclass(frozen=True)
class HangCause:
    subclass: str
    pattern: Any  # a compiled ``regex`` pattern
    names: str
    title: str
    examples: tuple[str, ...]
    counter_examples: tuple[str, ...]


@dataclass(frozen=True)
class HangCauses:
    causes: tuple[HangCause, ...]
    listing: Any  # a line that lists an installed package with its version names nothing
    listing_examples: tuple[str, ...]
    listing_counter_examples: tuple[str, ...]


@lru_cache(maxsize=2)
def load_causes(path: Path = DATA) -> HangCauses:
    """Read and validate the entries, in the file's order (the first that matches wins)."""
    doc = data_document(path)
    if not isinstance(doc.get("listing"), str):
        raise SignatureError(f"{path}: needs a listing pattern")
    out = []
    for i, raw in enumerate(doc.get("cause", []), start=1):
        if set(raw) != FIELDS:
            raise SignatureError(f"{path}: cause #{i} needs exactly {', '.join(sorted(FIELDS))}")
        out.append(HangCause(raw["subclass"], data_pattern(path, raw["subclass"], raw["pattern"]), raw["names"],
                             raw["title"], tuple(raw["examples"]), tuple(raw["counter_examples"])))
    return HangCauses(tuple(out), data_pattern(path, "listing", doc["listing"]),
                      tuple(doc.get("listing_examples", ())), tuple(doc.get("listing_counter_examples", ())))


def needs_naming(diagnoses: Sequence[Diagnosis]) -> bool:
    return any(d.cls == "E" and d.subclass == PLAIN for d in diagnoses)


def name_cause(diagnosis: Diagnosis, lines: Sequence[tuple[int, str]],
               data: HangCauses | None = None) -> Diagnosis:
    """``diagnosis`` with the likely sub-cause its text names, if it is a plain hang and a line
    names one; else unchanged."""
    if diagnosis.cls != "E" or diagnosis.subclass != PLAIN:
        return diagnosis
    data = load_causes() if data is None else data
    lines = [(number, text) for number, text in lines
             if len(text) > LISTING_CHARS or not data.listing.search(text)]
    for cause in data.causes:
        for number, text in lines:
            if cause.pattern.search(text):
                cited = diagnosis.evidence
                if all(e.line != number for e in cited):
                    cited += (Evidence(number, text[:CITED_CHARS], "hang-cause"),)
                note = (f"sub-cause {cause.subclass} likely: line {number} names {cause.names}; "
                        f"no stack of a stuck worker shows it (a py-spy or faulthandler dump would)")
                return dataclasses.replace(diagnosis, subclass=cause.subclass + LIKELY, title=cause.title,
                                           evidence=cited, notes=diagnosis.notes + (note,))
    return diagnosis
