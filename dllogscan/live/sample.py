"""``dllogscan doctor --sample``: one real batch of the user's dataset measured in a fresh
interpreter (``python -m dllogscan.live.sample SPEC.json``), given ``--timeout`` seconds after
torch's import as a repro rung is (``supervise``): a factory or a first item that hangs is cut,
its stack read, and reported as a finding instead of hanging doctor."""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from . import sample_hang, stacks
from .child import READY_FILE, WAITING_FILE, exited, load_callable, one_line
from .supervise import LOG_FILE, run_child, waiting_text

RESULT_FILE = "sample.json"


class Unimportable(Exception):
    """The factory cannot be imported: said as repro says it, without the frame that raised."""


def sample_batch(factory: str, batch_size: int | None = None, folder: str | None = None,
                 tasks_before: int | None = None) -> dict[str, int]:
    """Bytes and tensors in one real batch, loaded in this process: of the user's Dataset (collated by
    the default, ``batch_size`` or 1 a batch), or of the DataLoader the factory returns (its own
    batching and collate_fn, ``batch_size`` laid over as ``repro`` lays it, ``loader.settings``), then
    with that loader's ``num_workers`` and ``prefetch_factor`` too. ``folder``: where to mark the
    first batch request (``WAITING_FILE``), after what the process holds there (``sample_hang.held_now``:
    ``tasks_before`` its threads before the factory ran)."""
    import torch
    from torch.utils.data import DataLoader

    from .loader import Options, build, for_rung, settings

    try:
        make = load_callable(factory)
    except Exception as exc:  # noqa: BLE001 - the user's module may raise anything on import
        raise Unimportable(f"cannot import the factory: {raised(exc)[0]}") from None
    made = make()
    own = isinstance(made, DataLoader)
    dataset, kwargs, _ = settings(made, Options(batch_size=batch_size or (None if own else 1)))
    loader = build(dataset, for_rung(kwargs, 0, lambda init: init))
    if folder:
        sample_hang.held_now(folder, tasks_before)
        Path(folder, WAITING_FILE).touch()
    batch = next(iter(loader), None)
    if batch is None:  # not StopIteration: a one-line 'StopIteration: ' said nothing
        raise ValueError("the dataset is empty: no batch to measure")
    tensors: list[torch.Tensor] = []

    def walk(obj: Any) -> None:
        if isinstance(obj, torch.Tensor):
            tensors.append(obj)
        elif isinstance(obj, dict):
            for v in obj.values():
                walk(v)
        elif isinstance(obj, (list, tuple)):
            for v in obj:
                walk(v)

    walk(batch)
    measured = {"bytes": sum(t.numel() * t.element_size() for t in tensors), "tensors": len(tensors)}
    if own:
        measured["num_workers"] = made.num_workers
        if made.num_workers:  # torch keeps None at num_workers=0
            measured["prefetch_factor"] = made.prefetch_factor
    return measured


def measure(factory: str, batch_size: int | None, timeout: float, cwd: str | None = None) -> dict[str, Any]:
    """``sample_batch`` in a fresh interpreter: ``{"measured": ...}``, ``{"error": "..."}`` (the user's
    code raised or exited: one line), or ``{"hang": "no batch in N s; stuck at ...", "cause": ...}``
    (``sample_hang.explain``)."""
    with tempfile.TemporaryDirectory(prefix="dllogscan-sample-") as folder:
        start = time.monotonic()
        ended = run_child("dllogscan.live.sample", {"factory": factory, "batch_size": batch_size, "folder": folder},
                          folder, timeout, cwd)
        if ended.code is None:
            stack = ended.stacks.get(ended.pid, "")
            where = stacks.stuck_at(stack)
            said = waiting_text(ended.waiting_for, ended.waited, time.monotonic() - start)
            return {"hang": said + (f"; stuck at {where}" if where else ""),
                    "cause": sample_hang.explain(stack, sample_hang.read_held(folder))}
        result = Path(folder, RESULT_FILE)
        if result.exists():
            return json.loads(result.read_text())
        lines = [ln for ln in Path(folder, LOG_FILE).read_text(errors="replace").splitlines() if ln.strip()]
        return {"error": f"the sampling process ended with exit code {ended.code}" + (f": {lines[-1]}" if lines else "")}


def raised(exc: BaseException) -> tuple[str, str | None]:
    """(``KeyError: 3``, ``mydata.py:45 in __getitem__``): the exception's first line, and the
    innermost frame that raised it outside this module (None: this module's own, an empty dataset)."""
    said = one_line(exc)
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename != __file__]
    if not frames:
        return said, None
    return said, f"{os.path.basename(frames[-1].filename)}:{frames[-1].lineno} in {frames[-1].name}"


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text())
    folder = spec["folder"]
    stacks.dump_on_request(folder)
    import torch  # noqa: F401 - its import is start-up, not the dataset's time

    Path(folder, READY_FILE).touch()
    try:
        out: dict[str, Any] = {"measured": sample_batch(spec["factory"], spec["batch_size"], folder,
                                                        sample_hang.tasks())}
    except SystemExit as exc:  # the user's code left through sys.exit (a script's argparse)
        out = {"error": f"it {exited(exc)} instead of returning a Dataset or DataLoader"}
    except Unimportable as exc:
        out = {"error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - the user's code: report it in one line
        said, where = raised(exc)
        out = {"error": said + (f", raised at {where}; `dllogscan repro {spec['factory']} --workers 0` shows the "
                                "traceback" if where else "")}
    Path(folder, RESULT_FILE).write_text(json.dumps(out))


if __name__ == "__main__":
    main()
