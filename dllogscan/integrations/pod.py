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
import shlex
from dataclasses import dataclass
from typing import Any

from ..advise.fixes import parse_size
from ..core.errors import UsageError
from ..core.models import Fix
from ..core.printable import escape

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


def _obj(value: Any) -> dict[str, Any]:
    """``value`` where it is a JSON object, else an empty one (a field null or of another type)."""
    return value if isinstance(value, dict) else {}


def _objs(value: Any) -> list[dict[str, Any]]:
    """The JSON objects of the list ``value`` (anything else in it, or no list, left out)."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _text(value: Any) -> str:
    """A name or value from the cluster as data: a string or number, its controls escaped."""
    return escape(str(value)) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else ""


def _pick(doc: dict[str, Any], wanted: str | None) -> dict[str, Any]:
    containers = _objs(_obj(doc.get("spec")).get("containers"))
    names = [_text(c.get("name")) for c in containers]
    if wanted:
        for c in containers:
            if c.get("name") == wanted:
                return c
        raise UsageError(f"pod {_text(_obj(doc.get('metadata')).get('name'))} has no container {escape(wanted)!r} "
                         f"(it has {', '.join(names)})")
    default = _obj(_obj(doc.get("metadata")).get("annotations")).get(DEFAULT_ANNOTATION)
    statuses = {s.get("name"): s for s in _objs(_obj(doc.get("status")).get("containerStatuses"))}
    ended = [c for c in containers if "terminated" in _obj(_obj(statuses.get(c.get("name"))).get("lastState"))
             or "terminated" in _obj(_obj(statuses.get(c.get("name"))).get("state"))]
    chosen = [c for c in containers if c.get("name") == default] or ended or containers
    if not chosen:
        raise UsageError("the pod has no containers")
    return chosen[0]


def _owner(meta: dict[str, Any]) -> str:
    refs = _objs(meta.get("ownerReferences"))
    if not refs:
        return ""
    kind, name = _text(refs[0].get("kind")), _text(refs[0].get("name"))
    if kind == "ReplicaSet" and RS_HASH_RE.search(name):
        return f"Deployment/{RS_HASH_RE.sub('', name)}"
    return f"{kind}/{name}"


def parse_pod(doc: Any, container: str | None = None) -> Pod:
    """The facts dllogscan uses from a pod object (``UsageError`` for anything else). Names and
    values are the cluster's data: a field of the wrong type counts as absent, controls are escaped."""
    if not isinstance(doc, dict) or doc.get("kind", "Pod") != "Pod":
        got = _text(_obj(doc).get("kind")) or type(doc).__name__
        raise UsageError(f"kubectl did not print a pod object (got {got})")
    meta, spec = _obj(doc.get("metadata")), _obj(doc.get("spec"))
    c = _pick(doc, container)
    statuses = _objs(_obj(doc.get("status")).get("containerStatuses"))
    status = next((s for s in statuses if s.get("name") == c.get("name")), {})
    term = _obj(_obj(status.get("state")).get("terminated")) or _obj(_obj(status.get("lastState")).get("terminated"))
    volumes = {v.get("name"): v for v in _objs(spec.get("volumes"))}
    mount = next((m for m in _objs(c.get("volumeMounts")) if _text(m.get("mountPath")).rstrip("/") == "/dev/shm"), None)
    shm = None
    if mount:
        empty = _obj(_obj(volumes.get(mount.get("name"))).get("emptyDir"))
        shm = Shm(_text(mount.get("name")), _text(empty.get("medium")), _text(empty.get("sizeLimit")))
    restarts, code = status.get("restartCount"), term.get("exitCode")
    return Pod(_text(meta.get("name")), _text(meta.get("namespace")) or "default", _text(spec.get("nodeName")),
               _text(c.get("name")), _owner(meta), restarts if type(restarts) is int else 0, _text(term.get("reason")),
               code if type(code) is int else None, _text(_obj(_obj(c.get("resources")).get("limits")).get("memory")),
               shm, tuple(_text(n) for n in volumes))


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
    ns, q = shlex.quote(pod.namespace), shlex.quote  # names are the cluster's: quoted for a shell
    commands = [f"kubectl -n {ns} exec {q(pod.name)} -c {q(pod.container)} -- df -h /dev/shm"]
    kind, _, name = pod.owner.partition("/")
    if kind in PATCHABLE:
        patch = json.dumps({"spec": {"template": {"spec": spec}}}, separators=(",", ":"))
        commands.append(f"kubectl -n {ns} patch {kind.lower()} {q(name)} --type strategic -p {q(patch)}")
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
