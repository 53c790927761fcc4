"""Fixes filled with facts; the shared-memory demand estimate."""
from __future__ import annotations

import pytest

import dllogscan
from dllogscan.advise.fixes import (above_current, advise, batch_bytes_from_shape, fewer_workers, fill, fill_values,
                                    parse_size, shm_demand, situations)
from dllogscan.core.models import Diagnosis
from dllogscan.pipeline.runner import get_scanner

SHM_LOG = """config: DataLoader(num_workers=8, prefetch_factor=2, batch_size=64, pin_memory=True)
Filesystem      Size  Used Avail Use% Mounted on
shm              64M   64M     0 100% /dev/shm
batch images: torch.Size([64, 3, 224, 224])
Epoch 0:  12%|#         | 120/1000 [00:30<03:40,  4.00it/s, loss=0.412]
RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.
"""


def test_fill_uses_facts_defaults_and_visible_gaps():
    assert fill("lsof -p {pid} | wc -l", {"pid": "42"}) == "lsof -p 42 | wc -l"
    assert fill("--shm-size={shm_suggest|8g}", {}) == "--shm-size=8g"
    assert fill("--shm-size={shm_suggest|8g}", {"shm_suggest": "2g"}) == "--shm-size=2g"
    assert fill("kill {pid}", {}) == "kill <pid>"
    assert fill("awk '{print $1}'", {}) == "awk '{print $1}'"


def test_sizes_and_shapes():
    assert parse_size("64M") == 64 << 20 and parse_size("8g") == 8 << 30 and parse_size("1.5GiB") == 3 << 29
    assert batch_bytes_from_shape("64, 3, 224, 224") == 64 * 3 * 224 * 224 * 4
    demand = shm_demand({"num_workers": "8", "batch_shape": "64, 3, 224, 224", "shm_size": "64M"})
    assert demand["shm_demand"] == "588.0 MiB" and demand["shm_suggest"] == "1g" and demand["shm_ratio"] == "9.2"


def test_log_facts_reach_the_fixes():
    [d] = dllogscan.scan(SHM_LOG).diagnoses
    assert d.cls == "A"
    assert d.facts["num_workers"] == "8" and d.facts["shm_size"] == "64M"
    assert any("588.0 MiB" in n and "64M" in n for n in d.notes)
    commands = [c for f in d.fixes for c in f.commands]
    assert any("--shm-size=1g" in c for c in commands)



def test_the_fixes_that_lower_the_worker_count_lower_the_one_found():
    assert fewer_workers({"num_workers": "8"}) == {"fewer_workers": "4"}
    assert fewer_workers({"num_workers": "3"}) == {"fewer_workers": "1"}
    assert fewer_workers({"num_workers": "1"}) == {"fewer_workers": "1"}  # never more than it was
    assert fewer_workers({"num_workers": "0"}) == {} and fewer_workers({}) == {}

    def lowered(text: str) -> list[str]:
        [d] = dllogscan.scan(text).diagnoses
        assert "fewer_workers" not in d.facts  # what the fixes are filled with, not a fact of the log
        return [f.code for f in d.fixes if f.code and "prefetch_factor=1" in f.code]

    assert all("num_workers=4," in c for c in lowered(SHM_LOG)) and lowered(SHM_LOG)
    one = SHM_LOG.replace("num_workers=8", "num_workers=1")
    assert all("num_workers=1," in c for c in lowered(one)) and lowered(one)
    unknown = SHM_LOG.replace("num_workers=8, ", "")
    assert all("num_workers=2," in c for c in lowered(unknown)) and lowered(unknown)
    oom = ("DataLoader(num_workers=16)\n[ 9.1] Out of memory: Killed process 4242 (python) total-vm:9000kB\n"
           "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Killed.\n")
    assert all("num_workers=8," in c for c in lowered(oom)) and lowered(oom)


