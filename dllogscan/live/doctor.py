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
    #: a sample hang's cause (``sample_hang.explain``)
    cause: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"class": self.cls, "subclass": self.subclass, "level": self.level,
               "message": self.message, "fixes": self.fixes}
        return out if self.cause is None else {**out, "cause": self.cause}


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


def hang_risk(factory: str, said: str, cause: dict[str, Any] | None = None) -> Risk:
    """``--sample``'s hang (``sample.measure``) as a finding of class E, with its ``cause``. It hung
    in one process, with no worker: the database's fixes for hung workers do not apply, repro's
    whole stack does."""
    return Risk("E", "hang", "high", f"--sample {factory} hangs without workers (num_workers=0): {said}; "
                                     f"`dllogscan repro {factory} --workers 0` shows the whole stack", cause=cause)


def cause_lines(cause: dict[str, Any], workers: int | None) -> list[str]:
    """A sample hang's cause under its finding: the cause and the frame that shows it, the other
    threads, the check, why fork causes do not apply, and the fork hazards held for ``workers``."""
    lines = [f"  {'likely cause' if cause['cause'] else 'cause'}: {cause['says']}", f"    at {cause['evidence']}"]
    lines += [f"    other thread: {t}" for t in cause["threads"]]
    lines += [f"  check: {cause['check']}", f"  not the cause: {cause['no_fork']}"]
    if cause["hazards"]:
        lines.append(f"  for {'num_workers=%d' % workers if workers else 'workers'}, held where they would fork "
                     "(not why this sample hung):")
        lines += [f"    - {h}" for h in cause["hazards"]]
    return lines


def render(facts: dict[str, Any], loader: dict[str, Any], risks: list[Risk]) -> str:
    unknown = "? (--sample hung)" if any(r.cls == "E" for r in risks) else "? (give --batch-bytes or --sample)"
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
        count = loader.get("tensors")
        lines.append(f"loader          num_workers={loader['num_workers']}, prefetch_factor="
                     f"{loader.get('prefetch_factor') or DEFAULT_PREFETCH}, batch "
                     f"{human(loader['batch_bytes']) if loader.get('batch_bytes') else unknown}"
                     f"{', %d tensor%s' % (count, 's' * (count > 1)) if count else ''}")
    lines.append("")
    if not risks:
        lines.append("No risk found for these settings.")
    for risk in risks:
        lines.append(f"[{risk.level}] class {risk.cls}/{risk.subclass}: {risk.message}")
        if risk.cause:
            lines += cause_lines(risk.cause, loader.get("num_workers"))
        for f in risk.fixes:
            lines.append(f"  {f['rank']}. {f['title']}")
            lines += [f"       $ {c}" for c in f["commands"]]
    return "\n".join(lines) + "\n"
