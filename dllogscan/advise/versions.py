"""Fixes the text's PyTorch cannot run yet: a fix whose code passes a DataLoader option newer than
the PyTorch the text shows (the ``torch`` fact) goes last, and its title says what it needs.

The options and the release that brought each are data (``data/loader_options.toml``). A text
that shows no PyTorch version keeps every fix as it is: most logs print none, and the tool does not
guess one.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Mapping

from ..core.errors import SignatureError
from ..core.paths import DATA_DIR, data_document
from ..signatures.database import FixEntry

OPTIONS_FILE = DATA_DIR / "loader_options.toml"
VERSION = re.compile(r"(\d{1,3})\.(\d{1,3})")


def version(text: str) -> tuple[int, int] | None:
    """``"1.5.1"``, ``"2.1.0+cu118"`` or ``"3.14"`` -> (major, minor); None for anything else. Read
    for the ``torch`` fact here and the ``python`` fact in ``platform.python_version``."""
    m = VERSION.match(text or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


@lru_cache(maxsize=4)
def option_releases(path: Path = OPTIONS_FILE) -> tuple[tuple[str, tuple[int, int], re.Pattern[str]], ...]:
    """(option, first release, the pattern of ``option=`` in code) per listed option; a data file
    that is malformed raises ``SignatureError`` naming it."""
    doc = data_document(path)
    since = doc.get("since")
    if not isinstance(since, dict):
        raise SignatureError(f"{path}: needs a [since] table of option = \"major.minor\"")
    out = []
    for option, release in since.items():
        parsed = version(release) if isinstance(release, str) and re.fullmatch(r"\d+\.\d+", release) else None
        if not option.isidentifier() or parsed is None:
            raise SignatureError(f"{path}: [since] {option!r} = {release!r}: want an identifier = \"major.minor\"")
        out.append((option, parsed, re.compile(rf"(?<![\w.]){option}\s*=")))
    return tuple(out)


def missing_options(fix: FixEntry, facts: Mapping[str, str]) -> tuple[str, ...]:
    """The options ``fix``'s code passes that the text's PyTorch (``torch``) does not have; empty
    where the text shows no version or the fix has no code."""
    shown = version(facts.get("torch", ""))
    if shown is None or not fix.code:
        return ()
    return tuple(option for option, since, passed in option_releases() if shown < since and passed.search(fix.code))


def needs_note(fix: FixEntry, facts: Mapping[str, str]) -> str:
    """What a fix's title gains where its code needs a newer PyTorch than the text shows."""
    missing = missing_options(fix, facts)
    if not missing:
        return ""
    since = max(s for option, s, _ in option_releases() if option in missing)
    verb = "need" if len(missing) > 1 else "needs"
    return (f" ({' and '.join(missing)} {verb} PyTorch {since[0]}.{since[1]} or later; "
            f"the text shows PyTorch {facts['torch']})")
