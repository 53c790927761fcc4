"""The DataLoader a rung iterates, built in the rung's interpreter (``child``): the user's own
DataLoader rebuilt with every setting it was made with but ``num_workers``, or repro's own over
the user's Dataset; repro's options given explicitly override either. ``describe`` says which
setting came from where (the report's ``loader:`` line). torch is imported inside the functions."""
from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from typing import Any, Callable

#: DataLoader keywords torch takes only with workers (its ``__init__`` raises at num_workers=0, or
#: its single-process iterator asserts): a num_workers=0 rung leaves them at their defaults
WORKERS_ONLY = ("prefetch_factor", "persistent_workers", "multiprocessing_context", "timeout")
#: the settings read off a user's DataLoader besides its batching, where the installed torch has them
COPIED = ("collate_fn", "pin_memory", "timeout", "worker_init_fn", "multiprocessing_context", "generator",
          "prefetch_factor", "persistent_workers", "pin_memory_device", "in_order")
#: repro's batch_size for a Dataset when --batch-size is not given
BATCH_SIZE = 2
#: the wrappers torch's DataLoader.__init__ puts around a DataPipe dataset (datapipes/datapipe.py,
#: torch 1.12 and later), which keep the DataPipe as ``_datapipe``
DATAPIPE_WRAPPERS = ("_IterDataPipeSerializationWrapper", "_MapDataPipeSerializationWrapper")


@dataclass(frozen=True)
class Options:
    """repro's loader options as given on the command line; None (False): not given."""

    batch_size: int | None = None
    collate: Callable[..., Any] | None = None
    worker_init: Callable[[int], Any] | None = None
    spawn: bool = False
    pin_memory: bool = False

    def overrides(self) -> dict[str, tuple[str, Any]]:
        """DataLoader keyword -> (the option that set it, its value), for the options given."""
        given = {"batch_size": ("--batch-size", self.batch_size), "collate_fn": ("--collate", self.collate),
                 "worker_init_fn": ("--worker-init", self.worker_init),
                 "multiprocessing_context": ("--spawn", "spawn" if self.spawn else None),
                 "pin_memory": ("--pin-memory", True if self.pin_memory else None)}
        return {k: v for k, v in given.items() if v[1] is not None}


class Conflict(ValueError):
    """An option that cannot apply to the user's loader (the parent's usage error)."""


def _parameters() -> dict[str, inspect.Parameter]:
    from torch.utils.data import DataLoader

    return dict(inspect.signature(DataLoader.__init__).parameters)


def from_loader(loader: Any) -> dict[str, Any]:
    """The keywords ``loader`` was made with, num_workers aside, those the installed DataLoader
    takes: its batch_sampler where it was given one (torch then keeps batch_size None), else its
    batch_size, drop_last and sampler (an IterableDataset's is torch's stand-in: left out)."""
    from torch.utils.data import IterableDataset

    kwargs: dict[str, Any] = {}
    if loader.batch_sampler is not None and loader.batch_size is None:
        kwargs["batch_sampler"] = loader.batch_sampler
    else:
        kwargs.update(batch_size=loader.batch_size, drop_last=loader.drop_last)
        if not isinstance(loader.dataset, IterableDataset):
            kwargs["sampler"] = loader.sampler
    kwargs.update({name: getattr(loader, name) for name in COPIED if hasattr(loader, name)})
    params = _parameters()
    return {k: v for k, v in kwargs.items() if k in params}


def settings(made: Any, options: Options) -> tuple[Any, dict[str, Any], dict[str, str]]:
    """(dataset, keywords, origin) for the factory's result ``made``: the loader's keywords (or
    repro's batch_size for a Dataset) with the options given laid over them; origin: keyword ->
    ``loader``, ``repro`` or the option that set it. Conflict where --batch-size meets the
    loader's own batch_sampler."""
    from torch.utils.data import DataLoader

    if isinstance(made, DataLoader):
        dataset, kwargs = unwrapped(made.dataset), from_loader(made)
        origin = dict.fromkeys(kwargs, "loader")
    else:
        dataset, kwargs, origin = made, {"batch_size": BATCH_SIZE}, {"batch_size": "repro"}
    for name, (option, value) in options.overrides().items():
        if name == "batch_size" and "batch_sampler" in kwargs:
            raise Conflict(f"--batch-size {value}: the loader batches with its own batch_sampler "
                           f"({describe(kwargs['batch_sampler'])}); leave --batch-size out")
        kwargs[name], origin[name] = value, option
    return dataset, kwargs, origin


def unwrapped(dataset: Any) -> Any:
    """The DataPipe a loader's ``dataset`` wraps where torch wrapped it (``DATAPIPE_WRAPPERS``): the
    rebuilt loader wraps it again, once, as the user's loader did; any other dataset as it is."""
    if type(dataset).__name__ in DATAPIPE_WRAPPERS and hasattr(dataset, "_datapipe"):
        return dataset._datapipe
    return dataset


