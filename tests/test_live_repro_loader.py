"""``dllogscan repro`` runs the user's loader as they configured it: a factory may return its
DataLoader, rebuilt at each rung with every setting but num_workers; a Dataset's loader takes
``--worker-init`` and ``--pin-memory``. Before, a DataLoader from the factory was wrapped in
repro's own (every rung failed), and no worker_init_fn of the user's ever ran."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("psutil")

from torch.utils.data import DataLoader, RandomSampler  # noqa: E402

from dllogscan.live import loader as rebuild  # noqa: E402
from dllogscan.live.conclude import conclude, render  # noqa: E402
from dllogscan.live.repro import Settings, ladder, loader_of  # noqa: E402
from dllogscan.live.shards import LOADER_WITHOUT_INIT, NO_INIT  # noqa: E402
from tests import live_datasets  # noqa: E402
from tests.live_helpers import scanner, signature_args  # noqa: E402

DS = "tests.live_datasets"
PIN_NOTE = "pin_memory=True was not tested: torch pins memory only with CUDA"


def run(factory: str, workers, batches: int = 40, timeout: float = 40, **kw):
    rungs = ladder(Settings(factory=f"{DS}:{factory}", workers=workers, batches=batches, timeout=timeout, **kw),
                   scanner())
    return rungs, conclude(rungs)


def repro(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dllogscan", "repro", *args,
                           *[a for s in signature_args() for a in ("-s", s)]],
                          capture_output=True, text=True, timeout=120)


# -- rebuilding a loader, in this process ------------------------------------------------------

def test_a_loader_is_rebuilt_with_its_own_sampler_generator_and_settings():
    g = torch.Generator().manual_seed(7)
    made = DataLoader(live_datasets.Squares(6), batch_size=3, shuffle=True, generator=g, drop_last=True,
                      pin_memory=True, worker_init_fn=live_datasets.seed_only, num_workers=2, prefetch_factor=3,
                      multiprocessing_context="spawn")
    dataset, kwargs, origin = rebuild.settings(made, rebuild.Options())
    assert dataset is made.dataset and set(origin.values()) == {"loader"}
    assert kwargs["sampler"] is made.sampler and isinstance(made.sampler, RandomSampler)
    assert (kwargs["batch_size"], kwargs["drop_last"], kwargs["generator"]) == (3, True, g)
    described = rebuild.describe_all(made, kwargs, origin, "m:f")
    assert described["settings"] == {
        "batch_size": 3, "drop_last": True, "sampler": "RandomSampler", "pin_memory": True,
        "worker_init_fn": "tests.live_datasets.seed_only", "multiprocessing_context": "spawn",
        "generator": "Generator(seed=7)", "prefetch_factor": 3}
    assert described["workers_only"] == ["multiprocessing_context", "prefetch_factor"]
    assert (described["returned"], described["class"], described["num_workers"]) == ("DataLoader", "DataLoader", 2)


def test_a_datapipe_loader_is_rebuilt_around_the_datapipe_not_torchs_wrapper():
    datapipes = pytest.importorskip("torch.utils.data.datapipes.iter")
    pipe = datapipes.IterableWrapper(range(6))
    made = DataLoader(pipe, batch_size=2)
    assert type(made.dataset).__name__ in rebuild.DATAPIPE_WRAPPERS  # torch wrapped it
    dataset, kwargs, _ = rebuild.settings(made, rebuild.Options())
    assert dataset is pipe
    rebuilt = rebuild.build(dataset, rebuild.for_rung(kwargs, 0, lambda fn: fn))
    assert rebuilt.dataset._datapipe is pipe  # wrapped once, as the user's loader was
    assert [b.tolist() for b in rebuilt] == [[0, 1], [2, 3], [4, 5]]
    assert rebuild.unwrapped(made) is made and rebuild.unwrapped(pipe) is pipe


@pytest.mark.filterwarnings("ignore:'pin_memory' argument is set as true")  # without CUDA
@pytest.mark.parametrize("workers", [0, 2])
def test_a_rung_drops_only_what_its_num_workers_forbids(workers):
    """torch raises on prefetch_factor, persistent_workers and multiprocessing_context at
    num_workers=0, and its single-process iterator on a timeout; a loader made at num_workers=0
    has prefetch_factor None, which a rung with workers must leave to torch's default."""
    for made in (live_datasets.workers_only_loader(), DataLoader(live_datasets.Squares(8), batch_size=2)):
        _, kwargs, _ = rebuild.settings(made, rebuild.Options())
        wrapped = rebuild.for_rung(kwargs, workers, lambda inner: ("wrapped", inner))
        assert wrapped["num_workers"] == workers
        if workers == 0:
            assert not set(rebuild.WORKERS_ONLY) & set(wrapped) and wrapped["worker_init_fn"] is None
        else:
            assert wrapped["worker_init_fn"] == ("wrapped", None)
            # 4, or None (made at num_workers=0): left to torch's default
            assert wrapped.get("prefetch_factor") == made.prefetch_factor
            assert "multiprocessing_context" not in wrapped
        loader = rebuild.build(made.dataset, {**wrapped, "worker_init_fn": None})
        assert loader.drop_last == made.drop_last and loader.pin_memory == made.pin_memory
        if workers == 0:
            assert sum(len(b) for b in loader) == 8


