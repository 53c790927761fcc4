"""The generated corpus: every item has a sound sidecar, and generation really works."""
import glob
import json
import os
import subprocess
import sys

import pytest

from dllogscan.core.classes import letters

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOGS = os.path.join(REPO, "corpus", "logs")
LABELS = set(letters()) | {"none"}
SUBCLASS = r"^[a-z0-9]+(-[a-z0-9]+)*$"
METAS = sorted(glob.glob(os.path.join(LOGS, "*.meta.json")))


def _item(meta_path):
    with open(meta_path, encoding="utf-8") as fh:
        meta = json.load(fh)
    log_path = meta_path[: -len(".meta.json")] + ".log"
    with open(log_path, encoding="utf-8") as fh:
        return meta, fh.read()


def test_corpus_is_there():
    labels = [_item(m)[0]["label"] for m in METAS]
    assert sum(lab != "none" for lab in labels) >= 45
    assert sum(lab == "none" for lab in labels) >= 8
    subs = {_item(m)[0]["subclass"].split("-")[0] for m in METAS if _item(m)[0]["label"] == "B"}
    assert {"oom", "getitem", "crash"} <= subs
    assert {"A", "B", "C", "D", "E"} <= set(labels)


def test_class_d_logs_were_made_on_a_gpu():
    """The D logs are real CUDA failures (no GPU here: they cannot be regenerated on CI)."""
    d = [(meta, text) for meta, text in map(_item, METAS) if meta["label"] == "D"]
    assert len({meta["scenario"] for meta, _ in d}) >= 4
    for meta, text in d:
        assert "+cu" in meta["torch_version"], meta["torch_version"]
        assert "in DataLoader worker process" in text
        assert ("Cannot re-initialize CUDA in forked subprocess" in text
                or "CUDA error: initialization error" in text)


def test_ddp_logs_are_torchruns_two_ranks():
    """The DDP hang logs come from real torchrun: both ranks' own prefixes, the stalled rank's
    failure in the loader, and the launcher's own lines (torch.distributed.elastic); its OMP_NUM_THREADS
    banner names no thread pool (the hang stays a plain one or a timeout)."""
    from dllogscan import api

    ddp = [(path, *_item(path)) for path in METAS if os.path.basename(path).startswith("e-ddp-lock-")]
    assert len(ddp) == 2
    for path, meta, text in ddp:
        assert meta["scenario"] == "e-ddp-lock"
        assert "torch.distributed.run" in meta["notes"]
        assert "[default0]:" in text and "[default1]:" in text and "[rank1]: " in text
        assert "torch.distributed.elastic" in text and "OMP_NUM_THREADS environment variable" in text
        assert "torch/utils/data/dataloader.py" in text
        [top] = api.scan(path[: -len(".meta.json")] + ".log").diagnoses[:1]
        assert top.cls == "E" and top.subclass in ("hang", "timeout"), (path, top.subclass)


def test_every_log_has_a_sidecar():
    logs = sorted(glob.glob(os.path.join(LOGS, "*.log")))
    assert logs
    for log in logs:
        assert os.path.exists(log[: -len(".log")] + ".meta.json"), log


@pytest.mark.parametrize("meta_path", METAS, ids=[os.path.basename(m) for m in METAS])
def test_sidecar(meta_path):
    import re
    meta, text = _item(meta_path)
    name = os.path.basename(meta_path)[: -len(".meta.json")]
    assert meta["label"] in LABELS
    assert meta["scenario"] and isinstance(meta["scenario"], str)
    assert meta["made_by"].startswith("python -m corpus.gen ")
    assert meta["torch_version"]
    assert meta["notes"]
    if meta["label"] == "none":
        assert meta["subclass"] is None
        assert meta["kind"] == "nearmiss" and name.startswith("nearmiss-")
    else:
        assert meta["kind"] == "log"
        assert re.match(SUBCLASS, meta["subclass"]), meta["subclass"]
        if meta["label"] == "B":
            assert meta["subclass"].startswith(("oom", "getitem", "crash"))
        assert meta["evidence"], "failure logs cite an evidence line"
    if meta.get("evidence"):
        assert meta["evidence"] in text


def test_corpus_size():
    total = sum(os.path.getsize(p) for p in glob.glob(os.path.join(LOGS, "*")))
    assert total < 8 * 1024 * 1024


def test_list_scenarios():
    out = subprocess.run([sys.executable, "-m", "corpus.gen", "--list"], cwd=REPO,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    assert "b-getitem-keyerror-w2-fork" in out.stdout
    assert "d-cuda-in-worker" in out.stdout


def test_regenerate_getitem_keyerror(tmp_path):
    pytest.importorskip("torch")
    name = "b-getitem-keyerror-w2-fork"
    out = subprocess.run([sys.executable, "-m", "corpus.gen", name, "--out", str(tmp_path)],
                         cwd=REPO, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stdout + out.stderr
    text = (tmp_path / f"{name}.log").read_text()
    meta = json.loads((tmp_path / f"{name}.meta.json").read_text())
    assert "Caught KeyError in DataLoader worker process" in text
    assert "KeyError: 'sample_000037'" in text
    assert meta["label"] == "B" and meta["subclass"] == "getitem"
    assert meta["made_by"] == f"python -m corpus.gen {name}"
    assert meta["evidence"] in text
