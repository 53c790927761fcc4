"""``dllogscan slurm --epilog``: run from Slurm's ``Epilog=`` (as root on each node) or
``TaskEpilog=`` (as the user), after the job ends.

Rules:
- the job id comes from ``SLURM_JOB_ID`` when none is given;
- it never fails the epilog: every outcome exits 0; errors go to syslog (``LOG_USER``, tag
  ``dllogscan``) and to standard error;
- everything happens within ``budget`` seconds (tools get what is left of it); past the budget it
  gives up, logs one line and exits 0;
- only a diagnosis is written, and only on the job's batch host (``BatchHost``; each node of a
  multi-node job runs the epilog): ``stderr`` appends a short verdict block to the job's stderr file
  (a regular file, not through a link; as root, only one the job's user owns: ``append.py``);
- as root it reads the job's stdout and stderr on the same terms (a link, a device or another
  user's file is not read: the verdict block would quote it back to the job's user);
  ``admin-comment`` runs ``scontrol update job=JOBID AdminComment=...`` keeping any comment another
  tool put there (``... | dllogscan: ...``; a previous dllogscan part is replaced). Setting
  AdminComment needs an operator (the root ``Epilog`` is one; a ``TaskEpilog`` is not).
"""
from __future__ import annotations

import os
import sys
import threading
import time
from typing import Sequence

from ..batch.worker import Config
from ..core.errors import DllogscanError
from ..core.models import ScanResult
from ..core.printable import escape
from .append import append, user_uid
from .slurm import diagnose_job, this_node
from .slurm_job import Job
from .tools import ToolError, run_tool

WRITES = ("stderr", "admin-comment")
DEFAULT_BUDGET = 30.0
MARK = "dllogscan:"
MAX_COMMENT = 240
MAX_TEXT = 220


def log(message: str) -> None:
    """One line to syslog (where the platform has it) and to standard error."""
    line = f"dllogscan epilog: {message}"
    try:
        import syslog
        syslog.openlog("dllogscan", 0, syslog.LOG_USER)
        syslog.syslog(syslog.LOG_ERR, line)
    except (ImportError, OSError):
        pass
    sys.stderr.write(line + "\n")


def _short(text: str, n: int = MAX_TEXT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def verdict_block(result: ScanResult, job_id: str) -> str:
    """The lines appended to the job's stderr file: the verdict, up to three evidence lines, the
    first fix and the command that shows the whole report."""
    d = result.diagnoses[0]
    sub = f" / {d.subclass}" if d.subclass else ""
    where = f"{d.facts['log']} " if "log" in d.facts else ""
    out = ["", f"==== dllogscan: DataLoader worker failure in job {job_id} ====",
           f"Class {d.cls}{sub}, {d.confidence:.0%} sure: {d.title}"]
    out += [f"  {_short(e.text)}" if (e.signature or "").endswith("@cross-file") else f"  {where}line {e.line}: {_short(e.text)}"
            for e in d.evidence[:3]]  # a line cited from another file already names it
    if d.fixes:
        fix = d.fixes[0]
        out.append(f"First fix: {fix.title}")
        out += [f"  $ {c}" for c in fix.commands[:2]]
    out += [f"Whole report: dllogscan slurm {job_id}", "=" * 20, ""]
    return "\n".join(out)


def comment_text(result: ScanResult, existing: str = "") -> str:
    """The new AdminComment: another tool's part kept, ours (``dllogscan: ...``) last."""
    d = result.diagnoses[0]
    ours = _short(f"{MARK} {d.cls}/{d.subclass or '-'} {d.confidence:.0%} {d.title}", MAX_COMMENT)
    kept = existing.split(MARK)[0].rstrip(" |")
    return f"{kept} | {ours}" if kept else ours


def _write(job: Job, result: ScanResult, writes: Sequence[str], deadline: float) -> None:
    if "stderr" in writes:
        target = os.environ.get("SLURM_JOB_STDERR") or job.output_paths()[-1]
        why = append(target, verdict_block(result, job.job_id), user_uid(job.get("UserId")))
        if why:
            log(f"job {job.job_id}: not appending to {escape(target)}: {why}")
    if "admin-comment" in writes:
        text = comment_text(result, job.get("AdminComment"))
        try:
            run_tool(["scontrol", "update", f"job={job.job_id}", f"AdminComment={text}"],
                     max(deadline - time.monotonic(), 1.0))
        except ToolError as exc:
            log(f"job {job.job_id}: {exc}")


def _work(job_id: str, writes: Sequence[str], config: Config, kernel: str, deadline: float) -> None:
    try:
        job, result = diagnose_job(job_id, config, kernel, timeout=max(deadline - time.monotonic(), 1.0),
                                   as_user=os.geteuid() == 0)
        if result.error:
            log(f"job {job_id}: {result.error}")
        batch_host = job.get("BatchHost")
        if result.diagnoses and (not batch_host or batch_host == this_node()):
            _write(job, result, writes, deadline)
    except DllogscanError as exc:  # a tool that failed, an id that is none
        log(f"job {job_id}: {exc}")
    except Exception as exc:  # noqa: BLE001 - an epilog must never fail the node
        log(f"job {job_id}: unexpected {type(exc).__name__}: {_short(str(exc))}")


def run_epilog(job_id: str | None, writes: Sequence[str] = WRITES, budget: float = DEFAULT_BUDGET,
               config: Config | None = None, kernel: str = "auto") -> bool:
    """Diagnose the job and write the verdict; True when it finished within the budget. Never raises."""
    job_id = job_id or os.environ.get("SLURM_JOB_ID", "")
    if not job_id:
        log("no job id: give one or run from Slurm's Epilog (SLURM_JOB_ID is not set)")
        return True
    deadline = time.monotonic() + budget
    worker = threading.Thread(target=_work, args=(job_id, writes, config or Config(classifier="auto"), kernel, deadline),
                              daemon=True, name="dllogscan-epilog")
    worker.start()
    worker.join(budget)
    if worker.is_alive():
        log(f"job {job_id}: gave up after the {budget:.0f} s budget")
        return False
    return True