def test_a_worker_count_of_zero_sets_up_no_workers_in_the_fixes():
    # only the reporter's workaround is shown: a fix that configures workers (spawn,
    # persistent_workers, a timeout) with 0 of them is code PyTorch refuses, so it shows the gap
    texts = [
        "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Segmentation fault.\n"
        "With num_workers=0 it trains without a problem.\n",
        "With num_workers=0 the loop runs.\n"
        "  File \"/usr/lib/python3.10/site-packages/torch/utils/data/dataloader.py\", line 1133, in _try_get_data\n"
        "    data = self._data_queue.get(timeout=timeout)\n"
        "KeyboardInterrupt\n",
        "num_workers=0 works. batch images: torch.Size([64, 3, 224, 224])\n"
        "RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error. It is possible that "
        "dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\n",
    ]
    for text in texts:
        [d] = dllogscan.scan(text).diagnoses
        assert d.facts["num_workers"] == "0"  # still the fact the text shows
        codes = [f.code for f in d.fixes if f.code]
        assert codes and not any("num_workers=0," in c for c in codes), codes
        assert not any("0 workers x" in n for n in d.notes)
    assert fill_values({"num_workers": "0", "pid": "7"}) == {"pid": "7"}
    assert fill_values({"num_workers": "6"}) == {"num_workers": "6", "fewer_workers": "3"}


def test_starting_workers_with_spawn_is_no_advice_where_they_already_start_so():
    crash = "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Segmentation fault.\n"
    for setting, shown in (("", False), ("multiprocessing_context='spawn', ", True),
                           ("multiprocessing_context='forkserver', ", True), ("multiprocessing_context='fork', ", False)):
        text = f"loader = DataLoader(ds, batch_size=32, {setting}num_workers=8)\n" + crash
        [d] = dllogscan.scan(text).diagnoses
        spawn = [f for f in d.fixes if "spawn" in f.title]
        assert len(spawn) == 1 and ("already shows the" in spawn[0].title) == shown, [f.title for f in d.fixes]
        assert (d.fixes[-1] is spawn[0]) == shown


def test_pytorchs_rerun_hint_does_not_overwrite_the_worker_count():
    # the exit-code message itself says "Rerunning with num_workers=0": that is no setting of the
    # run that failed, so the fixes keep the 8 workers it had (a reporter's "works with 0" alike)
    log = ("loader = DataLoader(ds, batch_size=64, num_workers=8)\n"
           "RuntimeError: DataLoader worker (pid 180) exited unexpectedly with exit code 1. Details are lost "
           "due to multiprocessing. Rerunning with num_workers=0 may give better error trace.\n"
           "With num_workers=0 it runs.\n")
    result = dllogscan.scan(log)
    [d] = result.diagnoses
    assert result.facts["num_workers"] == "8" and d.facts["num_workers"] == "8"
    spawn = [f.code for f in d.fixes if f.code and "multiprocessing_context='spawn'" in f.code]
    assert spawn and "num_workers=8" in spawn[0]
    # a zero alone, or a later non-zero count, is still taken as written
    assert dllogscan.scan("DataLoader(ds, num_workers=0)\n").facts["num_workers"] == "0"
    assert dllogscan.scan("num_workers=0\nnum_workers=4\n").facts["num_workers"] == "4"
    # the hint alone is no worker count either: the fixes fill in their default, not 0 workers
    hint_only = dllogscan.scan(log.splitlines()[1] + "\n")
    assert "num_workers" not in hint_only.facts
    assert not any("num_workers=0," in (f.code or "") for f in hint_only.diagnoses[0].fixes
                   if "multiprocessing_context" in (f.code or ""))


BUS_ERROR = ("RuntimeError: DataLoader worker (pid 4312) is killed by signal: Bus error. It is possible that "
             "dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\n")


def _df(size: str, use: int) -> str:
    return f"Filesystem      Size  Used Avail Use% Mounted on\ntmpfs  {size}  1.2G  100G  {use}% /dev/shm\n"


