"""Issue-template furniture inside a text (``data/templates.toml``): section headings, checkboxes,
"_No response_", a markdown template's instructions, HTML comments.

They say nothing of what went wrong, and their words do ("Thanks for your error report"); the text
classifier and the prose rules read a text without them (``classify.digest``). Signatures still
see every line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from ..core.errors import SignatureError
from ..core.paths import DATA_DIR, alternatives, data_document

TEMPLATES_FILE = DATA_DIR / "templates.toml"
COMMENT_OPEN, COMMENT_CLOSE = "<!--", "-->"
#: an HTML comment left open ends here: a template's comment is a few lines, and a stray ``<!--``
#: must not hide the rest of a text
MAX_COMMENT_LINES = 40


@dataclass(frozen=True)
class TemplateShapes:
    """The whole-line shapes of template furniture (see the data file)."""

    furniture: "re.Pattern[str]"
    max_chars: int

    def is_furniture(self, text: str) -> bool:
        return self.furniture.fullmatch(text[:self.max_chars].strip()) is not None


@lru_cache(maxsize=2)
def shipped_shapes(path: Path = TEMPLATES_FILE) -> TemplateShapes:
    """The shapes of ``data/templates.toml`` (a malformed file is a one-line SignatureError)."""
    doc = data_document(path)
    try:
        patterns = [doc["sections"], *doc["boilerplate"]]
        if not all(isinstance(p, str) for p in patterns):
            raise TypeError("sections and boilerplate must be patterns")
        shapes = TemplateShapes(re.compile(alternatives(*patterns), re.IGNORECASE),
                                int(doc["max_chars"]))
    except (KeyError, TypeError, ValueError, re.error) as exc:
        raise SignatureError(f"{path.name}: {type(exc).__name__}: {exc}") from None
    if shapes.max_chars < 1:
        raise SignatureError(f"{path.name}: max_chars must be at least 1")
    return shapes


def template_lines(lines: Sequence[tuple[int, str]], shapes: TemplateShapes | None = None) -> set[int]:
    """The numbers of the lines that are template furniture or inside an HTML comment."""
    shapes = shapes or shipped_shapes()
    found: set[int] = set()
    comment = 0  # lines of an open HTML comment so far
    for number, text in lines:
        stripped = text[:shapes.max_chars].strip()
        if comment or stripped.startswith(COMMENT_OPEN):
            found.add(number)
            closed = text.rstrip().endswith(COMMENT_CLOSE) or (not comment and COMMENT_CLOSE in text[len(COMMENT_OPEN):])
            comment = 0 if closed or comment + 1 >= MAX_COMMENT_LINES else comment + 1
        elif shapes.is_furniture(text):
            found.add(number)
    return found