def is_datapipe(dataset: Any) -> bool:
    """Whether ``dataset`` is one of torch's DataPipes (torch.utils.data.datapipes; False where the
    installed torch has none)."""
    try:
        from torch.utils.data import IterDataPipe, MapDataPipe
    except ImportError:
        return False
    return isinstance(dataset, (IterDataPipe, MapDataPipe))


def for_rung(kwargs: dict[str, Any], workers: int, init: Callable[[Callable[[int], Any] | None], Any]
             ) -> dict[str, Any]:
    """``kwargs`` at ``workers`` workers: without what num_workers=0 forbids or a None that stands for
    torch's default, the worker_init_fn wrapped by ``init`` (repro's own start-up, then the user's)."""
    out = {k: v for k, v in kwargs.items()
           if not (workers == 0 and k in WORKERS_ONLY)
           and not (k in ("prefetch_factor", "multiprocessing_context") and v is None)}
    out["num_workers"] = workers
    if workers:
        out["worker_init_fn"] = init(kwargs.get("worker_init_fn"))
    return out


def build(dataset: Any, kwargs: dict[str, Any]) -> Any:
    """torch's DataLoader over ``dataset`` with ``kwargs``."""
    from torch.utils.data import DataLoader

    return DataLoader(dataset, **kwargs)


def user_collate(fn: Callable[..., Any] | None) -> Callable[..., Any] | None:
    """``fn`` when it is a collate_fn of the user's, not one of torch's defaults (whose batches'
    sizes can be read); else None."""
    from torch.utils.data import default_collate
    from torch.utils.data._utils.collate import default_convert

    return None if fn is None or fn is default_collate or fn is default_convert else fn


def describe(obj: Any) -> str:
    """A setting's value as the report shows it: a function or class by its import path (torch's
    own by its name), a partial by its function's, an object by its class's, a context by its
    start method, a generator by its seed."""
    import torch

    if isinstance(obj, functools.partial):
        return f"partial({describe(obj.func)})"
    if isinstance(obj, torch.Generator):
        return f"Generator(seed={obj.initial_seed()})"
    if hasattr(obj, "get_start_method"):
        return str(obj.get_start_method())
    if isinstance(obj, str):
        return obj
    named = obj if hasattr(obj, "__qualname__") and hasattr(obj, "__module__") else type(obj)
    module = getattr(named, "__module__", "") or ""
    if module.split(".")[0] == "torch":
        return named.__qualname__
    return f"{module}.{named.__qualname__}" if module not in ("", "builtins") else named.__qualname__


def can_pin() -> bool:
    """Whether torch pins memory here: only with CUDA (or, in newer torch, another accelerator);
    without one it warns and loads unpinned."""
    import torch

    accelerator = getattr(torch, "accelerator", None)
    return bool(accelerator.is_available() if accelerator is not None else torch.cuda.is_available())


def _shown(name: str, value: Any, default: Any) -> bool:
    """Whether a setting is worth a word: batching always, the rest where they are not torch's default."""
    from torch.utils.data import SequentialSampler

    if name in ("batch_size", "batch_sampler"):
        return True
    if name == "sampler":
        return type(value) is not SequentialSampler
    if name == "collate_fn":
        return user_collate(value) is not None
    if name == "prefetch_factor":
        return value not in (None, 2)
    return value is not default and value != default


def _json(value: Any) -> Any:
    return value if value is None or isinstance(value, (bool, int, float)) else describe(value)


def describe_all(made: Any, kwargs: dict[str, Any], origin: dict[str, str], factory: str) -> dict[str, Any]:
    """What the report says of the rung's loader (JSON-able): the settings that are not torch's
    defaults (``settings``) and where each came from (``origin``), whose loader it was
    (``returned``, ``class``, its own ``num_workers``), what a num_workers=0 rung leaves out, and
    whether pin_memory pins here (``pinned``; None where it is not asked), whether the dataset is a
    DataPipe (``datapipe``: torch shards it at its ``sharding_filter``)."""
    from torch.utils.data import DataLoader

    params = _parameters()
    shown = {k: v for k, v in kwargs.items()
             if _shown(k, v, params[k].default if k in params else None)}
    loader = isinstance(made, DataLoader)
    return {"factory": factory, "returned": "DataLoader" if loader else "Dataset",
            "datapipe": is_datapipe(unwrapped(made.dataset) if loader else made),
            "class": describe(type(made)) if loader else None,
            "num_workers": made.num_workers if loader else None,
            "settings": {k: _json(v) for k, v in shown.items()},
            "origin": {k: origin[k] for k in shown},
            "workers_only": [k for k in shown if k in WORKERS_ONLY],
            "pinned": can_pin() if kwargs.get("pin_memory") else None}