def test_an_ample_dev_shm_turns_the_advice_away_from_raising_it():
    [d] = dllogscan.scan(_df("126G", 1) + BUS_ERROR).diagnoses
    assert (d.cls, d.subclass) == ("A", "bus-error")  # the class stays: it is a bus error in a worker
    assert d.facts["shm_size"] == "126G" and d.facts["shm_use"] == "1"
    [note] = [n for n in d.notes if n.startswith("Ample /dev/shm:")]
    assert note.startswith("Ample /dev/shm: 126G here, 1% used") and "twice the 8g" in note
    assert d.fixes[0].title == "Measure /dev/shm where the workers ran, while they ran"
    assert "126G" in d.fixes[0].why
    commands = [c for f in d.fixes for c in f.commands]
    assert not any("--shm-size" in c or "remount" in c for c in commands)
    assert any("dmesg" in c for c in commands) and any(f.code and "num_workers=0" in f.code for f in d.fixes)
    assert d.title.endswith("(but the /dev/shm shown looks ample)")
    again = advise(d, get_scanner().db)  # advising twice keeps one note, and the title as it was
    assert sum(n.startswith("Ample /dev/shm:") for n in again.notes) == 1 and again.title == d.title


def test_a_full_or_merely_large_dev_shm_keeps_the_usual_advice_above_its_size():
    [full] = dllogscan.scan(_df("126G", 100) + BUS_ERROR).diagnoses
    assert full.fixes[0].title.startswith("Raise /dev/shm") and not any(n.startswith("Ample") for n in full.notes)
    assert "ample" not in full.title
    [large] = dllogscan.scan(_df("8.0G", 15) + BUS_ERROR).diagnoses
    assert large.fixes[0].title.startswith("Raise /dev/shm")
    # never "raise" it to the size it has: twice that instead
    assert "docker run --shm-size=16g ..." in large.fixes[0].commands


def test_a_dev_shm_size_the_report_states_counts_as_one_from_df():
    # pytorch#26009's shape: a bus error with a /dev/shm the reporter says is huge, and never near full
    text = "PyTorch 1.1.0 in Docker with --ipc=host, so /dev/shm is 254GB.\n" + BUS_ERROR
    [d] = dllogscan.scan(text).diagnoses
    assert (d.cls, d.facts["shm_size"]) == ("A", "254GB")
    assert any(n.startswith("Ample /dev/shm: 254GB here") for n in d.notes)
    assert d.fixes[0].title == "Measure /dev/shm where the workers ran, while they ran"
    assert any("memory-mapped" in f.title for f in d.fixes)  # a truncated or remote mapped file: SIGBUS too
    # a small one stated in prose keeps the usual advice (raise it), and a target is no size
    [small] = dllogscan.scan("the pod has 64 MB of /dev/shm\n" + BUS_ERROR).diagnoses
    assert small.facts["shm_size"] == "64 MB" and small.fixes[0].title.startswith("Raise /dev/shm")
    # a worker's bare exit beside a small /dev/shm told in words: checked before the OOM killer, as from df
    [bare] = dllogscan.scan("our /dev/shm was only 64MB\n"
                            "RuntimeError: DataLoader worker (pid(s) 1010) exited unexpectedly\n").diagnoses
    assert (bare.cls, bare.facts["shm_size"]) == ("B", "64MB")
    assert any(n.startswith("Small /dev/shm: 64MB here") for n in bare.notes)
    assert bare.fixes[0].title == "Give the workers a larger /dev/shm (64MB shown)"
    [target] = dllogscan.scan("sudo mount -o remount,size=64G /dev/shm\n" + BUS_ERROR).diagnoses
    assert "shm_size" not in target.facts and not any(n.startswith("Ample") for n in target.notes)


