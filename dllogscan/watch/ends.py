"""Lines that say a training run has finished normally (data: ``dllogscan/data/run_ends.toml``):
after one, ``watch`` takes a silence for the run's end, not a stall."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..core.errors import SignatureError
from ..core.paths import DATA_DIR, alternatives, data_entries

DATA = DATA_DIR / "run_ends.toml"
FIELDS = {"name", "source", "pattern", "examples", "counter_examples"}


@dataclass(frozen=True)
class RunEnd:
    """One library's end-of-run line: where it is printed, and a pattern for it."""

    name: str
    source: str
    pattern: re.Pattern[str]
    examples: tuple[str, ...]
    counter_examples: tuple[str, ...]


@lru_cache(maxsize=2)
def load_ends(path: Path = DATA) -> tuple[RunEnd, ...]:
    """Read and validate the table; a malformed entry or pattern names itself."""
    out = []
    for i, raw in enumerate(data_entries(path, "end"), start=1):
        if set(raw) != FIELDS or not raw["pattern"] or not raw["examples"]:
            raise SignatureError(f"{path}: end #{i} needs exactly {', '.join(sorted(FIELDS))}, examples not empty")
        try:
            pattern = re.compile(raw["pattern"])
        except re.error as exc:
            raise SignatureError(f"{path}: end #{i} ({raw['name']}): bad pattern: {exc}") from None
        out.append(RunEnd(raw["name"], raw["source"], pattern, tuple(raw["examples"]), tuple(raw["counter_examples"])))
    return tuple(out)


@lru_cache(maxsize=2)
def ends_pattern(path: Path = DATA) -> re.Pattern[bytes]:
    """One pattern, over the bytes of lines, that matches where any entry's does."""
    return re.compile(alternatives(*(end.pattern.pattern for end in load_ends(path))).encode())
