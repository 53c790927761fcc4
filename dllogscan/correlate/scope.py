"""Set aside diagnoses whose text shows the failing process was not a DataLoader worker.

Data: ``dllogscan/data/scope.toml``. A rule names the classes it may set aside, a ``host`` pattern
(another program: a process that forks, gunicorn, celery, a multiprocessing pool, for D; another
framework's data pipeline or a web app running out of descriptors, for C) and an ``unless``
pattern (a word of the DataLoader). A diagnosis of such a class is set aside when some line of
the text matches ``host`` and no line matches ``unless``; the result then carries the rule's note,
with the host text and its line, instead of a verdict for the wrong program. A diagnosis set
aside that rests on a canonical failure text becomes class H (the same failure in another
program's processes), its evidence the failure line and the host's line: a canonical text is never
"nothing found". A word of the
DataLoader that the text denies ("no DataLoader is involved", "without a DataLoader": ``denied``,
a top-level pattern of the data file, matched against what stands just before it on its line)
does not count as one. A rule with ``unseen = true`` (D's, C's) also sets aside a canonical
diagnosis in a text with no host line when the text shows neither a word of the DataLoader nor a
training run (``training``, a top-level pattern of the data file, or a progress line), and is more
than the failure pasted alone
(``OutsideRule.unseen``): class H with the rule's ``unseen_note``. A rule whose host is part of
the failure text itself (``alone_keeps``: the file that ``[Errno 24]`` names) leaves the failure
pasted alone its class.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple, Sequence

import regex

from ..core.errors import SignatureError
from ..core.models import Diagnosis, Evidence, Hit
from .candidates import PROGRESS_RE
from ..signatures.database import Database
from ..core.paths import DATA_DIR, data_document, data_pattern

DATA = DATA_DIR / "scope.toml"
FIELDS = {"id", "classes", "host", "unless", "note", "unseen_note", "subclass", "title", "examples",
          "counter_examples"}
#: fields a rule may have: ``unseen`` (bool) where true, a text that shows no host, no word of the
#: DataLoader and no line of a training run (the data file's top-level ``training``, or a progress
#: line), and is more than the failure pasted alone, is not shown to be a DataLoader's
#: (``OutsideRule.unseen``); with its ``unseen_examples`` and ``unseen_counter_examples`` (tests)
#: ``alone_keeps`` (bool) the failure pasted alone keeps its class even where ``host`` is found on
#: its own line (a host that is part of the failure text: the file name of [Errno 24])
#: ``unseen_ignores`` (regex) the words of ``unless`` that do not count as the DataLoader's for that
#: test (C's: "received 0 items of ancdata", which Python's multiprocessing prints when passing a
#: descriptor fails, as under torch's file_descriptor sharing strategy, keeps class C beside another
#: framework's host line, but that line alone shows no DataLoader)
OPTIONAL = {"unseen", "unseen_examples", "unseen_counter_examples", "alone_keeps", "unseen_ignores"}
#: lines that say nothing of which program printed a failure text pasted alone
BARE_LINE = regex.compile(r"`{3,}\w*|Traceback \(most recent call last\):")
#: the class of a canonical failure text that another program printed (``data/classes.toml``)
ELSEWHERE = "H"
#: how far before a word of the DataLoader a denial of it is looked for (characters)
DENIAL_REACH = 60


class HostLine(NamedTuple):
    """The first line that shows another program: its number, what ``host`` matched, the line."""

    number: int
    host: str
    text: str


@dataclass(frozen=True)
class OutsideRule:
    id: str
    classes: frozenset[str]
    host: "regex.Pattern[str]"
    unless: "regex.Pattern[str]"
    note: str
    #: the note of a canonical text its own signature's conditions dropped (nothing of PyTorch
    #: around it), with nothing else in view either; ``{line}``: its line
    unseen_note: str
    subclass: str
    title: str
    examples: tuple[str, ...]
    counter_examples: tuple[str, ...]
    #: what, just before a word of ``unless``, denies it (None: nothing does)
    denied: "regex.Pattern[str] | None" = None
    #: a line that shows a training run, the data file's ``training`` where the rule has ``unseen``
    #: (None: the rule sets aside only beside a host line)
    training: "regex.Pattern[str] | None" = None
    unseen_examples: tuple[str, ...] = ()
    unseen_counter_examples: tuple[str, ...] = ()
    alone_keeps: bool = False
    #: the words of ``unless`` that ``unseen`` does not count (None: all count)
    unseen_ignores: "regex.Pattern[str] | None" = None

    def host_line(self, lines: Sequence[tuple[int, str]]) -> HostLine | None:
        """The first line showing another forking host, unless some line shows the DataLoader;
        else None."""
        found = None
        for number, text in lines:
            if self.shows_loader(text):
                return None
            if found is None and (m := self.host.search(text)):
                found = HostLine(number, m.group(0), text)
        return found

    def unseen(self, lines: Sequence[tuple[int, str]], failure_lines: set[int],
               failure_texts: Sequence[str] = ()) -> bool:
        """Whether the text shows neither the DataLoader nor a training run (``training``, or a
        progress line: ``step 120 loss: 0.3``), and is more than the failure's own lines pasted
        alone (``failure_texts``: the cited messages, which hold both parts of one wrapped across
        two lines)."""
        if self.training is None or _alone(failure_lines, lines, failure_texts):
            return False
        return not any(self.shows_loader(text, self.unseen_ignores) or self.training.search(text)
                       or PROGRESS_RE.search(text) for _, text in lines)

    def shows_loader(self, text: str, ignore: "regex.Pattern[str] | None" = None) -> bool:
        """Whether ``text`` has a word of ``unless`` that it does not deny (nor ``ignore`` match whole)."""
        return any((self.denied is None or not self.denied.search(text, max(0, m.start() - DENIAL_REACH), m.start()))
                   and (ignore is None or not ignore.fullmatch(m.group(0)))
                   for m in self.unless.finditer(text))


@lru_cache(maxsize=2)
def load_rules(path: Path = DATA) -> tuple[OutsideRule, ...]:
    """Read and validate the rules; a malformed entry names itself."""
    out = []
    doc = data_document(path)
    denied = data_pattern(path, "denied", doc["denied"]) if doc.get("denied") else None
    training_line = data_pattern(path, "training", doc["training"]) if doc.get("training") else None
    for i, raw in enumerate(doc.get("outside", []), start=1):
        if not FIELDS <= set(raw) <= FIELDS | OPTIONAL:
            raise SignatureError(f"{path}: outside #{i} needs {', '.join(sorted(FIELDS))} "
                                 f"(and may have {', '.join(sorted(OPTIONAL))}), no other field")
        host, unless = (data_pattern(path, raw["id"], raw[k]) for k in ("host", "unless"))
        if raw.get("unseen") and training_line is None:
            raise SignatureError(f"{path}: outside #{i} has unseen = true but the file has no top-level training")
        training = training_line if raw.get("unseen") else None
        ignores = data_pattern(path, raw["id"] + " unseen_ignores", raw["unseen_ignores"]) if "unseen_ignores" in raw else None
        out.append(OutsideRule(raw["id"], frozenset(raw["classes"]), host, unless, raw["note"], raw["unseen_note"],
                               raw["subclass"], raw["title"], tuple(raw["examples"]),
                               tuple(raw["counter_examples"]), denied, training,
                               tuple(raw.get("unseen_examples", ())), tuple(raw.get("unseen_counter_examples", ())),
                               bool(raw.get("alone_keeps", False)), ignores))
    return tuple(out)


def outside_classes(lines: Sequence[tuple[int, str]], rules: Sequence[OutsideRule] | None = None) -> frozenset[str]:
    """The classes these lines put outside scope (what ``set_aside`` would drop); the threshold
    choice in training applies the same rule to the classifier's own verdicts."""
    rules = load_rules() if rules is None else rules
    return frozenset(c for r in rules if r.host_line(lines) is not None for c in r.classes)


