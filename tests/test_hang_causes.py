"""Hangs (class E) as first-class evidence: interrupt tracebacks, faulthandler and py-spy dumps,
and the named sub-causes with their own fixes, shown in every output format."""
from __future__ import annotations

import json

import pytest

import dllogscan
from dllogscan import report

SITE = "/opt/conda/lib/python3.10/site-packages"
PROGRESS = "".join(f"epoch 1 step {i}/500 loss=0.{i:03d}\n" for i in range(40))

MAIN_WAIT = f'''Traceback (most recent call last):
  File "train.py", line 88, in <module>
    for step, batch in enumerate(loader):
  File "{SITE}/torch/utils/data/dataloader.py", line 1328, in _next_data
    idx, data = self._get_data()
  File "{SITE}/torch/utils/data/dataloader.py", line 1294, in _get_data
    success, data = self._try_get_data()
  File "{SITE}/torch/utils/data/dataloader.py", line 1132, in _try_get_data
    data = self._data_queue.get(timeout=timeout)
  File "/opt/conda/lib/python3.10/multiprocessing/connection.py", line 257, in poll
    return self._poll(timeout)
KeyboardInterrupt
'''


def worker_interrupted(frames: str) -> str:
    return (f'Process Process-1:\nTraceback (most recent call last):\n'
            f'  File "{SITE}/torch/utils/data/_utils/worker.py", line 308, in _worker_loop\n'
            f'    data = fetcher.fetch(index)\n  File "/app/ds.py", line 40, in __getitem__\n{frames}KeyboardInterrupt\n')


FAULTHANDLER_WORKER = f'''Timeout (0:30:00)!
Thread 0x00007f3a5c9ff740 (most recent call first):
  File "{SITE}/albumentations/augmentations/geometric/functional.py", line 440 in resize
  File "/app/ds.py", line 52 in __getitem__
  File "{SITE}/torch/utils/data/_utils/fetch.py", line 51 in <listcomp>
  File "{SITE}/torch/utils/data/_utils/worker.py", line 308 in _worker_loop
'''

PYSPY_LOCK = '''Process 4321: python train.py
Python v3.10.12 (/usr/bin/python3.10)

Thread 4321 (idle): "MainThread"
    select (selectors.py:416)
    wait (multiprocessing/connection.py:931)
    _try_get_data (torch/utils/data/dataloader.py:1133)
    _get_data (torch/utils/data/dataloader.py:1294)

Process 4330: python train.py
Thread 4330 (idle): "MainThread"
    acquire (logging/__init__.py:917)
    handle (logging/__init__.py:968)
    __getitem__ (ds.py:31)
    _worker_loop (torch/utils/data/_utils/worker.py:308)
'''

TOKENIZERS = ("huggingface/tokenizers: The current process just got forked, after parallelism has already been used. "
              "Disabling parallelism to avoid deadlocks...\n")
TIMEOUT = "RuntimeError: DataLoader timed out after 600 seconds\n"

CASES = {
    "interrupt-hdf5": (PROGRESS + worker_interrupted(
        f'  File "{SITE}/h5py/_hl/dataset.py", line 758, in __getitem__\n    return self._read(args)\n') + MAIN_WAIT,
        "fork-handle"),
    "faulthandler-albumentations": (PROGRESS + FAULTHANDLER_WORKER, "fork-threads"),
    "pyspy-logging-lock": (PYSPY_LOCK, "fork-lock"),
    "timeout-tokenizers": (TOKENIZERS * 2 + PROGRESS + TIMEOUT, "tokenizers-fork"),
    "timeout-worker-init": (PROGRESS + f'''Thread 0x00007f3a5c9ff740 (most recent call first):
  File "/app/data.py", line 88 in worker_init_fn
  File "{SITE}/torch/utils/data/_utils/worker.py", line 266 in _worker_loop
''' + TIMEOUT, "slow-start"),
}
FIX_WORDS = {"fork-handle": "worker_init_fn", "fork-threads": "cv2.setNumThreads(0)", "fork-lock": "spawn",
             "tokenizers-fork": "TOKENIZERS_PARALLELISM=false", "slow-start": "persistent_workers=True"}


@pytest.mark.parametrize("name", CASES)
def test_the_sub_cause_names_the_subclass_and_its_fixes(name):
    text, sub = CASES[name]
    d = dllogscan.scan(text, name=name, classifier="off").diagnoses  # the signatures' part, model-independent
    assert [(x.cls, x.subclass) for x in d][:1] == [("E", sub)], [(x.cls, x.subclass, x.signatures) for x in d]
    fixes = " ".join((f.code or "") + " ".join(f.commands) for f in d[0].fixes)
    assert FIX_WORDS[sub] in fixes, fixes


