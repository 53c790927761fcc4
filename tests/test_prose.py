"""Failures told in prose (dllogscan/data/prose.toml): every rule takes its examples and leaves
its counter-examples; a malformed table names itself."""
from __future__ import annotations

import pytest

from dllogscan.classify import prose
from dllogscan.core.errors import SignatureError

RULES = prose.load_rules()
RULED_OUT = prose.ruled_out()
#: the prose rules' and the ruled-out sentences' examples alike: each rule's ``sentence`` takes its
#: examples and leaves its counter-examples
CASES = [(r, t, True) for r in RULES + RULED_OUT for t in r.examples] + \
    [(r, t, False) for r in RULES + RULED_OUT for t in r.counter_examples]


def _name(rule) -> str:
    return rule.id if isinstance(rule, prose.RuledOut) else rule.label


@pytest.mark.parametrize("rule, text, told", CASES, ids=[f"{_name(r)}-{i}" for i, (r, _, _) in enumerate(CASES)])
def test_examples_are_told_and_counter_examples_are_not(rule, text, told):
    assert (rule.sentence([(7, text)]) == (7, text)) is told


def test_every_rule_has_examples_of_both_kinds_and_a_sure_enough_prior():
    assert {r.label.split(".")[0] for r in RULES} >= {"B", "E"}
    for rule in RULES:
        assert rule.examples and rule.counter_examples and 0.5 <= rule.prior < 0.8


def test_the_words_must_meet_the_loader_in_one_sentence():
    [hang] = [r for r in RULES if r.label == "E" and r.subclass is None]
    assert hang.sentence([(1, "The DataLoader is slow. The GPU hangs sometimes.")]) is None
    assert hang.sentence([(1, "It is slow.  With 8 workers it hangs at epoch 2.")]) is not None
    assert hang.sentence([(1, "数据加载很慢。num_workers=8 时训练卡住 and the loader hangs")]) is not None


@pytest.mark.parametrize("body, message", [
    ('loader = "worker"\n[[told]]\nlabel = "E"\n', "told #1 needs exactly"),
    ('loader = "worker"\n[[told]]\nlabel = "X"\nwords = "a"\nunless = "b"\nprior = 0.6\nexamples = []\n'
     'counter_examples = []\n', "told #1 needs exactly"),
    ('loader = "("\n', "bad pattern"),
    ('loader = "worker"\nelsewhere = "("\n', "bad pattern"),
    ('loader = "worker"\n[[told]]\nlabel = "E"\nwords = "a"\nunless = "b"\nprior = 0.6\nexamples = []\n'
     'counter_examples = []\nasides = "c"\n', "told #1 needs exactly"),
    ('loader = "worker"\n[[told]]\nlabel = "E"\nwords = "a"\nunless = "b"\nprior = 0.6\nexamples = []\n'
     'counter_examples = []\naside = "("\n', "bad pattern"),
    ('[[told]]\nlabel = "E"\nwords = "a"\nunless = "b"\nprior = 0.6\nexamples = []\ncounter_examples = []\n',
     "needs a `loader` pattern"),
    ('loader = "worker"\n[[told]]\nlabel = "E"\nwords = "a"\nunless = "b"\nprior = 0.6\nexamples = []\n'
     'counter_examples = []\nsubclass = "Slow Start"\n', "subclass must be"),
    ('loader = "worker"\n[[told]]\nlabel = "E"\nwords = "a"\nunless = "b"\nprior = 0.6\nexamples = []\n'
     'counter_examples = []\nneeds = "("\n', "bad pattern"),
    ('loader = "worker"\n[[told]]\nlabel = "E"\nwords = "a"\nunless = "b"\nprior = 0.6\nexamples = []\n'
     'counter_examples = []\nloader = "("\n', "bad pattern"),
    ('loader = "worker"\nother_loaders = "("\n', "bad pattern"),
    ('loader = "worker"\nother_loaders = 3\n', "`other_loaders` must be a pattern"),
])
def test_a_malformed_table_names_itself(tmp_path, body, message):
    bad = tmp_path / "prose.toml"
    bad.write_text(body, encoding="utf-8")
    with pytest.raises(SignatureError, match=message):
        prose.load_rules(bad)
    if "other_loaders" in body:  # the training gate reads it on its own too (combine.about_training)
        with pytest.raises(SignatureError, match=message):
            prose.framework_loader_text(bad)


