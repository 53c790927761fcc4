"""The signature database's model: a ``Signature``, its ``Condition``s, a ``FixEntry``, the
``Database`` that holds them, and how a pattern compiles (on first use: ``Signature.compiled``;
a user's pattern runs under a time budget, ``probes.py``). Loading and validating the TOML files
is ``loader.py``."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from . import probes as sigprobe
from ..core.classes import letters

ROLES = ("failure", "cause", "context", "fact")
#: a placeholder in a fix's command or a signature's lead: ``{pid}``, or ``{shm_suggest|8g}`` with
#: the text shown where the fact is missing (``advise.fixes.fill`` fills them)
PLACEHOLDER_RE = re.compile(r"\{([a-z0-9_]+)(?:\|([^{}|]{1,40}))?\}")
CLASSES = letters() + ("none",)
B_SUBCLASS_PREFIXES = ("oom", "getitem", "crash")
SUBCLASS_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
KNOWN_KEYS = {
    "id", "class", "subclass", "title", "role", "keywords", "pattern", "weight", "priority",
    "kinds", "since", "until", "source", "examples", "counter_examples", "refines", "link",
    "linked_weight", "absorbs", "absorb_within", "requires", "excludes", "capture_after",
    "flags", "notes", "alone", "canonical", "variant_of", "lead", "once",
}
CONDITION_KEYS = {"ids", "within", "same"}
#: conditions computed from the text itself, not from another signature (see correlate.py)
BUILTIN_CONDITIONS = ("@progress", "@relevant", "@loader", "@loader-frame", "@loader-frame-below")
SOURCE_KINDS = ("training", "kernel", "slurm", "kubernetes", "report")
FIX_KEYS = {"key", "rank", "title", "why", "commands", "code", "notes", "when", "platform", "already"}
#: the facts that are loader settings, which a fix's ``already`` may name
SETTING_FACTS = frozenset({"num_workers", "prefetch_factor", "batch_size", "timeout", "persistent_workers",
                           "pin_memory", "start_method"})
#: what a fix's ``when`` may name: a situation the facts of a diagnosis show
#: (``advise.fixes.situations``): ``shm-ample``, /dev/shm already well above what the advice would
#: make it; ``fd-limit-ample``, the open-files limit already at least what the advice would set;
#: ``shm-small``, a worker death with no cause named beside a small or full /dev/shm; ``windows``
#: and ``macos``, class A or a worker death with no cause named on those machines; ``keras`` and
#: ``mxnet``, CUDA in the forked workers of Keras's or MXNet's own loader (class D), and ``keras``
#: also a hang (class E) of Keras's workers run as processes (``use_multiprocessing=True``)
SITUATIONS = frozenset({"shm-ample", "fd-limit-ample", "shm-small", "windows", "macos", "keras", "mxnet"})
#: what a fix's ``platform`` may name: it is shown only where the text shows that platform or none
#: (``advise.platform``)
PLATFORMS = frozenset({"docker", "kubernetes", "slurm"})


@dataclass(frozen=True)
class Condition:
    """``requires`` / ``excludes``: other hits (by id or ``A.*`` prefix) within N lines."""

    ids: tuple[str, ...]
    within: int = 0
    same: str | None = None

    def matches_id(self, sig_id: str) -> bool:
        return any(sig_id == i or (i.endswith("*") and sig_id.startswith(i[:-1])) for i in self.ids)


@dataclass(frozen=True)
class Signature:
    """One known text: where it points (class/subclass) and how to recognise it."""

    id: str
    cls: str
    subclass: str | None
    title: str
    role: str
    keywords: tuple[str, ...]
    pattern: str
    flags: str = ""
    weight: float = 0.9
    priority: int = 50
    kinds: tuple[str, ...] = ()
    since: str = ""
    until: str = ""
    source: str = ""
    examples: tuple[str, ...] = ()
    counter_examples: tuple[str, ...] = ()
    refines: str | None = None
    link: str | None = None
    linked_weight: float | None = None
    absorbs: tuple[str, ...] = ()
    absorb_within: int = 120
    requires: tuple[Condition, ...] = ()
    excludes: tuple[Condition, ...] = ()
    capture_after: int = 0
    alone: Any = True  # True, False, or {fact: compiled regex} a hit must meet to stand alone
    #: the field guide's own failure text: the classifier may re-rank its diagnosis, never drop it
    canonical: bool = False
    #: the entry whose text this one is, under a condition and weight of its own (that entry's
    #: pattern matches each example here: the text classifier learns the text there, not twice)
    variant_of: str | None = None
    origin: str = ""
    user: bool = False  # from a user's file: its pattern runs with a time budget (sigprobe.py)
    #: a note for a text that gets no diagnosis but has this line: what the line shows and the one
    #: check that would tell; ``{line}`` and the hit's facts (``{rank|?}``) filled in as a fix's are
    lead: str = ""
    #: a fact of the machine, not of the run (the Windows drive, the Python version): read from its
    #: first match, after which the scanner no longer looks for it (``scan.matcher.cap``)
    once: bool = False

    def may_stand_alone(self, facts: dict[str, str]) -> bool:
        """Whether a hit with ``facts`` counts when no failure of its class is in the source."""
        if isinstance(self.alone, bool):
            return self.alone
        return all(facts.get(k) is not None and rx.search(facts[k]) for k, rx in self.alone.items())

    @cached_property
    def compiled(self) -> Any:
        """The compiled pattern, on first use (the loader compiled it once to validate it); a
        user's pattern gives up on a line after its time budget."""
        compiled = compile_pattern(self.pattern, self.flags)
        return sigprobe.BudgetedPattern(compiled) if self.user else compiled


