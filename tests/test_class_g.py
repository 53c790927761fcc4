"""Class G: the dataset code raised in the main process (num_workers=0), so no DataLoader worker
was involved. Not one of the field guide's five: evaluation counts it as "not one of A-E", the
classifier learns it as none. The same traceback in a text that names workers (a rerun with
num_workers=0 quoted beside the worker failure) stays class B."""
from __future__ import annotations

from pathlib import Path

import dllogscan
from dllogscan.classify.labels import label_of
from dllogscan.evaluation.corpus import load_items
from dllogscan.evaluation.evaluate import predict
from dllogscan.integrations.github_action import label_for
from dllogscan.report.markdown import verdict

LOGS = Path(__file__).resolve().parent.parent / "corpus" / "logs"

MAIN_PROCESS = """Traceback (most recent call last):
  File "train.py", line 40, in <module>
    for x, y in loader:
  File "/usr/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 633, in __next__
    data = self._next_data()
  File "/usr/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 677, in _next_data
    data = self._dataset_fetcher.fetch(index)  # may raise StopIteration
  File "/usr/lib/python3.10/site-packages/torch/utils/data/_utils/fetch.py", line 51, in fetch
    data = [self.dataset[idx] for idx in possibly_batched_index]
  File "train.py", line 20, in __getitem__
    return self.records[self.keys[i]]
KeyError: 'sample_000042'
"""


def test_a_main_process_traceback_is_class_g_with_the_dataset_fixes(top_of):
    top = top_of(MAIN_PROCESS)
    assert (top.cls, top.subclass) == ("G", "main-process")
    assert any("KeyError: 'sample_000042'" in e.text for e in top.evidence)
    assert top.facts.get("exception") == "KeyError"
    assert "dataset[i]" in (top.fixes[0].code or "") and "KeyError" in top.fixes[0].why
    assert not any("num_workers=0" in (f.code or "") for f in top.fixes)  # it already ran so


def test_the_same_traceback_beside_named_workers_stays_b(top_of):
    for before in ("loader = DataLoader(ds, batch_size=32, num_workers=8)\n",
                   "RuntimeError: DataLoader worker (pid(s) 4120) exited unexpectedly\n"
                   "Rerunning with num_workers=0 gives:\n",
                   "python train.py --workers 16 fails; with --workers 0 it fails like this:\n"):
        top = top_of(before + MAIN_PROCESS)
        assert top.cls == "B" and top.subclass.startswith("getitem"), before


def test_a_worker_exception_is_never_g(top_of):
    text = MAIN_PROCESS.replace("KeyError: 'sample_000042'",
                                "KeyError: Caught KeyError in DataLoader worker process 0.")
    assert top_of(text).cls == "B"


def test_an_interrupt_in_the_dataset_code_is_not_g(top_of):
    """Ctrl-C while the main process loads a sample: no exception of the dataset's to fix."""
    top = top_of(MAIN_PROCESS.replace("KeyError: 'sample_000042'", "KeyboardInterrupt"))
    assert top is None or top.cls != "G"


def test_g_is_not_one_of_a_to_e_for_the_classifier_and_the_evaluation():
    assert label_of("G", "main-process") == "none"
    item = next(i for i in load_items() if i.path.name == "g-main-process-keyerror-w0.log")
    assert item.label == "G"
    assert predict(item, "combined", model=None) == ("none", None)


def test_every_main_process_log_is_g():
    logs = sorted(LOGS.glob("g-main-process-*.log"))
    assert len(logs) == 5
    for log in logs:
        assert [(d.cls, d.subclass) for d in dllogscan.scan(log).diagnoses] == [("G", "main-process")], log.name


def test_outputs_name_class_g():
    result = dllogscan.scan(LOGS / "g-main-process-collate-stack-w0.log")
    assert label_for(result, "dataloader: ") == "dataloader: G-dataset"
    assert "the dataset code failed in the main process" in verdict(result)


def test_g_and_single_process_fetch_read_the_same_worker_evidence():
    """The two entries split one traceback between them: B where the text shows workers, G where it
    shows none. Their id lists are written twice (TOML has no shared constants), so they must agree."""
    from dllogscan.pipeline import runner as pipeline

    sigs = {s.id: s for s in pipeline.get_scanner().db.signatures}
    needs_workers = {i for c in sigs["B.getitem.single-process-fetch"].requires for i in c.ids}
    g_excludes = {i for c in sigs["G.main-process.dataset-exception"].excludes for i in c.ids}
    assert needs_workers and needs_workers <= g_excludes
    assert g_excludes - needs_workers == {"A.*", "C.*", "D.*", "E.*", "F.*"}  # and any other class's hit