def test_a_slow_start_sentence_needs_persistent_workers_in_the_text_and_names_its_subclass():
    [slow] = [r for r in RULES if r.subclass == "slow-start" and r.needs and r.needs.pattern == "persistent_workers"]
    told = [(1, "Each new epoch waits about 10 s before the first batch: the pause is gone with 0 workers.")]
    assert slow.sentence(told) is None  # nothing in the text names persistent_workers
    assert slow.sentence(told + [(4, "loader = DataLoader(ds, num_workers=8, persistent_workers=False)")]) == told[0]
    assert slow.label == "E" and "start-up" in slow.title


def test_a_pause_at_the_epoch_boundary_needs_only_the_loader_somewhere_in_the_text():
    [boundary] = [r for r in RULES if r.subclass == "slow-start" and r.needs and r.needs.pattern != "persistent_workers"]
    title = [(1, "# Lightning is very slow between epochs, compared to plain PyTorch")]
    assert boundary.sentence(title) is None  # no loader, no workers anywhere
    assert boundary.sentence(title + [(3, "train_loader = DataLoader(ds, num_workers=8)")]) == title[0]
    # the title holds none of the file's loader words: the rule's own `loader` (the epoch) stands in
    assert RULES[0].loader.search(title[0][1]) is None and boundary.loader.search(title[0][1])
    # a rank waiting at an end-of-epoch barrier is no loader's pause
    assert boundary.sentence(title + [(3, "train_loader = DataLoader(ds, num_workers=8)"),
                                      (5, "dist.barrier() at the end of each epoch")]) is None


def test_a_slow_worker_start_told_without_an_epoch_is_a_slow_start():
    [start] = [r for r in RULES if r.subclass == "slow-start" and r.needs is None]
    told = [(1, "# Each data-loader worker takes ~30 s to start")]
    assert start.sentence(told) == told[0] and start.label == "E" and "start" in start.title
    # the start-up of a dataset, not of the workers; and a question about the start-up
    assert start.sentence([(1, "# Options to cut Megatron-LM data loader initialization time at scale")]) is None
    assert start.sentence([(1, "Could you share rough numbers on how long worker startup takes for you?")]) is None


def test_a_multi_rank_text_sets_a_hang_sentence_aside():
    [hang] = [r for r in RULES if r.label == "E" and r.subclass is None]
    told = [(1, "Validation hangs forever once the DataLoader has 8 workers.")]
    assert hang.sentence(told) == told[0]
    assert hang.sentence(told + [(5, "torchrun --nproc_per_node=8 train.py")]) is None


def test_another_programs_worker_pool_sets_every_rule_aside():
    told = [(1, "The data loader worker gets killed after running for a while.")]
    for rule in RULES:
        assert rule.sentence(told + [(2, "gunicorn app:app --workers 4 --preload")]) is None
    [oom] = [r for r in RULES if r.label == "B.oom"]
    assert oom.sentence(told) == told[0]


def test_training_chooses_thresholds_for_the_rows_prose_leaves():
    from dllogscan.evaluation.train import numbered, prose_class

    told = numbered("# Training freezes\nWith num_workers=8 the DataLoader gets stuck after epoch 3.")
    assert prose_class({"E": 0.4, "none": 0.4, "A": 0.2}, told) == "E"
    assert prose_class({"E": 0.02, "none": 0.98}, told) == "none"  # the classifier vetoes it
    assert prose_class({"E": 0.4, "none": 0.4, "A": 0.2}, numbered("the loss is nan after epoch 3")) == "none"


