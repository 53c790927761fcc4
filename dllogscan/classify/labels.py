"""Labels the classifier predicts: a class, or a class and subclass family for class B."""
from __future__ import annotations

from ..core.classes import field_guide_letters

LABELS = ("A", "B.oom", "B.getitem", "B.crash", "C", "D", "E", "none")
#: the causes of class B the classifier tells apart (a B subclass names one, or a variant of one)
B_CAUSES = ("oom", "getitem", "crash")
#: the subclass a classifier-only diagnosis reports for each label
SUBCLASS = {"A": "shm", "B.oom": "oom", "B.getitem": "getitem", "B.crash": "crash",
            "C": "fd-exhaustion", "D": "cuda-in-forked-worker", "E": "hang", "none": None}
TITLE = {
    "A": "Shared memory (/dev/shm) too small for the batches in flight",
    "B.oom": "A worker ran out of host memory (OOM killer)",
    "B.getitem": "An exception in the dataset code killed a worker",
    "B.crash": "A worker crashed (segfault or abort in native code)",
    "C": "File descriptors exhausted by tensors shared between processes",
    "D": "CUDA used inside a forked DataLoader worker",
    "E": "The data pipeline hangs or stalls with no error",
}


def label_of(cls: str, subclass: str | None) -> str:
    """Corpus (class, subclass) -> classifier label. A kind beyond the five (F: workers could not
    start) is ``none`` to the classifier: signatures name it, the classifier weighs A-E against
    the rest."""
    if cls not in field_guide_letters():
        return "none"
    if cls == "B":
        return f"B.{b_cause(subclass) or 'oom'}"
    return cls


def b_cause(subclass: str | None) -> str | None:
    """The cause of ``B_CAUSES`` a B subclass names or is a variant of (``oom-fork``: oom), else None."""
    sub = subclass or ""
    return next((cause for cause in B_CAUSES if sub.startswith(cause)), None)


#: a subclass that names no cause: the text shows that a worker died, not why
#: (``B.oom-suspected.*``: "exited unexpectedly" and its kin, the OOM killer only the first check)
CAUSE_NOT_SHOWN = "-suspected"


def label_shares(cls: str, subclass: str | None) -> tuple[tuple[str, float], ...]:
    """What an example of (cls, subclass) teaches the classifier: its label with the whole weight,
    or, for a B whose subclass says the cause is not in the text, each B label a third. Taught as
    B.oom (``label_of``'s family), the bare "exited unexpectedly" line had become a 98 % OOM to the
    classifier, which then "refined" every such diagnosis to OOM on the line alone."""
    if cls == "B" and (subclass or "").endswith(CAUSE_NOT_SHOWN):
        return tuple((f"B.{cause}", 1.0 / len(B_CAUSES)) for cause in B_CAUSES)
    return ((label_of(cls, subclass), 1.0),)


def split_label(label: str) -> tuple[str, str | None]:
    return label.split(".", 1)[0], SUBCLASS[label]
