"""Concept features (dllogscan/classify/concepts.py, data/concepts.toml): columns, pairs, and the
same values in the scikit-learn model, its export and the light model."""
from __future__ import annotations

import gzip
import json
import re

import pytest

from dllogscan.classify import light
from dllogscan.classify import model as text_model
from dllogscan.classify.concepts import SCALE, Concepts, shipped_patterns

PATTERNS = [("cuda", r"\bcuda\b|\bgpu\b"), ("workers", r"num_workers|\bworkers?\b"), ("hang", r"\bhang|stuck")]


def test_every_shipped_concept_is_a_valid_distinct_regex():
    patterns = shipped_patterns()
    assert len(patterns) >= 10
    assert len({name for name, _ in patterns}) == len(patterns)
    for name, pattern in patterns:
        assert re.fullmatch(r"[a-z_]+", name), name
        assert not re.compile(pattern).search(""), f"{name} matches the empty text"


def test_a_concept_pair_has_its_own_column_only_when_both_are_shown():
    c = Concepts(PATTERNS)
    assert c.width == 3 + 3
    names = c.names()
    assert names == ["cuda", "workers", "hang", "cuda+workers", "cuda+hang", "workers+hang"]
    shown = c.columns("sampling on the gpu fails once num_workers is 4")
    assert [names[i] for i in shown] == ["cuda", "workers", "cuda+workers"]
    assert [names[i] for i in c.columns("the loop is stuck, gpu idle, 8 workers")] == names
    assert c.columns("loss goes down") == []
    every = c.columns("gpu workers hang")
    assert every == sorted(every)  # increasing: the light model adds columns in this order


def test_the_model_stacks_concepts_after_the_tfidf_blocks_and_exports_them(tmp_path):
    texts = ["gpu in num_workers fails", "training is stuck, workers hang", "loss goes down fine"] * 4
    labels = ["D", "E", "none"] * 4
    m = text_model.fit(texts, labels)
    assert m.concepts is not None and m.concepts.patterns == shipped_patterns()
    x = m.features(["the gpu hangs"])
    tfidf = sum(len(v.vocabulary_) for v in m.vectorizers.values())
    assert x.shape[1] == tfidf + m.concepts.width
    concept_values = x[:, tfidf:].toarray().ravel()
    assert set(concept_values) == {0.0, SCALE} and concept_values.sum() > 0
    path = tmp_path / "m.json.gz"
    text_model.export(m, path, {"note": "test"})
    doc = json.loads(gzip.open(path, "rt").read())
    assert doc["concepts"]["scale"] == SCALE
    assert [tuple(p) for p in doc["concepts"]["patterns"]] == list(shipped_patterns())
    again = text_model.load(path)
    assert again.concepts.patterns == m.concepts.patterns
    fast = light.LightModel.from_doc(doc)
    probe = "dataloader stuck with cuda tensors in 4 workers"
    assert fast.logits(probe) == pytest.approx(list(again.logits(again.features([probe]))[0]), abs=1e-9)
    unpacked = light.LightModel.unpacked(fast.packed())
    assert unpacked.logits(probe) == fast.logits(probe)


def test_a_model_keeps_the_patterns_it_was_trained_with(tmp_path):
    """Editing concepts.toml does not change a model already exported: it carries its own copy."""
    texts = ["gpu in num_workers fails", "loss goes down fine"] * 4
    m = text_model.fit(texts, ["D", "none"] * 4)
    m.concepts = Concepts(PATTERNS)
    path = tmp_path / "m.json.gz"
    text_model.export(m, path, {})
    assert text_model.load(path).concepts.patterns == tuple(PATTERNS)


def test_the_shipped_model_carries_the_shipped_concepts():
    doc = json.loads(gzip.open(text_model.SHIPPED, "rt").read())
    assert [tuple(p) for p in doc["concepts"]["patterns"]] == list(shipped_patterns()), "run `dllogscan train`"


def test_regex_reads_every_shipped_concept_as_re_does():
    """Concepts compiles with the regex module (faster on long texts); the features must be the
    ones re gives, which the shipped model's patterns were written for."""
    from pathlib import Path

    texts = [text_model.preprocess(p.read_text(encoding="utf-8"))
             for p in sorted(Path(__file__).resolve().parent.parent.glob("corpus/threads/*.md"))[::4]]
    compiled = Concepts(shipped_patterns())
    for i, (name, pattern) in enumerate(shipped_patterns()):
        plain = re.compile(pattern)
        for text in texts:
            assert (i in compiled.present(text)) == bool(plain.search(text)), name
