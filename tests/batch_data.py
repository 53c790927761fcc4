"""A generated cluster log archive with known answers: a directory, a tar.gz and a zip holding
Slurm files, pod logs and kernel logs, some of them corrupt or unreadable."""
from __future__ import annotations

import gzip
import io
import os
import tarfile
import zipfile
from pathlib import Path

from tests.conftest import progress_lines

BUS = "RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error. It is possible\n"
MTIME = 1796018400  # 2026-12-01, so year-less journal lines get 2026


def exited(pids: str) -> str:
    return f"RuntimeError: DataLoader worker (pid(s) {pids}) exited unexpectedly\n"


def slurm(job: str, node: str, body: str, start: str = "2026-11-30T06:00:00") -> str:
    return (f"SLURM_JOB_ID={job}\nSLURMD_NODENAME={node}\n[{start}] starting training\n"
            + progress_lines(200) + body)


def cri(lines: list[str], stamp: str) -> str:
    return "".join(f"{stamp}.123456789Z stderr F {line}\n" for line in lines)


GETITEM = ["Traceback (most recent call last):", "KeyError: Caught KeyError in DataLoader worker process 0.",
           "Original Traceback (most recent call last):", '  File "ds.py", line 9, in __getitem__',
           "    return self.rows[i]", "KeyError: 'label'"]