def test_the_classifier_does_not_read_pytorchs_too_many_workers_warning():
    from dllogscan.classify.model import preprocess

    warning = ("UserWarning: This DataLoader will create 16 worker processes in total. Our suggested max number of "
               "worker in current system is 8, which is smaller than what this DataLoader is going to create. "
               "Please be aware that excessive worker creation might get DataLoader running slow or even freeze, "
               "lower the worker number to avoid potential slowness/freeze if necessary.")
    text = preprocess(warning + "\nepoch 3 loss 0.41")
    assert "freeze" not in text and "suggested" not in text and "epoch 0 loss 0.0" in text


def test_descriptor_exhaustion_told_in_prose_needs_a_word_of_the_loader_in_the_text():
    [fds] = [r for r in RULES if r.label == "C"]
    told = [(1, "# Too many open files from the workers after a day of analysis")]
    assert fds.sentence(told) is None  # another program's workers: nothing names PyTorch's loader
    assert fds.sentence(told + [(3, "loader = DataLoader(ds, num_workers=8)")]) == told[0]


def test_descriptor_exhaustion_told_in_a_title_is_evidence_of_class_c():
    from dllogscan.classify.combine import told_in_prose
    from dllogscan.evaluation.train import numbered

    lines = numbered("# too many open files from dataloader\n\nAfter switching to split datasets the loader "
                     "fails after about an hour; raising ulimit helps.")
    [told] = told_in_prose({"C": 0.3, "none": 0.5, "E": 0.2}, lines, set())
    assert (told.cls, told.method, told.evidence[0].line) == ("C", "prose+classifier", 1)
    assert told.confidence > 0.5
    assert told_in_prose({"C": 0.3, "none": 0.5, "E": 0.2}, lines, {"C"}) == []  # signatures found it


def test_every_ruled_out_rule_has_examples_of_both_kinds():
    assert "isolation-step" in {r.id for r in RULED_OUT}
    for rule in RULED_OUT:
        assert rule.examples and rule.counter_examples and "{line}" in rule.note


class _Words:
    """A stand-in classifier for combine(): thresholds, and every line speaking a little for any label."""

    thresholds = {"E": 0.7, "B": 0.7}
    verdict_scaling = None

    def line_scores(self, texts, label):
        return [1.0] * len(texts)


def test_a_hang_that_stays_without_workers_is_not_the_workers_hang():
    """The field guide's isolation step, taken by the reporter: neither the classifier alone nor
    the hang sentence gives class E, and a note says why; told in two sentences it is no such step."""
    from dllogscan.classify.combine import combine, words_ruled_out

    hang = (1, "Training with the DataLoader and num_workers=8 freezes at epoch 3, GPUs idle.")
    ruled = (2, "With num_workers=0 the training still freezes at the same point.")
    apart = (2, "I tried num_workers=0. The training still freezes at the same point.")
    sure, unsure = {"E": 0.9, "none": 0.1}, {"E": 0.45, "none": 0.55}

    def verdict(pred, lines):
        return words_ruled_out(combine([], pred, lines, _Words(), 0.5), lines)

    assert [d.method for d in verdict(sure, [hang])[0]] == ["classifier"]
    assert [d.method for d in verdict(unsure, [hang])[0]] == ["prose+classifier"]
    for pred in (sure, unsure):
        kept, notes = verdict(pred, [hang, ruled])
        assert kept == [] and len(notes) == 1 and "line 2" in notes[0] and "isolation step" in notes[0]
    assert [d.cls for d in verdict(sure, [hang, apart])[0]] == ["E"]


#: per class of a ``[[ruled_out]]`` rule, a line whose words alone give that class
SAYS_CLASS = {"E": "Training with the DataLoader and num_workers=8 freezes at epoch 3.",
              "A": "The DataLoader with num_workers=8 fails when the disk fills up after epoch 3."}
#: the same with no word a rule's ``aside`` takes (a hang told in a sentence always holds one)
SAYS_CLASS_QUIETLY = {"E": "Training with the DataLoader and num_workers=8 on four GPUs."}
KIND = {"E": "A hang"}


