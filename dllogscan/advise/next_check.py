"""Which one command settles an unsure verdict (data: ``dllogscan/data/next_checks.toml``)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from ..core.errors import SignatureError
from ..core.models import Diagnosis
from ..core.paths import DATA_DIR, data_entries

DATA = DATA_DIR / "next_checks.toml"
SURE = 0.8


@dataclass(frozen=True)
class NextCheck:
    when: tuple[str, ...]
    command: str
    why: str


@lru_cache(maxsize=2)
def load_checks(path: Path = DATA) -> tuple[NextCheck, ...]:
    """Read and validate the table; a malformed entry names itself."""
    out = []
    for i, raw in enumerate(data_entries(path, "next_check"), start=1):
        if set(raw) != {"when", "command", "why"} or not raw["when"] or not raw["command"]:
            raise SignatureError(f"{path}: next_check #{i} needs exactly when, command, why")
        out.append(NextCheck(tuple(raw["when"]), raw["command"], raw["why"]))
    return tuple(out)


def _covers(item: str, d: Diagnosis) -> bool:
    cls, _, sub = item.partition(".")
    return d.cls == cls and (not sub or (d.subclass or "").startswith(sub))


def is_unsure(diagnoses: Sequence[Diagnosis], sure: float = SURE) -> bool:
    return bool(diagnoses) and (diagnoses[0].confidence < sure or len({d.cls for d in diagnoses}) > 1)


def next_check(diagnoses: Sequence[Diagnosis], checks: Sequence[NextCheck] | None = None,
               sure: float = SURE) -> NextCheck | None:
    """The check for an unsure verdict (below ``sure``, or more than one class): the entry covering
    the most of the (up to three) leading candidates, each item of its ``when`` matching one of
    them; None when the verdict is sure."""
    if not is_unsure(diagnoses, sure):
        return None
    top = list(diagnoses[:3])
    best: tuple[tuple[int, int], NextCheck] | None = None
    for check in checks if checks is not None else load_checks():
        if not all(any(_covers(item, d) for d in top) for item in check.when):
            continue
        if not any(_covers(item, top[0]) for item in check.when):
            continue
        score = (len(check.when), sum(item.count(".") for item in check.when))
        if best is None or score > best[0]:
            best = (score, check)
    return best[1] if best else None
