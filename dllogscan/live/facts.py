"""Facts about this machine that decide classes A-E: shm, descriptors, memory, runtime, torch."""
from __future__ import annotations

import os
import resource
import sys
from pathlib import Path
from typing import Any

UNLIMITED_CGROUP = 1 << 60


def shm(path: str = "/dev/shm") -> dict[str, int] | None:
    """Size and free bytes of the shared-memory tmpfs (None when absent)."""
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return {"size": st.f_blocks * st.f_frsize, "free": st.f_bavail * st.f_frsize}


def nofile() -> dict[str, int | None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    inf = resource.RLIM_INFINITY
    return {"soft": None if soft == inf else soft, "hard": None if hard == inf else hard}


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def cgroup_memory_limit(root: Path = Path("/sys/fs/cgroup"),
                        self_cgroup: Path = Path("/proc/self/cgroup")) -> int | None:
    """The memory limit of this process's cgroup (v2 ``memory.max`` or v1
    ``memory.limit_in_bytes``), following ``/proc/self/cgroup``; None when unlimited or unknown."""
    text = _read(self_cgroup) or ""
    candidates: list[Path] = []
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, rel = parts
        rel = rel.lstrip("/")
        if controllers == "":
            candidates += [root / rel / "memory.max", root / "memory.max"]
        elif "memory" in controllers.split(","):
            candidates += [root / "memory" / rel / "memory.limit_in_bytes",
                           root / "memory" / "memory.limit_in_bytes"]
    for path in candidates:
        value = _read(path)
        if value and value.isdigit():
            limit = int(value)
            return None if limit >= UNLIMITED_CGROUP else limit
    return None


def meminfo(path: Path = Path("/proc/meminfo")) -> dict[str, int]:
    """``MemTotal`` and ``MemAvailable`` in bytes."""
    out: dict[str, int] = {}
    for line in (_read(path) or "").splitlines():
        key, _, rest = line.partition(":")
        if key in ("MemTotal", "MemAvailable") and rest.split():
            out[key] = int(rest.split()[0]) * 1024
    return out


def runtime() -> list[str]:
    """Docker, Kubernetes, Slurm, or another container, from the usual marks."""
    found = []
    if Path("/.dockerenv").exists():
        found.append("docker")
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        found.append("kubernetes")
    if os.environ.get("SLURM_JOB_ID"):
        found.append(f"slurm job {os.environ['SLURM_JOB_ID']}")
    init = _read(Path("/proc/1/cgroup")) or ""
    for mark, name in (("docker", "docker"), ("kubepods", "kubernetes"), ("containerd", "containerd"),
                       ("lxc", "lxc")):
        if mark in init and name not in found:
            found.append(name)
    return found


def cpus() -> dict[str, int | None]:
    try:
        usable: int | None = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = None
    return {"count": os.cpu_count(), "usable": usable}


def torch_facts() -> dict[str, Any]:
    import torch
    import torch.multiprocessing as mp

    return {"version": torch.__version__, "start_method": mp.get_start_method(allow_none=True)
            or mp.get_context().get_start_method(), "sharing_strategy": mp.get_sharing_strategy(),
            "cuda_available": torch.cuda.is_available(), "cuda_initialized": torch.cuda.is_initialized()}


def gather() -> dict[str, Any]:
    """Every fact at once, as plain JSON-able data."""
    return {"shm": shm(), "nofile": nofile(), "memory_limit": cgroup_memory_limit(),
            "memory": meminfo(), "runtime": runtime(), "cpus": cpus(), "torch": torch_facts(),
            "system": sys.platform}
