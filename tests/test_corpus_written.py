"""Checks on the hand-written part of the accuracy corpus: corpus/reports and corpus/nearmiss.

Every item is a text file plus a `<name>.meta.json` sidecar (see corpus/README.md).
"""

import collections
import json
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
FOLDERS = {"reports": "report", "nearmiss": "nearmiss"}
EXTENSIONS = {".md", ".txt", ".json", ".html"}
LABELS = {"A", "B", "C", "D", "E", "none"}
B_PREFIXES = ("oom", "getitem", "crash")
LANGUAGES = ("Chinese", "Japanese", "Korean", "Russian", "Spanish", "German", "Portuguese", "French")
GH_KEYS = {"title", "body", "comments"}

MIN_REPORTS = 75
MIN_PER_CLASS = 12
MIN_NEARMISS = 45
MIN_NON_ENGLISH = 8
MIN_GH_JSON = 8
MIN_SCENARIOS = 40


def _items(folder):
    """(data file, sidecar) pairs of one corpus folder."""
    root = CORPUS / folder
    out = []
    for path in sorted(root.iterdir()):
        if path.name.endswith(".meta.json") or path.name.startswith("."):
            continue
        out.append((path, root / (path.stem + ".meta.json")))
    return out


def _all_items():
    return [(folder, data, meta) for folder in FOLDERS for data, meta in _items(folder)]


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for value in obj.values():
            yield from _strings(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from _strings(value)


def json_text(obj):
    """The prose of an issue export: title, body and comment bodies, json escapes decoded."""
    if isinstance(obj, dict) and GH_KEYS <= obj.keys():  # gh issue view --json
        parts = [obj["title"], obj["body"]] + [c["body"] for c in obj["comments"]]
    elif isinstance(obj, dict) and "description" in obj and "notes" in obj:  # GitLab export
        parts = [obj["title"], obj["description"] or ""] + [n["body"] for n in obj["notes"]]
    elif isinstance(obj, dict) and "post_stream" in obj:  # Discourse topic
        parts = [obj.get("title", "")] + [p["cooked"] for p in obj["post_stream"]["posts"]]
    else:
        parts = list(_strings(obj))
    return "\n".join(parts)


def item_text(path):
    raw = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return json_text(json.loads(raw))
    return raw


def _meta(meta_path):
    return json.loads(meta_path.read_text(encoding="utf-8"))


ITEMS = _all_items()
IDS = [f"{folder}/{data.name}" for folder, data, _ in ITEMS]


def test_folders_exist():
    for folder in FOLDERS:
        assert (CORPUS / folder).is_dir(), folder


def test_every_sidecar_has_a_data_file():
    for folder in FOLDERS:
        root = CORPUS / folder
        stems = {p.stem for p in root.iterdir() if not p.name.endswith(".meta.json")}
        for meta in root.glob("*.meta.json"):
            assert meta.name[: -len(".meta.json")] in stems, f"orphan sidecar {meta}"
        assert len(stems) == len([p for p in root.iterdir() if not p.name.endswith(".meta.json")]), (
            f"two data files share a stem in {folder}"
        )


@pytest.mark.parametrize("folder,data,meta", ITEMS, ids=IDS)
def test_item(folder, data, meta):
    assert data.suffix in EXTENSIONS, f"unexpected extension {data.suffix}"
    assert meta.is_file(), f"missing sidecar {meta.name}"
    m = _meta(meta)

    assert m.get("label") in LABELS
    assert m.get("kind") == FOLDERS[folder]
    assert isinstance(m.get("scenario"), str) and m["scenario"].strip()
    assert isinstance(m.get("made_by"), str) and m["made_by"].strip()
    assert isinstance(m.get("notes", ""), str)

    label, sub = m["label"], m.get("subclass")
    if label == "none":
        assert folder == "nearmiss", "reports hold failures; look-alikes belong in nearmiss"
        assert sub is None
    else:
        assert folder == "reports", "nearmiss items are labelled none"
        assert sub is None or (isinstance(sub, str) and sub == sub.lower() and " " not in sub)
    if label == "B":
        assert isinstance(sub, str) and sub.startswith(B_PREFIXES), sub

    raw = data.read_text(encoding="utf-8")
    assert raw.strip(), "empty item"
    if data.suffix == ".json":
        json.loads(raw)

    evidence = m.get("evidence")
    if evidence is not None:
        assert isinstance(evidence, str) and evidence.strip()
        assert "\n" not in evidence, "evidence is a substring of one line"
        assert evidence in item_text(data), f"evidence not in text: {evidence!r}"


@pytest.mark.parametrize(
    "folder,data,meta", [i for i in ITEMS if i[1].suffix == ".json"], ids=[x for x in IDS if x.endswith(".json")]
)
def test_json_shapes(folder, data, meta):
    obj = json.loads(data.read_text(encoding="utf-8"))
    assert isinstance(obj, dict)
    if GH_KEYS <= obj.keys():
        assert set(obj) == GH_KEYS, "gh issue view --json title,body,comments prints exactly these keys"
        for c in obj["comments"]:
            assert isinstance(c["author"]["login"], str) and c["author"]["login"]
            assert isinstance(c["body"], str)
            assert isinstance(c["createdAt"], str) and c["createdAt"].endswith("Z")
    elif "post_stream" in obj:
        posts = obj["post_stream"]["posts"]
        assert posts and all("cooked" in p and "username" in p for p in posts)
    else:
        assert {"iid", "title", "description", "notes"} <= obj.keys(), "unknown JSON export shape"


def _metas(folder):
    return [(data, _meta(meta)) for data, meta in _items(folder)]


def test_report_counts():
    reports = _metas("reports")
    assert len(reports) >= MIN_REPORTS
    per_label = collections.Counter(m["label"] for _, m in reports)
    for label in "ABCDE":
        assert per_label[label] >= MIN_PER_CLASS, (label, per_label[label])
    b_subs = collections.Counter(m["subclass"] for _, m in reports if m["label"] == "B")
    for sub in ("oom", "getitem", "crash", "oom-suspected"):
        assert b_subs[sub] >= 1, (sub, b_subs)
    scenarios = {m["scenario"] for _, m in reports}
    assert len(scenarios) >= MIN_SCENARIOS
    # near-duplicates are grouped: at least some scenarios hold several reports
    per_scenario = collections.Counter(m["scenario"] for _, m in reports)
    assert sum(1 for n in per_scenario.values() if n >= 3) >= 3


def test_report_variety():
    reports = _metas("reports")
    langs = [m for _, m in reports if any(lang in m.get("notes", "") for lang in LANGUAGES)]
    assert len(langs) >= MIN_NON_ENGLISH
    assert len({lang for _, m in reports for lang in LANGUAGES if lang in m.get("notes", "")}) >= 6

    prose_only = [d for d, m in reports if m.get("evidence") is None]
    assert len(prose_only) >= 5

    gh = [d for d, _ in reports if d.suffix == ".json" and GH_KEYS <= json.loads(d.read_text(encoding="utf-8")).keys()]
    assert len(gh) >= MIN_GH_JSON
    assert any(d.suffix == ".html" for d, _ in reports)

    texts = [d.read_text(encoding="utf-8") for d, _ in reports]
    assert any("```" in t for t in texts), "markdown code fences"
    assert any("\n> " in t or t.startswith("> ") for t in texts), "quoted replies"
    assert any("╭" in t and "Traceback" in t for t in texts), "rich box-drawn traceback"
    assert any("[rank" in t for t in texts), "DDP rank-prefixed logs"
    assert any("Cell In[" in t for t in texts), "Jupyter traceback"


def test_decisive_error_in_third_comment():
    """At least one gh export only shows its decisive error in comments[2]."""
    found = []
    for data, m in _metas("reports"):
        if data.suffix != ".json" or m.get("evidence") is None:
            continue
        obj = json.loads(data.read_text(encoding="utf-8"))
        if not GH_KEYS <= obj.keys() or len(obj["comments"]) < 3:
            continue
        earlier = "\n".join([obj["title"], obj["body"]] + [c["body"] for c in obj["comments"][:2]])
        if m["evidence"] in obj["comments"][2]["body"] and m["evidence"] not in earlier:
            found.append(data.name)
    assert found


def test_nearmiss_counts():
    nearmiss = _metas("nearmiss")
    assert len(nearmiss) >= MIN_NEARMISS
    assert all(m["label"] == "none" and m["subclass"] is None for _, m in nearmiss)
    assert len({m["scenario"] for _, m in nearmiss}) >= 15
