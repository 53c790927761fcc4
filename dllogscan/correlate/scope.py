"""Set aside diagnoses whose text shows the failing process was not a DataLoader worker.

Data: ``dllogscan/data/scope.toml``. A rule names the classes it may set aside, a ``host`` pattern
(another program: a process that forks, gunicorn, celery, a multiprocessing pool, for D; another
framework's data pipeline or a web app running out of descriptors, for C) and an ``unless``
pattern (a word of the DataLoader). A diagnosis of such a class is set aside when some line of
the text matches ``host`` and no line matches ``unless``; the result then carries the rule's note,
with the host text and its line, instead of a verdict for the wrong program. A word of the
DataLoader that the text denies ("no DataLoader is involved", "without a DataLoader": ``denied``,
a top-level pattern of the data file, matched against what stands just before it on its line)
does not count as one.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import regex

from ..core.errors import SignatureError
from ..core.models import Diagnosis
from ..core.paths import DATA_DIR, data_document, data_pattern

DATA = DATA_DIR / "scope.toml"
FIELDS = {"id", "classes", "host", "unless", "note", "examples", "counter_examples"}
#: how far before a word of the DataLoader a denial of it is looked for (characters)
DENIAL_REACH = 60


@dataclass(frozen=True)
class OutsideRule:
    id: str
    classes: frozenset[str]
    host: "regex.Pattern[str]"
    unless: "regex.Pattern[str]"
    note: str
    examples: tuple[str, ...]
    counter_examples: tuple[str, ...]
    #: what, just before a word of ``unless``, denies it (None: nothing does)
    denied: "regex.Pattern[str] | None" = None

    def host_line(self, lines: Sequence[tuple[int, str]]) -> tuple[int, str] | None:
        """(line number, host text) of the first line showing another forking host, unless some
        line shows the DataLoader; else None."""
        found = None
        for number, text in lines:
            if self.shows_loader(text):
                return None
            if found is None and (m := self.host.search(text)):
                found = (number, m.group(0))
        return found

    def shows_loader(self, text: str) -> bool:
        """Whether ``text`` has a word of ``unless`` that it does not deny."""
        return any(self.denied is None or not self.denied.search(text, max(0, m.start() - DENIAL_REACH), m.start())
                   for m in self.unless.finditer(text))


@lru_cache(maxsize=2)
def load_rules(path: Path = DATA) -> tuple[OutsideRule, ...]:
    """Read and validate the rules; a malformed entry names itself."""
    out = []
    doc = data_document(path)
    denied = data_pattern(path, "denied", doc["denied"]) if doc.get("denied") else None
    for i, raw in enumerate(doc.get("outside", []), start=1):
        if set(raw) != FIELDS:
            raise SignatureError(f"{path}: outside #{i} needs exactly {', '.join(sorted(FIELDS))}")
        host, unless = (data_pattern(path, raw["id"], raw[k]) for k in ("host", "unless"))
        out.append(OutsideRule(raw["id"], frozenset(raw["classes"]), host, unless, raw["note"],
                               tuple(raw["examples"]), tuple(raw["counter_examples"]), denied))
    return tuple(out)


def outside_classes(lines: Sequence[tuple[int, str]], rules: Sequence[OutsideRule] | None = None) -> frozenset[str]:
    """The classes these lines put outside scope (what ``set_aside`` would drop); the threshold
    choice in training applies the same rule to the classifier's own verdicts."""
    rules = load_rules() if rules is None else rules
    return frozenset(c for r in rules if r.host_line(lines) is not None for c in r.classes)


def set_aside(diagnoses: Sequence[Diagnosis], lines: Sequence[tuple[int, str]],
              rules: Sequence[OutsideRule] | None = None) -> tuple[list[Diagnosis], tuple[str, ...]]:
    """The diagnoses that stay, and the notes of the rules that set others aside."""
    rules = load_rules() if rules is None else rules
    kept, notes = list(diagnoses), []
    for rule in rules:
        if not any(d.cls in rule.classes for d in kept):
            continue
        where = rule.host_line(lines)
        if where is None:
            continue
        kept = [d for d in kept if d.cls not in rule.classes]
        notes.append(rule.note.format(host=where[1], line=where[0]))
    return kept, tuple(notes)