def test_a_fix_whose_setting_the_text_already_shows_goes_last_and_says_so():
    text, sub = CASES["timeout-worker-init"]
    made = "loader = DataLoader(ds, batch_size=32, num_workers=8, persistent_workers=True)\n" + text
    for given, shown in ((text, False), (made, True)):
        [d] = dllogscan.scan(given, name="slow.log", classifier="off").diagnoses
        assert (d.cls, d.subclass) == ("E", sub)
        titles = [f.title for f in d.fixes]
        first = [t for t in titles if t.startswith("Keep the workers alive across epochs")]
        assert len(first) == 1 and first[0].endswith("(the text already shows persistent_workers=True: it did not "
                                                     "prevent this)") == shown, titles
        assert (titles[-1] == first[0]) == shown and [f.rank for f in d.fixes] == list(range(1, len(titles) + 1))


def test_a_faulthandler_dump_of_the_main_process_waiting_is_a_hang():
    dump = ("Thread 0x00007f3a5c9ff740 (most recent call first):\n"
            f'  File "{SITE}/torch/utils/data/dataloader.py", line 1133 in _try_get_data\n'
            f'  File "{SITE}/torch/utils/data/dataloader.py", line 1294 in _get_data\n'
            '  File "train.py", line 88 in <module>\n')
    d = dllogscan.scan(PROGRESS + dump, name="dump.txt", classifier="off").diagnoses
    assert [(x.cls, x.subclass) for x in d] == [("E", "hang")]


def test_sub_cause_evidence_alone_is_not_a_hang():
    for text in (TOKENIZERS * 3 + PROGRESS, PROGRESS + "    img = cv2.resize(img, (224, 224))\n",
                 PROGRESS + "        with self._lock:\n"):
        assert dllogscan.scan(text, name="ok.log", classifier="off").diagnoses == ()


def test_a_worker_exception_traceback_is_not_taken_for_a_worker_dump():
    text = (f"KeyError: Caught KeyError in DataLoader worker process 0.\nOriginal Traceback (most recent call last):\n"
            f'  File "{SITE}/torch/utils/data/_utils/worker.py", line 308, in _worker_loop\n'
            f'    data = fetcher.fetch(index)\n  File "/app/ds.py", line 9, in worker_init_fn\nKeyError: 3\n')
    d = dllogscan.scan(text, name="b.log").diagnoses
    assert [(x.cls, x.subclass) for x in d] == [("B", "getitem")]


@pytest.mark.parametrize("fmt", ["text", "json", "jsonl", "md", "csv", "github"])
def test_the_subclass_appears_in_every_format(fmt):
    result = dllogscan.scan(CASES["timeout-tokenizers"][0], name="job.log")
    assert "tokenizers-fork" in report.render([result], fmt)


def test_the_subclass_appears_in_the_issue_body():
    from dllogscan.report.issue_body import to_issue_body

    result = dllogscan.scan(CASES["timeout-tokenizers"][0], name="job.log")
    body = to_issue_body([result])
    assert "E/tokenizers-fork" in body
    assert json.dumps(result.to_dict()).count("tokenizers-fork") >= 1


def test_an_interrupt_in_the_loaders_shutdown_is_a_hang():
    text = PROGRESS + (
        "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f1c2b8e0ee0>\n"
        "Traceback (most recent call last):\n"
        f'  File "{SITE}/torch/utils/data/dataloader.py", line 1477, in __del__\n'
        "    self._shutdown_workers()\n"
        f'  File "{SITE}/torch/utils/data/dataloader.py", line 1441, in _shutdown_workers\n'
        "    w.join(timeout=_utils.MP_STATUS_CHECK_INTERVAL)\n"
        '  File "/opt/conda/lib/python3.10/multiprocessing/popen_fork.py", line 43, in wait\n'
        "KeyboardInterrupt: \n")
    d = dllogscan.scan(text, name="ctrl-c.log", classifier="off").diagnoses
    assert [(x.cls, x.subclass) for x in d] == [("E", "hang")]
    assert any(e.text.startswith("KeyboardInterrupt") for e in d[0].evidence)


#: a report's interrupt traceback cut short: no KeyboardInterrupt, no wait frame, only the '^C'
#: the terminal echoed and the loop's frames down into the data loader
CUT_INTERRUPT = (
    "^CTraceback (most recent call last):\n"
    '  File "train.py", line 298, in train\n'
    "    for i, (imgs, targets) in pbar:\n"
    f'  File "{SITE}/torch/utils/data/dataloader.py", line 521, in __next__\n'
    "    data = self._next_data()\n")


def test_a_cut_interrupt_traceback_through_the_loader_is_a_hang():
    d = dllogscan.scan(CUT_INTERRUPT, name="paste.txt", classifier="off").diagnoses
    assert [(x.cls, x.subclass) for x in d] == [("E", "hang")]
    assert d[0].evidence[0].text.startswith("^CTraceback")


@pytest.mark.parametrize("text", [
    CUT_INTERRUPT.replace("^C", ""),  # an ordinary traceback: no sign of a hand interrupt
    CUT_INTERRUPT.replace(f"{SITE}/torch/utils/data/dataloader.py", "/app/model.py"),  # not in the loader
])
def test_an_interrupt_echo_needs_both_the_echo_and_a_loader_frame(text):
    assert not dllogscan.scan(text, name="paste.txt", classifier="off").diagnoses
