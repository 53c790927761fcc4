"""Cross-file evidence: a job's ``exited unexpectedly`` plus the same node's kernel log killing
that worker's pid (or a python process in the same time window), or a Slurm ``oom-kill event``
for the same job in another file, make the diagnosis B-oom with both lines as evidence.

A job's file that names no node (a Slurm ``.err``) is matched on the node its sibling names (the
``.out`` with ``SLURMD_NODENAME``), when the job's files name exactly one.

Only what this pass needs is kept while the batch runs: the cause events (grouped by node and by
job) and the few records whose verdict may still change; every other row is written at once.
"""
from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from datetime import timedelta

from ..advise.fixes import advise
from ..classify.combine import guessed_subclass
from ..correlate.likely_causes import without_guess
from ..core.models import Diagnosis, Evidence
from ..signatures.database import Database
from .clock import on_one_clock, parsed
from .worker import Event, Record

SUSPECTED = "oom-suspected"
SUSPECTED_ID = "B.oom-suspected."
PID_LINKED, WINDOW_LINKED, JOB_LINKED = 0.97, 0.85, 0.93
WINDOW = timedelta(minutes=10)
PYTHON_RE = re.compile(r"python|pt_data_worker|pt_main_thread|torchrun", re.I)
DIGITS_RE = re.compile(r"\d+")
MAX_EVENTS = 200_000


def unproven(diag: Diagnosis) -> bool:
    """A B verdict whose subclass nothing in its own source proves: the bare ``exited
    unexpectedly`` entry alone, its subclass ``oom-suspected``, the text classifier's guess
    (``refine_subclass``) or the cause its text names (``correlate/likely_causes.py``). Proof from
    another source outranks the guess."""
    return diag.cls == "B" and all(s.startswith(SUSPECTED_ID) or not s.startswith("B.")
                                   for s in diag.signatures)


def pending(record: Record) -> bool:
    """Whether another source could still change this record's verdict."""
    return any(unproven(d) for d in record.result.diagnoses)


def _label(record: Record) -> str:
    r = record.result
    return f"{r.source}!/{r.member}" if r.member else r.source


def _job_key(record: Record) -> tuple[str, str | None] | None:
    """The Slurm job (and array task) a record belongs to, or None."""
    job = record.meta.get("job")
    return (job, record.meta.get("array_task")) if job else None


class CrossFile:
    """Collects cause events while results stream in, then upgrades the pending records."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.by_node: dict[str, list[tuple[str, Event]]] = defaultdict(list)
        self.by_job: dict[str, list[tuple[str, Event]]] = defaultdict(list)
        self.job_nodes: dict[tuple[str, str | None], set[str]] = defaultdict(set)
        self.count = 0

    def add(self, record: Record) -> None:
        node, label = record.meta.get("node"), _label(record)
        job = _job_key(record)
        if node and job and len(self.job_nodes[job]) < 2:
            self.job_nodes[job].add(node)
        for ev in record.events:
            if self.count >= MAX_EVENTS:
                return
            self.count += 1
            if ev.pid or ev.process:
                if node:
                    self.by_node[node].append((label, ev))
            elif ev.job:
                self.by_job[ev.job].append((label, ev))

    def node_of(self, record: Record) -> str | None:
        """The record's node: its own, else the one node its job's other files name."""
        job = _job_key(record)
        nodes = self.job_nodes.get(job, set()) if job else set()
        return record.meta.get("node") or (next(iter(nodes)) if len(nodes) == 1 else None)

    def _kernel_match(self, record: Record, diag: Diagnosis) -> tuple[str, Event, float, str] | None:
        node = self.node_of(record)
        if not node:
            return None
        pids = set(DIGITS_RE.findall(diag.facts.get("pids", "") + " " + diag.facts.get("pid", "")))
        times = tuple(parsed(t) for t in (diag.facts.get("time"), record.meta.get("first_time"),
                                          record.meta.get("last_time")))
        me = _label(record)
        best = None
        for label, ev in self.by_node.get(node, ()):
            if label == me:
                continue
            if ev.pid and ev.pid in pids:
                return label, ev, PID_LINKED, f"pid {ev.pid}"
            kill = parsed(ev.time)
            if best or not kill or not PYTHON_RE.search(ev.process or ""):
                continue
            when, lo, hi, kill = on_one_clock(*times, kill)  # two zones, or a zone and local time
            if (when and abs(kill - when) <= WINDOW) or (not when and lo and hi and lo - WINDOW <= kill <= hi + WINDOW):
                best = (label, ev, WINDOW_LINKED, f"a {ev.process} process within {WINDOW.seconds // 60} min")
        return best

    def _job_match(self, record: Record) -> tuple[str, Event, float, str] | None:
        job, me = record.meta.get("job"), _label(record)
        for label, ev in self.by_job.get(job or "", ()):
            if label != me:
                return label, ev, JOB_LINKED, f"job {job}"
        return None

    def resolve(self, record: Record) -> Record:
        """The record with each unproven B diagnosis upgraded where another source proves it."""
        diags = list(record.result.diagnoses)
        for i, diag in enumerate(diags):
            if not unproven(diag):
                continue
            found = self._kernel_match(record, diag) or self._job_match(record)
            if not found:
                continue
            label, ev, conf, why = found
            node = self.node_of(record)
            where = f"node {node or '?'}" + ("" if record.meta.get("node") or not node else ", its job's node")
            cited = Evidence(ev.line, f"[{label} line {ev.line}] {ev.text}", ev.signature + "@cross-file")
            facts = {**diag.facts, "kernel_source": label}
            if ev.pid:
                facts["pid"] = ev.pid
            evidence, notes = without_guess(diag)  # the proof replaces a cause the text only named
            upgraded = dataclasses.replace(
                diag, subclass="oom", confidence=max(conf, diag.confidence), evidence=evidence + (cited,),
                title="Worker killed by the out-of-memory killer (cross-file evidence)",
                signatures=diag.signatures + (ev.signature,), facts=facts, method="cross-file",
                notes=tuple(n for n in notes if not guessed_subclass(n))
                + (f"{label} shows the OOM kill ({why}) on {where}",), fixes=())
            diags[i] = advise(upgraded, self.db)
        diags.sort(key=lambda d: -d.confidence)
        return dataclasses.replace(record, result=dataclasses.replace(record.result, diagnoses=tuple(diags)))
