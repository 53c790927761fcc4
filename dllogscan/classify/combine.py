"""One verdict from two kinds of evidence: signature diagnoses and the classifier's view.

- a signature diagnosis at or above STRONG stands alone (the classifier is not even loaded);
- a weaker one has its odds multiplied by the classifier's likelihood ratio between its class
  and "none", raised to TEMPER (< 1: the two read the same words, so they are not independent),
  so a weak, reworded hit in a text the classifier calls healthy drops below the threshold, and one
  it backs rises; a hit of the class the classifier would give alone (see below) is never shown
  below the classifier's probability, and a weightless context hit lifts nothing by itself;
- a ``canonical`` diagnosis (decided by the field guide's own failure text, e.g. a bare
  ``exited unexpectedly`` after 100 KB of healthy progress lines) keeps at least its signature
  confidence: the classifier may raise it, refine its subclass or rank another diagnosis above
  it, never veto it;
- a ``*-suspected`` subclass (a bare ``exited unexpectedly``: the cause is not in the failure
  text) takes the classifier's subclass when the classifier backs the class and is sure of one
  subclass (>= REFINE_SUBCLASS): "dmesg shows the OOM killer took it" next to the bare line is
  B / oom, with the OOM fixes first;
- a hang (class E) found by signatures in a log that shows progress lines (MIN_PROGRESS_LINES;
  one "2 it/s" in a sentence is prose, not a log) keeps its signature
  confidence too: a stall is the absence of lines, so the classifier reads a stalled job's log as
  a healthy one and its "none" is no evidence against the hang;
- with no signature diagnosis, the classifier's top class makes a diagnosis of its own when its
  calibrated probability clears that class's threshold (chosen out of fold so that false alarms
  on look-alikes stay within budget, see ``calibrate.py``) and the text is about PyTorch training
  at all (RELEVANT) or names another framework's data loader or data loading (``about_training``),
  citing the lines that speak most for it; otherwise: nothing found. (A kernel log of a java
  service killed by the OOM killer reads like class B to a bag of words, but it is no DataLoader
  report.) The confidence shown is the calibrated probability itself;
- a hang told in prose (class E, from the classifier alone) also needs the text to speak of the
  data loader or its workers, or of the training loop's epochs, where those workers start and stop
  (``loader_text`` in ``data/prose.toml``: DataLoader, num_workers, workers, a train_loader, "data
  loading", "fetching a batch", "epoch", and another framework's loader: Keras's use_multiprocessing,
  tf.data, Paddle's and Chainer's multi-process readers, Caffe's data layers): a DDP barrier, an
  NCCL timeout or a BLAS deadlock in a text about neither reads like a loader hang to a bag of words. The thresholds are chosen with this
  rule applied (``blocked_classes``), so E's comes down where its look-alikes no longer count
  against it. Where this rule alone keeps such a hang (over E's threshold) from a text left with no
  verdict, the result carries a note instead (``unsure_hang``, the pipeline adds it): no verdict,
  and the check that would decide it (py-spy where it waits; a rerun with ``num_workers=0``);
- with no signature verdict, one sentence that tells a failure in prose — the loader or its
  workers hang, were killed, ran out of memory, crashed (``prose.py``, data ``data/prose.toml``)
  — is weak evidence of that class of its own: the rule's prior, whose odds the classifier's
  class-vs-none ratio scales, as for a weak signature hit; the sentence is cited. (Grouped CV of
  corpus/threads: the hang sentence alone took E recall from 0.55 to 0.68 for 3 more false alarms.)

Last, the confidence of each verdict kept is calibrated (``calibrated``): the odds arithmetic above
decides *whether* to diagnose; how often a verdict reached that way is right is then read off the
training set's out-of-fold verdicts (``calibrate.fit_verdict_scaling``), so the percentage shown is
that probability. One monotone map for all of them keeps their order, so it changes no verdict, and
it never takes one below ``min_confidence``. (Grouped CV of corpus/threads: a map per method
calibrated a little better but re-ranked a prose verdict above a better classifier one.)

After combine(), the pipeline sets aside a verdict that only words vouch for — the classifier
alone or a prose sentence — where a sentence of the text rules out its class, with a note saying so
(``words_ruled_out``; the sentences: ``[[ruled_out]]`` in ``data/prose.toml``). Shared memory (A)
is ruled out by an ENOSPC that names a file elsewhere (a checkpoint, a cache); a hang of the workers
(E) by the field guide's isolation step, taken ("with num_workers=0 it still freezes", "setting the
workers to 0 did not help": the workers were never the issue), among others. A signature's verdict
stays. The thresholds are chosen as if this step were not there: counted in their search,
the three look-alikes the isolation step sets aside in corpus/threads freed budget that the search
spent on B's threshold (grouped CV: 5 more look-alikes called B, 1 E thread lost).
"""
from __future__ import annotations

