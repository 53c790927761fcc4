"""The text classifier: parameters round-trip, the shipped model matches the corpus, combination rules."""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections import Counter

import pytest

from dllogscan.classify import model as text_model
from dllogscan.classify.combine import combine, needs_classifier
from dllogscan.evaluation.corpus import corpus_hash, load_items, split
from dllogscan.core.models import Diagnosis, Evidence

TEXTS = ["worker killed by signal bus error shared memory /dev/shm too small"] * 3 + \
        ["too many open files received 0 items of ancdata"] * 3 + \
        ["training runs fine, loss goes down, nothing wrong"] * 3
LABELS = ["A"] * 3 + ["C"] * 3 + ["none"] * 3


def test_export_and_load_give_the_same_predictions(tmp_path):
    m = text_model.fit(TEXTS * 2, LABELS * 2)
    path = tmp_path / "m.json.gz"
    text_model.export(m, path, {"note": "test"})
    again = text_model.load(path)
    probe = ["the shm is full, bus error in worker", "ancdata"]
    for a, b in zip(m.predict(probe), again.predict(probe)):
        assert a.keys() == b.keys()
        assert all(abs(a[k] - b[k]) < 1e-3 for k in a)
    doc = json.loads(gzip.open(path, "rt").read())
    assert "pickle" not in json.dumps(doc["meta"]) and doc["format"] == text_model.FORMAT_VERSION


def test_shipped_model_is_trained_on_the_current_corpus():
    path = text_model.SHIPPED
    assert path.exists(), "run `dllogscan train`"
    meta = json.loads(gzip.open(path, "rt").read())["meta"]
    assert meta["corpus_hash"] == corpus_hash(load_items()), "corpus changed: run `dllogscan train`"


def test_row_weights_reach_the_linear_model():
    """``fit``'s weights count rows (the team's symptom sentences train at
    ``train.SYMPTOM_WEIGHT``): all ones is the unweighted model, and a mislabelled row pulls the
    model towards its label in proportion to its weight."""
    n = len(TEXTS) * 2
    plain = text_model.fit(TEXTS * 2, LABELS * 2)
    ones = text_model.fit(TEXTS * 2, LABELS * 2, weights=[1.0] * n)
    assert abs(plain.linear.coef_ - ones.linear.coef_).max() < 1e-6
    odd = "worker killed by signal bus error shared memory"
    p_c = {w: text_model.fit(TEXTS * 2 + [odd], LABELS * 2 + ["C"], weights=[1.0] * n + [w]).predict([odd])[0]["C"]
           for w in (0.05, 1.0, 5.0)}
    assert p_c[0.05] < p_c[1.0] < p_c[5.0]


def test_split_keeps_scenarios_on_one_side_and_tests_every_label():
    items = load_items()
    train, test = split(items)
    assert {i.scenario for i in train}.isdisjoint({i.scenario for i in test})
    for kind in ("report", "nearmiss"):
        labels = {i.label for i in items if i.kind == kind}
        multi = {lab for lab in labels if len({i.scenario for i in items if i.kind == kind and i.label == lab}) > 1}
        assert multi <= {i.label for i in test if i.kind == kind}


class FakeModel:
    """Stands in for the model's line scoring only (combine() cites lines through it)."""

    def line_scores(self, lines, label):
        return [1.0 if "shm" in line else 0.0 for line in lines]


def diag(cls, conf):
    return Diagnosis(cls=cls, subclass="oom-suspected" if cls == "B" else None, title="t", confidence=conf,
                     evidence=(Evidence(3, "x"),))


def test_strong_signature_needs_no_classifier():
    assert not needs_classifier([diag("A", 0.97)])
    assert needs_classifier([diag("B", 0.6)]) and needs_classifier([])


