"""Environment reports inside a text: `collect_env` output and its kin (``data/environment.toml``).

A bug template's environment block states versions and hardware, not what went wrong; the text
classifier and the prose rules read a text without it (``classify.digest``). Signatures still see
every line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from ..core.errors import SignatureError
from ..core.paths import DATA_DIR, alternatives, data_document

ENVIRONMENT_FILE = DATA_DIR / "environment.toml"


@dataclass(frozen=True)
class EnvironmentShapes:
    """The line shapes of environment reports (see the data file)."""

    strong: "re.Pattern[str]"
    weak: "re.Pattern[str]"
    veto: "re.Pattern[str]"
    #: the frame that goes with a block: a code fence around it, a template's heading above it
    fence: "re.Pattern[str]"
    heading: "re.Pattern[str]"
    min_strong: int
    max_chars: int

    def kind(self, text: str) -> str | None:
        """``strong``, ``weak`` or None for one clean line."""
        head = text[:self.max_chars].strip()
        if self.veto.search(head):
            return None
        if self.strong.match(head):
            return "strong"
        return "weak" if self.weak.match(head) else None


@lru_cache(maxsize=2)
def shipped_shapes(path: Path = ENVIRONMENT_FILE) -> EnvironmentShapes:
    """The shapes of ``data/environment.toml`` (a malformed file is a one-line SignatureError)."""
    doc = data_document(path)
    try:
        shapes = EnvironmentShapes(_joined(doc["strong"]), _joined(doc["weak"]), re.compile(doc["veto"]),
                                   re.compile(doc["fence"]), re.compile(doc["heading"]),
                                   int(doc["min_strong"]), int(doc["max_chars"]))
    except (KeyError, TypeError, ValueError, re.error) as exc:
        raise SignatureError(f"{path.name}: {type(exc).__name__}: {exc}") from None
    if shapes.min_strong < 1 or shapes.max_chars < 1:
        raise SignatureError(f"{path.name}: min_strong and max_chars must be at least 1")
    return shapes


def _joined(patterns: Sequence[str]) -> "re.Pattern[str]":
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        raise TypeError("patterns must be a list of strings")
    return re.compile(alternatives(*patterns))


def environment_lines(lines: Sequence[tuple[int, str]], shapes: EnvironmentShapes | None = None) -> set[int]:
    """The numbers of the lines that belong to an environment report, its frame included, in
    numbered clean lines (blank lines already left out, so a gap in the numbering is a blank line)."""
    shapes = shapes or shipped_shapes()
    found: set[int] = set()
    strong = shapes.strong.match
    if sum(1 for _, text in lines if strong(text[:shapes.max_chars].strip())) < shapes.min_strong:
        return found  # most texts: one anchored match a line, and done
    for first, last in _blocks(lines, shapes):
        found.update(n for n, _ in lines[first:last + 1])
        found.update(_frame(lines, first, last, shapes))
    return found


def _blocks(lines: Sequence[tuple[int, str]], shapes: EnvironmentShapes) -> list[tuple[int, int]]:
    """(first, last) list indices of each block: a run of report lines with enough strong ones."""
    blocks: list[tuple[int, int]] = []
    start, strong = None, 0
    for i, (number, text) in enumerate(lines):
        kind = shapes.kind(text)
        adjacent = i > 0 and number == lines[i - 1][0] + 1
        if start is not None and kind is not None and (adjacent or kind == "strong"):
            strong += kind == "strong"
            continue
        if start is not None and strong >= shapes.min_strong:
            blocks.append((start, i - 1))
        start, strong = (i, 1) if kind == "strong" else (None, 0)
    if start is not None and strong >= shapes.min_strong:
        blocks.append((start, len(lines) - 1))
    return blocks


def _frame(lines: Sequence[tuple[int, str]], first: int, last: int, shapes: EnvironmentShapes) -> list[int]:
    """The line numbers of a block's frame: the fence that opens it and the one that closes it
    (both or neither), and a template heading right above it."""
    def shown(i: int, pattern: "re.Pattern[str]") -> bool:
        return 0 <= i < len(lines) and pattern.match(lines[i][1][:shapes.max_chars].strip()) is not None

    frame = []
    above = first - 1
    if shown(above, shapes.fence) and shown(last + 1, shapes.fence):
        frame += [lines[above][0], lines[last + 1][0]]
        above -= 1
    if shown(above, shapes.heading):
        frame.append(lines[above][0])
    return frame
