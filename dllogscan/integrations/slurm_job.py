"""What Slurm knows about one job: ``scontrol show job -o`` while slurmctld still holds it,
``sacct`` after that; its output paths with Slurm's filename patterns filled in; its nodes.

``scontrol show job -o JOBID`` prints one line of ``Key=Value`` pairs per job (``JobState=``,
``ExitCode=``, ``NodeList=``, ``StartTime=``, ``EndTime=``, ``StdOut=``, ``StdErr=``,
``WorkDir=``, ``AdminComment=``), a value as it is, spaces included: the line is split only where a
field begins (``data/scontrol.toml``); ``sacct -j JOBID -X -n -P --format=...`` prints the same fields
separated by ``|``. Slurm older than 23.02 has no ``StdOut``/``StdErr`` field in ``sacct``: then
the default ``slurm-%j.out`` in the job's working directory is assumed.
"""
from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from pathlib import PurePosixPath

from ..core.errors import UsageError
from ..core.paths import DATA_DIR, data_document
from ..core.printable import escape
from .tools import ToolError, run_tool

SACCT_FIELDS = ("JobID", "JobName", "User", "State", "ExitCode", "NodeList", "Start", "End", "WorkDir",
                "StdOut", "StdErr")
SACCT_TO_SCONTROL = {"JobID": "JobId", "JobName": "JobName", "User": "UserId", "State": "JobState",
                     "ExitCode": "ExitCode", "NodeList": "NodeList", "Start": "StartTime", "End": "EndTime",
                     "WorkDir": "WorkDir", "StdOut": "StdOut", "StdErr": "StdErr"}
#: a space before what may be a field (``Key=``), the key in group 1
PAIR_START_RE = re.compile(r"\s+(?=([A-Za-z][\w:/]*)=)")
PATTERN_RE = re.compile(r"%(\d*)([%AajxuNnst])")
HOSTLIST_RE = re.compile(r"([^,\[]+)(?:\[([^\]]+)\])?(?:,|$)")
UNKNOWN = ("", "Unknown", "None", "(null)")
JOB_ID_RE = re.compile(r"[0-9]+(?:[_+][0-9]+)?")
MAX_HOSTS = 4096  # more nodes than any job has


@dataclass(frozen=True)
class Job:
    """The fields dllogscan uses, as Slurm printed them (``source``: which tool answered)."""

    job_id: str
    fields: dict[str, str]
    source: str

    def get(self, key: str) -> str:
        value = self.fields.get(key, "")
        return "" if value in UNKNOWN else value

    @property
    def nodes(self) -> list[str]:
        return expand_hostlist(self.get("NodeList"))

    def output_paths(self) -> list[str]:
        """StdOut then StdErr (one path when they are the same file), patterns filled in."""
        out: list[str] = []
        for key in ("StdOut", "StdErr"):
            raw = self.get(key) or ("slurm-%j.out" if key == "StdOut" else "")
            path = self.expand(raw) if raw else ""
            if path and not PurePosixPath(path).is_absolute() and self.get("WorkDir"):
                path = str(PurePosixPath(self.get("WorkDir")) / path)
            if path and path not in out:
                out.append(path)
        return out

    def expand(self, pattern: str) -> str:
        """Slurm's filename patterns (``%j %A %a %x %u %N %n %t %s %%``) with this job's values."""
        master, _, task = self.job_id.partition("_")
        nodes = self.nodes
        values = {"j": self.get("JobId") or master, "A": self.get("ArrayJobId") or master, "a": self.get("ArrayTaskId") or task or "4294967294",
                  "x": self.get("JobName"), "u": self.get("UserId").split("(")[0], "N": nodes[0] if nodes else "",
                  "n": "0", "t": "0", "s": "batch", "%": "%"}

        def one(m: re.Match) -> str:
            value = values[m.group(2)]
            return value.zfill(int(m.group(1))) if m.group(1) and value.isdigit() else value
        return PATTERN_RE.sub(one, pattern)

    def window(self, now: datetime | None = None) -> tuple[datetime | None, datetime | None]:
        """Start and end (end: now while the job runs)."""
        def parse(text: str) -> datetime | None:
            try:
                return datetime.fromisoformat(text) if text else None
            except ValueError:
                return None
        start = parse(self.get("StartTime"))
        return start, parse(self.get("EndTime")) or (now or datetime.now()) if start else None


