"""Labels the classifier predicts: a class, or a class and subclass family for class B, and
class E in two: the slow start-up of workers apart from the other hangs (``label_of``)."""
from __future__ import annotations

from ..core.classes import field_guide_letters

LABELS = ("A", "B.oom", "B.getitem", "B.crash", "C", "D", "E", "E.slow-start", "none")
#: the causes of class B the classifier tells apart (a B subclass names one, or a variant of one)
B_CAUSES = ("oom", "getitem", "crash")
#: the subclass a classifier-only diagnosis reports for each label
SUBCLASS = {"A": "shm", "B.oom": "oom", "B.getitem": "getitem", "B.crash": "crash",
            "C": "fd-exhaustion", "D": "cuda-in-forked-worker", "E": "hang", "E.slow-start": "slow-start",
            "none": None}
TITLE = {
    "A": "Shared memory (/dev/shm) too small for the batches in flight",
    "B.oom": "A worker ran out of host memory (OOM killer)",
    "B.getitem": "An exception in the dataset code killed a worker",
    "B.crash": "A worker crashed (segfault or abort in native code)",
    "C": "File descriptors exhausted by tensors shared between processes",
    "D": "CUDA used inside a forked DataLoader worker",
    "E": "The data pipeline hangs or stalls with no error",
    "E.slow-start": "Slow worker start-up: every epoch waits while the DataLoader starts its workers again",
}
#: the cause of a hang (a thread's ``e_cause``) taught as a label of its own (see ``label_of``)
E_APART = "slow-start"


def label_of(cls: str, subclass: str | None, e_cause: str | None = None) -> str:
    """Corpus (class, subclass, cause of a hang) -> classifier label. A kind beyond the five (F:
    workers could not start) is ``none`` to the classifier: signatures name it, the classifier
    weighs A-E against the rest.

    A hang whose thread found the slow start-up of workers (``e_cause`` "slow-start": a pause at
    each epoch's start, persistent_workers, a slow worker_init_fn) is ``E.slow-start``, the other
    hangs ``E``; both count as E (their probabilities summed). Those threads read unlike deadlocks
    (requests and pull requests about start-up time, per-epoch pauses), and one weight vector for
    both had weighed them against each other. Grouped CV of corpus/threads (session 48; macro-F1 /
    least recall (E) / false alarms, combined), one E -> slow start apart, on three draws of the
    folds: 0.817 / 0.626 / 6.3 % -> 0.819 / 0.649 / 6.3 %, 0.819 / 0.640 / 6.4 % -> 0.819 / 0.646 /
    6.5 %, 0.821 / 0.628 / 6.6 % -> 0.822 / 0.655 / 6.4 %; the cost, a written near miss (an RFC
    about worker start-up time) called E on all three, D 0.01 lower on average. The locks and
    fork-inherited handles apart as well: 0.819 / 0.651 / 6.3 % and that near miss plus another;
    the locks alone apart: 0.817 / 0.640 / 6.6 %; the look-alikes whose subclass is another
    program's hang (NCCL timeouts, slow loaders) as a none label of their own: 0.817 / 0.632 / 6.2 %,
    near misses 5 of 67. A verdict from ``E.slow-start`` names its cause, slow-start (the slow-start
    fixes first): no verdict changes, and on the same draw E's cause is named right 73 -> 80 times of
    139 hangs whose cause the corpus records (slow-start 29 -> 36 of 39), wrong 17 -> 19."""
    if cls not in field_guide_letters():
        return "none"
    if cls == "B":
        return f"B.{b_cause(subclass) or 'oom'}"
    if cls == "E" and e_cause == E_APART:
        return f"E.{E_APART}"
    return cls


def b_cause(subclass: str | None) -> str | None:
    """The cause of ``B_CAUSES`` a B subclass names or is a variant of (``oom-fork``: oom), else None."""
    sub = subclass or ""
    return next((cause for cause in B_CAUSES if sub.startswith(cause)), None)


#: a subclass that names no cause: the text shows that a worker died, not why
#: (``B.oom-suspected.*``: "exited unexpectedly" and its kin, the OOM killer only the first check)
CAUSE_NOT_SHOWN = "-suspected"


def label_shares(cls: str, subclass: str | None, e_cause: str | None = None) -> tuple[tuple[str, float], ...]:
    """What an example of (cls, subclass) teaches the classifier: its label with the whole weight,
    or, for a B whose subclass says the cause is not in the text, each B label a third. Taught as
    B.oom (``label_of``'s family), the bare "exited unexpectedly" line had become a 98 % OOM to the
    classifier, which then "refined" every such diagnosis to OOM on the line alone."""
    if cls == "B" and (subclass or "").endswith(CAUSE_NOT_SHOWN):
        return tuple((f"B.{cause}", 1.0 / len(B_CAUSES)) for cause in B_CAUSES)
    return ((label_of(cls, subclass, e_cause), 1.0),)


def split_label(label: str) -> tuple[str, str | None]:
    return label.split(".", 1)[0], SUBCLASS[label]
