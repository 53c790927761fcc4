"""B / oom-fork: the DataLoader could not fork its workers (Errno 12, ENOMEM at os.fork()). Host
memory, like B / oom, but nothing was killed; a Pool's or a ProcessPoolExecutor's own fork is not
the DataLoader's."""
from __future__ import annotations


START = """Traceback (most recent call last):
  File "train.py", line 308, in train
    for images, targets in loader:
  File "/opt/conda/lib/python3.6/site-packages/torch/utils/data/dataloader.py", line 417, in __iter__
    return DataLoaderIter(self)
  File "/opt/conda/lib/python3.6/site-packages/torch/utils/data/dataloader.py", line 234, in __init__
    w.start()
  File "/opt/conda/lib/python3.6/multiprocessing/process.py", line 105, in start
    self._popen = self._Popen(self)
  File "/opt/conda/lib/python3.6/multiprocessing/popen_fork.py", line 73, in _launch
    self.pid = os.fork()
OSError: [Errno 12] Cannot allocate memory
"""
POOL = """Traceback (most recent call last):
  File "preprocess.py", line 40, in <module>
    with multiprocessing.Pool(64) as pool:
  File "/usr/lib/python3.10/multiprocessing/pool.py", line 215, in __init__
    self._repopulate_pool()
  File "/usr/lib/python3.10/multiprocessing/popen_fork.py", line 66, in _launch
    self.pid = os.fork()
OSError: [Errno 12] Cannot allocate memory
"""


def test_enomem_when_the_loader_forks_its_workers_is_b_oom_fork(top_of):
    top = top_of(START)
    assert (top.cls, top.subclass) == ("B", "oom-fork") and top.confidence >= 0.8
    assert any("Cannot allocate memory" in e.text for e in top.evidence)
    assert "free -h" in top.fixes[0].commands
    assert "persistent_workers=True" in (top.fixes[1].code or "")
    assert not any("dmesg" in c for f in top.fixes for c in f.commands)  # nothing was killed


def test_a_pools_own_fork_is_not_the_loaders(top_of):
    assert top_of(POOL) is None


def test_enomem_without_a_fork_frame_is_not_decided_by_the_signature(top_of):
    top = top_of("Reading the array failed:\nOSError: [Errno 12] Cannot allocate memory\n")
    assert top is None or "B.oom-fork.enomem-at-worker-start" not in top.signatures
