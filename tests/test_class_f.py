"""Class F: DataLoader workers that could not start under the spawn start method (no main-module
guard, worker arguments that cannot be pickled). Not one of the field guide's five: evaluation
counts it as "not one of A-E", the classifier learns it as none."""
from __future__ import annotations

from pathlib import Path

import dllogscan
from dllogscan.classify.labels import label_of
from dllogscan.evaluation.corpus import load_items
from dllogscan.evaluation.evaluate import predict
from dllogscan.integrations.github_action import label_for
from dllogscan.report.markdown import verdict

LOGS = Path(__file__).resolve().parent.parent / "corpus" / "logs"

CHILD = """Traceback (most recent call last):
  File "<string>", line 1, in <module>
  File "C:\\Users\\me\\anaconda3\\lib\\multiprocessing\\spawn.py", line 116, in spawn_main
    exitcode = _main(fd, parent_sentinel)
  File "C:\\Users\\me\\project\\train.py", line 40, in <module>
    for x, y in train_loader:
  File "C:\\Users\\me\\anaconda3\\lib\\multiprocessing\\spawn.py", line 134, in _check_not_importing_main
    raise RuntimeError('''
RuntimeError:
        An attempt has been made to start a new process before the
        current process has finished its bootstrapping phase.
"""
PARENT = "RuntimeError: DataLoader worker (pid(s) 4120) exited unexpectedly\n"

LOADER_START = """  File "/usr/lib/python3.12/site-packages/torch/utils/data/dataloader.py", line 1176, in __init__
    w.start()
  File "/usr/lib/python3.12/multiprocessing/reduction.py", line 60, in dump
    ForkingPickler(file, protocol).dump(obj)
"""
NOT_PICKLABLE = "AttributeError: Can't pickle local object 'build.<locals>.collate'\n"


def test_main_guard_absorbs_the_parents_worker_exit(tmp_path):
    """The parent's bare `exited unexpectedly` is the spawned child's bootstrapping error, not a
    memory kill: one F verdict, the exit line among its evidence, no B advice."""
    path = tmp_path / "paste.txt"
    path.write_text(CHILD + PARENT)
    result = dllogscan.scan(path)
    assert [(d.cls, d.subclass) for d in result.diagnoses] == [("F", "main-guard")]
    top = result.diagnoses[0]
    assert top.confidence >= 0.9
    cited = [e.text for e in top.evidence]
    assert any("bootstrapping phase" in t for t in cited) and any("exited unexpectedly" in t for t in cited)
    assert top.fixes[0].code and "if __name__ == '__main__':" in top.fixes[0].code


def test_pickling_error_counts_only_beside_the_loaders_worker_start(tmp_path):
    alone, beside = tmp_path / "alone.txt", tmp_path / "beside.txt"
    alone.write_text("Saving the model\n" + NOT_PICKLABLE)
    beside.write_text("Traceback (most recent call last):\n" + LOADER_START + NOT_PICKLABLE)
    assert not any(d.cls == "F" for d in dllogscan.scan(alone).diagnoses)
    got = dllogscan.scan(beside).diagnoses
    assert (got[0].cls, got[0].subclass) == ("F", "pickling")
    assert any("top-level" in f.title for f in got[0].fixes)


def test_f_is_not_one_of_a_to_e_for_the_classifier_and_the_evaluation():
    assert label_of("F", "main-guard") == "none"
    item = next(i for i in load_items() if i.path.name == "f-main-guard-w2-spawn.log")
    assert item.label == "F"
    assert predict(item, "combined", model=None) == ("none", None)


def test_outputs_name_class_f():
    result = dllogscan.scan(LOGS / "f-pickling-lambda-w2-spawn.log")
    assert label_for(result, "dataloader: ") == "dataloader: F-spawn"
    assert "workers could not start" in verdict(result)


SPAWNED_CHILD = """Traceback (most recent call last):
  File "<string>", line 1, in <module>
  File "/usr/lib/python3.11/multiprocessing/spawn.py", line 122, in spawn_main
    exitcode = _main(fd, parent_sentinel)
  File "/usr/lib/python3.11/multiprocessing/spawn.py", line 132, in _main
    self = reduction.pickle.load(from_parent)
AttributeError: Can't get attribute 'collate_batch' on <module 'tools.prep' from '/srv/tools/prep.py'>
"""


def test_main_module_real_logs_absorb_the_workers_exit():
    """A collate_fn defined under the main guard (corpus/gen/notebook.py, real runs): one F verdict
    with the import fixes first, the parent's `exited unexpectedly` absorbed, no B."""
    for log in sorted(LOGS.glob("f-main-module-*.log")):
        result = dllogscan.scan(log)
        assert [(d.cls, d.subclass) for d in result.diagnoses] == [("F", "main-module")], log.name
        top = result.diagnoses[0]
        assert any("exited unexpectedly" in e.text for e in top.evidence)
        assert top.fixes[0].title.startswith("Define the Dataset, collate_fn and worker_init_fn in a .py module")


