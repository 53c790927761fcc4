"""One rung of the reproduction ladder, run in a fresh interpreter:
``python -m dllogscan.live.child SPEC.json``. Everything it prints is what the scanner reads;
measurements go to ``stats.json`` next to the spec, worker pids to ``pids``."""
from __future__ import annotations

import faulthandler
import importlib
import inspect
import json
import os
import resource
import signal
import sys
from pathlib import Path
from typing import Any, Callable, NoReturn

from .loader import Conflict, Options, build, describe_all, for_rung, settings, user_collate

OK_MARK = "dllogscan-repro: ok"
#: written next to the spec when the factory, collate or worker_init function cannot be imported, the
#: factory cannot make a dataset to load (it needs arguments, returns no dataset, an empty one), or an
#: option cannot apply to its loader: the parent's usage error, not a failure of the dataset
IMPORT_ERROR = "import_error"
#: written next to the spec before the first batch: what the rung's loader is (``loader.describe_all``)
LOADER_FILE = "loader.json"
#: written once torch is imported, before the user's code runs: the rung's --timeout counts from here
READY_FILE = "ready"
#: written when the loader is asked for its first batch (the factory has returned, the loader is
#: built): a hang's "no batch in N s" counts from here, or from the last batch (``stats.json``)
WAITING_FILE = "waiting"


def load_callable(spec: str) -> Callable[..., Any]:
    """``package.module:name`` -> the object, importing from the working directory."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ValueError(f"{spec!r}: expected module:callable")
    if module_name.endswith(".py") or "/" in module_name or "\\" in module_name:
        dotted = module_name.removesuffix(".py").replace("\\", "/").strip("/").replace("/", ".")
        raise ValueError(f"name the module as Python imports it, {dotted}:{attr}, not by its file")
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    if not callable(obj):
        raise ValueError(f"{spec!r} is not callable")
    return obj


def load_or_stop(spec: str, what: str, folder: str) -> Callable[..., Any]:
    """``load_callable(spec)``; when it cannot be imported (any error while importing or looking it
    up), say why in ``IMPORT_ERROR`` and exit 2 before any data is loaded."""
    try:
        return load_callable(spec)
    except SystemExit as exc:  # a script's argparse or sys.exit() at import time
        stop(folder, f"{spec}: cannot import the {what}: its module {exited(exc)} while being imported")
    except Exception as exc:  # noqa: BLE001 - the user's module may raise anything on import
        stop(folder, f"{spec}: cannot import the {what}: {one_line(exc)}")


def one_line(exc: BaseException) -> str:
    """``KeyError: 3``: an exception's name and the first line of its message."""
    return f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else type(exc).__name__


def exited(exc: SystemExit) -> str:
    """How user code left through ``sys.exit``: ``called exit(3)``, ``called exit('usage: ...')``."""
    return f"called exit({str(exc.code).splitlines()[0][:200]!r})" if isinstance(exc.code, str) else \
        f"called exit({exc.code if exc.code is not None else ''})"


def stop(folder: str, message: str) -> NoReturn:
    """End the rung as the parent's usage error (exit 2), before any data is loaded."""
    Path(folder, IMPORT_ERROR).write_text(message)
    sys.exit(2)


def make_dataset(factory: Callable[..., Any], spec: str, folder: str) -> Any:
    """``factory()``: a Dataset or a DataLoader, stopping with a usage error when it cannot be
    called without arguments or gives nothing a DataLoader could load; an exception raised inside
    it is the dataset's own."""
    from torch.utils.data import DataLoader

    try:
        inspect.signature(factory).bind()
    except TypeError:
        stop(folder, f"{spec}: the factory needs arguments {inspect.signature(factory)}; give repro a "
                     "function that takes none and calls it with yours")
    except ValueError:  # no signature to read (a builtin): just call it
        pass
    try:
        made = factory()
    except SystemExit as exc:  # not the dataset's failure: it never made one
        stop(folder, f"{spec}: the factory {exited(exc)} instead of returning a Dataset or DataLoader")
    dataset = made.dataset if isinstance(made, DataLoader) else made
    if not (hasattr(dataset, "__getitem__") or hasattr(dataset, "__iter__")):
        stop(folder, f"{spec}: the factory returned {type(made).__name__}, not a Dataset or DataLoader")
    try:
        empty = len(dataset) == 0
    except (TypeError, NotImplementedError):  # an IterableDataset without __len__
        empty = False
    if empty:
        stop(folder, f"{spec}: the dataset is empty (len 0): there is nothing to load")
    return made


