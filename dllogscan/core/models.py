"""Plain data passed between the pipeline stages: Hit -> Diagnosis -> Fix -> ScanResult."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .printable import escape

SCHEMA_VERSION = "1.0"


@dataclass(frozen=True)
class Evidence:
    """One cited line: 1-based line number in the decoded input and its cleaned text."""

    line: int
    text: str
    signature: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"line": self.line, "text": self.text}
        if self.signature:
            out["signature"] = self.signature
        return out


@dataclass(frozen=True)
class Hit:
    """A signature matched on one line, with the facts its named groups captured."""

    signature: str
    line: int
    text: str
    facts: dict[str, str] = field(default_factory=dict)
    after: tuple[tuple[int, str], ...] = ()
    before: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True)
class Fix:
    """A ranked remedy with the commands that confirm or apply it, facts filled in."""

    rank: int
    title: str
    why: str
    commands: tuple[str, ...] = ()
    code: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rank": self.rank, "title": self.title, "why": self.why,
                               "commands": list(self.commands)}
        if self.code:
            out["code"] = self.code
        return out


@dataclass(frozen=True)
class Diagnosis:
    """One failure found in a source: class (``data/classes.toml``), subclass, confidence and its evidence."""

    cls: str
    subclass: str | None
    title: str
    confidence: float
    evidence: tuple[Evidence, ...]
    signatures: tuple[str, ...] = ()
    facts: dict[str, str] = field(default_factory=dict)
    count: int = 1
    fixes: tuple[Fix, ...] = ()
    method: str = "signatures"
    notes: tuple[str, ...] = ()
    #: decided by a canonical failure text (``canonical = true`` in the signature data): the text
    #: classifier may raise or re-rank this diagnosis, never lower it or drop it
    canonical: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "class": self.cls,
            "subclass": self.subclass,
            "title": self.title,
            "confidence": round(self.confidence, 3),
            "evidence": [e.to_dict() for e in self.evidence],
            "fixes": [f.to_dict() for f in self.fixes],
            "signatures": list(self.signatures),
            "facts": dict(self.facts),
            "count": self.count,
            "method": self.method,
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class ScanResult:
    """Everything known about one source after the pipeline ran."""

    source: str
    diagnoses: tuple[Diagnosis, ...] = ()
    error: str | None = None
    lines: int = 0
    bytes_read: int = 0
    hits: tuple[Hit, ...] = ()
    facts: dict[str, str] = field(default_factory=dict)
    member: str | None = None
    #: set when the input was a document flattened before scanning (``github-issue``, ``html``, ...):
    #: evidence line numbers then refer to the flattened text
    document: str | None = None
    #: why a diagnosis was set aside (the text shows another program failed, ``correlate/scope.py``)
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """Names and the error line are data that reach terminals and files: controls, escape
        sequences and undecodable bytes in them are kept as visible escapes (``printable``)."""
        for attr in ("source", "member", "error"):
            value = getattr(self, attr)
            if value is not None:
                object.__setattr__(self, attr, escape(value))
        object.__setattr__(self, "notes", tuple(escape(n) for n in self.notes))

    @property
    def found(self) -> bool:
        return bool(self.diagnoses)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "source": self.source,
            "error": self.error,
            "diagnoses": [d.to_dict() for d in self.diagnoses],
            "lines": self.lines,
            "bytes": self.bytes_read,
            "facts": dict(self.facts),
            **({"document": self.document} if self.document else {}),
            **({"notes": list(self.notes)} if self.notes else {}),
        }
