"""The real-thread corpus (``corpus/threads/``): well-formed, no thread twice, none held out."""
from __future__ import annotations

import json
import re
import subprocess
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


#: the held-out list and add.py need ../shared beside this checkout (a fresh clone has none)
NEEDS_HELDOUT = pytest.mark.skipif(not (HELDOUT / "check.py").exists(),
                                   reason="../shared/heldout is not beside this checkout: cannot check the held-out list")
#: a URL no corpus thread has, for add.py's checks
NEW_URL = "https://github.com/example-owner/example-repo/issues/987654321"


@NEEDS_HELDOUT
def test_no_source_is_held_out():
    sys.path.insert(0, str(HELDOUT))
    from check import is_held_out  # type: ignore[import-not-found]

    held = [m["source_url"] for m in METAS.values() if is_held_out(m["source_url"])]
    assert held == [], f"held-out threads in the corpus: {held}"


def _add(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(THREADS / "add.py"), *args], input=stdin,
                          capture_output=True, text=True, timeout=120)


@NEEDS_HELDOUT
def test_add_check_refuses_what_add_would_and_writes_nothing():
    """``add.py --check`` is the finders' dry run: the same refusals as adding, no file written."""
    path, meta = next(iter(METAS.items()))
    stem = path.name[: -len(".meta.json")]
    text = path.with_name(f"{stem}.md").read_text(encoding="utf-8")
    fresh = {"stem": "none-example-owner-example-repo-987654321", "text": text,
             "meta": {**meta, "label": "none", "source_url": NEW_URL, "labels": {"first": "none"}}}
    lines = [json.dumps({"stem": stem, "text": text, "meta": meta}),  # already here
             json.dumps(fresh),
             json.dumps({**fresh, "stem": "none-example-owner-example-repo-987654322"}),  # its URL again
             json.dumps({**fresh, "stem": "Bad Stem"}),
             "not json"]
    before = sorted(p.name for p in THREADS.iterdir())
    done = _add("--check", stdin="\n".join(lines) + "\n")
    assert sorted(p.name for p in THREADS.iterdir()) == before
    assert done.returncode == 1
    assert done.stdout.splitlines() == [f"{fresh['stem']}: ok"]
    refusals = done.stderr.splitlines()
    assert f"duplicate of {stem}" in refusals[0] and f"a thread named {stem} is already here" in refusals[0]
    assert "duplicate of none-example-owner-example-repo-987654321" in refusals[1]
    assert refusals[2].startswith("Bad Stem: refused: stem") and refusals[3].startswith("line 5: not JSON")


@NEEDS_HELDOUT
def test_add_url_says_whether_a_candidate_can_be_used():
    known = next(iter(METAS.values()))["source_url"]
    done = _add("--url", NEW_URL)
    assert (done.returncode, done.stdout) == (0, f"{NEW_URL}: new\n")
    done = _add("--url", NEW_URL, known)
    assert done.returncode == 1 and done.stdout.splitlines()[1].startswith(f"{known}: duplicate of ")


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


def _audit_module():
    sys.path.insert(0, str(THREADS))
    import audit

    return audit


def test_label_audit_every_flagged_pair_is_reviewed():
    """Two threads that cite each other or are near copies but carry two classes need a review in
    ``audited.toml`` (a new batch that brings one fails here); no review outlives its pair."""
    audit = _audit_module()
    flags, unreviewed, stale = audit.audit()
    assert flags, "the audit flags the reviewed pairs: an empty result means the checks broke"
    assert [f.detail for f in unreviewed] == []
    assert stale == []


def _thread(folder: Path, stem: str, label: str, url: str, text: str, why: str = "x") -> None:
    meta = {"label": label, "source_url": url, "why": why, "ambiguous": False}
    (folder / f"{stem}.meta.json").write_text(json.dumps(meta), encoding="utf-8")
    (folder / f"{stem}.md").write_text(text, encoding="utf-8")


def test_label_audit_flags_copies_and_citations_and_stale_reviews(tmp_path):
    audit = _audit_module()
    paste = ("RuntimeError: DataLoader worker (pid 4242) is killed by signal: Killed. "
             "Training the segmentation model with 8 workers on the cluster node stops in epoch 3.")
    _thread(tmp_path, "b-org-repo-1", "B", "https://github.com/org/repo/issues/1", paste)
    _thread(tmp_path, "none-org-repo-2", "none", "https://github.com/org/repo/issues/2", paste + " Same here.")
    _thread(tmp_path, "e-org-repo-3", "E", "https://github.com/org/repo/pull/3",
            "Fixes the stall of the loader's workers.", why="Its fix rests on #1's workaround.")
    _thread(tmp_path, "e-other-tool-9", "E", "https://github.com/other/tool/issues/9",
            "Unrelated words about a queue that never returns a batch.")
    _thread(tmp_path, "none-amb-x-1", "none", "https://github.com/amb/x/issues/1", paste)
    meta = json.loads((tmp_path / "none-amb-x-1.meta.json").read_text(encoding="utf-8"))
    (tmp_path / "none-amb-x-1.meta.json").write_text(json.dumps({**meta, "ambiguous": True}), encoding="utf-8")
    reviews = tmp_path / "audited.toml"
    reviews.write_text('[[review]]\na = "repo-2"\nb = "org-repo-1"\ncheck = "similar"\nfinding = "gone"\n'
                       '[[review]]\na = "org-repo-1"\nb = "org-repo-2"\ncheck = "similar"\nfinding = "two failures"\n',
                       encoding="utf-8")
    flags, unreviewed, stale = audit.audit(tmp_path, reviews)
    assert {(f.a, f.b, f.check) for f in flags} == {("org-repo-1", "org-repo-2", "similar"),
                                                    ("org-repo-1", "org-repo-3", "cites")}
    assert [(f.a, f.b, f.check) for f in unreviewed] == [("org-repo-1", "org-repo-3", "cites")]
    assert stale == [("org-repo-1", "repo-2", "similar")]
    # relabelled to agree, the pair drops out and its review becomes stale
    (tmp_path / "none-org-repo-2.meta.json").write_text(json.dumps({**meta, "label": "B", "ambiguous": False}), encoding="utf-8")
    flags, unreviewed, stale = audit.audit(tmp_path, reviews)
    assert ("org-repo-1", "org-repo-2", "similar") in stale