def test_options_given_override_the_loaders_settings():
    made = live_datasets.split_loader()
    opts = rebuild.Options(batch_size=8, collate=live_datasets.sized, worker_init=live_datasets.seed_only,
                           spawn=True, pin_memory=True)
    _, kwargs, origin = rebuild.settings(made, opts)
    assert (kwargs["batch_size"], kwargs["collate_fn"], kwargs["worker_init_fn"]) == (
        8, live_datasets.sized, live_datasets.seed_only)
    assert (kwargs["multiprocessing_context"], kwargs["pin_memory"]) == ("spawn", True)
    given = {"batch_size": "--batch-size", "collate_fn": "--collate", "pin_memory": "--pin-memory",
             "worker_init_fn": "--worker-init", "multiprocessing_context": "--spawn"}
    assert {k: v for k, v in origin.items() if v != "loader"} == given
    assert {"drop_last", "timeout", "generator"} <= {k for k, v in origin.items() if v == "loader"}
    with pytest.raises(rebuild.Conflict, match="its own batch_sampler"):
        rebuild.settings(live_datasets.batch_sampler_loader(), rebuild.Options(batch_size=4))


def test_a_dataset_gets_repros_own_loader_with_the_options_given():
    dataset = live_datasets.Squares()
    got, kwargs, origin = rebuild.settings(dataset, rebuild.Options(worker_init=live_datasets.seed_only))
    assert got is dataset
    assert kwargs == {"batch_size": rebuild.BATCH_SIZE, "worker_init_fn": live_datasets.seed_only}
    assert origin == {"batch_size": "repro", "worker_init_fn": "--worker-init"}
    assert rebuild.describe_all(dataset, kwargs, origin, "m:f")["returned"] == "Dataset"


# -- the ladder, in real subprocess rungs ------------------------------------------------------

def test_a_loaders_worker_init_fn_that_splits_the_stream_runs_in_each_worker():
    """Before: every rung failed (repro wrapped the DataLoader in its own)."""
    rungs, verdict = run("split_loader", (0, 1, 2))
    assert [r.result for r in rungs] == ["pass"] * 3
    assert [(r.yielded.samples, r.yielded.batches, r.yielded.exhausted) for r in rungs] == [(40, 10, True)] * 3
    assert verdict["warnings"] == [] and verdict["notes"] == []
    loader = loader_of(rungs)
    assert loader["settings"] == {"batch_size": 4, "worker_init_fn": f"{DS}.split_by_worker"}
    assert render(rungs, verdict).startswith(
        f"loader: batch_size=4, worker_init_fn={DS}.split_by_worker (from {DS}:split_loader, its num_workers=0 "
        "replaced by each rung's)\n\nrung ")


