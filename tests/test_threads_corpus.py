"""The real-thread corpus (``corpus/threads/``): well-formed, no thread twice, none held out."""
from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

from dllogscan.evaluation.corpus import load_items

ROOT = Path(__file__).resolve().parent.parent
THREADS = ROOT / "corpus" / "threads"
HELDOUT = ROOT.parent / "shared" / "heldout"
ITEMS = load_items(parts=("threads",))
RULES = set(re.findall(r"^- `([a-z-]+)` — ", (THREADS / "README.md").read_text(encoding="utf-8"), re.M))
METAS = {p: json.loads(p.read_text(encoding="utf-8")) for p in sorted(THREADS.glob("*.meta.json"))}


def test_every_item_is_well_formed():
    sys.path.insert(0, str(THREADS))
    from add import problems  # the same validation that admitted it

    for path, meta in METAS.items():
        text = path.with_name(path.name.replace(".meta.json", ".md")).read_text(encoding="utf-8")
        stem = path.name[: -len(".meta.json")]
        assert problems({"stem": stem, "text": text, "meta": meta}) == [], stem
        second = meta["labels"].get("second")
        if second is not None and second != meta["label"] and not meta["labels"].get("rule"):
            assert meta["ambiguous"], f"{stem}: the two labelling passes disagree but it is not ambiguous"
        if meta["labels"].get("rule"):
            assert meta["labels"]["rule"] in RULES, f"{stem}: labelling rule {meta['labels']['rule']!r} is not in the README"


def test_no_thread_twice():
    urls = Counter(m["source_url"].lower().split("#")[0].rstrip("/") for m in METAS.values())
    assert [u for u, n in urls.items() if n > 1] == []


@pytest.mark.skipif(not (HELDOUT / "check.py").exists(),
                    reason="../shared/heldout is not beside this checkout: cannot check the held-out list")
def test_no_source_is_held_out():
    sys.path.insert(0, str(HELDOUT))
    from check import is_held_out  # type: ignore[import-not-found]

    held = [m["source_url"] for m in METAS.values() if is_held_out(m["source_url"])]
    assert held == [], f"held-out threads in the corpus: {held}"


def test_threads_load_as_items_grouped_by_repository():
    assert len(ITEMS) == len(METAS)
    assert all(i.kind == "thread" and i.group == i.scenario and i.source_url for i in ITEMS)


def test_second_pass_keeps_a_rule_and_flags_disagreement(tmp_path, monkeypatch):
    """``relabel.py apply`` records the second label; a disagreement makes a thread ambiguous,
    except where a written rule (``labels.rule``) set its label, which it keeps."""
    import io

    sys.path.insert(0, str(THREADS))
    import relabel

    ruled = {"label": "none", "ambiguous": False, "labels": {"first": "E", "second": "none", "rule": "uneven-ranks"}}
    plain = {"label": "E", "ambiguous": False, "labels": {"first": "E"}}
    for stem, meta in (("none-a-b-1", ruled), ("e-a-b-2", plain)):
        (tmp_path / f"{stem}.meta.json").write_text(json.dumps(meta), encoding="utf-8")
    monkeypatch.setattr(relabel, "HERE", tmp_path)
    rows = [{"id": relabel.opaque("none-a-b-1"), "label": "E"}, {"id": relabel.opaque("e-a-b-2"), "label": "none"}]
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(json.dumps(r) for r in rows)))
    assert relabel.apply() == 0
    after_ruled = json.loads((tmp_path / "none-a-b-1.meta.json").read_text(encoding="utf-8"))
    after_plain = json.loads((tmp_path / "e-a-b-2.meta.json").read_text(encoding="utf-8"))
    assert after_ruled["labels"] == {"first": "E", "second": "E", "rule": "uneven-ranks"}
    assert after_ruled["label"] == "none" and after_ruled["ambiguous"] is False
    assert after_plain["labels"] == {"first": "E", "second": "none"} and after_plain["ambiguous"] is True
