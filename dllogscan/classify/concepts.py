"""Concept features: one per concept of ``data/concepts.toml`` a text shows, one per pair shown
together (see that file for why). Plain Python, so the scikit-learn model (``model.py``) and the
light one (``light.py``) compute the same values: each is ``SCALE`` or 0, in a fixed column order
(the concepts in file order, then the pairs ``(i, j)``, ``i < j``, in order).
"""
from __future__ import annotations

import tomllib
from functools import lru_cache
from typing import Sequence

from ..core.paths import DATA_DIR

CONCEPTS_FILE = DATA_DIR / "concepts.toml"
#: the value of a feature present. The tf-idf blocks are l2-normalised rows (each ~1 in all), so
#: a flag of 1 would outweigh a whole block; grouped CV of the classifier alone (macro-F1 of its
#: argmax on corpus/threads, pairs included): 0.1 0.809, 0.2 0.806, 0.3 0.801, 0.5 0.800; log-loss 0.461,
#: 0.455, 0.463, 0.483: 0.2 (without the pairs, 0.807 and 0.469: the pairs carry the hang evidence)
SCALE = 0.2


@lru_cache(maxsize=1)
def shipped_patterns() -> tuple[tuple[str, str], ...]:
    """(name, regex) of each concept, in the data file's order."""
    with CONCEPTS_FILE.open("rb") as fh:
        return tuple(tomllib.load(fh)["concepts"].items())


class Concepts:
    """The concept features of preprocessed texts, for one list of patterns."""

    def __init__(self, patterns: Sequence[tuple[str, str]], scale: float = SCALE) -> None:
        self.patterns = tuple((str(n), str(p)) for n, p in patterns)
        self.scale = float(scale)
        import regex  # noqa: PLC0415 - ~25 ms to import; only a model that is consulted needs it

        # read as re reads them (no pattern here uses regex's own syntax), ~2.4x faster on a
        # 64 KB text: most concepts start with a word boundary, which re cannot skip ahead to
        self._compiled = [regex.compile(p) for _, p in self.patterns]
        k = len(self.patterns)
        self._pair_column = {(i, j): c for c, (i, j) in enumerate(
            ((i, j) for i in range(k) for j in range(i + 1, k)), start=k)}

    @classmethod
    def from_spec(cls, spec: dict | None) -> "Concepts | None":
        """The concepts an exported model stores (``spec()``), or None for a model without them."""
        return cls([tuple(p) for p in spec["patterns"]], spec["scale"]) if spec else None

    def spec(self) -> dict:
        """What an exported model stores of these concepts: its own copy of the patterns."""
        return {"patterns": [list(p) for p in self.patterns], "scale": self.scale}

    @property
    def width(self) -> int:
        k = len(self.patterns)
        return k + k * (k - 1) // 2

    def present(self, clean: str) -> list[int]:
        """Indices of the concepts a preprocessed text shows."""
        return [i for i, rx in enumerate(self._compiled) if rx.search(clean)]

    def columns(self, clean: str) -> list[int]:
        """The nonzero feature columns of a preprocessed text, in increasing order."""
        shown = self.present(clean)
        return shown + [self._pair_column[(a, b)] for n, a in enumerate(shown) for b in shown[n + 1:]]

    def names(self) -> list[str]:
        """A name per column: a concept, or ``a+b`` for a pair."""
        base = [n for n, _ in self.patterns]
        pairs = sorted(self._pair_column, key=self._pair_column.get)
        return base + [f"{base[i]}+{base[j]}" for i, j in pairs]
