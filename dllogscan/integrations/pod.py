"""What ``kubectl get pod -o json`` says about one container: how it last ended, its memory
limit, what backs its ``/dev/shm``; and the pod-specific YAML that gives it a proper one.

Rules:
- the container is ``-c``, else the pod's ``kubectl.kubernetes.io/default-container``, else the
  only one, else the first that has terminated (now or last time), else the first;
- ``/dev/shm`` is whatever volume the container mounts there (an ``emptyDir`` with ``medium:
  Memory`` is a tmpfs of ``sizeLimit``, bounded by the memory limit); with none, the runtime's
  64 MB default applies;
- the status line that is scanned with the logs says ``Reason: OOMKilled`` the way ``kubectl
  describe`` does (signature ``B.oom.k8s-reason``); the exit code is a fact, not evidence, since
  137 is also a liveness-probe kill.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..advise.fixes import parse_size
from ..core.errors import UsageError
from ..core.models import Fix

RUNTIME_DEFAULT_SHM = "64M"
SIGNALS = {134: "SIGABRT", 135: "SIGBUS", 137: "SIGKILL", 139: "SIGSEGV", 143: "SIGTERM"}
DEFAULT_ANNOTATION = "kubectl.kubernetes.io/default-container"
RS_HASH_RE = re.compile(r"-[a-z0-9]{6,10}$")
PATCHABLE = ("Deployment", "StatefulSet", "DaemonSet")
GI = 1 << 30


@dataclass(frozen=True)
class Shm:
    volume: str
    medium: str
    size_limit: str


@dataclass(frozen=True)
class Pod:
    name: str
    namespace: str
    node: str
    container: str
    owner: str  # "Kind/name", or "" for a bare pod
    restarts: int
    reason: str
    exit_code: int | None
    memory_limit: str
    shm: Shm | None
    volumes: tuple[str, ...]

    def status_line(self) -> str:
        """The line scanned with the logs (``kubectl describe``'s wording)."""
        if not self.reason:
            return f"pod {self.namespace}/{self.name} container {self.container}: no terminated state recorded"
        code = f"exitCode {self.exit_code}" if self.exit_code is not None else "no exit code"
        return f"pod {self.namespace}/{self.name} container {self.container}: Last State: Terminated  Reason: {self.reason}  ({code})"

    def facts(self) -> dict[str, str]:
        shm = (f"emptyDir medium={self.shm.medium or 'disk'} sizeLimit={self.shm.size_limit or 'none'} (volume {self.shm.volume})"
               if self.shm else f"none (runtime default {RUNTIME_DEFAULT_SHM})")
        out = {"namespace": self.namespace, "pod": self.name, "container": self.container, "node": self.node,
               "k8s_owner": self.owner, "k8s_restarts": str(self.restarts), "k8s_reason": self.reason,
               "k8s_exit_code": "" if self.exit_code is None else str(self.exit_code),
               "k8s_signal": SIGNALS.get(self.exit_code or 0, ""), "memory_limit": self.memory_limit, "shm_volume": shm}
        return {k: v for k, v in out.items() if v}


def _pick(doc: dict[str, Any], wanted: str | None) -> dict[str, Any]:
    containers = doc.get("spec", {}).get("containers") or []
    names = [c.get("name") for c in containers]
    if wanted:
        for c in containers:
            if c.get("name") == wanted:
                return c
        raise UsageError(f"pod {doc.get('metadata', {}).get('name')} has no container {wanted!r} (it has {', '.join(names)})")
    default = (doc.get("metadata", {}).get("annotations") or {}).get(DEFAULT_ANNOTATION)
    statuses = {s.get("name"): s for s in doc.get("status", {}).get("containerStatuses") or []}
    ended = [c for c in containers if "terminated" in (statuses.get(c.get("name"), {}).get("lastState") or {})
             or "terminated" in (statuses.get(c.get("name"), {}).get("state") or {})]
    chosen = [c for c in containers if c.get("name") == default] or ended or containers
    if not chosen:
        raise UsageError("the pod has no containers")
    return chosen[0]


def _owner(meta: dict[str, Any]) -> str:
    refs = meta.get("ownerReferences") or []
    if not refs:
        return ""
    kind, name = refs[0].get("kind", ""), refs[0].get("name", "")
    if kind == "ReplicaSet" and RS_HASH_RE.search(name):
        return f"Deployment/{RS_HASH_RE.sub('', name)}"
    return f"{kind}/{name}"


def parse_pod(doc: dict[str, Any], container: str | None = None) -> Pod:
    """The facts dllogscan uses from a pod object."""
    meta, spec = doc.get("metadata") or {}, doc.get("spec") or {}
    c = _pick(doc, container)
    status = next((s for s in doc.get("status", {}).get("containerStatuses") or [] if s.get("name") == c.get("name")), {})
    term = (status.get("state") or {}).get("terminated") or (status.get("lastState") or {}).get("terminated") or {}
    volumes = {v.get("name"): v for v in spec.get("volumes") or []}
    mount = next((m for m in c.get("volumeMounts") or [] if m.get("mountPath", "").rstrip("/") == "/dev/shm"), None)
    shm = None
    if mount:
        empty = (volumes.get(mount.get("name")) or {}).get("emptyDir") or {}
        shm = Shm(mount.get("name", ""), empty.get("medium", ""), str(empty.get("sizeLimit", "")))
    return Pod(meta.get("name", ""), meta.get("namespace", "default"), spec.get("nodeName", ""), c.get("name", ""),
               _owner(meta), int(status.get("restartCount") or 0), term.get("reason", ""), term.get("exitCode"),
               str(((c.get("resources") or {}).get("limits") or {}).get("memory", "")), shm, tuple(volumes))


def suggest_size(pod: Pod, facts: dict[str, str]) -> str:
    """The demand estimate when the log gave one; else half the memory limit (a memory-backed
    emptyDir counts against it); else 8Gi; always above the current sizeLimit."""
    size = facts.get("shm_suggest_k8s") or ""
    limit = parse_size(pod.memory_limit)
    if not size:
        size = f"{max(1, limit // 2 // GI)}Gi" if limit else "8Gi"
    current = parse_size(pod.shm.size_limit) if pod.shm else None
    if current and (parse_size(size) or 0) <= current:
        size = f"{max(1, current * 2 // GI)}Gi"
    return size


def shm_fix(pod: Pod, facts: dict[str, str]) -> Fix:
    """Rank-1 fix for class A in this pod: the exact YAML for its spec (and a patch for a
    Deployment/StatefulSet/DaemonSet, whose pod template can change)."""
    size = suggest_size(pod, facts)
    volume_name = pod.shm.volume if pod.shm else next(n for n in ("dshm", "dshm-1", "dshm-2", "dllogscan-shm")
                                                       if n not in pod.volumes)
    volume = {"name": volume_name, "emptyDir": {"medium": "Memory", "sizeLimit": size}}
    spec: dict[str, Any] = {"volumes": [volume]}
    if not pod.shm:
        spec = {"containers": [{"name": pod.container, "volumeMounts": [{"name": volume_name, "mountPath": "/dev/shm"}]}],
                **spec}
    where = (f"the pod template (spec.template.spec) of {pod.owner}" if pod.owner
             else f"pod {pod.name}'s manifest (re-create the pod)")
    if pod.shm:
        title = f"Raise /dev/shm of pod {pod.name}: volume {volume_name} to sizeLimit {size}"
        why = (f"Container {pod.container} has /dev/shm on emptyDir {volume_name} (medium {pod.shm.medium or 'disk'}, "
               f"sizeLimit {pod.shm.size_limit or 'none'}); the batches in flight need more.")
    else:
        title = f"Mount a memory-backed emptyDir at /dev/shm in pod {pod.name} (container {pod.container})"
        why = (f"Container {pod.container} mounts nothing at /dev/shm, so it has the runtime's {RUNTIME_DEFAULT_SHM} "
               "default, far below what prefetching workers need.")
    why += (f" Memory-backed emptyDir pages count against the container's memory limit ({pod.memory_limit}): keep the "
            "limit above what the process uses plus sizeLimit." if pod.memory_limit else "")
    why += f" Put this in {where}; a running pod's volumes cannot be changed."
    commands = [f"kubectl -n {pod.namespace} exec {pod.name} -c {pod.container} -- df -h /dev/shm"]
    kind, _, name = pod.owner.partition("/")
    if kind in PATCHABLE:
        patch = json.dumps({"spec": {"template": {"spec": spec}}}, separators=(",", ":"))
        commands.append(f"kubectl -n {pod.namespace} patch {kind.lower()} {name} --type strategic -p '{patch}'")
    return Fix(rank=1, title=title, why=why, commands=tuple(commands), code=to_yaml({"spec": spec}))


def to_yaml(value: Any, indent: int = 0) -> str:
    """Block YAML for the small dict/list/str trees of ``shm_fix`` (no dependency needed)."""
    pad = " " * indent
    if isinstance(value, dict):
        out = []
        for k, v in value.items():
            if isinstance(v, (dict, list)):
                out.append(f"{pad}{k}:\n{to_yaml(v, indent + 2)}")
            else:
                out.append(f"{pad}{k}: {v}\n")
        return "".join(out)
    out = []
    for item in value:
        body = to_yaml(item, indent + 2)
        out.append(f"{pad}- {body[indent + 2:]}")
    return "".join(out)