class _PidInit:
    """Records each worker's pid, then installs the stack dumper, then runs the user's
    worker_init_fn: a hang or crash in it is a known worker's, its stack dumped."""

    def __init__(self, folder: str, inner: Callable[[int], Any] | None = None) -> None:
        self.folder, self.inner = folder, inner

    def __call__(self, worker_id: int) -> None:
        from .stacks import StackDumpInit

        with open(Path(self.folder) / "pids", "a") as fh:
            fh.write(f"{os.getpid()}\n")
        StackDumpInit(self.folder, self.inner)(worker_id)


def batch_size_reader(batched: bool, collate: Callable[..., Any] | None) -> Callable[[Any], int | None]:
    """How to tell a batch's number of samples: 1 without batching, read from the default
    collate_fn's batch, unknown (None) from a collate_fn of the user's, whose batch may be any shape."""
    from .shards import samples_in

    if not batched:
        return lambda batch: 1
    return samples_in if collate is None else (lambda batch: None)


def options(spec: dict[str, Any], folder: str) -> Options:
    """repro's loader options from the spec, their functions imported (a usage error where not)."""
    def imported(key: str, what: str) -> Callable[..., Any] | None:
        return load_or_stop(spec[key], what, folder) if spec.get(key) else None

    return Options(batch_size=spec.get("batch_size"), collate=imported("collate", "collate function"),
                   worker_init=imported("worker_init", "worker_init_fn"), spawn=bool(spec.get("spawn")),
                   pin_memory=bool(spec.get("pin_memory")))


def make_loader(spec: dict[str, Any], workers: int, folder: str) -> tuple[Any, Any]:
    """(loader, dataset) for the rung: the factory's DataLoader rebuilt at ``workers``, or repro's
    own over its Dataset, with the options given laid over; what it is goes to ``loader.json``."""
    factory = load_or_stop(spec["factory"], "factory", folder)
    opts = options(spec, folder)
    made = make_dataset(factory, spec["factory"], folder)
    try:
        dataset, kwargs, origin = settings(made, opts)
    except Conflict as exc:
        stop(folder, f"{spec['factory']}: {exc}")
    Path(folder, LOADER_FILE).write_text(json.dumps(describe_all(made, kwargs, origin, spec["factory"])))
    return build(dataset, for_rung(kwargs, workers, lambda inner: _PidInit(folder, inner))), dataset


def run(spec: dict[str, Any]) -> None:
    folder = spec["folder"]
    faulthandler.enable()
    from .stacks import dump_on_request
    dump_on_request(folder)
    if spec.get("nofile"):
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (spec["nofile"], hard))
    import torch
    import torch.multiprocessing as mp
    from torch.utils.data import IterableDataset

    from .procinfo import measure, worker_pids
    from .shards import Yielded

    if spec.get("sharing_strategy"):
        mp.set_sharing_strategy(spec["sharing_strategy"])
    workers = spec["num_workers"]
    print(f"dllogscan-repro: torch {torch.__version__}, num_workers={workers}, "
          f"sharing strategy {mp.get_sharing_strategy()}", flush=True)
    from .sample_hang import held_now, tasks

    Path(folder, READY_FILE).touch()
    before = tasks()
    loader, dataset = make_loader(spec, workers, folder)
    peak: dict[str, int] = {}
    yielded = Yielded(iterable=isinstance(dataset, IterableDataset))
    size = batch_size_reader(loader.batch_sampler is not None, user_collate(loader.collate_fn))

    def save(n: int) -> None:
        Path(folder, "stats.json").write_text(json.dumps({"batches": n, "worker_peak": peak,
                                                          "yielded": yielded.to_dict()}))

    held_now(folder, before)  # what the workers fork from (a hang at 0 names its threads)
    Path(folder, WAITING_FILE).touch()
    it = iter(loader)
    n = 0
    for n, batch in enumerate(it, start=1):
        yielded.add(batch, size(batch))
        for info in measure(worker_pids(it)).values():
            if info:
                peak["rss"] = max(peak.get("rss", 0), info["rss"])
                peak["fds"] = max(peak.get("fds", 0), info["fds"])
        save(n)
        if n >= spec["batches"]:
            break
    else:  # the loader ran out before the cap: the counts are all it yields
        yielded.exhausted = True
        save(n)
    del it
    print(f"{OK_MARK} {n} batches", flush=True)


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text())
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    run(spec)


if __name__ == "__main__":
    main()
