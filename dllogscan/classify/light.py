"""The shipped classifier's predictions without scikit-learn (which costs ~1.5 s and ~150 MB to
import: most of a batch worker's start and its memory).

The exported parameters (``model.export``) are applied in the order scikit-learn applies them,
so the numbers are the same ones: the word and ``char_wb`` analyzers of ``TfidfVectorizer``
(the shipped preprocessor, the token pattern, n-grams), counts over the fixed vocabulary in
column order, ``log(tf) + 1``, the idf weights, the l2 norm of each block, the dot product with
the coefficients accumulated column by column as a CSR product does, plus the intercepts, and
``LogisticRegression``'s logits, then the calibration (temperature and biases, ``calibrate.py``)
and the softmax. Logarithm, exponential and the softmax sum use NumPy, as scikit-learn does;
``tests/test_classifier.py`` checks both give the same probabilities.
"""
from __future__ import annotations

import gzip
import json
import math
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

from .model import FORMAT_VERSION, SHIPPED, VECTORIZERS, preprocess

WHITE_SPACES = re.compile(r"\s\s+")
TOKENS = re.compile(VECTORIZERS["word"]["token_pattern"])
WORD_N = VECTORIZERS["word"]["ngram_range"]
CHAR_N = VECTORIZERS["char"]["ngram_range"]
WORD_CACHE = 200_000


def word_features(text: str) -> list[str]:
    """``TfidfVectorizer(analyzer="word", ngram_range=(1, 2))`` tokens of ``text``."""
    tokens = TOKENS.findall(preprocess(text))
    out = list(tokens)
    for n in range(WORD_N[0] + 1, min(WORD_N[1] + 1, len(tokens) + 1)):
        out += [" ".join(tokens[i: i + n]) for i in range(len(tokens) - n + 1)]
    return out


def char_words(text: str) -> list[str]:
    """The words ``char_wb`` takes its n-grams from."""
    return WHITE_SPACES.sub(" ", preprocess(text)).split()


def word_grams(word: str) -> list[str]:
    """``char_wb`` n-grams of one word, padded with one space each side."""
    out: list[str] = []
    append = out.append
    w = " " + word + " "
    w_len = len(w)
    for n in range(CHAR_N[0], CHAR_N[1] + 1):
        offset = 0
        append(w[offset: offset + n])
        while offset + n < w_len:
            offset += 1
            append(w[offset: offset + n])
        if offset == 0:  # a short word counts once
            break
    return out


def char_features(text: str) -> list[str]:
    """``char_wb`` n-grams of ``text``: inside words padded with one space each side."""
    return [gram for word in char_words(text) for gram in word_grams(word)]


class LightModel:
    """Exported vectorizers and linear model, applied as scikit-learn applies them."""

    def __init__(self, doc: dict[str, Any]) -> None:
        import numpy as np  # noqa: PLC0415 - only a run that consults the classifier needs it

        self._np = np
        self.labels: list[str] = [str(c) for c in doc["classes"]]
        self._blocks = []
        offset = 0
        for name, analyze in (("word", word_features), ("char", char_features)):
            vec = doc["vectorizers"][name]
            self._blocks.append((analyze, vec["vocabulary"], vec["idf"], offset))
            offset += len(vec["idf"])
        self._word_columns: dict[str, tuple[int, ...]] = {}  # a word's char n-grams in the vocabulary
        self._coef = np.asarray(doc["coef"], dtype=np.float64)  # classes x features
        self._coef_t = np.ascontiguousarray(self._coef.T)
        self._intercept = np.asarray(doc["intercept"], dtype=np.float64)
        self.temperature: float = float(doc["temperature"])
        self._bias = np.asarray(doc["bias"] or [0.0] * len(self.labels), dtype=np.float64)
        self.thresholds: dict[str, float] = dict(doc["thresholds"])

    def features(self, text: str) -> list[tuple[int, float]]:
        """The text's nonzero tf-idf features as (column, value), in column order."""
        np = self._np
        row: list[tuple[int, float]] = []
        for analyze, vocabulary, idf, offset in self._blocks:
            counts = Counter(self._indices(analyze, vocabulary, text))
            columns = sorted(counts)
            values = np.log(np.asarray([counts[c] for c in columns], dtype=np.float64)) + 1.0
            values = [float(v) * idf[c] for v, c in zip(values, columns)]
            norm = 0.0
            for v in values:
                norm += v * v
            if norm != 0.0:
                norm = math.sqrt(norm)
                values = [v / norm for v in values]
            row += [(offset + c, v) for c, v in zip(columns, values)]
        return row

    def _indices(self, analyze, vocabulary: dict[str, int], text: str) -> list[int]:
        """Vocabulary columns of the text's features, with repeats; a word's character n-grams
        are looked up once per word (log lines repeat their words)."""
        if analyze is not char_features:
            return [i for i in map(vocabulary.get, analyze(text)) if i is not None]
        cache = self._word_columns
        if len(cache) > WORD_CACHE:
            cache.clear()
        out: list[int] = []
        for word in char_words(text):
            found = cache.get(word)
            if found is None:
                found = cache[word] = tuple(i for i in map(vocabulary.get, word_grams(word)) if i is not None)
            out += found
        return out

    def predict(self, texts: Sequence[str]) -> list[dict[str, float]]:
        """Per text: label -> calibrated probability."""
        np = self._np
        out = []
        for text in texts:
            # each column's products, then summed row after row from zero: ``add.accumulate`` adds
            # in order, as the column-by-column loop of a CSR product does (not pairwise)
            row = self.features(text)
            terms = np.zeros((len(row) + 1, len(self.labels)), dtype=np.float64)
            if row:
                terms[1:] = self._coef_t[[c for c, _ in row]] * np.asarray([v for _, v in row], dtype=np.float64)[:, None]
            scores = np.add.accumulate(terms, axis=0)[-1:]
            scores = (scores + self._intercept) / self.temperature + self._bias
            scores -= np.reshape(np.max(scores, axis=1), (-1, 1))
            np.exp(scores, out=scores)
            scores /= np.reshape(np.sum(scores, axis=1), (-1, 1))
            out.append(dict(zip(self.labels, map(float, scores[0]))))
        return out

    def line_scores(self, lines: Sequence[str], label: str) -> list[float]:
        """How much each line alone speaks for ``label`` (for citing evidence)."""
        coef = self._coef[self.labels.index(label)]
        out = []
        for line in lines:
            total = 0.0
            for column, value in self.features(line):
                total += value * float(coef[column])
            out.append(total)
        return out


def load(path: Path) -> LightModel:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        doc = json.load(fh)
    if doc.get("format") != FORMAT_VERSION:
        raise ValueError(f"{path}: classifier format {doc.get('format')} is not {FORMAT_VERSION}")
    return LightModel(doc)


@lru_cache(maxsize=2)
def shipped(path: str = str(SHIPPED)) -> "LightModel | None":
    """The shipped model for predictions (the same numbers as scikit-learn's, without importing
    it), or None when it has not been trained yet."""
    p = Path(path)
    return load(p) if p.exists() else None