import dataclasses
import math
import re
from typing import Sequence

from ..correlate.candidates import PROGRESS_RE, RELEVANT, same_message, shape
from ..core.models import Diagnosis, Evidence
from .labels import CAUSE_NOT_SHOWN, TITLE, split_label

STRONG = 0.8
#: the power of the classifier's class-vs-none ratio over a weak signature hit or a prose sentence.
#: Grouped CV of corpus/threads, combined (macro-F1 / false alarms): 0.2 0.862 / 12.1 %, 0.3 0.862 /
#: 11.8 %, 0.35 0.862 / 11.6 %, 0.4 0.861 / 11.6 %, 0.5 0.857 / 11.6 %, 0.7 0.856 / 11.6 %
TEMPER = 0.35
EPS = 1e-3
#: the threshold of a class the model carries none for (a model trained without calibration)
DEFAULT_THRESHOLD = 0.7
MAX_CITED = 3
#: a line is cited only where it speaks for the label at least this share as much as the best line:
#: of 496 lines cited over 400 sampled corpus threads, 38 fell below a fifth of their text's best, and
#: of 25 read, 16 said nothing to a reader (``inference(model,``, ``dataloader ready``, a shell prompt)
MIN_SHARE_OF_BEST = 0.2
GUESSED_SUBCLASS = "from the text classifier"  # the note refine_subclass leaves
NEEDS_LOADER_CONTEXT = frozenset({"E"})
MIN_PROGRESS_LINES = 2
REFINE_SUBCLASS = 0.8
#: the methods of a diagnosis that no failure text vouches for
WORDS_ONLY = frozenset({"classifier", "prose+classifier"})


def class_probability(pred: dict[str, float], cls: str) -> float:
    return sum(p for label, p in pred.items() if label.split(".", 1)[0] == cls)


def needs_classifier(diagnoses: Sequence[Diagnosis]) -> bool:
    return not any(d.confidence >= STRONG for d in diagnoses)


def combine(diagnoses: Sequence[Diagnosis], pred: dict[str, float], lines: Sequence[tuple[int, str]],
            model, min_confidence: float) -> list[Diagnosis]:
    """Merge signature diagnoses with the classifier's probabilities for the same source."""
    out = []
    thresholds = getattr(model, "thresholds", None) or {}
    alone = own_verdict(pred, lines, min_confidence, thresholds)
    alone_cls = split_label(alone)[0] if alone else None
    for d in diagnoses:
        p = class_probability(pred, d.cls)
        conf = update(d.confidence, p, pred.get("none", 0.0))
        if alone_cls == d.cls:  # never below what the classifier alone would say
            conf = max(conf, p)
        if d.cls == "E" and sum(1 for _, text in lines if PROGRESS_RE.search(text)) >= MIN_PROGRESS_LINES:
            conf = max(conf, d.confidence)  # the classifier cannot see a stall
        elif d.canonical:
            conf = max(conf, d.confidence)  # a canonical failure text is never vetoed
        note = f"classifier gives class {d.cls} {p:.0%}, none {pred.get('none', 0.0):.0%}"
        out.append(refine_subclass(dataclasses.replace(d, confidence=conf, method="signatures+classifier",
                                                       notes=d.notes + (note,)), pred))
    decided = any(d.confidence > 0 for d in diagnoses)  # weightless context decides nothing
    label = alone if not decided else None
    if label and not any(d.cls == split_label(label)[0] and d.confidence >= min_confidence for d in out):
        cls, sub = split_label(label)
        p = class_probability(pred, cls)
        out.append(named_by_prose(Diagnosis(
            cls=cls, subclass=sub, title=TITLE[label], confidence=p, evidence=cite(lines, label, model),
            method="classifier", notes=(f"no known error text matched; the text classifier says {label} "
                                        f"({p:.0%}; its threshold for class {cls} is "
                                        f"{thresholds.get(cls, DEFAULT_THRESHOLD):.0%})",)), lines))
    if not decided:
        out += told_in_prose(pred, lines, {d.cls for d in out if d.confidence >= min_confidence})
    out = [d for d in out if d.confidence >= min_confidence]
    out.sort(key=lambda d: -d.confidence)
    scaling = getattr(model, "verdict_scaling", None)
    out = [calibrated(d, scaling, min_confidence) for d in out]  # one monotone map: the order stands
    return out


def calibrated(d: Diagnosis, scaling: tuple[float, float] | None, min_confidence: float) -> Diagnosis:
    """``d`` with the confidence such verdicts have been right with, out of fold (the module's
    last rule); unchanged where the model carries no scaling."""
    if scaling is None:
        return d
    return dataclasses.replace(d, confidence=max(scaled(d.confidence, scaling), min_confidence))


