"""``dllogscan doctor``: this machine's facts against a loader's demand, each risk with its
class and the database's ranked fixes."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..advise.fixes import DEFAULT_PREFETCH, fill, human, shm_demand
from ..advise.platform import host_platforms, kept, runtime_platforms
from ..scan.scanner import Scanner
from . import facts as machine

#: descriptors the main process holds besides the tensors in flight (pipes, queues, libraries)
MAIN_BASE_FDS = 64
#: a predicted risk takes the class's general fixes where the subclass's describe a death that
#: already happened ("Raise /dev/shm: the worker died writing a batch into it")
FIX_KEY_SUBCLASS: dict[str, str | None] = {"A": None}


@dataclass
class Risk:
    cls: str
    subclass: str
    level: str  # high | medium
    message: str
    fixes: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"class": self.cls, "subclass": self.subclass, "level": self.level,
                "message": self.message, "fixes": self.fixes}


def sample_batch(factory: str, batch_size: int | None = None) -> dict[str, int]:
    """Bytes and tensors in one real batch, loaded in this process: of the user's Dataset (collated by
    the default, ``batch_size`` or 1 a batch), or of the DataLoader the factory returns (its own
    batching and collate_fn, ``batch_size`` laid over as ``repro`` lays it, ``loader.settings``), then
    with that loader's ``num_workers`` and ``prefetch_factor`` too."""
    import torch
    from torch.utils.data import DataLoader

    from .child import load_callable
    from .loader import Options, build, for_rung, settings

    made = load_callable(factory)()
    own = isinstance(made, DataLoader)
    dataset, kwargs, _ = settings(made, Options(batch_size=batch_size or (None if own else 1)))
    batch = next(iter(build(dataset, for_rung(kwargs, 0, lambda init: init))), None)
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


def _fixes(scanner: Scanner, cls: str, subclass: str, values: dict[str, str],
           where: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """The database's fixes for the risk, those made for another platform than this machine's
    left out (``advise.platform``)."""
    return [{"rank": i, "title": fill(f.title, values), "why": fill(f.why, values),
             "commands": [fill(c, values) for c in commands]}
            for i, (f, commands) in enumerate(kept(scanner.db.fixes_for(cls, subclass), where), start=1)]


def assess(facts: dict[str, Any], loader: dict[str, Any], scanner: Scanner) -> list[Risk]:
    """Risks for ``loader`` (num_workers, prefetch_factor, batch_bytes, tensors) on this machine."""
    workers, prefetch = loader.get("num_workers") or 0, loader.get("prefetch_factor") or DEFAULT_PREFETCH
    batch_bytes, tensors = loader.get("batch_bytes"), loader.get("tensors") or 1
    shm = facts.get("shm")
    values = {"num_workers": str(workers), "prefetch_factor": str(prefetch)}
    if shm:
        values["shm_size"] = human(shm["size"])
    risks: list[Risk] = []
    if workers and batch_bytes:
        demand = workers * prefetch * batch_bytes
        values.update(shm_demand({"num_workers": str(workers), "prefetch_factor": str(prefetch),
                                  "batch_bytes": str(batch_bytes)}))
        if shm and demand > shm["free"]:
            risks.append(Risk("A", "bus-error", "high" if demand > shm["size"] else "medium",
                              f"shared-memory demand {workers} x {prefetch} x {human(batch_bytes)} = "
                              f"{human(demand)} exceeds /dev/shm free {human(shm['free'])} "
                              f"(size {human(shm['size'])})"))
        limit = facts.get("memory_limit")
        which = "the memory limit (cgroup)"
        if not limit:
            limit, which = facts.get("memory", {}).get("MemAvailable"), "the memory available (MemAvailable)"
        if limit and demand * 2 > limit:
            risks.append(Risk("B", "oom", "medium", f"batches in flight ({human(demand)}, held in shm "
                              f"and in worker memory) approach {which} {human(limit)}"))
    soft = facts.get("nofile", {}).get("soft")
    if workers and soft and facts.get("torch", {}).get("sharing_strategy") == "file_descriptor":
        fds = tensors * prefetch * workers + MAIN_BASE_FDS
        values.update(fd_demand=str(fds), ulimit_n=str(soft))
        if fds > soft:
            risks.append(Risk("C", "fd-exhausted", "high",
                              f"descriptor demand ~{tensors} tensors x {prefetch} x {workers} workers + "
                              f"{MAIN_BASE_FDS} = {fds} exceeds ulimit -n {soft} (file_descriptor strategy)"))
    if workers and facts.get("torch", {}).get("cuda_initialized") and facts["torch"].get("start_method") == "fork":
        risks.append(Risk("D", "cuda-fork", "high", "CUDA is initialised in this process and workers fork"))
    where = runtime_platforms(facts.get("runtime") or []) | host_platforms(facts.get("system") or "")
    for risk in risks:
        risk.fixes = _fixes(scanner, risk.cls, FIX_KEY_SUBCLASS.get(risk.cls, risk.subclass), values, where)
    return risks


def render(facts: dict[str, Any], loader: dict[str, Any], risks: list[Risk]) -> str:
    t, shm, nf = facts["torch"], facts.get("shm"), facts["nofile"]
    mem = facts.get("memory", {})
    lines = [
        f"/dev/shm        {'absent' if not shm else human(shm['size']) + ' size, ' + human(shm['free']) + ' free'}",
        f"ulimit -n       soft {nf['soft'] or 'unlimited'}, hard {nf['hard'] or 'unlimited'}",
        f"memory          limit {human(facts['memory_limit']) if facts.get('memory_limit') else 'none (cgroup)'}, "
        f"available {human(mem['MemAvailable']) if 'MemAvailable' in mem else '?'} of "
        f"{human(mem['MemTotal']) if 'MemTotal' in mem else '?'}",
        f"runtime         {', '.join(facts['runtime']) or 'no container detected'}",
        f"CPUs            {facts['cpus']['count']} ({facts['cpus']['usable']} usable)",
        f"torch           {t['version']}, start method {t['start_method']}, sharing strategy "
        f"{t['sharing_strategy']}, CUDA {'initialised' if t['cuda_initialized'] else 'not initialised'}"
        f"{'' if t['cuda_available'] else ' (no CUDA device)'}",
    ]
    if loader.get("num_workers") is not None:
        lines.append(f"loader          num_workers={loader['num_workers']}, prefetch_factor="
                     f"{loader.get('prefetch_factor') or DEFAULT_PREFETCH}, batch "
                     f"{human(loader['batch_bytes']) if loader.get('batch_bytes') else '? (give --batch-bytes or --sample)'}"
                     f"{', %d tensors' % loader['tensors'] if loader.get('tensors') else ''}")
    lines.append("")
    if not risks:
        lines.append("No risk found for these settings.")
    for risk in risks:
        lines.append(f"[{risk.level}] class {risk.cls}/{risk.subclass}: {risk.message}")
        for f in risk.fixes:
            lines.append(f"  {f['rank']}. {f['title']}")
            lines += [f"       $ {c}" for c in f["commands"]]
    return "\n".join(lines) + "\n"