def test_docker_shm_size_counts_and_a_demand_estimate_sets_the_bar():
    [d] = dllogscan.scan("docker run --shm-size=64g -it trainer\n" + BUS_ERROR).diagnoses
    assert "Ample" in " ".join(d.notes)
    # 16 workers x 2 x a 768 MiB float32 batch = 24 GiB, 36 GiB with headroom: more than 32g
    log = ("docker run --shm-size=32g -it trainer\nDataLoader(num_workers=16, prefetch_factor=2)\n"
           "batch images: torch.Size([256, 3, 512, 512])\n" + BUS_ERROR)
    [d] = dllogscan.scan(log).diagnoses
    assert d.facts["shm_suggest"] == "36g" and not any(n.startswith("Ample") for n in d.notes)
    assert "docker run --shm-size=36g ..." in d.fixes[0].commands


def test_every_situation_has_its_title_and_fixes():
    from dllogscan.advise.fixes import SITUATION_TITLES
    from dllogscan.signatures.database import SITUATIONS

    assert set(SITUATION_TITLES) == SITUATIONS
    assert SITUATIONS <= {f.when for f in get_scanner().db.fixes}


def test_situations_follow_the_class_and_what_its_text_leaves_open():
    facts = {"shm_size": "126G"}
    assert situations(Diagnosis("A", "bus-error", "t", 0.9, ()), facts) == {"shm-ample"}
    assert situations(Diagnosis("B", "oom", "t", 0.9, ()), facts) == frozenset()
    small = {"shm_size": "64M"}
    bare = Diagnosis("B", "oom-suspected", "t", 0.6, ())
    assert situations(bare, small) == {"shm-small"} and situations(bare, facts) == frozenset()
    assert situations(bare, {"shm_size": "126G", "shm_use": "97"}) == {"shm-small"}  # full, whatever its size
    assert situations(bare, {"shm_size": "1G", "shm_demand_bytes": str(3 << 30)}) == {"shm-small"}
    lost = Diagnosis("B", "crash", "t", 0.85, ())
    assert situations(lost, {**small, "exit_code": "1"}) == {"shm-small"}
    # a named cause (a segfault, an OOM kill, an exception with its traceback) keeps its own fixes
    assert situations(lost, {**small, "signal": "Segmentation fault"}) == frozenset()
    assert situations(Diagnosis("B", "oom", "t", 0.9, ()), small) == frozenset()
    assert situations(Diagnosis("B", "getitem", "t", 0.9, ()), small) == frozenset()
    assert above_current({"shm_size": "126G"}) == {"shm_suggest": "252g", "shm_suggest_k8s": "252Gi"}
    assert above_current({"shm_size": "64M"}) == {}


TF_INIT = ("2020-10-19 18:33:13.420481: F tensorflow/stream_executor/cuda/cuda_driver.cc:219] "
           "Failed setting context: CUDA_ERROR_NOT_INITIALIZED: initialization error")
MX_INIT = ("[06:25:22] /mxnet-build/3rdparty/mshadow/mshadow/./tensor_gpu-inl.h:35: "
           "Check failed: e == cudaSuccess: CUDA: initialization error")


def _code(d) -> str:
    return "\n".join(f.code or "" for f in d.fixes)


def test_cuda_in_keras_workers_gets_keras_fixes_not_the_dataloaders():
    [d] = dllogscan.scan(f"model.fit(train_gen, epochs=50, workers=6, use_multiprocessing=True)\n{TF_INIT}\n",
                         classifier="off").diagnoses
    assert (d.cls, d.subclass) == ("D", "cuda-fork")
    assert any(n.startswith("Keras: the text runs Keras's loader with use_multiprocessing") and "CUDA" in n
               for n in d.notes)
    assert d.fixes[0].title.startswith("Load with threads: use_multiprocessing=False")
    assert "workers=6, use_multiprocessing=False" in d.fixes[0].code  # the count found fills the fix
    assert "DataLoader" not in _code(d) and "multiprocessing_context" not in _code(d)


