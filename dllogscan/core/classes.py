"""The classes dllogscan names, read once from ``data/classes.toml``: their letters, names,
terminal colours and issue-label kinds. Tables elsewhere derive from these, not copies of them."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache

from .paths import DATA_DIR

CLASSES_FILE = DATA_DIR / "classes.toml"


@dataclass(frozen=True)
class FailureClass:
    """One class: its letter, how reports name it, its colour and its issue-label kind."""

    letter: str
    name: str
    style: str
    label: str | None
    field_guide: bool


@lru_cache(maxsize=1)
def all_classes() -> tuple[FailureClass, ...]:
    """Every class, in letter order."""
    with CLASSES_FILE.open("rb") as fh:
        doc = tomllib.load(fh)
    return tuple(FailureClass(letter, entry["name"], entry["style"], entry.get("label"), bool(entry["field_guide"]))
                 for letter, entry in sorted(doc.items()))


def letters() -> tuple[str, ...]:
    """``("A", ..., "H")``."""
    return tuple(c.letter for c in all_classes())


def field_guide_letters() -> tuple[str, ...]:
    """The field guide's five: ``("A", "B", "C", "D", "E")``."""
    return tuple(c.letter for c in all_classes() if c.field_guide)


def letter_range() -> str:
    """``A-H``: for help texts."""
    found = letters()
    return f"{found[0]}-{found[-1]}"


def by_letter() -> dict[str, FailureClass]:
    return {c.letter: c for c in all_classes()}


def name_of(letter: str) -> str:
    """The class's name in a sentence; ``other`` for a letter this version does not know."""
    found = by_letter().get(letter)
    return found.name if found else "other"


def style_of(letter: str) -> str:
    found = by_letter().get(letter)
    return found.style if found else "white"


def issue_kind(letter: str) -> str | None:
    """The kind an issue label gives the class; None where the diagnosis's subclass names it."""
    found = by_letter().get(letter)
    return found.label if found else None