def test_weak_signature_is_confirmed_or_vetoed_by_the_classifier():
    agree = combine([diag("B", 0.6)], {"B.oom": 0.6, "E": 0.3, "none": 0.1}, [], FakeModel(), 0.5)
    # odds 0.6/0.4 times (0.6/0.1) ** TEMPER (0.35) = 2.81 -> 0.737 (above both the hit's and the classifier's 0.6)
    assert agree[0].confidence == pytest.approx(0.737, abs=0.01) and agree[0].method == "signatures+classifier"
    veto = combine([diag("B", 0.6)], {"B.oom": 0.05, "none": 0.95}, [], FakeModel(), 0.5)
    assert veto == []


def test_classifier_alone_cites_lines_or_abstains():
    lines = [(1, "hello"), (2, "torch training dies: my /dev/shm is tiny"), (3, "bye")]  # no prose rule fires
    [d] = combine([], {"A": 0.9, "none": 0.1}, lines, FakeModel(), 0.5)
    assert d.cls == "A" and d.method == "classifier" and [e.line for e in d.evidence] == [2]
    assert combine([], {"A": 0.5, "none": 0.5}, lines, FakeModel(), 0.5) == []
    assert combine([], {"A": 0.1, "none": 0.9}, lines, FakeModel(), 0.5) == []


def test_a_line_that_says_nothing_is_never_cited():
    class Fences:
        def line_scores(self, lines, label):  # the fence and the brackets weigh most
            return [3.0 if "`" in t or "}" in t else 1.0 if "shm" in t else 0.0 for t in lines]

    lines = [(1, "```python"), (2, "torch training dies: my /dev/shm is tiny"), (3, "}]"), (4, "```"),
             (5, "~~~"), (6, "|---:|:--:|")]
    [d] = combine([], {"A": 0.9, "none": 0.1}, lines, Fences(), 0.5)
    assert [e.line for e in d.evidence] == [2]
    twice = [(1, "Bus error (core dumped) in training with my /dev/shm full"),
             (2, "Bus error (core dumped) in training with my /dev/shm"),
             (3, "torch training dies: my /dev/shm is tiny"), (4, "hello there")]
    [d] = combine([], {"A": 0.9, "none": 0.1}, twice, Fences(), 0.5)
    assert [e.line for e in d.evidence] == [1, 3]  # line 2 is line 1 cut short: one message, cited once


def test_a_line_far_weaker_than_the_best_is_not_cited():
    class Scores:
        def line_scores(self, lines, label):  # "inference(model," leans to A, a tenth as much as the shm line
            return [10.0 if "shm" in t else 1.0 if "inference" in t else 2.5 if "bus" in t else 0.0 for t in lines]

    lines = [(1, "inference(model,"), (2, "torch training dies: my /dev/shm is tiny"), (3, "and a bus error after")]
    [d] = combine([], {"A": 0.9, "none": 0.1}, lines, Scores(), 0.5)
    assert [e.line for e in d.evidence] == [2, 3]  # 1.0 < a fifth of 10.0; 2.5 is over it


def test_shared_memory_told_beside_the_loader_is_weak_evidence_of_a():
    lines = [(1, "hello"), (2, "the DataLoader dies: my /dev/shm is tiny"), (3, "bye")]
    [d] = combine([], {"A": 0.5, "none": 0.5}, lines, FakeModel(), 0.5)
    assert (d.cls, d.method, d.confidence) == ("A", "prose+classifier", pytest.approx(0.6))


LOADER_LINES = [(1, "training with a DataLoader, num_workers=8")]  # about training, names the loader, tells nothing


def test_weak_signature_never_lowers_an_agreeing_classifier():
    [d] = combine([diag("E", 0.25)], {"E": 0.78, "none": 0.1, "A": 0.12}, LOADER_LINES, FakeModel(), 0.5)
    assert d.cls == "E" and d.confidence == pytest.approx(0.78)  # calibrated: shown as it is


