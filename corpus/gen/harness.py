"""Run one training variant in a subprocess, capture everything it prints, write the item.

The harness plays the part of the job scheduler: it may put the run in a tiny
``/dev/shm`` (``unshare -m`` + tmpfs), a memory cgroup, prefix lines like
torchrun does (``[rank0]:``), write Slurm-style header/footer lines (there is no
Slurm here), send a signal after a stretch of silence, or SIGKILL a worker.
Every such action is recorded in the item's ``notes``.
"""
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CGROUP_ROOT = "/sys/fs/cgroup/memory"
JOB_ID, NODE = 4242, "node07"
TIME_LIMIT_LINE = (f"slurmstepd: error: *** JOB {JOB_ID} ON {NODE} CANCELLED AT "
                   "2026-11-30T06:00:00 DUE TO TIME LIMIT ***")
FAILED_DIR = "/tmp/corpus-gen-failed"
OOM_DMESG = re.compile(r"oom|killed process|memory cgroup|out of memory", re.I)


@dataclass
class Variant:
    name: str                 # file stem under corpus/logs
    scenario: str             # family: the held-out split groups by it
    label: str                # A-E or "none"
    subclass: str | None
    args: list                # arguments to ``python -m corpus.gen.train`` (or ``module``)
    evidence: tuple = ()      # candidates, the first one found in the log is recorded
    kind: str = "log"
    notes: str = ""
    shm: str | None = None    # tmpfs mount options for a private /dev/shm
    cgroup_mb: int = 0        # memory cgroup limit the workers join
    rank: int | None = None   # "[rankN]:" line prefix
    slurm: bool = False       # Slurm-style header / srun footer
    silence: float = 0.0      # seconds without output before the harness acts
    on_silence: str = "kill"  # "kill" (then the time-limit line) or "sigint"
    kill_worker_on: str | None = None   # SIGKILL a worker once this text was printed
    env: dict = field(default_factory=dict)
    timeout: float = 120.0
    needs_cuda: bool = False
    dmesg: bool = False       # also write the kernel's OOM lines as items
    module: str = "corpus.gen.train"   # the script run (``corpus.gen.unguarded``: no main guard)


def train_cmd(v):
    return [sys.executable, "-m", v.module, *v.args]


def full_cmd(v, cgroup):
    cmd = train_cmd(v)
    if cgroup:
        cmd += ["--cgroup", cgroup]
    if v.shm:
        script = f'mount -t tmpfs -o {v.shm} tmpfs /dev/shm && exec "$0" "$@"'
        cmd = ["unshare", "-m", "sh", "-c", script, *cmd]
    return cmd


def shown_cmd(v):
    text = f"python -m {v.module} " + " ".join(shlex.quote(a) for a in v.args)
    if v.cgroup_mb:
        text += f" --cgroup {CGROUP_ROOT}/dllogscan-gen/{v.name}"
    if v.shm:
        text = f"unshare -m sh -c 'mount -t tmpfs -o {v.shm} tmpfs /dev/shm && {text}'"
    return text


def _children(pid):
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                out += [int(c) for c in fh.read().split()]
    except OSError:
        pass
    return out


def _dmesg():
    try:
        return subprocess.run(["dmesg"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def _make_cgroup(v):
    path = os.path.join(CGROUP_ROOT, "dllogscan-gen", v.name)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "memory.limit_in_bytes"), "w") as fh:
        fh.write(str(v.cgroup_mb * 1024 * 1024))
    return path


def _remove_cgroup(path):
    for _ in range(50):
        try:
            os.rmdir(path)
            return
        except OSError:
            time.sleep(0.1)


class Capture:
    """Reads the merged stdout+stderr of a process, remembering when output last came."""

    def __init__(self, proc):
        self.proc, self.chunks, self.last = proc, [], time.monotonic()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        fd = self.proc.stdout.fileno()
        while True:
            data = os.read(fd, 65536)
            if not data:
                return
            self.chunks.append(data)
            self.last = time.monotonic()

    def text(self):
        return b"".join(self.chunks).decode("utf-8", errors="replace")