def _tar_add(tf: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime = len(data), MTIME
    tf.addfile(info, io.BytesIO(data))


def build(root: Path) -> tuple[list[str], dict[str, dict]]:
    """Write the inputs under ``root``; return the batch PATHs and the expected row per source."""
    d = root / "cluster"
    (d / "slurm").mkdir(parents=True)
    exp: dict[str, dict] = {}

    def put(rel: str, text: str | bytes, **want) -> None:
        p = d / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text if isinstance(text, bytes) else text.encode())
        exp[str(p)] = want

    put("slurm/slurm-1001.out", slurm("1001", "node01", "[2026-11-30T06:05:00] " + "[rank 0]: " + exited("4242")),
        rank="0", cls="B", sub="oom", job="1001", node="node01", kind="slurm", method="cross-file", cross="dmesg")
    put("slurm/slurm-1002_3.out", slurm("1002", "node02", "[2026-11-30T06:10:00] " + exited("777"), "2026-11-30T05:00:00"),
        cls="B", sub="oom", job="1002", task="3", node="node02", method="cross-file", cross="dmesg-node02.log")
    put("slurm/slurm-1003.out", slurm("1003", "node03", exited("555")), cls="B", sub="oom-suspected", job="1003", node="node03")
    put("slurm/slurm-1004.out", slurm("1004", "node01", BUS), cls="A", sub="bus-error", job="1004", node="node01")
    put("slurm/slurm-1006.out", slurm("1006", "node04", exited("88")), cls="B", sub="oom", job="1006",
        method="cross-file", cross="slurm-1006.err")
    put("slurm/slurm-1006.err", "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=1006.batch. Some of "
        "your processes may have been killed by the cgroup out-of-memory handler.\n", cls="B", sub="oom", job="1006")
    put("kernel/dmesg-node02.log", "[Mon Nov 30 06:11:30 2026] python3 invoked oom-killer: gfp_mask=0x100cca\n"
        "[Mon Nov 30 06:11:31 2026] Out of memory: Killed process 9999 (pt_data_worker) total-vm:1kB, anon-rss:2kB\n",
        cls="B", sub="oom", node="node02", kind="kernel")
    put("healthy.log", progress_lines(500), cls=None)
    put("stray-nul.log", progress_lines(50) + "\x00\x01 glitch\n" + BUS, cls="A", sub="bus-error")
    put("model.bin", b"\x7fELF" + os.urandom(4000), cls=None, status="skipped")
    put("old.log.gz", gzip.compress((progress_lines(100) + BUS).encode()), cls="A", sub="bus-error")
    put("corrupt.log.gz", gzip.compress((progress_lines(3000) + BUS).encode())[:5000], cls=None, status="error")
    put("bad.zip", b"PK\x03\x04 definitely not a zip" * 10, cls=None, status="error", error="not a zip file")
    fifo = d / "pipe.log"
    os.mkfifo(fifo)
    exp[str(fifo)] = {"cls": None, "status": "error"}
    (d / "latest").symlink_to(d / "slurm", target_is_directory=True)  # never followed: a link's row
    exp[str(d / "latest")] = {"cls": None, "status": "link", "error": "link to a directory"}

    tgz = root / "pods.tar.gz"
    pod0 = "node07/var/log/pods/ml_trainer-0_1234abcd-5678/trainer/0.log"
    pod1 = "node07/var/log/pods/ml_trainer-1_abcd1234-0000/trainer/0.log"
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as zf:
        zf.writestr("slurm-2001.out", slurm("2001", "node05", BUS))
    with tarfile.open(tgz, "w:gz") as tf:
        _tar_add(tf, pod0, cri(["epoch 1 step 3"] + GETITEM, "2026-11-30T07:00:00").encode())
        _tar_add(tf, pod1, cri(["epoch 1 step 3", exited("55").strip()], "2026-11-30T07:00:05").encode())
        _tar_add(tf, "extra/inner.zip", inner.getvalue())
        _tar_add(tf, "extra/weights.pt", b"PK\x03\x04" + os.urandom(3000))
        for kind, name in ((tarfile.SYMTYPE, "current.log"), (tarfile.LNKTYPE, "again.log")):
            link = tarfile.TarInfo(name)
            link.type, link.linkname = kind, pod0
            tf.addfile(link)
        fifo_entry = tarfile.TarInfo("extra/pipe")
        fifo_entry.type = tarfile.FIFOTYPE
        tf.addfile(fifo_entry)
    exp.update({
        f"{tgz}!/{pod0}": dict(cls="B", sub="getitem", node="node07", kind="pod", pod="trainer-0", namespace="ml",
                               container="trainer"),
        f"{tgz}!/{pod1}": dict(cls="B", sub="oom", node="node07", pod="trainer-1", method="cross-file", cross="journal.log"),
        f"{tgz}!/extra/inner.zip!/slurm-2001.out": dict(cls="A", sub="bus-error", job="2001", node="node05"),
        f"{tgz}!/extra/weights.pt": dict(cls=None, status="skipped"),
        f"{tgz}!/current.log": dict(cls=None, status="link", error=f"symbolic link to {pod0}"),
        f"{tgz}!/again.log": dict(cls=None, status="link", error=f"hard link to {pod0}"),
        f"{tgz}!/extra/pipe": dict(cls=None, status="skipped", error="fifo entry"),
    })

    zpath = root / "kernels.zip"
    with zipfile.ZipFile(zpath, "w", zipfile.ZIP_DEFLATED) as zf:
        info = zipfile.ZipInfo("node07/journal.log", date_time=(2026, 12, 1, 0, 0, 0))
        zf.writestr(info, "Nov 30 07:00:00 node07 kernel: Memory cgroup out of memory: Killed process 31337 (python) "
                          "total-vm:1kB, anon-rss:2kB\n")
        zf.writestr("nodes/node01/dmesg", "[ 812.004417] Out of memory: Killed process 4242 (python) total-vm:1kB\n"
                                          "[ 812.004418] oom_reaper: reaped process 4242 (python)\n")
    exp.update({
        f"{zpath}!/node07/journal.log": dict(cls="B", sub="oom", node="node07", kind="kernel"),
        f"{zpath}!/nodes/node01/dmesg": dict(cls="B", sub="oom", node="node01", kind="kernel"),
    })

    good = io.BytesIO()
    with tarfile.open(fileobj=good, mode="w:gz") as tf:
        _tar_add(tf, "slurm-3001.out", slurm("3001", "node09", BUS).encode())
        _tar_add(tf, "big.log", os.urandom(1 << 19).hex().encode())
    broken = root / "broken.tar.gz"
    broken.write_bytes(good.getvalue()[: len(good.getvalue()) // 2])
    exp[f"{broken}!/slurm-3001.out"] = dict(cls="A", sub="bus-error", job="3001", node="node09")
    exp[f"{broken}!/big.log"] = dict(cls=None, status="error", error="the archive ends inside this member")
    exp[str(broken)] = dict(cls=None, status="error", error="corrupt or truncated archive")
    return [str(d), str(tgz), str(zpath), str(broken)], exp

