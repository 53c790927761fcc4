"""Failures told in prose: one sentence saying the loader or its workers hang, were killed, ran out
of memory or crashed (data: ``dllogscan/data/prose.toml``; weighed in ``combine.py``); and the
sentences that rule out a diagnosis read from words alone (``ruled_out``: mostly a hang of the workers;
applied by ``combine.words_ruled_out``)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import regex

from ..core.errors import SignatureError
from ..core.paths import DATA_DIR, alternatives, data_document, data_pattern
from ..signatures.database import SUBCLASS_RE
from .labels import LABELS

DATA = DATA_DIR / "prose.toml"
FIELDS = {"label", "words", "unless", "prior", "examples", "counter_examples"}
OPTIONAL = {"aside", "needs", "subclass", "title", "loader"}
SENTENCE_END = regex.compile(r"(?<=[.!?])\s+|(?<=[。！？])")


def _anywhere(pattern: "regex.Pattern[str] | None", lines: Sequence[tuple[int, str]]) -> bool:
    """Whether ``pattern`` (None: no pattern) matches a line anywhere in the text."""
    return pattern is not None and any(pattern.search(text) for _, text in lines)


@dataclass(frozen=True)
class ProseRule:
    label: str
    words: "regex.Pattern[str]"
    unless: "regex.Pattern[str]"
    #: the words that must share the sentence with ``words`` (the file's ``loader``, or the rule's own)
    loader: "regex.Pattern[str]"
    prior: float
    examples: tuple[str, ...]
    counter_examples: tuple[str, ...]
    #: a line anywhere in the text that makes such a sentence no evidence (None: no such line)
    aside: "regex.Pattern[str] | None" = None
    #: words the text must hold somewhere for such a sentence to count (None: no such condition)
    needs: "regex.Pattern[str] | None" = None
    #: the subclass and title shown, when not the label's own (``labels.SUBCLASS``, ``labels.TITLE``)
    subclass: str | None = None
    title: str | None = None

    def sentence(self, lines: Sequence[tuple[int, str]]) -> tuple[int, str] | None:
        """The first (line number, line) with a sentence that tells this failure, else None."""
        if _anywhere(self.aside, lines) or (self.needs is not None and not _anywhere(self.needs, lines)):
            return None
        for number, text in lines:
            if not self.words.search(text) or self.unless.search(text):
                continue
            if any(self.words.search(s) and self.loader.search(s) for s in SENTENCE_END.split(text)):
                return number, text
        return None


def _required_text(path: Path, doc: dict, key: str, what: str) -> str:
    if not isinstance(doc.get(key), str) or not doc[key].strip():
        raise SignatureError(f"{path}: needs a `{key}` pattern ({what})")
    return doc[key]


def _loader_pattern(path: Path, doc: dict, key: str, what: str) -> "regex.Pattern[str]":
    """``key``'s pattern joined with ``other_loaders`` (another framework's data loader, whose words
    are the loader's for ``loader`` and ``loader_text`` alike), compiled once."""
    others = _other_loaders(path, doc)
    return data_pattern(path, key, alternatives(_required_text(path, doc, key, what), others))


def _other_loaders(path: Path, doc: dict) -> str:
    """The data file's ``other_loaders`` pattern ("" when it has none)."""
    others = doc.get("other_loaders", "")
    if not isinstance(others, str):
        raise SignatureError(f"{path}: `other_loaders` must be a pattern")
    return others


@lru_cache(maxsize=2)
def _document(path: Path) -> dict:
    """The data file, read and parsed once for both ``loader_text`` and ``load_rules``."""
    return data_document(path)


@lru_cache(maxsize=2)
def loader_text(path: Path = DATA) -> "regex.Pattern[str]":
    """The words that make a whole text speak of the data loader (``loader_text`` in the data
    file): the classifier gives a hang alone only to a text with one (``combine.blocked_classes``)."""
    return _loader_pattern(path, _document(path), "loader_text", "the words of a text about the data loader")


@lru_cache(maxsize=2)
def framework_loader_text(path: Path = DATA) -> "regex.Pattern[str]":
    """Another framework's data loader (``other_loaders`` in the data file) or data loading named:
    a text about training's data pipeline even where it names neither PyTorch nor training
    (``combine.about_training``)."""
    others = _other_loaders(path, _document(path))
    return data_pattern(path, "other_loaders", alternatives(others, r"\bdata[ _-]?loading\b"))


@lru_cache(maxsize=2)
def unsure_hang_note(path: Path = DATA) -> str:
    """The note of a text the classifier reads as a hang that ``loader_text`` keeps from it
    (``unsure_hang_note`` in the data file; ``{p}``: the classifier's probability)."""
    note = _document(path).get("unsure_hang_note")
    if not isinstance(note, str) or "{p}" not in note:
        raise SignatureError(f"{path}: needs an `unsure_hang_note` string with {{p}} (the note of a hang kept from a text)")
    return note