def expand_hostlist(text: str) -> list[str]:
    """``gpu[01-03,07],cpu1`` -> ``gpu01 gpu02 gpu03 gpu07 cpu1`` (what ``scontrol show hostnames``
    does), the first ``MAX_HOSTS`` of them: a range is counted out only as far as that."""
    out: list[str] = []
    for m in HOSTLIST_RE.finditer(text or ""):
        prefix, ranges = m.group(1).strip(), m.group(2)
        if not prefix and not ranges:
            continue
        for piece in ranges.split(",") if ranges else [""]:
            if len(out) >= MAX_HOSTS:
                return out
            lo, _, hi = piece.partition("-")
            if hi and lo.isdigit() and hi.isdigit():
                last = min(int(hi), int(lo) + MAX_HOSTS - len(out) - 1)
                out += [f"{prefix}{i:0{len(lo)}d}" for i in range(int(lo), last + 1)]
            else:
                out.append(prefix + lo)
    return out


@lru_cache(maxsize=1)
def scontrol_keys() -> tuple[frozenset[str], frozenset[str]]:
    """(the fields scontrol prints for a job, those whose value a user wrote), ``data/scontrol.toml``."""
    doc = data_document(DATA_DIR / "scontrol.toml")
    return frozenset(doc["keys"]), frozenset(doc["free_text"])


def scontrol_pairs(line: str) -> dict[str, str]:
    """One line's ``Key=Value`` pairs. A value goes on over spaces until a known field begins, or
    an unknown capitalised ``Key=`` where the value is not one a user wrote (a path, a name)."""
    known, free = scontrol_keys()
    line = line.strip()
    pieces, start = [], 0
    for m in PAIR_START_RE.finditer(line):
        current = line[start:m.start()].partition("=")[0]
        if m.group(1) in known or (m.group(1)[0].isupper() and current not in free):
            pieces.append(line[start:m.start()])
            start = m.end()
    pieces.append(line[start:])
    return dict(p.partition("=")[::2] for p in pieces)


def parse_scontrol(text: str, job_id: str) -> dict[str, str] | None:
    """The ``Key=Value`` pairs of the line for ``job_id`` (the first line for an array's master)."""
    lines = [line for line in text.splitlines() if line.strip().startswith("JobId=")]
    for line in lines:
        fields = scontrol_pairs(line)
        if fields.get("JobId") == job_id or f"{fields.get('ArrayJobId')}_{fields.get('ArrayTaskId')}" == job_id:
            return fields
    return scontrol_pairs(lines[0]) if lines else None


def parse_sacct(text: str, names: tuple[str, ...]) -> dict[str, str] | None:
    """The first ``|``-separated row, under scontrol's key names."""
    for line in text.splitlines():
        if line.strip():
            return {SACCT_TO_SCONTROL[n]: v for n, v in zip(names, line.split("|"))}
    return None


def _sacct(job_id: str, timeout: float) -> dict[str, str] | None:
    try:
        return parse_sacct(run_tool(["sacct", "-j", job_id, "-X", "-n", "-P", f"--format={','.join(SACCT_FIELDS)}"],
                                    timeout), SACCT_FIELDS)
    except ToolError as exc:
        if "Invalid field" not in str(exc):
            raise
    names = SACCT_FIELDS[:-2]  # Slurm < 23.02: no StdOut/StdErr in the accounting database
    return parse_sacct(run_tool(["sacct", "-j", job_id, "-X", "-n", "-P", f"--format={','.join(names)}"], timeout), names)


def find_job(job_id: str, timeout: float = 30.0) -> Job:
    """Ask ``scontrol`` first, then ``sacct``; ``ToolError`` when neither knows the job."""
    if not JOB_ID_RE.fullmatch(job_id):  # also keeps an id such as --help from being a flag of theirs
        raise UsageError(f"{escape(job_id)!r} is not a Slurm job id (4242, an array task 4242_7, a "
                         "heterogeneous job's component 4242+1)")
    if not (shutil.which("scontrol") or shutil.which("sacct")):
        raise ToolError("neither scontrol nor sacct found on PATH: run this on a Slurm login or compute node")
    first: ToolError | None = None
    try:
        fields = parse_scontrol(run_tool(["scontrol", "show", "job", "-o", job_id], timeout), job_id)
        if fields:
            return Job(job_id, fields, "scontrol")
    except ToolError as exc:
        first = exc
    try:
        fields = _sacct(job_id, timeout)
    except ToolError as exc:
        raise ToolError(f"{first}; and {exc}" if first else str(exc)) from None
    if not fields:
        raise ToolError(f"job {job_id} not found by scontrol or sacct" + (f" ({first})" if first else ""))
    return Job(job_id, fields, "sacct")
