"""Train the text classifier on the corpus and write the shipped parameters."""
from __future__ import annotations

import datetime as _dt
import tomllib
from pathlib import Path
from typing import Sequence

from .. import api, pipeline
from ..corpus import Item, corpus_hash, load_items
from .digest import digest_text
from .labels import label_of
from .model import SHIPPED, TextModel, export, fit

SYMPTOMS = SHIPPED.parent / "symptoms.toml"


def item_text(item: Item) -> str:
    """The text the classifier sees for a corpus item: the same digest as at scan time."""
    scanner = pipeline.get_scanner()
    out, _ = pipeline.scan_source(api.as_source(item.path, None, None), scanner)
    return digest_text(out) if out is not None else ""


def signature_examples() -> tuple[list[str], list[str]]:
    """The database's own example lines, labelled by their entry's class: real error texts of
    every PyTorch version, which the corpus alone would not cover."""
    texts, labels = [], []
    for sig in pipeline.get_scanner().db.signatures:
        if sig.role in ("failure", "cause") and sig.cls in ("A", "B", "C", "D", "E"):
            texts += list(sig.examples)
            labels += [label_of(sig.cls, sig.subclass)] * len(sig.examples)
    return texts, labels


def symptom_texts() -> tuple[list[str], list[str]]:
    """The team's short symptom descriptions (``dllogscan/data/symptoms.toml``)."""
    with SYMPTOMS.open("rb") as fh:
        doc = tomllib.load(fh)
    texts, labels = [], []
    for entry in doc["symptom"]:
        texts += entry["texts"]
        labels += [entry["label"]] * len(entry["texts"])
    return texts, labels


def train_items(items: Sequence[Item], with_lexicon: bool = True) -> TextModel:
    """Fit on corpus items, plus the signature examples and symptom texts as a lexicon."""
    texts = [item_text(i) for i in items]
    labels = [label_of(i.label, i.subclass) for i in items]
    if with_lexicon:
        for extra_texts, extra_labels in (signature_examples(), symptom_texts()):
            texts, labels = texts + extra_texts, labels + extra_labels
    return fit(texts, labels)


def train_and_export(root: Path | None = None, out: Path = SHIPPED) -> dict[str, object]:
    """Fit on the whole corpus; write ``out``; return what was written about it."""
    import sklearn

    items = load_items(root)
    model = train_items(items)
    meta = {
        "corpus_hash": corpus_hash(items), "items": len(items), "sklearn": sklearn.__version__,
        "trained": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "labels": model.labels,
    }
    export(model, out, meta)
    return meta