def run_variant(v):
    """Run a variant; returns (captured text, list of harness events, returncode)."""
    cgroup = _make_cgroup(v) if v.cgroup_mb else None
    env = dict(os.environ)
    env.pop("PYTHONFAULTHANDLER", None)
    env.update(PYTHONUNBUFFERED="1", PYTHONHASHSEED="0", **v.env)
    events = []
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        # a background shell ignores SIGINT and children would inherit that; the
        # training run must get Python's KeyboardInterrupt handler like any foreground job
        signal.signal(signal.SIGINT, signal.default_int_handler)
    proc = subprocess.Popen(full_cmd(v, cgroup), cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    cap = Capture(proc)
    start = time.monotonic()
    killed_worker = False
    try:
        while proc.poll() is None:
            time.sleep(0.05)
            now = time.monotonic()
            if v.kill_worker_on and not killed_worker and v.kill_worker_on in cap.text():
                workers = _children(proc.pid)
                workers = [w for w in workers if _is_worker(w, proc.pid)]
                if workers:
                    os.kill(workers[0], signal.SIGKILL)
                    events.append(f"harness sent SIGKILL to DataLoader worker pid {workers[0]} "
                                  f"after {v.kill_worker_on!r} was printed (simulating the "
                                  "kernel OOM killer)")
                    killed_worker = True
            if v.silence and now - cap.last > v.silence:
                if v.on_silence == "sigint":
                    events.append(f"harness sent SIGINT to the training process after "
                                  f"{v.silence:.0f}s without output (as Ctrl-C / scancel "
                                  "--signal=INT would)")
                    os.kill(proc.pid, signal.SIGINT)
                    try:
                        proc.wait(15)
                    except subprocess.TimeoutExpired:
                        events.append("still alive 15s after SIGINT: harness killed the "
                                      "process group")
                        os.killpg(proc.pid, signal.SIGKILL)
                else:
                    events.append(f"harness killed the process group after {v.silence:.0f}s "
                                  "without output and appended the Slurm time-limit line")
                    os.killpg(proc.pid, signal.SIGKILL)
                    events.append("time-limit")
                break
            if now - start > v.timeout:
                os.killpg(proc.pid, signal.SIGKILL)
                _keep_failed(v.name, cap.text())
                raise TimeoutError(f"{v.name}: no result after {v.timeout:.0f}s")
        proc.wait(30)
        cap.thread.join(10)
        # workers or helpers orphaned by the run
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    finally:
        if cgroup:
            _remove_cgroup(cgroup)
    return cap.text(), events, proc.returncode


def _keep_failed(name, text):
    """Keep the output of a variant that did not come out as expected, for a look."""
    os.makedirs(FAILED_DIR, exist_ok=True)
    with open(os.path.join(FAILED_DIR, name + ".log"), "w", encoding="utf-8") as fh:
        fh.write(text)


def _is_worker(pid, parent):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmd = fh.read()
        with open(f"/proc/{parent}/cmdline", "rb") as fh:
            return fh.read() == cmd
    except OSError:
        return False


def decorate(v, text, events, rc):
    """Add what the scheduler would: rank prefixes, Slurm header and footer."""
    if v.rank is not None:
        lines = text.split("\n")
        text = "\n".join(f"[rank{v.rank}]:{ln}" if ln else ln for ln in lines)
    head, tail = "", ""
    if v.slurm:
        head = (f"SLURM_JOB_ID={JOB_ID}\nSLURM_JOB_NAME=train-mlp\nSLURM_JOB_NODELIST={NODE}\n"
                f"SLURM_NTASKS=1\nSLURM_CPUS_PER_TASK=2\n"
                f"srun: job {JOB_ID} queued and waiting for resources\n"
                f"srun: job {JOB_ID} has been allocated resources\n")
    if text and not text.endswith("\n"):
        text += "\n"
    if "time-limit" in events:
        tail = TIME_LIMIT_LINE + "\n"
    elif v.slurm and rc:
        code = f"Exited with exit code {rc}" if rc > 0 else "Killed"
        tail = f"srun: error: {NODE}: task 0: {code}\n"
    return head + text + tail


def meta_for(v, text, events, rc, torch_version):
    evidence = next((e for e in v.evidence if e in text), None)
    if v.evidence and evidence is None:
        raise ValueError(f"{v.name}: none of the evidence strings {v.evidence!r} occur")
    notes = [v.notes] if v.notes else []
    notes.append(f"Real run: `{shown_cmd(v)}` (run by corpus.gen.harness; stdout+stderr "
                 f"merged, exit status {rc}).")
    notes += [e for e in events if e != "time-limit"]
    if v.slurm or "time-limit" in events:
        notes.append("There is no Slurm here: the SLURM_*/srun/slurmstepd lines are written by "
                      "the harness.")
    if v.rank is not None:
        notes.append(f"The [rank{v.rank}]: line prefix is added by the harness, as torchrun's "
                     "log-line prefix would.")
    return {"label": v.label, "subclass": v.subclass, "scenario": v.scenario, "kind": v.kind,
            "evidence": evidence, "made_by": f"python -m corpus.gen {v.name}",
            "torch_version": torch_version, "notes": " ".join(notes)}


def new_dmesg(before, after):
    """The kernel log lines that appeared between two ``dmesg`` reads."""
    old = set(before.splitlines())
    return [ln for ln in after.splitlines() if ln not in old]


def write_item(out, stem, text, meta):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, stem + ".log"), "w", encoding="utf-8") as fh:
        fh.write(text)
    with open(os.path.join(out, stem + ".meta.json"), "w", encoding="utf-8") as fh:
        json.dump(meta, fh, indent=2, ensure_ascii=False)
        fh.write("\n")


def generate(v, out, torch_version):
    """Run variant ``v`` and write its item(s) to ``out``; returns the stems written."""
    before = _dmesg() if v.dmesg else ""
    text, events, rc = run_variant(v)
    text = decorate(v, text, events, rc)
    try:
        meta = meta_for(v, text, events, rc, torch_version)
    except ValueError:
        _keep_failed(v.name, text)
        raise
    stems = [v.name]
    if v.dmesg:
        time.sleep(0.5)
        window = new_dmesg(before, _dmesg())
        lines = [ln for ln in window if OOM_DMESG.search(ln)]
        if lines:
            kmeta = dict(meta, evidence=next(
                (e for e in ("Memory cgroup out of memory: Killed process", "oom-kill:")
                 if any(e in x for x in lines)), None))
            kmeta["notes"] = (f"The kernel log (`dmesg`) lines written while {v.name} ran: the "
                              "kernel OOM killer really fired in the workers' memory cgroup.")
            write_item(out, v.name + "-kernel", "\n".join(window) + "\n", kmeta)
            stems.append(v.name + "-kernel")
            text += "$ dmesg | grep -i -E 'oom|killed process'\n" + "\n".join(lines) + "\n"
            meta["notes"] += (" The harness appended the kernel's OOM-killer lines from dmesg "
                              "after the run, as a user would when asked for them.")
        else:
            meta["notes"] += " No kernel OOM lines were found in dmesg for this run."
    write_item(out, v.name, text, meta)
    return stems