def test_cuda_in_gluon_workers_gets_mxnets_fixes():
    [d] = dllogscan.scan(f"loader = gluon.data.DataLoader(train, batch_size=64, num_workers=8)\n{MX_INIT}\n",
                         classifier="off").diagnoses
    assert (d.cls, d.signatures[0]) == ("D", "D.cuda-fork.mxnet-init-error")
    assert any(n.startswith("MXNet: the CUDA error is MXNet's") for n in d.notes)
    assert "as_in_context(mx.gpu(0))" in d.fixes[0].code and "batch_size=64, num_workers=8" in d.fixes[0].code
    assert "thread_pool=True" in d.fixes[1].code and "num_workers=0" in d.fixes[2].code
    assert "multiprocessing_context" not in _code(d) and "pin_memory" not in _code(d)


def test_cuda_driver_error_in_the_dataloaders_workers_keeps_the_dataloaders_fixes():
    """A decoder's CUDA_ERROR_NOT_INITIALIZED in a PyTorch DataLoader's workers (VALI): PyTorch's fixes."""
    log = ("loader = torch.utils.data.DataLoader(VideoDataset(files), batch_size=4, num_workers=4)\n"
           "/project/src/TC/src/CudaUtils.cpp:188 CUDA error: CUDA_ERROR_NOT_INITIALIZED initialization error\n")
    [d] = dllogscan.scan(log, classifier="off").diagnoses
    assert d.cls == "D" and situations(d, d.facts) == frozenset()
    assert "multiprocessing_context='spawn'" in _code(d) and not any(n.startswith(("Keras:", "MXNet:")) for n in d.notes)


def test_another_frameworks_situation_follows_its_signatures_or_keras_workers_as_processes():
    keras = ("D.cuda-fork.framework-init-error", "D.cuda-fork.keras-multiprocessing")
    assert situations(Diagnosis("D", "cuda-fork", "t", 0.9, (), signatures=keras), {}) == {"keras"}
    mx = ("D.cuda-fork.mxnet-init-error",)
    assert situations(Diagnosis("D", "cuda-fork", "t", 0.9, (), signatures=mx), {}) == {"mxnet"}
    assert situations(Diagnosis("D", "cuda-fork", "t", 0.9, ()), {}) == frozenset()
    assert situations(Diagnosis("E", "unknown", "t", 0.7, (), signatures=keras[1:]), {}) == frozenset()
    processes, threads = {"use_multiprocessing": "True"}, {"use_multiprocessing": "False"}
    for cls in "DE":
        assert situations(Diagnosis(cls, None, "t", 0.7, ()), processes) == {"keras"}
        assert situations(Diagnosis(cls, None, "t", 0.7, ()), threads) == frozenset()
    assert situations(Diagnosis("B", "oom", "t", 0.9, ()), processes) == frozenset()


def test_a_hang_of_kerass_forked_workers_gets_kerass_fixes_not_the_dataloaders():
    hang = Diagnosis("E", "hang", "The data pipeline hangs", 0.9, (), facts={"use_multiprocessing": "True",
                                                                             "num_workers": "6"})
    d = advise(hang, get_scanner().db)
    assert d.fixes[0].title.startswith("Confirm it: the same fit with use_multiprocessing=False")
    assert "workers=6, use_multiprocessing=False" in d.fixes[0].code
    assert any("py-spy dump" in c for f in d.fixes for c in f.commands)
    assert not any(w in _code(d) for w in ("DataLoader", "persistent_workers", "timeout="))
    assert any(n.startswith("Keras: the text runs Keras's loader") and "whose worker died" in n for n in d.notes)


def test_kerass_threads_tried_after_its_processes_keep_the_processes_fact():
    """"With use_multiprocessing=False it trains" is the reporter's workaround, as num_workers=0 is."""
    for text in ("model.fit(seq, workers=4, use_multiprocessing=True)\nWith use_multiprocessing=False it trains.\n",
                 "With use_multiprocessing=False it trains.\nmodel.fit(seq, workers=4, use_multiprocessing=True)\n"):
        assert dllogscan.scan(text, classifier="off").facts["use_multiprocessing"] == "True"
    assert dllogscan.scan("model_args.use_multiprocessing = True\n", classifier="off").facts == {}


