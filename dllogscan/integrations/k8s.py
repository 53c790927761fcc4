"""``dllogscan k8s POD [-n NS] [-c CONTAINER] [--context CTX]`` (also ``kubectl dllogscan``).

Rules:
- ``kubectl get pod POD -o json`` must answer (missing kubectl, no access, no such pod: one
  ``Error:`` line, exit 2); the previous container's logs (``logs --previous``) and the current
  ones are each optional, but at least one must come back;
- the pod's status line (``Reason: OOMKilled``) is scanned beside the logs and joined as the batch
  joins files (``join.py``), the pod standing for the job: ``exited unexpectedly`` in the logs plus
  ``OOMKilled`` becomes B / oom (0.93, both lines cited);
- class A in a pod: ``shm_size`` is the pod's real ``/dev/shm`` (the emptyDir's ``sizeLimit``, or
  the runtime's 64 MB without one), and the first fix is the YAML for this pod (``pod.shm_fix``),
  unless that size is already ample (``advise.fixes.situations``);
- the pod facts (``namespace``, ``pod``, ``container``, ``node``, ``k8s_reason``, ``k8s_exit_code``,
  ``memory_limit``, ``shm_volume``, ...) go into the result's ``facts``.
"""
from __future__ import annotations

import dataclasses
import json
import re
from typing import Sequence

from ..advise.fixes import advise, situations
from ..batch.worker import Config, database
from ..core.errors import UsageError
from ..core.models import Diagnosis, ScanResult
from ..core.printable import escape
from . import join
from .pod import RUNTIME_DEFAULT_SHM, Pod, parse_pod, shm_fix
from .tools import ToolError, run_tool, run_tool_to_file

#: a DNS subdomain (RFC 1123): what Kubernetes accepts as a pod's name
POD_NAME_RE = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")


def kubectl(context: str | None, namespace: str | None) -> list[str]:
    """``kubectl`` with the global flags every call shares."""
    return ["kubectl", *(["--context", context] if context else []), *(["-n", namespace] if namespace else [])]


def get_pod(base: Sequence[str], name: str, container: str | None, timeout: float) -> Pod:
    text = run_tool([*base, "get", "pod", name, "-o", "json"], timeout)
    try:
        doc = json.loads(text)
    except ValueError:
        raise ToolError(f"`kubectl get pod {name} -o json` did not print JSON") from None
    return parse_pod(doc, container)


def log_parts(base: Sequence[str], pod: Pod, timeout: float) -> tuple[list[join.Part], dict[str, str]]:
    """The previous and current logs that could be had, and a fact for each that could not."""
    parts, notes = [], {}
    for flag, key in (("--previous", "k8s_logs_previous"), (None, "k8s_logs_current")):
        argv = [*base, "logs", pod.name, "-c", pod.container, *([flag] if flag else [])]
        name = "kubectl logs" + (f" {flag}" if flag else "")
        try:
            parts.append(join.spooled_part(name, run_tool_to_file(argv, timeout)))
        except ToolError as exc:
            notes[key] = f"not available: {exc}"
    if not parts:
        parts.append(join.missing_part("kubectl logs", f"no logs for {pod.namespace}/{pod.name} container "
                                                       f"{pod.container}: " + "; ".join(notes.values())))
    return parts, notes


def with_pod(d: Diagnosis, pod: Pod, config: Config) -> Diagnosis:
    """Class A gets the pod's real /dev/shm size and, first, the YAML fix for this pod."""
    if d.cls != "A":
        return d
    size = (pod.shm.size_limit if pod.shm else RUNTIME_DEFAULT_SHM) or d.facts.get("shm_size", "")
    d = advise(dataclasses.replace(d, facts={**d.facts, **({"shm_size": size} if size else {})}, fixes=()), database(config))
    if situations(d, d.facts):  # its /dev/shm is already ample: no YAML to raise it
        return d
    others = [f for f in d.fixes if not f.title.startswith("Kubernetes:")]
    fixes = (shm_fix(pod, d.facts),) + tuple(dataclasses.replace(f, rank=i) for i, f in enumerate(others, start=2))
    return dataclasses.replace(d, fixes=fixes)


def diagnose_pod(name: str, namespace: str | None = None, container: str | None = None, context: str | None = None,
                 config: Config | None = None, timeout: float = 30.0) -> tuple[Pod, ScanResult]:
    """Read the pod, its logs and status; join them into one result named ``pod NS/NAME``."""
    config = config or Config(classifier="auto")
    if not POD_NAME_RE.fullmatch(name):  # also keeps a name such as --server=URL from being a kubectl flag
        raise UsageError(f"{escape(name)!r} is not a pod name (lower-case letters, digits, '-' and '.', "
                         "starting and ending with a letter or digit)")
    base = kubectl(context, namespace)
    pod = get_pod(base, name, container, timeout)
    parts, notes = log_parts(base, pod, timeout)
    parts.append(join.text_part("pod status", pod.status_line() + "\n"))
    facts = {**pod.facts(), **notes}
    meta = {"job": f"{pod.namespace}/{pod.name}", "node": pod.node or pod.name}
    result = join.join(parts, f"pod {pod.namespace}/{pod.name}", meta, facts, config)
    result = dataclasses.replace(result, diagnoses=tuple(with_pod(d, pod, config) for d in result.diagnoses))
    return pod, result

