"""The labelled corpus (``corpus/``): items, and a held-out split by generating scenario."""
from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

PARTS = ("logs", "reports", "nearmiss")
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


def default_root() -> Path:
    """``corpus/`` of the repository checkout (it is not shipped in the wheel)."""
    return Path(__file__).resolve().parent.parent / "corpus"


def load_items(root: Path | None = None) -> list[Item]:
    """Every item with a ``.meta.json`` sidecar under logs/, reports/ and nearmiss/."""
    root = root or default_root()
    items = []
    for part in PARTS:
        for meta_path in sorted((root / part).rglob("*.meta.json")):
            stem = meta_path.name[: -len(".meta.json")]
            inputs = [p for p in meta_path.parent.glob(stem + ".*") if not p.name.endswith(".meta.json")]
            if len(inputs) != 1:
                raise ValueError(f"{meta_path}: expected one input file named {stem}.*, found {len(inputs)}")
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            items.append(Item(inputs[0], meta["label"], meta.get("subclass"), meta["scenario"],
                              meta.get("kind", part.rstrip("s")), meta.get("evidence")))
    return items


def corpus_hash(items: list[Item]) -> str:
    """Content hash of the whole corpus: inputs and labels."""
    h = hashlib.sha256()
    for item in sorted(items, key=lambda i: str(i.path)):
        h.update(item.path.name.encode())
        h.update(item.path.read_bytes())
        h.update(f"{item.label}/{item.subclass}/{item.scenario}".encode())
    return h.hexdigest()[:16]


def _stable(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def split(items: list[Item], fold: int = 0) -> tuple[list[Item], list[Item]]:
    """Train / test by scenario: near-copies of one scenario never sit on both sides.

    Scenarios are grouped by (kind, label) and ordered by a stable hash; every TEST_EVERY-th,
    starting with the ``fold``-th, is held out. Fold 0 is *the* held-out split; folds 0..2
    together test every scenario once (cross-validation)."""
    groups: dict[tuple[str, str], set[str]] = defaultdict(set)
    for item in items:
        groups[(item.kind, item.label)].add(item.scenario)
    held: set[str] = set()
    for scenarios in groups.values():
        ordered = sorted(scenarios, key=_stable)
        held.update(s for i, s in enumerate(ordered) if i % TEST_EVERY == fold and len(ordered) > 1)
    train = [i for i in items if i.scenario not in held]
    test = [i for i in items if i.scenario in held]
    return train, test
