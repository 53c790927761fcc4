"""``dllogscan slurm JOBID``: the job's stdout and stderr plus the kernel log of its window,
joined as the batch joins cross-file evidence.

Rules:
- the job comes from ``scontrol show job -o`` or, once slurmctld has forgotten it, ``sacct``
  (``slurm_job.py``); its ``StdOut``/``StdErr`` paths are read where this host can read them;
- the root epilog reads only the job's user's regular files, through no link (``append.py``);
- the kernel log is read only on a node that ran the job (``SLURMD_NODENAME``, or this host's
  short name in the job's node list): ``journalctl -k --since START --until END+5min``, else
  ``dmesg -T`` cut to the same window; an unreadable kernel log is a fact, not an error;
- the parts share the job id and the node, so a kernel ``Killed process <pid>`` for the worker's
  pid, or Slurm's ``oom-kill event`` line, turns ``exited unexpectedly`` into B / oom;
- the cluster facts (``job_id``, ``node``, ``slurm_state``, ``slurm_exit_code``, the paths, what was
  read of the kernel log) go into the result's ``facts``.
"""
from __future__ import annotations

import os
import socket
from datetime import datetime, timedelta

from ..batch.clock import Clock, on_one_clock, parsed
from ..batch.worker import Config
from ..core.models import ScanResult
from . import join
from .append import user_uid
from .slurm_job import Job, find_job
from .tools import ToolError, run_tool

KERNEL_MODES = ("auto", "journalctl", "dmesg", "off")
BEFORE, AFTER = timedelta(minutes=1), timedelta(minutes=5)
STAMP = "%Y-%m-%d %H:%M:%S"


def this_node() -> str:
    """The Slurm node name of this host (``SLURMD_NODENAME`` in an epilog), else its short name."""
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def _in_window(text: str, start: datetime, end: datetime) -> str:
    """Lines of ``dmesg -T`` whose time lies in the window (continuation lines follow theirs; the
    window is the job's local time, a stamp with a zone is read on its own clock)."""
    out, keep = [], False
    clock = Clock(text.encode("utf-8", "replace"), start.year)
    for line in text.splitlines(keepends=True):
        stamp = parsed(clock.time(line.encode("utf-8", "replace")))
        if stamp:
            when, lo, hi = on_one_clock(stamp, start, end)
            keep = lo <= when <= hi  # type: ignore[operator]
        if keep:
            out.append(line)
    return "".join(out)


def kernel_part(job: Job, mode: str, timeout: float) -> join.Part:
    """The kernel log of the job's window on this node, or a missing part saying why not."""
    name = "kernel log"
    if mode == "off":
        return join.missing_part(name, "not read (--kernel off)", join.CONTEXT)
    here, nodes = this_node(), job.nodes
    if nodes and here not in nodes:
        return join.missing_part(name, f"not read: this host ({here}) is not one of the job's nodes "
                                       f"({job.get('NodeList')}); run on the node or from the epilog", join.CONTEXT)
    start, end = job.window()
    if start is None or end is None:
        return join.missing_part(name, "not read: the job has no start time", join.CONTEXT)
    lo, hi = start - BEFORE, end + AFTER
    tried = []
    if mode in ("auto", "journalctl"):
        argv = ["journalctl", "-k", "--no-pager", "-o", "short-iso", "--since", lo.strftime(STAMP), "--until", hi.strftime(STAMP)]
        try:
            return join.text_part(" ".join(argv[:2]), run_tool(argv, timeout))
        except ToolError as exc:
            tried.append(str(exc))
    if mode in ("auto", "dmesg"):
        try:
            return join.text_part("dmesg -T", _in_window(run_tool(["dmesg", "-T"], timeout), lo, hi))
        except ToolError as exc:
            tried.append(str(exc))
    return join.missing_part(name, "not read: " + "; ".join(tried), join.CONTEXT)


def job_facts(job: Job, paths: list[str], kernel: join.Part) -> dict[str, str]:
    """The cluster facts of the job, as they go into the result's ``facts``."""
    nodes = job.nodes
    here = this_node()
    facts = {"job_id": job.job_id, "node": here if here in nodes else (nodes[0] if nodes else ""),
             "slurm_nodes": job.get("NodeList"), "slurm_state": job.get("JobState"),
             "slurm_exit_code": job.get("ExitCode"), "slurm_start": job.get("StartTime"),
             "slurm_end": job.get("EndTime"), "slurm_source": job.source,
             "slurm_stdout": paths[0] if paths else "", "slurm_stderr": paths[-1] if paths else "",
             "kernel_log": kernel.name if kernel.opener else kernel.note or ""}
    return {k: v for k, v in facts.items() if v}


def diagnose_job(job_id: str, config: Config | None = None, kernel: str = "auto", timeout: float = 30.0,
                 max_bytes: int | None = None, job: Job | None = None, as_user: bool = False) -> tuple[Job, ScanResult]:
    """Find the job, read its logs and kernel log, and join them into one result; ``as_user``: read
    only logs the job's user owns, through no link (``join.owned_file_part``: the root epilog)."""
    job = job or find_job(job_id, timeout)
    paths = job.output_paths()
    kpart = kernel_part(job, kernel, timeout)
    facts = job_facts(job, paths, kpart)
    owner = user_uid(job.get("UserId")) if as_user else None
    parts = [join.owned_file_part(p, owner, max_bytes) if as_user else join.file_part(p, max_bytes)
             for p in paths] + [kpart]
    meta = {"job": job.get("JobId") or job.job_id, "node": facts.get("node", "")}
    result = join.join(parts, f"slurm job {job.job_id}", meta, facts, config or Config(classifier="auto"))
    return job, result