def test_a_context_hit_does_not_lift_the_classifier_over_its_own_threshold():
    """Weightless context decides nothing: the classifier's top class below its threshold (the
    default 0.7 here) stays no diagnosis beside it (pytorch#22924: a deliberate Ctrl-C)."""
    context = Diagnosis(cls="E", subclass="hang", title="t", confidence=0.0, evidence=(Evidence(3, "x"),))
    assert combine([context], {"E": 0.6, "none": 0.3, "A": 0.1}, LOADER_LINES, FakeModel(), 0.5) == []
    [d] = combine([context], {"E": 0.8, "none": 0.1, "A": 0.1}, LOADER_LINES, FakeModel(), 0.5)
    assert d.cls == "E" and d.confidence == pytest.approx(0.8)


def test_classifier_alone_abstains_on_text_unrelated_to_training():
    lines = [(1, "kernel: Out of memory: Killed process 2214 (java) total-vm:21980112kB"), (2, "my /dev/shm")]
    assert combine([], {"B.oom": 0.97, "none": 0.03}, lines, FakeModel(), 0.5) == []
    lines.append((3, "the DataLoader workers of our training job"))
    assert [d.cls for d in combine([], {"B.oom": 0.97, "none": 0.03}, lines, FakeModel(), 0.5)] == ["B"]


def test_weightless_context_of_another_class_leaves_the_classifier_its_own_verdict():
    """A traceback through the loader's wait (weight-0 E context) of a worker that died of a
    native crash: the weightless E candidate decides nothing, so the classifier's sure B stands."""
    lines = [(1, "the DataLoader worker dies inside the video decoder"), (2, "RuntimeError: DataLo")]
    [d] = combine([diag("E", 0.0)], {"B.crash": 0.97, "E": 0.01, "none": 0.02}, lines, FakeModel(), 0.5)
    assert (d.cls, d.method) == ("B", "classifier")
    [e] = combine([diag("E", 0.0)], {"E": 0.9, "none": 0.1}, lines, FakeModel(), 0.5)
    assert e.cls == "E" and e.method == "signatures+classifier"  # one E, not two


def test_a_hang_told_in_prose_is_weak_evidence_the_classifier_weighs():
    lines = [(1, "# Training freezes"), (2, "With num_workers=8 the DataLoader gets stuck after epoch 3. No error.")]
    [d] = combine([], {"E": 0.4, "none": 0.4, "B.oom": 0.2}, lines, FakeModel(), 0.5)
    assert (d.cls, d.method, [e.line for e in d.evidence]) == ("E", "prose+classifier", [2])
    from dllogscan.classify.prose import load_rules

    [hang] = [r for r in load_rules() if r.label == "E" and r.subclass is None]
    assert d.confidence == pytest.approx(hang.prior)  # the prior, the classifier even
    assert combine([], {"E": 0.05, "none": 0.95}, lines, FakeModel(), 0.5) == []  # vetoed
    # the words must meet in one sentence; PyTorch's warning about too many workers is no report
    apart = [(1, "Training with the DataLoader is slow. The GPU hangs sometimes.")]
    warning = [(1, "UserWarning: This DataLoader will create 16 worker processes in total. Please be aware "
                   "that excessive worker creation might get DataLoader running slow or even freeze")]
    assert combine([], {"E": 0.4, "none": 0.4, "A": 0.2}, apart, FakeModel(), 0.5) == []
    assert combine([], {"E": 0.4, "none": 0.4, "A": 0.2}, warning, FakeModel(), 0.5) == []


def test_a_feature_request_is_read_like_any_other_text():
    """Since session 38 no rule sets a feature request apart (data/prose.toml says why): the
    classifier's verdict and a signature's failure text decide it as they decide any text."""
    lines = [(1, "[RFC] Allow changing num_workers between epochs"),
             (2, "With num_workers=8 the DataLoader gets stuck after epoch 3; workers are slow to start.")]
    assert [d.cls for d in combine([], {"E": 0.95, "none": 0.05}, lines, FakeModel(), 0.5)] == ["E"]
    assert combine([], {"E": 0.3, "none": 0.7}, [lines[0]], FakeModel(), 0.5) == []