def test_an_ample_open_files_limit_turns_the_advice_to_what_holds_the_descriptors():
    ancdata = "Training stops in epoch 3:\nRuntimeError: received 0 items of ancdata\n"  # no training word: H (scope)
    [d] = dllogscan.scan("open files                      (-n) 1048576\n" + ancdata).diagnoses
    assert d.cls == "C" and d.facts["open_files"] == "1048576"
    assert any(n.startswith("Ample open-files limit: ulimit shows 1048576") for n in d.notes)
    assert d.fixes[0].title.startswith("Check the limit the failing process really had")
    assert d.title.endswith("(but the open-files limit shown is high)")
    assert not any("ulimit -n 65536" in c or "nofile" in c for f in d.fixes for c in f.commands)
    assert any(f.code and "file_system" in f.code for f in d.fixes)
    [low] = dllogscan.scan("open files                      (-n) 1024\n" + ancdata).diagnoses
    assert any("ulimit -n 65536" in c for c in low.fixes[0].commands) and not any("Ample" in n for n in low.notes)
    assert situations(Diagnosis("C", "fd-exhausted", "t", 0.9, ()), {"open_files": "unlimited"}) == {"fd-limit-ample"}


def test_a_worker_death_beside_dockers_default_dev_shm_checks_shm_first():
    log = ("docker run -it -v /data:/dataset trainer bash\n"
           "Filesystem      Size  Used Avail Use% Mounted on\n"
           "shm              64M     0   64M   0% /dev/shm\n"
           "loader = DataLoader(ds, batch_size=32, num_workers=4)\n"
           "RuntimeError: DataLoader worker (pid 180) exited unexpectedly with exit code 1. Details are lost "
           "due to multiprocessing. Rerunning with num_workers=0 may give better error trace.\n")
    [d] = dllogscan.scan(log).diagnoses
    assert (d.cls, d.subclass) == ("B", "crash")  # the class stays: the text says only that a worker died
    assert d.title.endswith("(and the /dev/shm shown is small)")
    [note] = [n for n in d.notes if n.startswith("Small /dev/shm:")]
    assert note.startswith("Small /dev/shm: 64M here, 0% used")
    assert d.fixes[0].title == "Give the workers a larger /dev/shm (64M shown)"
    assert "docker run --shm-size=8g ..." in d.fixes[0].commands
    assert any("dmesg" in c for c in d.fixes[1].commands) and "num_workers=0" in (d.fixes[2].code or "")
    # without the df line, the usual order: the exit code's own fixes
    [plain] = dllogscan.scan(log.replace("shm              64M     0   64M   0% /dev/shm\n", "")).diagnoses
    assert "small" not in plain.title and not plain.fixes[0].title.startswith("Give the workers a larger")
    assert not any(n.startswith("Small /dev/shm:") for n in plain.notes)


def test_the_find_the_failing_sample_code_runs_on_both_kinds_of_dataset(capsys):
    """B / getitem's second fix is code to paste: it ran only on a map-style dataset (an
    IterableDataset has no ``dataset[i]``); it names the failing sample of either and re-raises."""
    torch = pytest.importorskip("torch")
    from dllogscan.signatures.loader import load_database

    [fix] = [f for f in load_database().fixes if f.key == "B.getitem" and f.title == "Find the failing sample directly"]

    class Mapped(torch.utils.data.Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            if i == 3:
                raise KeyError(f"label missing for sample {i}")
            return i

    class Streamed(torch.utils.data.IterableDataset):
        def __iter__(self):
            for i in range(6):
                if i == 3:
                    raise KeyError(f"label missing for sample {i}")
                yield i

    for dataset, said in ((Mapped(), "3 KeyError"), (Streamed(), "sample 3 KeyError")):
        with pytest.raises(KeyError):
            exec(fix.code, {"dataset": dataset})
        assert capsys.readouterr().out.startswith(said)
