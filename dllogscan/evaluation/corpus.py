"""The labelled corpus (``corpus/``): items, and the splits its evaluation uses.

Two kinds of corpus with two kinds of split:

- the *written* corpus (``logs/``, ``reports/``, ``nearmiss/``: generated torch logs and the team's
  own reports) is split by generating scenario, so near-copies of one scenario never sit on both
  sides;
- the *threads* corpus (``threads/``: real issue-tracker and forum threads) is split by repository
  or forum (``group``), so no repository is on both sides: the honest, headline figure.
"""
from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from ..core.paths import PACKAGE_DIR

WRITTEN = ("logs", "reports", "nearmiss")
PARTS = WRITTEN + ("threads",)
TEST_EVERY = 3  # one scenario in three (per label) is held out


@dataclass(frozen=True)
class Item:
    """One corpus input and what dllogscan should say about it."""

    path: Path
    label: str
    subclass: str | None
    scenario: str
    kind: str
    evidence: str | None
    ambiguous: bool = False
    source_url: str | None = None
    e_cause: str | None = None

    @property
    def group(self) -> str:
        """What must never sit on both sides of a split: the repository or forum of a thread,
        the generating scenario of a written item."""
        return self.scenario


def default_root() -> Path:
    """``corpus/`` of the repository checkout (it is not shipped in the wheel)."""
    return PACKAGE_DIR.parent / "corpus"


def load_items(root: Path | None = None, parts: tuple[str, ...] = PARTS) -> list[Item]:
    """Every item with a ``.meta.json`` sidecar under the given parts of the corpus."""
    root = root or default_root()
    items = []
    for part in parts:
        for meta_path in sorted((root / part).rglob("*.meta.json")):
            stem = meta_path.name[: -len(".meta.json")]
            inputs = [p for p in meta_path.parent.glob(stem + ".*") if not p.name.endswith(".meta.json")]
            if len(inputs) != 1:
                raise ValueError(f"{meta_path}: expected one input file named {stem}.*, found {len(inputs)}")
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            items.append(Item(inputs[0], meta["label"], meta.get("subclass"), meta["scenario"],
                              meta.get("kind", part.rstrip("s")), meta.get("evidence"),
                              bool(meta.get("ambiguous", False)), meta.get("source_url"),
                              meta.get("e_cause")))
    return items


def corpus_hash(items: list[Item]) -> str:
    """Content hash of the whole corpus: inputs and labels."""
    h = hashlib.sha256()
    for item in sorted(items, key=lambda i: str(i.path)):
        h.update(item.path.name.encode())
        h.update(item.path.read_bytes())
        h.update(f"{item.label}/{item.subclass}/{item.scenario}/{item.ambiguous}".encode())
    return h.hexdigest()[:16]


def _stable(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def scenario_fold(items: list[Item], k: int = TEST_EVERY) -> dict[tuple[str, str, str], int]:
    """Written items: (kind, label, scenario) -> fold. Scenarios are grouped by (kind, label) and
    ordered by a stable hash; they take folds in turn. A (kind, label) with one scenario is never
    tested (fold -1): it would leave training with no example of it."""
    groups: dict[tuple[str, str], set[str]] = defaultdict(set)
    for item in items:
        groups[(item.kind, item.label)].add(item.scenario)
    folds: dict[tuple[str, str, str], int] = {}
    for (kind, label), scenarios in groups.items():
        ordered = sorted(scenarios, key=_stable)
        for i, s in enumerate(ordered):
            folds[(kind, label, s)] = i % k if len(ordered) > 1 else -1
    return folds


def group_fold(items: list[Item], k: int = 5, salt: str = "") -> dict[str, int]:
    """Threads: repository/forum -> fold, balanced by item count (largest groups first, each to
    the fold holding fewest items; ties broken by a stable hash). A ``salt`` reorders the ties:
    another draw of folds, as balanced (``bench/cv_noise.py``)."""
    sizes: dict[str, int] = defaultdict(int)
    for item in items:
        sizes[item.group] += 1
    load = [0] * k
    folds = {}
    for group in sorted(sizes, key=lambda g: (-sizes[g], _stable(salt + g))):
        target = min(range(k), key=lambda f: (load[f], f))
        folds[group] = target
        load[target] += sizes[group]
    return folds


def folds_of(items: list[Item], k: int, salt: str = "") -> list[int]:
    """The fold of every item (-1: always trained on): threads by repository, written items by
    scenario; ``salt``: another draw of the threads' folds (``group_fold``)."""
    threads = [i for i in items if i.kind == "thread"]
    written = [i for i in items if i.kind != "thread"]
    by_group, by_scenario = group_fold(threads, k, salt), scenario_fold(written, k)
    return [by_group[i.group] if i.kind == "thread" else by_scenario[(i.kind, i.label, i.scenario)]
            for i in items]


def split(items: list[Item], fold: int = 0) -> tuple[list[Item], list[Item]]:
    """Train / test of the written corpus by scenario: every TEST_EVERY-th scenario of each
    (kind, label), starting with the ``fold``-th, is held out. Fold 0 is *the* held-out split;
    folds 0..2 together test every scenario once."""
    folds = scenario_fold(items, TEST_EVERY)
    # a scenario shared by two labels is held out whole when either label's turn comes
    held = {s for (_, _, s), f in folds.items() if f == fold}
    return [i for i in items if i.scenario not in held], [i for i in items if i.scenario in held]
