"""The shipped classifier's predictions in plain Python: without scikit-learn (~1.5 s and
~150 MB to import) and without NumPy (~50 ms), so a batch worker or a one-file run that consults
it pays a few milliseconds for it.

The exported parameters (``model.export``) are applied in the order scikit-learn applies them:
the word and character analyzers of ``TfidfVectorizer`` (the shipped preprocessor, the token
pattern, n-grams; ``char`` or ``char_wb``, whichever ``model.VECTORIZERS`` names), counts over
the fixed vocabulary in column order, ``log(tf) + 1``, the idf weights, the l2 norm of each
block, the concept features (``concepts.py``, the same code), the dot product with the
coefficients accumulated column by column from zero as a CSR product does, plus the intercepts:
the same logits, to the bit. Then the calibration (temperature and biases, ``calibrate.py``) and
the softmax, its sum in NumPy's pairwise order. The exponential is the C
library's (``math.exp``), which may differ from NumPy's vectorised one in the last bit:
probabilities agree with scikit-learn's to 1e-12, not to the bit (``tests/test_classifier.py``
checks both).

The JSON model is read once (~40 ms); its parameters are then kept in the user's cache as packed
doubles and a ``marshal``-ed vocabulary (``clf-<key>.bin``, keyed by the model file's bytes and
this module's format), which load in a few milliseconds.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import marshal
import math
import re
import sys
from array import array
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

from ..core.paths import read_cached, write_cached
from .concepts import Concepts
from .model import FORMAT_VERSION, SHIPPED, VECTORIZERS, scaling_pair, preprocess

WHITE_SPACES = re.compile(r"\s\s+")
TOKENS = re.compile(VECTORIZERS["word"]["token_pattern"])
WORD_N = VECTORIZERS["word"]["ngram_range"]
CHAR_N = VECTORIZERS["char"]["ngram_range"]
#: ``char``: n-grams across word boundaries; ``char_wb``: inside words padded with spaces
CHAR_ANALYZER = VECTORIZERS["char"]["analyzer"]
WORD_CACHE = 200_000
#: the line cache is emptied past this size: its (column, count) pairs plus one per line and one
#: per 16 characters of the lines kept (at most ~20 MB, whatever the lines: junk lines hold few pairs)
LINE_CACHE_SIZE = 200_000
BLOCKS = ("word", "char")
#: bump when the cached form changes
CACHE_FORMAT = b"3"
#: NumPy's pairwise summation adds blocks of this many values with one accumulator each
PAIRWISE_BLOCK = 8
#: ``log(tf) + 1`` of the counts a text's features mostly have, worked out once
SUBLINEAR_TF = [0.0] + [math.log(n) + 1.0 for n in range(1, 1024)]


def word_features(text: str) -> list[str]:
    """``TfidfVectorizer(analyzer="word", ngram_range=(1, 2))`` tokens of ``text``."""
    return word_tokens(preprocess(text))


def word_tokens(clean: str) -> list[str]:
    """``word_features`` of a text already preprocessed."""
    tokens = TOKENS.findall(clean)
    out = list(tokens)
    for n in range(WORD_N[0] + 1, min(WORD_N[1] + 1, len(tokens) + 1)):
        out += [" ".join(tokens[i: i + n]) for i in range(len(tokens) - n + 1)]
    return out


def char_words(text: str) -> list[str]:
    """The words ``char_wb`` takes its n-grams from."""
    return WHITE_SPACES.sub(" ", preprocess(text)).split()


def clean_words(clean: str) -> list[str]:
    """``char_words`` of a text already preprocessed."""
    return WHITE_SPACES.sub(" ", clean).split()


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


def text_grams(clean: str) -> list[str]:
    """``char`` n-grams of a text already preprocessed: every n-gram of the text with its runs of
    white space made one space, across word boundaries, shortest first."""
    text = WHITE_SPACES.sub(" ", clean)
    size = len(text)
    low, high = CHAR_N
    out: list[str] = list(text) if low == 1 else []
    for n in range(max(low, 2), min(high, size) + 1):
        out += [text[i: i + n] for i in range(size - n + 1)]
    return out


def char_features(text: str) -> list[str]:
    """The character block's n-grams of ``text``, in scikit-learn's order."""
    if CHAR_ANALYZER == "char":
        return text_grams(preprocess(text))
    return [gram for word in char_words(text) for gram in word_grams(word)]


def pairwise_sum(values: Sequence[float]) -> float:
    """``values`` summed in the order NumPy's ``sum`` adds a contiguous row (8 accumulators per
    block of up to 128, halves above that), so the softmax divides by the same float."""
    n = len(values)
    if n < PAIRWISE_BLOCK:
        total = -0.0
        for v in values:
            total += v
        return total
    if n > 128:
        half = n // 2
        half -= half % PAIRWISE_BLOCK
        return pairwise_sum(values[:half]) + pairwise_sum(values[half:])
    r = list(values[:PAIRWISE_BLOCK])
    i = PAIRWISE_BLOCK
    while i < n - n % PAIRWISE_BLOCK:
        for j in range(PAIRWISE_BLOCK):
            r[j] += values[i + j]
        i += PAIRWISE_BLOCK
    total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    for v in values[i:]:
        total += v
    return total


class LightModel:
    """Exported vectorizers and linear model, applied as scikit-learn applies them.

    ``params``: ``labels``, ``vocabulary`` and ``idf`` per block, ``coef`` (one array of
    coefficients per class, a column per feature), ``intercept``, ``temperature``, ``bias``,
    ``thresholds``, ``verdict_scaling``, ``concepts`` (what ``from_doc`` or the cache gives)."""

    def __init__(self, params: dict[str, Any]) -> None:
        self.labels: list[str] = list(params["labels"])
        self._blocks = []
        offset = 0
        for name in BLOCKS:
            idf = params["idf"][name]
            self._blocks.append((name, params["vocabulary"][name], idf, offset))
            offset += len(idf)
        self._concepts = Concepts.from_spec(params.get("concepts"))
        self._concepts_offset = offset
        self._coef: list[array] = list(params["coef"])
        self._intercept: list[float] = list(params["intercept"])
        self.temperature: float = float(params["temperature"])
        self._bias: list[float] = list(params["bias"] or [0.0] * len(self.labels))
        self.thresholds: dict[str, float] = dict(params["thresholds"])
        self.verdict_scaling: tuple[float, float] | None = scaling_pair(params.get("verdict_scaling"))
        self._word_columns: dict[str, tuple[tuple[int, int], ...]] = {}  # a word's char n-gram columns, counted
        self._line_columns: dict[str, tuple[tuple[int, int], ...]] = {}  # the same of a line, for ``char``
        self._line_cache_size = 0  # what the line cache holds, as LINE_CACHE_SIZE counts it

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> "LightModel":
        """The model from the exported JSON document."""
        return cls({"labels": [str(c) for c in doc["classes"]], "coef": [array("d", row) for row in doc["coef"]],
                    "vocabulary": {name: doc["vectorizers"][name]["vocabulary"] for name in BLOCKS},
                    "idf": {name: array("d", doc["vectorizers"][name]["idf"]) for name in BLOCKS},
                    "verdict_scaling": doc.get("verdict_scaling"), "concepts": doc.get("concepts"),
                    **{k: doc[k] for k in ("intercept", "temperature", "bias", "thresholds")}})

    def packed(self) -> bytes:
        """The parameters as the cache keeps them (``unpacked`` reads them back)."""
        return marshal.dumps({
            "labels": self.labels, "concepts": self._concepts.spec() if self._concepts is not None else None,
            "intercept": self._intercept, "temperature": self.temperature,
            "bias": self._bias, "thresholds": self.thresholds, "verdict_scaling": self.verdict_scaling,
            "coef": [row.tobytes() for row in self._coef],
            "vocabulary": {name: vocab for name, (_, vocab, _, _) in zip(BLOCKS, self._blocks)},
            "idf": {name: idf.tobytes() for name, (_, _, idf, _) in zip(BLOCKS, self._blocks)}})

    @classmethod
    def unpacked(cls, blob: bytes) -> "LightModel":
        params = marshal.loads(blob)
        params["coef"] = [_doubles(raw) for raw in params["coef"]]
        params["idf"] = {name: _doubles(raw) for name, raw in params["idf"].items()}
        return cls(params)

    def features(self, text: str) -> list[tuple[int, float]]:
        """The text's nonzero tf-idf features as (column, value), in column order."""
        row: list[tuple[int, float]] = []
        clean = preprocess(text)
        tf = SUBLINEAR_TF
        for name, vocabulary, idf, offset in self._blocks:
            counts = self._counts(name, vocabulary, clean)
            columns = sorted(counts)
            values = [(tf[n] if n < len(tf) else math.log(n) + 1.0) * idf[c]
                      for c, n in zip(columns, map(counts.__getitem__, columns))]
            norm = 0.0
            for v in values:
                norm += v * v
            if norm != 0.0:
                norm = math.sqrt(norm)
                values = [v / norm for v in values]
            row += [(offset + c, v) for c, v in zip(columns, values)]
        if self._concepts is not None:
            scale, offset = self._concepts.scale, self._concepts_offset
            row += [(offset + c, scale) for c in self._concepts.columns(clean)]
        return row

    def _counts(self, block: str, vocabulary: dict[str, int], clean: str) -> dict[int, int]:
        """How often each vocabulary column of ``block`` occurs in ``clean`` (a preprocessed
        text). ``char_wb`` n-grams are counted per distinct word, times the word's count: a word's
        columns are looked up once (log lines repeat their words)."""
        if block == "word":
            return Counter(i for i in map(vocabulary.get, word_tokens(clean)) if i is not None)
        if CHAR_ANALYZER == "char":
            return self._text_gram_counts(vocabulary, clean)
        cache = self._word_columns
        if len(cache) > WORD_CACHE:
            cache.clear()
        counts: dict[int, int] = {}
        get = counts.get
        for word, times in Counter(clean_words(clean)).items():
            found = cache.get(word)
            if found is None:
                grams = Counter(i for i in map(vocabulary.get, word_grams(word)) if i is not None)
                found = cache[word] = tuple(grams.items())
            for column, n in found:
                counts[column] = get(column, 0) + n * times
        return counts

    def _text_gram_counts(self, vocabulary: dict[str, int], clean: str) -> dict[int, int]:
        """``char`` n-gram counts: those inside a line counted per distinct line, its columns
        looked up once while the cache holds them (log lines repeat, within a log and across the
        logs of a batch), then those that span a line break, each at the first break it spans."""
        text = WHITE_SPACES.sub(" ", clean)
        size, (low, high) = len(text), CHAR_N
        cache, look = self._line_columns, vocabulary.get
        counts: dict[int, int] = {}
        get = counts.get
        for line, times in Counter(text.split("\n")).items():
            found = cache.get(line)
            if found is None:
                grams: Counter = Counter()
                cut, width = line.__getitem__, len(line)
                for n in range(low, min(high, width) + 1):  # cut, looked up and counted by C loops
                    grams.update(map(look, map(cut, map(slice, range(width - n + 1), range(n, width + 1)))))
                grams.pop(None, None)
                found = tuple(grams.items())
                cost = len(found) + 1 + len(line) // 16
                if self._line_cache_size + cost > LINE_CACHE_SIZE:
                    cache.clear()
                    self._line_cache_size = 0
                cache[line] = found
                self._line_cache_size += cost
            for column, n in found:
                counts[column] = get(column, 0) + n * times
        previous, brk = -1, text.find("\n")
        while brk != -1:
            for n in range(low, min(high, size) + 1):
                for i in range(max(previous + 1, brk - n + 1), min(brk, size - n) + 1):
                    column = look(text[i: i + n])
                    if column is not None:
                        counts[column] = get(column, 0) + 1
            previous, brk = brk, text.find("\n", brk + 1)
        return counts

    def logits(self, text: str) -> list[float]:
        """``decision_function``'s row for ``text``: each class's products summed column after
        column from zero, plus its intercept."""
        row = self.features(text)
        out = []
        for coef, intercept in zip(self._coef, self._intercept):
            total = 0.0
            for column, value in row:
                total += coef[column] * value
            out.append(total + intercept)
        return out

    def predict(self, texts: Sequence[str]) -> list[dict[str, float]]:
        """Per text: label -> calibrated probability."""
        out = []
        for text in texts:
            scores = [z / self.temperature + b for z, b in zip(self.logits(text), self._bias)]
            top = max(scores)
            exps = [math.exp(s - top) for s in scores]
            total = pairwise_sum(exps)
            out.append(dict(zip(self.labels, [e / total for e in exps])))
        return out

    def line_scores(self, lines: Sequence[str], label: str) -> list[float]:
        """How much each line alone speaks for ``label`` (for citing evidence)."""
        coef = self._coef[self.labels.index(label)]
        out = []
        for line in lines:
            total = 0.0
            for column, value in self.features(line):
                total += value * coef[column]
            out.append(total)
        return out


