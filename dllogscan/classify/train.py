"""Train the text classifier on the corpus and write the shipped parameters."""
from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Sequence

from .. import api, pipeline
from ..corpus import Item, corpus_hash, load_items
from .digest import digest_text
from .labels import label_of
from .model import SHIPPED, TextModel, export, fit


def item_text(item: Item) -> str:
    """The text the classifier sees for a corpus item: the same digest as at scan time."""
    scanner = pipeline.get_scanner()
    out, _ = pipeline.scan_source(api.as_source(item.path, None, None), scanner)
    return digest_text(out) if out is not None else ""


def train_items(items: Sequence[Item]) -> TextModel:
    texts = [item_text(i) for i in items]
    return fit(texts, [label_of(i.label, i.subclass) for i in items])


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