def test_verdicts_show_their_calibrated_confidence_in_the_same_order():
    """The verdict calibration (``combine.calibrated``) is one monotone map: it changes the
    confidence shown, never which diagnoses are made or their order, nor goes below min_confidence."""
    lines = [(1, "the DataLoader worker dies: my /dev/shm is tiny, or the OOM killer")]
    pred = {"B.oom": 0.5, "A": 0.4, "none": 0.1}
    hits = [diag("B", 0.6), diag("A", 0.6)]
    plain = combine(hits, pred, lines, FakeModel(), 0.5)
    scaled_model = FakeModel()
    scaled_model.verdict_scaling = (0.3, 1.6)  # flat and high, as fitted on the real threads
    shown = combine(hits, pred, lines, scaled_model, 0.5)
    assert [(d.cls, d.method) for d in shown] == [(d.cls, d.method) for d in plain] and len(plain) >= 2
    assert all(d.confidence > p.confidence for d, p in zip(shown, plain))
    assert [d.confidence for d in shown] == sorted((d.confidence for d in shown), reverse=True)
    sinking = FakeModel()
    sinking.verdict_scaling = (1.0, -5.0)
    assert [d.confidence for d in combine(hits, pred, lines, sinking, 0.5)] == [0.5, 0.5]


def test_the_verdict_calibration_travels_with_the_model(tmp_path):
    from dllogscan.classify import light

    m = text_model.fit(TEXTS * 2, LABELS * 2)
    m.verdict_scaling = (0.31, 1.62)
    path = tmp_path / "m.json.gz"
    text_model.export(m, path, {})
    assert text_model.load(path).verdict_scaling == (0.31, 1.62)
    lm = light.LightModel.from_doc(json.loads(gzip.open(path, "rt").read()))
    assert lm.verdict_scaling == (0.31, 1.62) and light.LightModel.unpacked(lm.packed()).verdict_scaling == (0.31, 1.62)
    shipped = light.shipped()
    assert shipped.verdict_scaling is not None and shipped.verdict_scaling[0] >= 0