def scaled(confidence: float, scaling: tuple[float, float]) -> float:
    """sigmoid(slope * logit(confidence) + intercept), kept within (0, 1)."""
    slope, intercept = scaling
    c = min(max(confidence, EPS), 1 - EPS)
    z = slope * math.log(c / (1 - c)) + intercept
    p = 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))
    return min(max(p, EPS), 1 - EPS)


def told_in_prose(pred: dict[str, float], lines: Sequence[tuple[int, str]], found: set[str]) -> list[Diagnosis]:
    """Diagnoses from failures told in prose (see the rules), weighed by the classifier: at most
    one per class, none of a class already ``found``."""
    from .prose import load_rules

    if not about_training(t for _, t in lines):
        return []
    out = []
    for rule in load_rules():
        cls, sub = split_label(rule.label)
        sub = rule.subclass or sub
        if cls in found or (told := rule.sentence(lines)) is None:
            continue
        found = found | {cls}
        p, p_none = class_probability(pred, cls), class_probability(pred, "none")
        out.append(Diagnosis(cls=cls, subclass=sub, title=rule.title or TITLE[rule.label],
                             confidence=update(rule.prior, p, p_none),
                             evidence=(_prose_evidence(told),), method="prose+classifier",
                             notes=(f"a failure told in prose (line {told[0]}); the text classifier gives class "
                                    f"{cls} {p:.0%}, none {p_none:.0%}",)))
    return out


def _prose_evidence(told: tuple[int, str]) -> Evidence:
    """The cited line of a prose rule's sentence (``ProseRule.sentence``)."""
    return Evidence(told[0], told[1][:600], "prose")


def named_by_prose(d: Diagnosis, lines: Sequence[tuple[int, str]]) -> Diagnosis:
    """The classifier's own diagnosis with the subclass a prose rule of its class names (a slow
    worker start-up told beside ``persistent_workers``), citing that sentence; else unchanged."""
    from .prose import load_rules

    for rule in load_rules():
        if rule.subclass and split_label(rule.label)[0] == d.cls and (told := rule.sentence(lines)):
            cited = tuple(e for e in d.evidence if e.line != told[0]) + (_prose_evidence(told),)
            return dataclasses.replace(d, subclass=rule.subclass, title=rule.title or d.title,
                                       evidence=tuple(sorted(cited, key=lambda e: e.line)),
                                       notes=d.notes + (f"subclass {rule.subclass}: told in prose (line {told[0]})",))
    return d


def refine_subclass(d: Diagnosis, pred: dict[str, float]) -> Diagnosis:
    """A ``*-suspected`` diagnosis with the subclass the classifier is sure of (see the rules)."""
    if not (d.subclass or "").endswith(CAUSE_NOT_SHOWN):
        return d
    labels = [label for label in pred if label.startswith(d.cls + ".")]
    if not labels:
        return d
    best = max(labels, key=pred.get)
    if pred[best] < REFINE_SUBCLASS:
        return d
    _, sub = split_label(best)
    if sub == d.subclass:
        return d
    return dataclasses.replace(d, subclass=sub, title=TITLE[best],
                               notes=d.notes + (f"subclass {sub} {GUESSED_SUBCLASS} ({pred[best]:.0%})",))


def guessed_subclass(note: str) -> bool:
    """Whether ``note`` is ``refine_subclass``'s: the subclass is the classifier's guess."""
    return note.startswith("subclass ") and GUESSED_SUBCLASS in note


def top_class(pred: dict[str, float]) -> str:
    """The class (A-E or none) with the most probability, its labels summed."""
    classes = {label.split(".", 1)[0] for label in pred}
    return max(sorted(classes), key=lambda c: class_probability(pred, c))


def _confident_class(pred: dict[str, float], lines: Sequence[tuple[int, str]], min_confidence: float,
                     thresholds: dict[str, float]) -> tuple[str, float] | None:
    """The classifier's top class and its probability where it clears that class's threshold and
    ``min_confidence`` in a text about PyTorch training at all; else None."""
    cls = top_class(pred)
    p = class_probability(pred, cls)
    if cls == "none" or p < max(thresholds.get(cls, DEFAULT_THRESHOLD), min_confidence):
        return None
    if not about_training(t for _, t in lines):
        return None
    return cls, p


def own_verdict(pred: dict[str, float], lines: Sequence[tuple[int, str]], min_confidence: float,
                thresholds: dict[str, float]) -> str | None:
    """The classifier's label when it may diagnose on its own: its top class is confident
    (``_confident_class``) and not blocked in this text (``blocked_classes``); else None."""
    if (confident := _confident_class(pred, lines, min_confidence, thresholds)) is None:
        return None
    cls = confident[0]
    if cls in blocked_classes(t for _, t in lines):
        return None
    return max((label for label in pred if label.split(".", 1)[0] == cls), key=pred.get)