@dataclass(frozen=True)
class RuledOut:
    """A sentence that rules out a diagnosis of class ``cls`` read from words alone (``[[ruled_out]]``
    in the data file; ``class``, E unless given: a hang of the loader's workers): every pattern of
    ``sentence`` in one sentence, and no ``unless``; and no line of the text that ``aside`` takes."""

    id: str
    sentence_patterns: tuple["regex.Pattern[str]", ...]
    unless: "regex.Pattern[str] | None"
    #: what the verdict says in the hang's place; ``{line}``: the sentence's line number
    note: str
    examples: tuple[str, ...]
    counter_examples: tuple[str, ...]
    cls: str = "E"
    #: a line anywhere in the text that makes such a sentence no evidence (None: no such line)
    aside: "regex.Pattern[str] | None" = None

    def _says(self, sentence: str) -> bool:
        return (all(p.search(sentence) for p in self.sentence_patterns)
                and not (self.unless is not None and self.unless.search(sentence)))

    def sentence(self, lines: Sequence[tuple[int, str]]) -> tuple[int, str] | None:
        """The first (line number, line) with such a sentence, else None."""
        if _anywhere(self.aside, lines):
            return None
        for number, text in lines:
            if not all(p.search(text) for p in self.sentence_patterns):
                continue
            if any(self._says(s) for s in SENTENCE_END.split(text)):
                return number, text
        return None


RULED_OUT_FIELDS = {"id", "sentence", "note", "examples", "counter_examples"}
RULED_OUT_CLASSES = frozenset("ABCDE")


@lru_cache(maxsize=2)
def ruled_out(path: Path = DATA) -> tuple[RuledOut, ...]:
    """The sentences that rule out a diagnosis read from words alone (``[[ruled_out]]`` in the data file)."""
    out = []
    for i, raw in enumerate(_document(path).get("ruled_out", []), start=1):
        where = f"ruled_out #{i}"
        if (not isinstance(raw, dict) or not RULED_OUT_FIELDS <= set(raw) <= RULED_OUT_FIELDS | {"unless", "aside", "class"}
                or not isinstance(raw["sentence"], list) or not raw["sentence"] or "{line}" not in raw["note"]
                or raw.get("class", "E") not in RULED_OUT_CLASSES):
            raise SignatureError(f"{path}: {where} needs exactly {', '.join(sorted(RULED_OUT_FIELDS))} (and may "
                                 "have unless, aside, and class: one of A-E), a list of patterns in `sentence` and {line} "
                                 "in `note`")
        patterns = tuple(data_pattern(path, f"{where} sentence", p) for p in raw["sentence"])
        unless = data_pattern(path, f"{where} unless", raw["unless"]) if raw.get("unless") else None
        aside = data_pattern(path, f"{where} aside", raw["aside"]) if raw.get("aside") else None
        out.append(RuledOut(raw["id"], patterns, unless, raw["note"], tuple(raw["examples"]),
                            tuple(raw["counter_examples"]), raw.get("class", "E"), aside))
    return tuple(out)


def ruled_out_classes() -> frozenset[str]:
    """The classes some ``[[ruled_out]]`` sentence may set aside."""
    return frozenset(rule.cls for rule in ruled_out())


def first_ruled_out(lines: Sequence[tuple[int, str]], cls: str = "E") -> tuple[RuledOut, tuple[int, str]] | None:
    """The first ``[[ruled_out]]`` rule of class ``cls`` one of these lines holds a sentence of,
    with that line."""
    for rule in ruled_out():
        if rule.cls == cls and (told := rule.sentence(lines)) is not None:
            return rule, told
    return None


@lru_cache(maxsize=2)
def load_rules(path: Path = DATA) -> tuple[ProseRule, ...]:
    """Read and validate the rules; a malformed entry names itself."""
    doc = _document(path)
    loader = _loader_pattern(path, doc, "loader", "the words of the loader or its workers")
    elsewhere = doc.get("elsewhere", "")
    data_pattern(path, "elsewhere", elsewhere)
    out = []
    for i, raw in enumerate(doc.get("told", []), start=1):
        if not FIELDS <= set(raw) <= FIELDS | OPTIONAL or raw["label"] not in LABELS or raw["label"] == "none":
            raise SignatureError(f"{path}: told #{i} needs exactly {', '.join(sorted(FIELDS))} (and may have "
                                 f"{', '.join(sorted(OPTIONAL))}) and a label of {LABELS}")
        where = f"told #{i}"
        asides = [p for p in (elsewhere, raw.get("aside", "")) if p]
        aside = data_pattern(path, where, alternatives(*asides)) if asides else None
        needs = data_pattern(path, where, raw["needs"]) if raw.get("needs") else None
        subject = data_pattern(path, where, raw["loader"]) if raw.get("loader") else loader
        subclass = raw.get("subclass")
        if subclass is not None and not (isinstance(subclass, str) and SUBCLASS_RE.match(subclass)):
            raise SignatureError(f"{path}: {where}: subclass must be lower-case words joined by '-'")
        out.append(ProseRule(raw["label"], data_pattern(path, where, raw["words"]), data_pattern(path, where, raw["unless"]),
                             subject, float(raw["prior"]), tuple(raw["examples"]), tuple(raw["counter_examples"]),
                             aside, needs, subclass, raw.get("title")))
    return tuple(out)