@pytest.mark.parametrize("rule", RULED_OUT, ids=[r.id for r in RULED_OUT])
def test_every_ruled_out_sentence_sets_its_class_from_words_aside_with_its_note(rule):
    from dllogscan.classify.combine import combine, words_ruled_out

    says = SAYS_CLASS[rule.cls]
    quiet = rule.aside is not None and rule.aside.search(says) is not None
    lines = [(1, SAYS_CLASS_QUIETLY[rule.cls] if quiet else says), (2, rule.examples[0])]
    preds = [{rule.cls: 0.9, "none": 0.1}]  # the classifier alone
    if rule.cls == "E" and not quiet:
        preds.append({rule.cls: 0.45, "none": 0.55})  # the hang sentence, which the classifier backs
    for pred in preds:
        merged = combine([], pred, lines, _Words(), 0.5)
        assert [d.cls for d in merged] == [rule.cls]
        kept, notes = words_ruled_out(merged, lines)
        assert kept == [] and notes == (f"{KIND.get(rule.cls, 'A diagnosis')} (class {rule.cls}) read from the "
                                        "words alone was set aside: " + rule.note.replace("{line}", "2"),)


def test_a_full_disk_elsewhere_sets_aside_shared_memory_from_words_not_from_a_signature():
    """An ENOSPC naming a checkpoint rules out class A read from the words alone; the shared-memory
    signature's own text keeps its verdict, and a hang from words stays (another class's rule)."""
    import dllogscan
    from dllogscan.classify.combine import combine, words_ruled_out

    disk = (2, "OSError: [Errno 28] No space left on device: '/home/me/out/ckpt_epoch12.pth'")
    lines = [(1, SAYS_CLASS["A"]), disk]
    kept, notes = words_ruled_out(combine([], {"A": 0.9, "none": 0.1}, lines, _Words(), 0.5), lines)
    assert kept == [] and len(notes) == 1 and "line 2" in notes[0] and "class A" in notes[0]
    hang = [(1, SAYS_CLASS["E"]), disk]
    kept, notes = words_ruled_out(combine([], {"E": 0.9, "none": 0.1}, hang, _Words(), 0.5), hang)
    assert [d.cls for d in kept] == ["E"] and notes == ()
    shm = "\n".join(["RuntimeError: DataLoader worker (pid 12) is killed by signal: Bus error.",
                     "OSError: [Errno 28] No space left on device: '/home/me/out/ckpt_epoch12.pth'"])
    result = dllogscan.scan_text(shm)
    assert result.diagnoses[0].cls == "A" and result.diagnoses[0].method != "classifier"


def test_persistent_workers_named_with_no_cost_set_aside_a_hang_from_words_only():
    """A request for persistent_workers is no slow start; any word of a cost anywhere in the text
    (a pause, a duration, idle GPUs, a stall) keeps the hang read from the words."""
    from dllogscan.classify.combine import combine, words_ruled_out

    request = [(1, "# Add persistent_workers parameter to Dataloader"),
               (2, "The Trainer should pass persistent_workers through to the DataLoader it builds for training.")]
    kept, notes = words_ruled_out(combine([], {"E": 0.9, "none": 0.1}, request, _Words(), 0.5), request)
    assert kept == [] and len(notes) == 1 and "line 1" in notes[0] and "persistent workers" in notes[0]
    for cost in ("Every epoch starts with a 40 s gap while the workers come up.",
                 "Between epochs the GPUs sit at 0% for a minute.",
                 "에폭이 바뀔 때마다 1~2분 정도 멈춥니다."):
        told = request + [(3, cost)]
        kept, notes = words_ruled_out(combine([], {"E": 0.9, "none": 0.1}, told, _Words(), 0.5), told)
        assert [d.cls for d in kept] == ["E"] and notes == ()


