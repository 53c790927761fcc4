"""B and D texts of old PyTorch versions (0.3-1.x), end to end: the class, and the worker's real
exception cited where the old re-raise printed its traceback as the message."""
from __future__ import annotations

import pytest

import dllogscan

SITE = "/usr/local/lib/python3.6/dist-packages"
LEGACY = f'''Traceback (most recent call last):
  File "train.py", line 120, in <module>
    for i, (x, y) in enumerate(train_loader):
  File "{SITE}/torch/utils/data/dataloader.py", line 336, in __next__
    return self._process_next_batch(batch)
  File "{SITE}/torch/utils/data/dataloader.py", line 357, in _process_next_batch
    raise batch.exc_type(batch.exc_msg)
{{head}}Traceback (most recent call last):
  File "{SITE}/torch/utils/data/dataloader.py", line 106, in _worker_loop
    samples = collate_fn([dataset[i] for i in batch_indices])
  File "/app/ds.py", line 31, in __getitem__
    {{source}}
{{error}}
'''


def scan(text: str):
    """The signatures' verdict (independent of the shipped text classifier, which is retrained often)."""
    return dllogscan.scan(text, name="old.log", classifier="off").diagnoses


def test_a_legacy_worker_reraise_is_getitem_with_the_real_exception_cited():
    text = LEGACY.format(head="IOError: ", source="img = Image.open(path)",
                         error="IOError: [Errno 2] No such file or directory: '/data/x.jpg'")
    d = scan(text)
    assert [(x.cls, x.subclass) for x in d] == [("B", "getitem")]
    assert any(e.text.startswith("IOError: [Errno 2]") for e in d[0].evidence)
    assert "B.getitem.legacy-worker-traceback" in d[0].signatures


def test_only_the_reraise_line_of_a_paste_is_enough():
    d = scan("the loader crashed in epoch 3:\nException: KeyError:Traceback (most recent call last):\n"
             f'  File "{SITE}/torch/utils/data/_utils/worker.py", line 99, in _worker_loop\nKeyError: 17\n')
    assert [(x.cls, x.subclass) for x in d] == [("B", "getitem")]


def test_cuda_init_error_inside_a_legacy_reraise_is_d():
    text = LEGACY.format(head="RuntimeError: ", source="x = x.cuda()",
                         error="RuntimeError: CUDA error (3): initialization error")
    assert [x.cls for x in scan(text)] == ["D"]


THC_CHECK = "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=50 error=3 : initialization error\n"


@pytest.mark.parametrize("below", [
    # the worker's error, re-raised by the main process: D, not B
    ("RuntimeError: Caught RuntimeError in DataLoader worker process 2.\n"
     "Original Traceback (most recent call last):\n"
     f'  File "{SITE}/torch/utils/data/_utils/worker.py", line 178, in _worker_loop\n'
     "RuntimeError: cuda runtime error (3) : initialization error at /pytorch/aten/src/THC/THCGeneral.cpp:50\n"),
    # a report's traceback cut after the loader's __next__ (pytorch#33754's shape)
    ("Process Process-2:\nTraceback (most recent call last):\n"
     '  File "/usr/lib/python3.7/multiprocessing/process.py", line 99, in run\n'
     f'  File "{SITE}/torch/utils/data/dataloader.py", line 345, in __next__\n'
     "    data = self._next_data()\n"),
])
def test_the_thc_check_line_near_the_loader_is_d(below):
    d = scan(THC_CHECK + below)
    assert [x.cls for x in d] == ["D"]
    assert "D.cuda-fork.thc-check-fail" in d[0].signatures


def test_a_remote_traceback_of_another_library_is_not_b():
    text = ("joblib worker failed\nValueError: Traceback (most recent call last):\n"
            '  File "/srv/app/jobs.py", line 3, in run\nValueError: bad row\n')
    assert scan(text) == ()


def test_old_cuda_init_texts_outside_a_dataloader_are_not_d():
    hogwild = ("Process Process-3:\nTraceback (most recent call last):\n"
               '  File "/usr/lib/python3.6/multiprocessing/process.py", line 258, in _bootstrap\n'
               '  File "a3c/train.py", line 40, in train\n    model = model.cuda()\n'
               "RuntimeError: CUDA error (3): initialization error\n")
    ddp = ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=47 error=3 : initialization error\n"
           "Traceback (most recent call last):\n"
           '  File "lib/multiprocessing.py", line 30, in run\n    dist.destroy_process_group()\n')
    for text in (hogwild, ddp):  # the text classifier weighs such pastes on its own
        assert scan(text) == ()