def set_aside(diagnoses: Sequence[Diagnosis], lines: Sequence[tuple[int, str]],
              rules: Sequence[OutsideRule] | None = None) -> tuple[list[Diagnosis], tuple[str, ...]]:
    """The diagnoses that stay (a canonical one set aside comes back as class H, in its place, with
    the rule's note), and the notes of the rules that set only others aside."""
    rules = load_rules() if rules is None else rules
    kept, notes = list(diagnoses), []
    for rule in rules:
        if not any(d.cls in rule.classes for d in kept):
            continue
        where = rule.host_line(lines)
        failure = next((d for d in kept if d.cls in rule.classes and d.canonical), None)
        if where is None:
            if failure is None or not rule.unseen(lines, {e.line for e in failure.evidence},
                                                  [e.text for e in failure.evidence]):
                continue
            note = rule.unseen_note.format(line=failure.evidence[0].line if failure.evidence else "?")
        elif rule.alone_keeps and failure is not None and _alone({e.line for e in failure.evidence}, lines):
            continue  # the failure line pasted alone, its host part of it: the guide's text stands
        else:
            note = rule.note.format(host=where.host, line=where.number)
        if failure is None:
            notes.append(note)  # no canonical diagnosis left to say it: the result carries it
        kept = [elsewhere(d, rule, note, where) if d.cls in rule.classes and d.canonical else d
                for d in kept if d.cls not in rule.classes or d.canonical]
    return kept, tuple(notes)