def test_light_model_gives_scikit_learns_numbers():
    """The shipped model predicts through ``classify.light`` (neither scikit-learn nor NumPy
    imported); on corpus texts its logits and line scores are the very floats scikit-learn
    computes, and its probabilities differ at most in the last bit (``math.exp`` against NumPy's
    vectorised exponential)."""
    from dllogscan.classify import light

    fast, reference = light.load(text_model.SHIPPED), text_model.load(text_model.SHIPPED)
    assert fast.labels == reference.labels
    items = load_items()
    for item in items[:: max(1, len(items) // 40)]:
        text = item.path.read_text(encoding="utf-8", errors="replace")[:20000]
        assert fast.logits(text) == list(map(float, reference.logits(reference.features([text]))[0])), item.path
        [mine], [theirs] = fast.predict([text]), reference.predict([text])
        assert mine.keys() == theirs.keys() and mine == pytest.approx(theirs, rel=1e-12, abs=1e-300), item.path
        lines = text.splitlines()[:30]
        for label in fast.labels:
            assert fast.line_scores(lines, label) == list(map(float, reference.line_scores(lines, label))), item.path
    assert fast.predict([""])[0] == pytest.approx(reference.predict([""])[0], rel=1e-12)


@pytest.mark.parametrize("analyzer, ngrams", [("char", (3, 5)), ("char", (1, 3)), ("char_wb", (2, 5))])
def test_light_model_follows_either_character_analyzer(monkeypatch, tmp_path, analyzer, ngrams):
    """Whichever character analyzer ``VECTORIZERS`` names (n-grams across word boundaries or
    inside padded words), ``classify.light`` makes scikit-learn's n-grams in its order and, from a
    model fitted that way, its logits to the bit: n-grams inside a line and across line breaks,
    short lines, repeated lines, from its line cache and after it empties."""
    from dllogscan.classify import light

    monkeypatch.setitem(text_model.VECTORIZERS, "char",
                        dict(text_model.VECTORIZERS["char"], analyzer=analyzer, ngram_range=ngrams))
    monkeypatch.setattr(light, "CHAR_ANALYZER", analyzer)
    monkeypatch.setattr(light, "CHAR_N", ngrams)
    monkeypatch.setattr(light, "LINE_CACHE_SIZE", 40)  # the line cache fills and empties on the way
    probes = ["RuntimeError: DataLoader worker (pid 12) is killed by signal: Bus error.",
              "it hangs\n\n   at  epoch 3\tforever", "ab", "", "a\nb c", "a\nb\nc\nde\nfgh\n ij \nk\n",
              "\n\nx\n", "bus\nerror\nbus\nerror\nworker killed\nworker killed"]
    sklearn_grams = text_model._vectorizer("char").build_analyzer()
    for text in probes:
        assert light.char_features(text) == sklearn_grams(text), text
    every = {gram: i for i, gram in enumerate(sorted({g for t in probes for g in sklearn_grams(t)}))}
    counter = light.LightModel.from_doc(json.loads(gzip.open(text_model.SHIPPED, "rt").read()))
    for text in probes * 2:  # every n-gram in the vocabulary: each counted once, cached or not
        assert counter._counts("char", every, text_model.preprocess(text)) == Counter(map(every.get, sklearn_grams(text)))
    m = text_model.fit(TEXTS * 2, LABELS * 2)
    path = tmp_path / "m.json.gz"
    text_model.export(m, path, {})
    fast, reference = light.LightModel.from_doc(json.loads(gzip.open(path, "rt").read())), text_model.load(path)
    for text in (probes + TEXTS) * 2:  # the second time from the caches
        assert fast.logits(text) == list(map(float, reference.logits(reference.features([text]))[0])), text


def test_the_line_cache_stays_bounded_on_lines_that_never_repeat(monkeypatch):
    """A batch of junk (long lines that never repeat, few n-grams of the vocabulary) cannot grow
    the character block's line cache past its size: the lines' characters count too."""
    import random

    from dllogscan.classify import light

    if light.CHAR_ANALYZER != "char":
        pytest.skip("the shipped model counts char_wb n-grams per word")
    monkeypatch.setattr(light, "LINE_CACHE_SIZE", 2000)
    model = light.LightModel.from_doc(json.loads(gzip.open(text_model.SHIPPED, "rt").read()))
    rng = random.Random(3)
    for _ in range(60):
        text = "\n".join("".join(rng.choice("qxzj#@~^") for _ in range(400)) for _ in range(20))
        model.logits(text)
        held = sum(len(found) + 1 + len(line) // 16 for line, found in model._line_columns.items())
        assert held <= 2000 and sum(map(len, model._line_columns)) <= 16 * 2000


def test_softmax_sum_is_numpys_pairwise_sum():
    """The softmax divides by the sum NumPy's ``sum`` makes (its order of additions), for any
    number of classes."""
    import random

    import numpy as np

    from dllogscan.classify.light import pairwise_sum

    rng = random.Random(5)
    for n in list(range(1, 40)) + [127, 128, 129, 300]:
        values = [rng.uniform(0, 1) * 10 ** rng.randint(-12, 0) for _ in range(n)]
        assert pairwise_sum(values) == float(np.sum(np.asarray([values]), axis=1)[0]), n


def test_light_model_loads_from_its_cache_without_numpy(tmp_path):
    """The first load reads the JSON and caches the parameters in binary; the next loads them
    from there without importing NumPy and predicts the same; a damaged entry is read past."""
    code = """
import sys
from dllogscan.classify import light, model
m = light.load(model.SHIPPED)
print(repr(m.predict(["RuntimeError: DataLoader worker (pid 7) exited unexpectedly"])[0]))
print("numpy" in sys.modules)
"""
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
            for _ in range(2)]
    [entry] = (tmp_path / "dllogscan").glob("clf-*.bin")
    assert runs[0] == runs[1] and runs[1].endswith("False\n")
    entry.write_bytes(entry.read_bytes()[:100])
    again = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert again == runs[0] and entry.stat().st_size > 100


def test_a_suspected_subclass_takes_the_classifiers_when_it_is_sure():
    bare = Diagnosis(cls="B", subclass="oom-suspected", title="t", confidence=0.65,
                     evidence=(Evidence(1, "RuntimeError: DataLoader worker (pid(s) 1) exited unexpectedly"),),
                     canonical=True)
    [sure] = combine([bare], {"B.getitem": 0.9, "B.oom": 0.05, "none": 0.05}, [], FakeModel(), 0.5)
    assert sure.subclass == "getitem" and any("from the text classifier" in n for n in sure.notes)
    [unsure] = combine([bare], {"B.getitem": 0.5, "B.oom": 0.4, "none": 0.1}, [], FakeModel(), 0.5)
    assert unsure.subclass == "oom-suspected"
    [named] = combine([Diagnosis(**{**bare.__dict__, "subclass": "crash"})], {"B.getitem": 0.95, "none": 0.05},
                      [], FakeModel(), 0.5)
    assert named.subclass == "crash"  # a cause the signature named is never replaced


def test_a_text_with_no_error_word_carries_the_marker_in_both_analyzers():
    """Prose with no failure output ("it freezes at 0 %") is told apart by one marker token;
    light.py sees the same token (word and character analyzers) as scikit-learn."""
    from dllogscan.classify import light

    prose = "Training freezes at epoch 3, GPU at 0 %, nothing printed"
    failing = "RuntimeError: DataLoader worker (pid 12) is killed by signal: Killed."
    assert text_model.preprocess(prose).endswith(" " + text_model.NO_ERROR_TOKEN)
    assert text_model.NO_ERROR_TOKEN not in text_model.preprocess(failing)
    for text in (prose, failing):
        assert light.word_features(text) == text_model._vectorizer("word").build_analyzer()(text)
        assert light.char_features(text) == text_model._vectorizer("char").build_analyzer()(text)
    assert text_model.NO_ERROR_TOKEN in light.word_features(prose)
    assert text_model.NO_ERROR_TOKEN not in light.word_features(failing)


def test_a_slow_start_told_in_prose_names_the_classifiers_hang():
    lines = [(1, "# Slow epochs"), (2, "Each epoch is slow to start; persistent_workers=True makes it fast."),
             (3, "training with a DataLoader, num_workers=8")]
    [d] = combine([], {"E": 0.9, "none": 0.1}, lines, FakeModel(), 0.5)
    assert (d.cls, d.subclass, d.method) == ("E", "slow-start", "classifier")
    assert 2 in [e.line for e in d.evidence] and d.confidence == pytest.approx(0.9)
    [h] = combine([], {"E": 0.9, "none": 0.1}, [lines[0], lines[2]], FakeModel(), 0.5)
    assert h.subclass == "hang"  # no such sentence: the classifier's own subclass


def test_a_pause_at_the_epoch_boundary_told_in_a_title_is_a_slow_start_the_classifier_weighs():
    """The epoch-boundary sentence needs no loader word of its own, only one in the text; with no
    verdict of the classifier's own it is weak evidence that the classifier's ratio scales."""
    lines = [(1, "# Lightning is very slow between epochs, compared to plain PyTorch"),
             (3, "train_loader = DataLoader(ds, batch_size=32, num_workers=8)")]
    [d] = combine([], {"E": 0.2, "none": 0.8}, lines, FakeModel(), 0.5)
    assert (d.cls, d.subclass, d.method) == ("E", "slow-start", "prose+classifier")
    assert [e.line for e in d.evidence] == [1] and 0.5 < d.confidence < 0.7
    assert combine([], {"E": 0.02, "none": 0.98}, lines, FakeModel(), 0.5) == []  # the classifier's "none" vetoes it
    assert combine([], {"E": 0.2, "none": 0.8}, lines[:1], FakeModel(), 0.5) == []  # no loader in the text