def test_the_isolation_step_leaves_a_signatures_hang_and_other_classes():
    import dllogscan
    from dllogscan.classify.combine import combine, words_ruled_out

    ruled = (2, "With num_workers=0 the same error appears; num_workers=0 does not help either.")
    killed = [(1, "The DataLoader worker is killed after a while."), ruled]
    kept, notes = words_ruled_out(combine([], {"B.oom": 0.9, "none": 0.1}, killed, _Words(), 0.5), killed)
    assert [d.cls for d in kept] == ["B"] and notes == ()
    # a weak signature hang, weighed by the classifier, is a failure text's verdict: it stays
    from dllogscan.core.models import Diagnosis
    weak = Diagnosis(cls="E", subclass="hang", title="interrupted in the loader's wait", confidence=0.7, evidence=())
    lines = [(1, "Training hangs at epoch 2; with num_workers=0 it still hangs.")]
    merged = combine([weak], {"E": 0.9, "none": 0.1}, lines, _Words(), 0.5)
    assert [d.method for d in merged] == ["signatures+classifier"]
    assert words_ruled_out(merged, lines) == (merged, ())
    interrupted = "\n".join([
        "Training hangs at epoch 2; with num_workers=0 it still hangs.",
        "^CTraceback (most recent call last):",
        '  File "train.py", line 40, in <module>',
        "    for x, y in loader:",
        '  File "/usr/lib/python3/site-packages/torch/utils/data/dataloader.py", line 1328, in _next_data',
        "    idx, data = self._get_data()",
        '  File "/usr/lib/python3/site-packages/torch/utils/data/dataloader.py", line 1284, in _get_data',
        "    success, data = self._try_get_data()",
        '  File "/usr/lib/python3/site-packages/torch/utils/data/dataloader.py", line 1132, in _try_get_data',
        "    data = self._data_queue.get(timeout=timeout)",
        "KeyboardInterrupt"])
    result = dllogscan.scan_text(interrupted)
    assert result.diagnoses and result.diagnoses[0].cls == "E"
    assert result.diagnoses[0].method.startswith("signatures")


@pytest.mark.parametrize("body, message", [
    ('[[ruled_out]]\nid = "x"\nsentence = []\nnote = "line {line}"\nexamples = []\ncounter_examples = []\n',
     "a list of patterns"),
    ('[[ruled_out]]\nid = "x"\nsentence = ["a"]\nnote = "no line"\nexamples = []\ncounter_examples = []\n',
     "a list of patterns"),
    ('[[ruled_out]]\nid = "x"\nsentence = ["("]\nnote = "line {line}"\nexamples = []\ncounter_examples = []\n',
     "bad pattern"),
    ('[[ruled_out]]\nid = "x"\nsentence = ["a"]\nnote = "line {line}"\nexamples = []\ncounter_examples = []\n'
     'unless = "("\n', "bad pattern"),
    ('[[ruled_out]]\nid = "x"\nsentence = ["a"]\nnote = "line {line}"\nexamples = []\ncounter_examples = []\n'
     'aside = "("\n', "aside: bad pattern"),
    ('[[ruled_out]]\nid = "x"\nsentence = ["a"]\nnote = "line {line}"\nexamples = []\n', "needs exactly"),
])
def test_a_malformed_ruled_out_table_names_itself(tmp_path, body, message):
    bad = tmp_path / "prose.toml"
    bad.write_text(body, encoding="utf-8")
    with pytest.raises(SignatureError, match=message):
        prose.ruled_out(bad)


def test_a_hang_kept_from_a_text_without_the_loader_leaves_a_note_not_a_verdict():
    """The classifier's hang in a text that names nothing of the loader is no diagnosis (the rule
    stays), but the text gets the note of what would decide it; the note needs a hang over E's
    threshold and a text about training."""
    from dllogscan.classify.combine import combine, unsure_hang

    stalled = [(1, "Training never gets past the first step; the process just sits there.")]
    sure, unsure = {"E": 0.9, "none": 0.1}, {"E": 0.6, "none": 0.4}
    assert combine([], sure, stalled, _Words(), 0.5) == []
    note = unsure_hang(sure, stalled, _Words.thresholds, 0.5)
    assert note == prose.unsure_hang_note().replace("{p}", "90%") and "num_workers=0" in note and "py-spy" in note
    assert unsure_hang(unsure, stalled, _Words.thresholds, 0.5) is None  # under E's threshold
    assert unsure_hang({"B.oom": 0.9, "none": 0.1}, stalled, _Words.thresholds, 0.5) is None
    with_loader = [(1, "Training with num_workers=8 never gets past the first step.")]
    assert unsure_hang(sure, with_loader, _Words.thresholds, 0.5) is None  # the classifier diagnoses it
    assert unsure_hang(sure, [(1, "The web server never answers; the process just sits there.")], {}, 0.5) is None