@pytest.mark.parametrize("loader", [
    "With num_workers > 0 my multi-GPU run dies; with num_workers=0 it trains.",
    "python train.py --num-workers 8",
    "data = dict(samples_per_gpu=2, workers_per_gpu=4)",
    "The DataLoader worker crashes on the first batch.",
])
@pytest.mark.parametrize("error", [
    "terminate called after throwing an instance of 'c10::Error'\n  what():  CUDA error: initialization error",
    "RuntimeError: cuda runtime error (3) : initialization error at /pytorch/aten/src/THC/THCGeneral.cpp:50",
])
def test_a_cuda_init_error_beside_the_loaders_words_decides_d_alone(loader, error):
    """Beside the DataLoader's own words the text is strong: the classifier cannot veto it."""
    for text in (f"{loader}\n\n{error}\n", f"{error}\n\n{loader}\n"):
        d = dllogscan.scan(text, name="report.md").diagnoses
        assert [(x.cls, x.subclass, x.method) for x in d] == [("D", "cuda-fork", "signatures")]
        assert d[0].confidence >= 0.8
        assert "D.cuda-fork.initialization-error-loader" in d[0].signatures


def test_a_cuda_init_error_far_from_or_without_the_loaders_words_stays_weak():
    error = "RuntimeError: CUDA error: initialization error\n"
    for text in (error, "It fails as soon as the second process starts.\n" + error,
                 "num_workers=4\n" + "epoch 1 loss 0.3\n" * 45 + error):
        d = scan(text)
        assert [(x.cls, x.signatures) for x in d] == [("D", ("D.cuda-fork.initialization-error",))]
        assert d[0].confidence < 0.8
    # a Celery worker is not the loader's: the scope rule sets the weak hit aside
    assert scan("A Celery worker calls model.cuda() after the fork.\n" + error) == ()


@pytest.mark.parametrize("error", [
    "TypeError: default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
    "found <class 'NoneType'>",
    "TypeError: batch must contain tensors, numbers, dicts or lists; found <class 'NoneType'>",  # before 1.0
])
def test_a_sample_the_collate_function_cannot_batch_is_a_dataset_failure(error):
    d = scan(f"Training on a custom dataset fails:\n{error}\n")
    assert [(x.cls, x.subclass) for x in d] == [("B", "getitem")]
    assert "B.getitem.collate-type" in d[0].signatures


def test_the_collate_message_in_source_code_or_away_from_pytorch_is_not_b():
    code = 'error_msg = "batch must contain tensors, numbers, dicts or lists; found {}"\n'
    alone = "TypeError: batch must contain tensors, numbers, dicts or lists; found <class 'NoneType'>\n"
    assert scan(code) == ()
    assert scan(alone) == ()  # no line about PyTorch training near it: the classifier weighs such pastes


TF_INIT = ("2020-10-19 18:33:13.420481: F tensorflow/stream_executor/cuda/cuda_driver.cc:219] "
           "Failed setting context: CUDA_ERROR_NOT_INITIALIZED: initialization error")
MX_INIT = ("[06:25:22] /mxnet-build/3rdparty/mshadow/mshadow/./tensor_gpu-inl.h:35: "
           "Check failed: e == cudaSuccess: CUDA: initialization error")


@pytest.mark.parametrize("loader, error, sig", [
    ("model.fit(train_gen, epochs=50, workers=4, use_multiprocessing=True)", TF_INIT, "framework-init-error"),
    ("loader = gluon.data.DataLoader(dataset, batch_size=32, num_workers=4)", MX_INIT, "mxnet-init-error"),
])
def test_another_frameworks_cuda_init_error_beside_its_loader_is_d(loader, error, sig):
    """Keras's and MXNet's loaders fork their workers as the DataLoader does: their CUDA
    initialization error beside the loader's words is class D (corpus rule other-framework-loader)."""
    d = scan(f"{loader}\n\n{error}\n")
    assert [(x.cls, x.subclass) for x in d] == [("D", "cuda-fork")]
    assert f"D.cuda-fork.{sig}" in d[0].signatures


@pytest.mark.parametrize("error", [TF_INIT, MX_INIT])
def test_another_frameworks_cuda_init_error_with_no_loader_near_is_not_d(error):
    """A JAX or Ray actor, a serving pool: the same texts with no data loader near are not decided."""
    far = "\n".join(f"step {i}" for i in range(30))
    assert scan(f"{error}\n") == ()
    assert scan(f"model.fit(gen, use_multiprocessing=True)\n{far}\n{error}\n") == ()