def unsure_hang(pred: dict[str, float], lines: Sequence[tuple[int, str]], thresholds: dict[str, float],
                min_confidence: float) -> str | None:
    """The note for a text with no verdict where the classifier's hang (class E) would clear its
    threshold but the text names nothing of the loader (``blocked_classes``): what would decide it
    (``unsure_hang_note`` in ``data/prose.toml``). No verdict changes."""
    confident = _confident_class(pred, lines, min_confidence, thresholds)
    if confident is None or confident[0] not in blocked_classes(t for _, t in lines):
        return None
    from .prose import unsure_hang_note

    return unsure_hang_note().replace("{p}", f"{confident[1]:.0%}")


def blocked_classes(texts) -> frozenset[str]:
    """The classes the classifier may not give alone to these texts: E without a word of the data
    loader or its workers (see the rules above)."""
    return frozenset() if speaks_of_loader(list(texts)) else NEEDS_LOADER_CONTEXT


def words_ruled_out(diagnoses: Sequence[Diagnosis],
                    lines: Sequence[tuple[int, str]]) -> tuple[list[Diagnosis], tuple[str, ...]]:
    """The diagnoses less those only words vouch for (the classifier alone, a prose sentence)
    where a sentence of the text rules their class out (``[[ruled_out]]`` in ``data/prose.toml``:
    a hang of the workers, see the rules above; shared memory where the full disk is another);
    and the note of each set aside."""
    from .prose import first_ruled_out

    kept, notes = list(diagnoses), []
    for d in diagnoses:
        if not from_words_alone(d) or (found := first_ruled_out(lines, d.cls)) is None:
            continue
        rule, told = found
        kind = "A hang" if d.cls == "E" else "A diagnosis"
        notes.append(f"{kind} (class {d.cls}) read from the words alone was set aside: "
                     + rule.note.replace("{line}", str(told[0])))
        kept.remove(d)
    return kept, tuple(notes)


def from_words_alone(d: Diagnosis) -> bool:
    """Whether only words vouch for ``d`` (the classifier alone, a prose sentence) and its class
    is one a ``[[ruled_out]]`` sentence may set aside."""
    from .prose import ruled_out_classes

    return d.method in WORDS_ONLY and d.cls in ruled_out_classes()


def about_training(texts) -> bool:
    """Whether these texts are about PyTorch training at all (RELEVANT), or name another framework's
    data loader or data loading (``prose.framework_loader_text``): the corpus labels another
    framework's loader failures as the DataLoader's (rule ``other-framework-loader``), and a Chainer
    ``MultiprocessIterator`` hang need name neither PyTorch nor training."""
    from .prose import framework_loader_text

    other = framework_loader_text()
    return any(RELEVANT.search(t) or other.search(t) for t in texts)


def speaks_of_loader(texts: Sequence[str]) -> bool:
    """Whether these texts name the data loader, its workers or the training loop's epochs (``loader_text``
    in ``data/prose.toml``)."""
    from .prose import loader_text

    loader = loader_text()
    return any(loader.search(t) for t in texts)


def update(prior: float, p_class: float, p_none: float) -> float:
    """Posterior of a signature diagnosis given the classifier's class-vs-none ratio."""
    prior = min(max(prior, EPS), 1 - EPS)
    odds = prior / (1 - prior) * ((p_class + EPS) / (p_none + EPS)) ** TEMPER
    return odds / (1 + odds)


#: a line that says nothing to a reader, whatever its n-grams weigh: a code fence (```python) or a
#: line with no word of three letters (`}]`, `))`, a table rule). On corpus/threads, logs and reports
#: 157 of 2193 cited lines had fewer than three words, and 43 were a fence.
UNCITABLE = re.compile(r"^\s*(?:```|~~~)|^(?!.*[^\W\d_]{3})", re.DOTALL)


def cite(lines: Sequence[tuple[int, str]], label: str, model) -> tuple[Evidence, ...]:
    """The few lines that speak most for ``label``, in their original order (never a line that
    says nothing to a reader, ``UNCITABLE``, one far weaker than the best, ``MIN_SHARE_OF_BEST``, nor
    one message twice)."""
    lines = [(n, t) for n, t in lines if not UNCITABLE.match(t)]
    if not lines:
        return ()
    texts = [t[:2000] for _, t in lines]
    scores = model.line_scores(texts, label)
    best: list[int] = []
    forms = [shape(t) for t in texts]
    ranked = sorted(range(len(lines)), key=lambda i: -scores[i])
    floor = max(float(scores[ranked[0]]) * MIN_SHARE_OF_BEST, 0.0)
    for i in ranked:
        if len(best) == MAX_CITED or scores[i] <= floor:
            break
        if not any(same_message(forms[i], forms[j]) for j in best):  # a message once
            best.append(i)
    return tuple(Evidence(lines[i][0], lines[i][1][:600], "classifier") for i in sorted(best))