@pytest.mark.parametrize("factory, init, said", [
    ("unsplit_loader", None, LOADER_WITHOUT_INIT),
    ("seeded_unsplit_loader", f"{DS}.seed_only",
     f"Your worker_init_fn ({DS}.seed_only) ran in every worker and did not split it."),
    ("ranged", None, NO_INIT),  # a Dataset without --worker-init
])
def test_the_unsplit_warning_says_what_the_users_worker_init_fn_did(factory, init, said):
    """Before: the warning said repro runs no worker_init_fn of the user's, whatever they gave."""
    rungs, verdict = run(factory, (0, 2))
    assert [r.yielded.samples for r in rungs] == [40, 80]
    [warning] = verdict["warnings"]
    assert warning["worker_init_fn"] == init and warning["text"].endswith(" " + said)
    assert "repro runs no worker_init_fn" not in warning["fix"]


def test_a_datapipe_without_a_sharding_filter_is_told_to_add_one():
    pytest.importorskip("torch.utils.data.datapipes.iter")
    rungs, verdict = run("sharded_pipe_loader", (0, 2))
    assert [r.result for r in rungs] == ["pass", "pass"] and verdict["warnings"] == []
    assert loader_of(rungs)["datapipe"] is True
    rungs, verdict = run("unsharded_pipe_loader", (0, 2))
    [warning] = verdict["warnings"]
    assert warning["text"].startswith("The DataPipe is not split between workers")
    assert "It has no sharding_filter" in warning["text"] and "worker_init_fn" not in warning["text"]
    assert warning["fix"].startswith("Fix: add a sharding_filter to the DataPipe")
    assert ".sharding_filter()" in render(rungs, verdict)


def test_a_worker_init_fn_that_raises_is_worker_start_up_with_its_traceback():
    rungs, verdict = run("raising_init_loader", (0, 1), batches=2)
    assert [r.result for r in rungs] == ["pass", "fail"]
    assert (rungs[1].cls, rungs[1].subclass) == ("B", "getitem-worker-init")
    assert rungs[1].evidence() == "OSError: cannot open the shard index in worker 0"
    assert verdict["verdict"] == "multiprocessing"
    assert "the worker_init_fn raised as each worker started (num_workers=0 runs none)" in verdict["text"]
    assert verdict["traceback"].endswith("OSError: cannot open the shard index in worker 0")
    assert "in raising_init" in verdict["traceback"] and "dllogscan/live" not in verdict["traceback"]
    assert "fixes" not in verdict  # 'Rerun with num_workers=0': the ladder just did


def test_a_worker_init_fn_that_hangs_is_a_known_workers_stack():
    """repro's start-up hook records the pid and installs the dumper before the user's init runs."""
    rungs, _ = run("hanging_init_loader", (1,), batches=2, timeout=5)
    [hang] = rungs
    assert hang.result == "hang" and hang.cls == "E"
    assert "in hanging_init: time.sleep(600)" in hang.evidence()
    workers = [text for pid, text in hang.stacks.items() if pid != hang.main_pid]
    assert len(workers) == 1 and "in hanging_init" in workers[0]


def test_settings_torch_takes_only_with_workers_leave_the_0_rung_running():
    rungs, verdict = run("workers_only_loader", (0, 1))
    assert [r.result for r in rungs] == ["pass", "pass"]
    assert [(r.yielded.batches, r.yielded.samples) for r in rungs] == [(4, 8)] * 2
    loader = loader_of(rungs)
    assert loader["num_workers"] == 2 and loader["pinned"] == rebuild.can_pin()
    assert loader["settings"] == {"batch_size": 2, "drop_last": True, "pin_memory": True, "timeout": 30,
                                  "prefetch_factor": 4, "persistent_workers": True}
    assert verdict["notes"][0] == ("num_workers=0 runs without timeout, prefetch_factor, persistent_workers: "
                                   "torch takes them only with workers.")
    assert any(n.startswith(PIN_NOTE) for n in verdict["notes"]) == (not rebuild.can_pin())


