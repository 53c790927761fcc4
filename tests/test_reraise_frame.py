"""An exception in a worker told without the 'Caught X in DataLoader worker process N' line: a
traceback cut at ExceptionWrapper.reraise (class B, getitem) only under the loader's own frames
(DataParallel's replicas and the pin-memory thread re-raise through the same method and are no
worker failure), and the resize error of a worker's shared-memory collate."""
from __future__ import annotations

import dllogscan

SITE = "/opt/conda/lib/python3.10/site-packages"
LOADER = f'''Traceback (most recent call last):
  File "train.py", line 50, in main
    for step, batch in enumerate(test_loader):
  File "{SITE}/torch/utils/data/dataloader.py", line 630, in __next__
    data = self._next_data()
  File "{SITE}/torch/utils/data/dataloader.py", line 1345, in _next_data
    return self._process_data(data)
  File "{SITE}/torch/utils/data/dataloader.py", line 1371, in _process_data
    data.reraise()
  File "{SITE}/torch/_utils.py", line 694, in reraise
'''


def scan(text: str):
    """The signatures' verdict (independent of the shipped text classifier, which is retrained often)."""
    return dllogscan.scan(text, name="cut.log", classifier="off").diagnoses


def test_a_traceback_cut_at_the_reraise_frame_is_an_exception_in_the_worker():
    d = scan(LOADER)
    assert [(x.cls, x.subclass) for x in d] == [("B", "getitem")]
    assert "B.getitem.reraise-frame" in d[0].signatures
    assert any("in reraise" in e.text for e in d[0].evidence)


def test_the_whole_traceback_still_cites_the_caught_line():
    d = scan(LOADER + "    raise exception\nKeyError: Caught KeyError in DataLoader worker process 0.\n")
    assert [(x.cls, x.subclass) for x in d] == [("B", "getitem")]
    assert {"B.getitem.caught", "B.getitem.reraise-frame"} <= set(d[0].signatures)


def test_data_parallel_replicas_reraise_through_the_same_method_and_are_no_loader_failure():
    text = f'''Traceback (most recent call last):
  File "train.py", line 80, in <module>
    out = model(x)
  File "{SITE}/torch/nn/parallel/data_parallel.py", line 168, in forward
    outputs = self.parallel_apply(replicas, inputs, kwargs)
  File "{SITE}/torch/nn/parallel/parallel_apply.py", line 86, in parallel_apply
    output.reraise()
  File "{SITE}/torch/_utils.py", line 425, in reraise
    raise self.exc_type(msg)
RuntimeError: Caught RuntimeError in replica 0 on device 0.
'''
    assert not scan(text)


def test_a_pin_memory_thread_exception_is_not_a_getitem_failure():
    text = LOADER + "    raise exception\nRuntimeError: Caught RuntimeError in pin memory thread for device 0.\n"
    assert all(x.subclass != "getitem" for x in scan(text))


def test_a_shared_memory_failure_below_the_frame_is_class_a():
    text = LOADER + ("    raise exception\nRuntimeError: Caught RuntimeError in DataLoader worker process 1.\n"
                     "Original Traceback (most recent call last):\n"
                     "RuntimeError: unable to write to file </torch_18_2953093582_0>: No space left on device (28)\n")
    assert [x.cls for x in scan(text)] == ["A"]


def test_a_worker_stacking_samples_of_unequal_size_is_getitem():
    # only a worker collates into a fixed-size shared-memory tensor; the bare error, pasted from a
    # training run, is the dataset's samples
    text = ("Epoch 1: training the segmentation model with the DataLoader\n"
            "RuntimeError: Trying to resize storage that is not resizable\n")
    assert [(x.cls, x.subclass) for x in scan(text)] == [("B", "getitem")]
    assert not scan("x = torch.from_numpy(a)\nx.resize_(100)\nRuntimeError: Trying to resize storage without an allocator\n")