def test_the_note_of_a_kept_hang_reaches_the_result_and_every_format():
    import json

    from dllogscan import api
    from dllogscan.pipeline import runner
    from dllogscan.report.markdown import to_markdown
    from dllogscan.report.terminal import to_text

    class Hang(_Words):
        def predict(self, texts):
            return [{"E": 0.9, "none": 0.1} for _ in texts]

    text = b"Training never gets past the first step; the process just sits there.\n"
    result = runner.run(api.as_source(text, "paste", None), runner.get_scanner(), classifier="on", model=Hang())
    assert result.diagnoses == () and len(result.notes) == 1 and "no loader hang is diagnosed" in result.notes[0]
    assert json.loads(json.dumps(result.to_dict()))["notes"] == list(result.notes)
    assert "no loader hang is diagnosed" in to_markdown([result])
    assert "no loader hang is" in " ".join(to_text([result]).split())
    told = b"Training with num_workers=8 never gets past the first step.\n"
    result = runner.run(api.as_source(told, "paste", None), runner.get_scanner(), classifier="on", model=Hang())
    assert [d.cls for d in result.diagnoses] == ["E"] and result.notes == ()


def test_a_missing_unsure_hang_note_names_itself(tmp_path):
    bad = tmp_path / "prose.toml"
    bad.write_text('unsure_hang_note = "no placeholder"\n', encoding="utf-8")
    with pytest.raises(SignatureError, match="unsure_hang_note"):
        prose.unsure_hang_note(bad)


def test_another_frameworks_loader_counts_for_the_sentence_and_the_text_alike(tmp_path):
    """``other_loaders`` joins both the sentence's ``loader`` and the whole text's ``loader_text``."""
    data = tmp_path / "prose.toml"
    data.write_text("loader = 'num_workers'\nloader_text = 'dataloader'\nother_loaders = 'use_multiprocessing'\n"
                    "[[told]]\nlabel = 'E'\nwords = 'hangs'\nunless = 'zzz'\nprior = 0.6\nexamples = []\n"
                    "counter_examples = []\n", encoding="utf-8")
    [rule], text = prose.load_rules(data), prose.loader_text(data)
    for pattern in (rule.loader, text):
        assert pattern.search("model.fit(gen, use_multiprocessing=True) hangs")
    assert rule.loader.search("num_workers=4") and not rule.loader.search("the DataLoader")
    assert text.search("the DataLoader hangs") and not text.search("num_workers=4")


def test_another_frameworks_loader_is_a_text_about_training():
    """A Chainer MultiprocessIterator or Keras use_multiprocessing hang names neither PyTorch nor
    training: the hang sentence still counts (the corpus labels another framework's loader failures
    as the DataLoader's); a text about neither gets nothing from words."""
    from dllogscan.classify.combine import about_training, told_in_prose

    chainer = [(1, "# MultiprocessIterator hangs with no error on Linux"),
               (2, "With n_processes=4 the MultiprocessIterator hangs after a few hundred iterations.")]
    assert about_training(t for _, t in chainer)
    [told] = told_in_prose({"E": 0.4, "none": 0.6}, chainer, set())
    assert (told.cls, told.method) == ("E", "prose+classifier")
    assert about_training(["The data loading step of our pipeline stalls."])
    unrelated = [(1, "Our gunicorn service hangs after a few hundred requests; the worker never returns.")]
    assert not about_training(t for _, t in unrelated)
    assert told_in_prose({"E": 0.4, "none": 0.6}, unrelated, set()) == []