def test_a_batch_sampler_is_reused_as_given():
    rungs, _ = run("batch_sampler_loader", (0, 1))
    assert [(r.result, r.yielded.batches, r.yielded.samples) for r in rungs] == [("pass", 3, 10)] * 2
    assert loader_of(rungs)["settings"] == {"batch_sampler": "list"}


def test_an_explicit_batch_size_overrides_the_loaders():
    rungs, _ = run("split_loader", (0,), batch_size=8)
    assert (rungs[0].yielded.batches, rungs[0].yielded.samples) == (5, 40)
    assert loader_of(rungs)["origin"]["batch_size"] == "--batch-size"


# -- the command ---------------------------------------------------------------------------------

def test_cli_worker_init_and_pin_memory_for_a_dataset():
    proc = repro(f"{DS}:ranged", "--workers", "0,2", "--batches", "40", "--worker-init",
                 f"{DS}:split_by_worker", "--pin-memory", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [r["yielded"]["samples"] for r in doc["rungs"]] == [40, 40]
    assert doc["conclusion"]["warnings"] == []
    assert doc["loader"]["settings"] == {"batch_size": 2, "worker_init_fn": f"{DS}.split_by_worker",
                                         "pin_memory": True}
    assert doc["loader"]["origin"] == {"batch_size": "repro", "worker_init_fn": "--worker-init",
                                       "pin_memory": "--pin-memory"}
    assert doc["loader"]["pinned"] == rebuild.can_pin()
    assert any(n.startswith(PIN_NOTE) for n in doc["conclusion"]["notes"]) == (not rebuild.can_pin())


def test_cli_text_says_where_each_setting_came_from():
    proc = repro(f"{DS}:ranged", "--workers", "0", "--batches", "2", "--worker-init", f"{DS}:seed_only",
                 "--pin-memory")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == (f"loader: batch_size=2, worker_init_fn={DS}.seed_only (--worker-init), pin_memory=True "
                        f"(--pin-memory) (repro's own DataLoader over the Dataset from {DS}:ranged)")
    assert lines[1].startswith(PIN_NOTE) != rebuild.can_pin()


@pytest.mark.parametrize("args, message", [
    ([f"{DS}:healthy", "--workers", "0", "--worker-init", "nosuch:fn"],
     "nosuch:fn: cannot import the worker_init_fn: ModuleNotFoundError: No module named 'nosuch'"),
    ([f"{DS}:healthy", "--workers", "0", "--worker-init", f"{DS}:_LOCK"],
     f"{DS}:_LOCK: cannot import the worker_init_fn: ValueError: '{DS}:_LOCK' is not callable"),
    ([f"{DS}:healthy", "--worker-init", "seed_worker"],
     "--worker-init 'seed_worker': expected module:fn, e.g. mydata:seed_worker"),
    ([f"{DS}:batch_sampler_loader", "--workers", "0", "--batch-size", "4"],
     f"{DS}:batch_sampler_loader: --batch-size 4: the loader batches with its own batch_sampler (list); "
     "leave --batch-size out"),
])
def test_cli_loader_option_errors_are_one_line(args, message):
    proc = repro(*args)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == "" and proc.stderr.splitlines() == [f"Error: {message}"]



def test_the_readme_example_of_a_loader_split_by_its_worker_init_fn():
    rungs = ladder(Settings(factory="examples.repro_dataset:file_loader", workers=(0, 2), batches=100, timeout=60),
                   scanner())
    verdict = conclude(rungs)
    assert [r.yielded.samples for r in rungs] == [100, 100] and verdict["warnings"] == []
    assert render(rungs, verdict).splitlines()[:2] == [
        "loader: batch_size=4, worker_init_fn=examples.repro_dataset.split_files, prefetch_factor=4, "
        "persistent_workers=True (from examples.repro_dataset:file_loader, its num_workers=4 replaced by each "
        "rung's)",
        "num_workers=0 runs without prefetch_factor, persistent_workers: torch takes them only with workers."]