def elsewhere(diagnosis: Diagnosis, rule: OutsideRule, note: str, where: HostLine | None = None) -> Diagnosis:
    """The class-H diagnosis for a canonical failure text that is not shown to be a DataLoader's:
    the failure's evidence (and the host's line, where ``where`` shows another program), the
    failure's confidence (the text is certain; what moves it out of A-E is the rest of the text),
    the rule's subclass, title and ``note``."""
    cited = {e.line for e in diagnosis.evidence}
    host = () if where is None or where.number in cited else (Evidence(where.number, where.text),)
    evidence = tuple(sorted((*diagnosis.evidence, *host), key=lambda e: e.line))
    return dataclasses.replace(diagnosis, cls=ELSEWHERE, subclass=rule.subclass, title=rule.title,
                               evidence=evidence, notes=(note,), fixes=(), canonical=False)


def unexplained(dropped: Sequence[Hit], db: Database, lines: Sequence[tuple[int, str]],
                rules: Sequence[OutsideRule] | None = None) -> list[Diagnosis]:
    """For a text left with no diagnosis: the first canonical failure text among ``dropped`` (hits
    their own signature's conditions dropped: no line about PyTorch training near them), so that a
    canonical text is never "nothing found". Its signature's class where the text pastes it alone
    or names the DataLoader elsewhere; class H with the rule's note where a line shows another
    program; else class H with the rule's ``unseen_note``."""
    rules = load_rules() if rules is None else rules
    for hit in dropped:
        sig = db.by_id.get(hit.signature)
        if sig is None or not sig.canonical:
            continue
        found = Diagnosis(cls=sig.cls, subclass=sig.subclass, title=sig.title, confidence=sig.weight,
                          evidence=(Evidence(hit.line, hit.text, sig.id),), signatures=(sig.id,),
                          facts=dict(hit.facts), canonical=True)
        rule = next((r for r in rules if sig.cls in r.classes), None)
        if rule is None or _alone({hit.line}, lines) or any(rule.shows_loader(text) for _, text in lines):
            return [found]
        where = rule.host_line(lines)
        if where is not None:
            return [elsewhere(found, rule, rule.note.format(host=where.host, line=where.number), where)]
        return [elsewhere(found, rule, rule.unseen_note.format(line=hit.line))]
    return []


#: the least length of a line counted as part of a cited message (``_alone``)
WRAPPED_PART_MIN = 12


#: a failure line cut short by a terminal's width: long, and ending inside a word or a sentence
CUT_SHORT = regex.compile(r".{40,}[\w,]")
#: the rest of such a line on the next one: it goes on in lower case
GOES_ON = regex.compile(r"[a-z][a-z0-9_]*[,;]?(?: |$)")


def _alone(failure_lines: set[int], lines: Sequence[tuple[int, str]], failure_texts: Sequence[str] = ()) -> bool:
    """Whether the failure's own lines are all the text says (beside fences and a traceback header).
    A line that is part of a cited message (the second half of one wrapped across two lines, cited
    once and whole on the first) is the failure's own too, and so is the rest of a failure line that
    a terminal wrapped inside a word (``... To use CUDA with m`` / ``ultiprocessing, you must ...``)."""
    texts = dict(lines)
    return all(number in failure_lines or BARE_LINE.fullmatch(text.strip())
               or (len(text.strip()) >= WRAPPED_PART_MIN and any(text.strip() in t for t in failure_texts))
               or (number - 1 in failure_lines and CUT_SHORT.fullmatch(texts.get(number - 1, "").rstrip())
                   and GOES_ON.match(text))
               for number, text in lines)