def _doubles(raw: bytes) -> array:
    out = array("d")
    out.frombytes(raw)
    return out


def cache_name(blob: bytes) -> str:
    """The cache entry of the model file whose bytes are ``blob`` (and of this module's form)."""
    h = hashlib.sha256(CACHE_FORMAT + sys.version.encode() + sys.byteorder.encode() + blob)
    return f"clf-{h.hexdigest()[:32]}.bin"


def load(path: Path) -> LightModel:
    """The model exported to ``path``, from its cached binary form when there is one (else from
    the JSON, and the binary form is cached for the next run)."""
    blob = path.read_bytes()
    name = cache_name(blob)
    packed = read_cached(name)
    if packed is not None:
        try:
            return LightModel.unpacked(packed)
        except (EOFError, ValueError, TypeError, KeyError, AttributeError):
            pass  # a damaged entry: read the JSON again
    model = from_json(blob, path)
    write_cached(name, model.packed())
    return model


def from_json(blob: bytes, path: Path) -> LightModel:
    """The model from the gzip-compressed JSON ``blob`` read from ``path``."""
    doc = json.loads(gzip.decompress(blob))
    if doc.get("format") != FORMAT_VERSION:
        raise ValueError(f"{path}: classifier format {doc.get('format')} is not {FORMAT_VERSION}")
    return LightModel.from_doc(doc)


@lru_cache(maxsize=2)
def shipped(path: str = str(SHIPPED)) -> "LightModel | None":
    """The shipped model for predictions (scikit-learn's numbers without importing it), or None
    when it has not been trained yet."""
    p = Path(path)
    return load(p) if p.exists() else None
