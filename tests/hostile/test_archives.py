"""Compression bombs split over many members, or over nested archives, are stopped by the ratio
over the whole archive (a zip of 30 x 63 MiB members, 343x, used to be inflated in full)."""
from __future__ import annotations

import io
import json
import resource
import subprocess
import sys
import tarfile
import time
import zipfile
import zlib

from dllogscan.batch.archives import Limits, iter_archive
from tests.hostile.zipcraft import log_text, overlapping_zip, raw_name_zip

LINE = b"step 1 loss 0.125 lr 0.001\n"
BUS_LINE = b"RuntimeError: DataLoader worker (pid 7) is killed by signal: Bus error.\n"


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _read_all(data: bytes, kind: str, limits: Limits) -> tuple[list[str], int]:
    """Member names (or errors) and the bytes actually inflated."""
    seen, inflated = [], 0
    for member in iter_archive(io.BytesIO(data), kind, "x!/", limits):
        if member.stream is None:
            seen.append(f"ERROR {member.error}")
            continue
        while chunk := member.stream.read(1 << 20):
            inflated += len(chunk)
        seen.append(member.name)
    return seen, inflated


def test_zip_bomb_over_many_members_is_stopped():
    small = Limits(ratio_floor=1 << 20)  # the default floor is 64 MiB: same rule, 1/64 of the bytes
    data = _zip({f"m{i:02d}.log": LINE * ((900 << 10) // len(LINE)) for i in range(30)})
    seen, inflated = _read_all(data, "zip", small)
    assert seen[-1].startswith("ERROR archive decompresses more than 200x its size")
    assert len(seen) <= 3 and inflated <= 2 * (1 << 20)


def test_zip_bomb_at_default_limits_through_batch(tmp_path):
    """Three 30 MiB members (each under the 64 MiB floor, 90 MiB together): the third is refused."""
    member = LINE * ((30 << 20) // len(LINE))
    path = tmp_path / "bomb.zip"
    path.write_bytes(_zip({"a.log": member, "b.log": member, "c.log": member}))
    assert len(member) * 3 > 200 * path.stat().st_size
    out, elapsed = _batch_measured(path, timeout=120)
    rows = out["rows"]
    assert [r["status"] for r in rows] == ["ok", "ok", "error"]
    assert "compression bomb" in rows[-1]["error"] and out["code"] == 3
    assert elapsed < 20 and out["maxrss_mb"] < 400


def test_zip_bomb_of_overlapping_entries_is_stopped():
    """1 000 directory entries sharing one member that deflates ~27x: their compressed sizes,
    summed, kept the archive's ratio under 200x (a 3 MB zip of 1 092 such 60 MiB entries
    inflated 68 GB); against the file's size the bomb error comes after ~200x of it."""
    data = overlapping_zip("job.log", log_text(1 << 20), copies=1000)
    seen, inflated = _read_all(data, "zip", Limits(ratio_floor=1 << 20))
    assert seen[-1] == "ERROR archive decompresses more than 200x its size (a compression bomb?); rest not read"
    assert seen[:-1] == ["x!/job.log"] * (len(seen) - 1) and 1 < len(seen) < 50
    assert inflated <= 200 * len(data)


def test_zip_bomb_of_overlapping_entries_at_default_limits_through_batch(tmp_path):
    """1 000 entries of one 40 MiB member (1.5 MB deflated): 40 GB, refused after ~300 MiB."""
    member = log_text(40 << 20)
    path = tmp_path / "overlap.zip"
    path.write_bytes(overlapping_zip("job.log", member, copies=1000))
    out, elapsed = _batch_measured(path, timeout=60)
    rows = out["rows"]
    assert [r["status"] for r in rows] == ["ok"] * (len(rows) - 1) + ["error"] and len(rows) < 20
    assert "compression bomb" in rows[-1]["error"] and out["code"] == 3
    assert (len(rows) - 1) * len(member) <= 200 * path.stat().st_size
    assert elapsed < 20 and out["maxrss_mb"] < 400


def _batch_measured(path, timeout: int) -> tuple[dict, float]:
    """``batch`` over ``path`` in a fresh interpreter (``_MEASURE``): its rows, exit code and peak
    memory, and the wall time; never a traceback."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _MEASURE, str(path)], capture_output=True, text=True, timeout=timeout)
    elapsed = time.perf_counter() - start
    assert "Traceback" not in proc.stderr, proc.stderr[-1000:]
    return json.loads(proc.stdout.splitlines()[-1]), elapsed


_MEASURE = """
import json, sys, io, contextlib
from dllogscan.cli.fast import main
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    try:
        code = main(["batch", sys.argv[1], "--format", "jsonl", "--jobs", "1"])
    except SystemExit as exc:
        code = exc.code
rows = [json.loads(line) for line in buf.getvalue().splitlines() if line.startswith("{")]
# VmHWM is this process's own peak: ru_maxrss would carry the forking pytest process's size over exec
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"code": code, "rows": rows, "maxrss_mb": hwm >> 10}))
"""


def test_bomb_split_over_nested_archives_is_stopped():
    """A tar.gz of zips, each zip within the ratio alone: the whole is not."""
    small = Limits(ratio_floor=1 << 20)
    inner = _zip({"m.log": LINE * ((150 << 10) // len(LINE))})  # ~150 KiB of text in a small zip
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for i in range(60):
            info = tarfile.TarInfo(f"z{i:02d}.zip")
            info.size = len(inner)
            tf.addfile(info, io.BytesIO(inner))
    seen, inflated = _read_all(buf.getvalue(), "tar", small)
    assert any("compression bomb" in s for s in seen), seen[-3:]
    assert inflated < 3 << 20


def test_ordinary_archives_still_read_whole():
    text = b"".join(b"step %d loss %f\n" % (i, 1 / (i + 1)) for i in range(200_000))  # ~5 MB, compresses ~5x
    data = _zip({f"n{i}.log": text for i in range(4)})
    seen, inflated = _read_all(data, "zip", Limits(ratio_floor=1 << 20))
    assert seen == [f"x!/n{i}.log" for i in range(4)] and inflated == 4 * len(text)
    assert zlib.compress(text)  # (the text is not trivially compressible)


def test_zip_names_without_the_utf8_flag_are_read_from_their_bytes():
    """Info-ZIP's ``zip`` stores a Linux name's bytes with no UTF-8 flag; zipfile reads them as
    cp437 (``j├╢b.log``). A name that is not UTF-8 keeps its bytes escaped, as in a tar."""
    data = raw_name_zip({"jöb.log".encode(): LINE, b"bad\xff.log": LINE, b"logs/plain.log": LINE})
    seen, _ = _read_all(data, "zip", Limits())
    assert seen == ["x!/jöb.log", "x!/bad\udcff.log", "x!/logs/plain.log"]


def test_a_name_flagged_utf8_that_is_not_costs_only_its_own_member(tmp_path):
    """Before: zipfile decodes a UTF-8-flagged name strictly, so one bad name made the whole
    archive one error row ("corrupt or truncated archive: 'utf-8' codec can't decode byte 0xff
    ...; members after this point not read") and the failure in good.log was never seen."""
    data = raw_name_zip({b"good.log": BUS_LINE, b"bad\xff.log": LINE, "jöb.log".encode(): LINE}, utf8_flag=True)
    seen, _ = _read_all(data, "zip", Limits())
    assert seen == ["x!/good.log", "x!/bad\udcff.log", "x!/jöb.log"]
    path = tmp_path / "logs.zip"
    path.write_bytes(data)
    proc = subprocess.run([sys.executable, "-m", "dllogscan", "batch", str(path)], capture_output=True, text=True,
                          timeout=60)
    rows = {r["member"]: r for r in map(json.loads, proc.stdout.splitlines())}
    assert sorted(rows) == ["bad\\xff.log", "good.log", "jöb.log"] and proc.returncode == 1
    assert rows["good.log"]["diagnoses"][0]["class"] == "A" and not any(r["error"] for r in rows.values())