def test_main_module_text_needs_the_loader_or_the_spawned_childs_frame(tmp_path):
    # a notebook's (or `python -c`'s) built-in __main__ beside the loader's exit: F, not B
    pasted = ("AttributeError: Can't get attribute '_Dataset' on <module '__main__' (built-in)>\n" + PARENT)
    assert [(d.cls, d.subclass) for d in dllogscan.scan(pasted).diagnoses] == [("F", "main-module")]
    # the same text from torch.load of a pickled model in a script: no loader, no F
    loading = ("model = torch.load('model.pt')\n"
               "AttributeError: Can't get attribute 'Net' on <module '__main__' from 'predict.py'>\n")
    assert not any(d.cls == "F" for d in dllogscan.scan(loading).diagnoses)
    # any module name counts in the spawned child's own traceback, beside the loader
    child = SPAWNED_CHILD + PARENT
    assert [(d.cls, d.subclass) for d in dllogscan.scan(child).diagnoses] == [("F", "main-module")]
    # ... but not without the loader: a user's own spawn pool
    assert not any(d.cls == "F" for d in dllogscan.scan(SPAWNED_CHILD).diagnoses)


def _rerun(module_line: str, error: str, runpy: str = "py38") -> str:
    """A spawned child's traceback on Windows: the child re-runs the main script (spawn's
    _fixup_main_from_path -> runpy) and fails at its module-level ``module_line``."""
    lib = "C:\\Python38\\lib"
    if runpy == "py38":
        frames = (f'  File "{lib}\\runpy.py", line 265, in run_path\n'
                  "    return _run_module_code(code, init_globals, run_name,\n"
                  f'  File "{lib}\\runpy.py", line 97, in _run_module_code\n'
                  "    _run_code(code, mod_globals, init_globals,\n"
                  f'  File "{lib}\\runpy.py", line 87, in _run_code\n'
                  "    exec(code, run_globals)\n")
    else:  # Python 3.11+: runpy is frozen, its frames print no source line
        frames = ('  File "<frozen runpy>", line 291, in run_path\n'
                  '  File "<frozen runpy>", line 98, in _run_module_code\n'
                  '  File "<frozen runpy>", line 88, in _run_code\n')
    return ("Traceback (most recent call last):\n"
            '  File "<string>", line 1, in <module>\n'
            f'  File "{lib}\\multiprocessing\\spawn.py", line 116, in spawn_main\n'
            "    exitcode = _main(fd, parent_sentinel)\n"
            f'  File "{lib}\\multiprocessing\\spawn.py", line 125, in _main\n'
            "    prepare(preparation_data)\n"
            f'  File "{lib}\\multiprocessing\\spawn.py", line 236, in prepare\n'
            "    _fixup_main_from_path(data['init_main_from_path'])\n"
            f'  File "{lib}\\multiprocessing\\spawn.py", line 287, in _fixup_main_from_path\n'
            "    main_content = runpy.run_path(main_path,\n"
            + frames +
            '  File "D:\\proj\\main.py", line 37, in <module>\n'
            f"    {module_line}\n" + error)


TRAIN_AGAIN = ('  File "D:\\proj\\train.py", line 40, in train\n'
               "    train_dataset = BalancedDataset(opt)\nMemoryError\n")
PAGING = ('  File "C:\\Python38\\lib\\site-packages\\torch\\__init__.py", line 129, in <module>\n    raise err\n'
          'OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading '
          '"C:\\Python38\\lib\\site-packages\\torch\\lib\\caffe2_detectron_ops.dll" or one of its dependencies.\n')


def test_a_child_that_runs_the_training_again_is_a_missing_main_guard(tmp_path):
    """corpus/threads none-jaidedai-easyocr-1028's shape: each spawned worker re-ran main.py's
    module-level train(...) and died of it; the parent's bare worker exit is absorbed."""
    for runpy in ("py38", "frozen"):
        path = tmp_path / f"rerun-{runpy}.txt"
        path.write_text(_rerun("train(opt, amp=False)", TRAIN_AGAIN, runpy) + PARENT)
        got = dllogscan.scan(path).diagnoses
        assert [(d.cls, d.subclass) for d in got] == [("F", "main-guard")], runpy
        assert "F.main-guard.child-ran-script" in got[0].signatures
        assert any("_fixup_main_from_path" in e.text for e in got[0].evidence)
        assert "if __name__ == '__main__':" in got[0].fixes[0].code


def test_a_child_that_dies_importing_torch_stays_a_windows_memory_failure(tmp_path):
    """The child's module-level line is an import: it died of the import (the paging file), not of
    the missing guard; and a frame whose source line was cut off is not read either."""
    path = tmp_path / "import.txt"
    path.write_text(_rerun("import torch", PAGING) + PARENT)
    got = dllogscan.scan(path).diagnoses
    assert got and got[0].cls == "B" and not any(d.cls == "F" for d in got)
    cut = tmp_path / "cut.txt"
    cut.write_text(_rerun("", "") + PARENT)
    assert not any(d.cls == "F" for d in dllogscan.scan(cut).diagnoses)


def test_a_parent_run_with_python_m_is_not_read_as_a_child(tmp_path):
    """runpy's frames above a module-level frame are also a parent started with python -m: without
    the spawned child's own frame nearby there is no re-run, and the worker exit stays B."""
    parent = ("Traceback (most recent call last):\n"
              '  File "<frozen runpy>", line 198, in _run_module_as_main\n'
              '  File "<frozen runpy>", line 88, in _run_code\n'
              '  File "/home/me/proj/train.py", line 37, in <module>\n'
              "    train(opt)\n"
              '  File "/home/me/proj/train.py", line 20, in train\n'
              "    for x, y in loader:\n" + PARENT)
    path = tmp_path / "parent.txt"
    path.write_text(parent)
    got = dllogscan.scan(path).diagnoses
    assert got and got[0].cls == "B"
