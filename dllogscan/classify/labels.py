"""Labels the classifier predicts: a class, or a class and subclass family for class B."""
from __future__ import annotations

from ..core.classes import field_guide_letters

LABELS = ("A", "B.oom", "B.getitem", "B.crash", "C", "D", "E", "none")
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
        sub = subclass or ""
        for family in ("getitem", "crash", "oom"):
            if sub.startswith(family):
                return f"B.{family}"
        return "B.oom"
    return cls


def split_label(label: str) -> tuple[str, str | None]:
    return label.split(".", 1)[0], SUBCLASS[label]