@dataclass(frozen=True)
class FixEntry:
    """One ranked remedy for a class (``B``) or a class and subclass (``B.oom``)."""

    key: str
    rank: int
    title: str
    why: str
    commands: tuple[str, ...] = ()
    code: str | None = None
    #: kept only for this situation, and then instead of the key's other fixes
    when: str | None = None
    #: made for this platform only (``advise.platform``): left out where the text shows another
    platform: str | None = None
    #: the setting this fix makes, as facts (fact -> the values that mean it is made, lower-case):
    #: where the text already shows it, the fix goes last and says so (``advise.fixes``)
    already: tuple[tuple[str, tuple[str, ...]], ...] = ()


#: how an HTML-safe JSON encoder (Go's, hence Docker's json-file logs) writes these characters
#: inside a string; ``normalize.record_text`` decodes such a line before it is matched
JSON_HTML_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}


def json_escaped(keyword: str) -> str:
    """``keyword`` as an HTML-safe JSON encoder writes it: a keyword with ``<`` is searched in
    both spellings, so that ``\\u003c/torch_`` in a Docker log still leads to its signatures."""
    for char, escape in JSON_HTML_ESCAPES.items():
        keyword = keyword.replace(char, escape)
    return keyword


@dataclass
class Database:
    """The compiled signature database plus the fixes, indexed for the scanner."""

    signatures: list[Signature]
    fixes: list[FixEntry]
    by_id: dict[str, Signature] = field(init=False)
    by_keyword: dict[str, list[Signature]] = field(init=False)

    def __post_init__(self) -> None:
        self.by_id = {s.id: s for s in self.signatures}
        self.by_keyword = {}
        for sig in self.signatures:
            for kw in sig.keywords:
                for spelling in dict.fromkeys((kw, json_escaped(kw))):
                    self.by_keyword.setdefault(spelling, []).append(sig)

    @property
    def keywords(self) -> list[str]:
        return sorted(self.by_keyword)

    def fixes_for(self, cls: str, subclass: str | None, situations: frozenset[str] = frozenset()) -> list[FixEntry]:
        """Most specific fixes: ``B.oom-suspected`` then ``B.oom`` then ``B``. Where the facts show a
        situation that fixes are written for (``when``), those fixes, from their most specific key,
        replace the usual ones."""
        keys = []
        if subclass:
            parts = subclass.split("-")
            keys += [f"{cls}.{'-'.join(parts[:i])}" for i in range(len(parts), 0, -1)]
        keys.append(cls)
        for situation in sorted(situations):
            if found := self._most_specific(keys, situation):
                return found
        return self._most_specific(keys, None)

    def _most_specific(self, keys: list[str], when: str | None) -> list[FixEntry]:
        for key in keys:
            found = [f for f in self.fixes if f.key == key and f.when == when]
            if found:
                return sorted(found, key=lambda f: f.rank)
        return []


def compile_pattern(pattern: str, flags: str = "") -> Any:
    """Compile a signature pattern with the ``regex`` module (V1 semantics off: plain Python syntax)."""
    import regex  # noqa: PLC0415 - ~25 ms; a run that matches nothing never needs it

    f = regex.IGNORECASE if "i" in flags else 0
    return regex.compile(pattern, f)
