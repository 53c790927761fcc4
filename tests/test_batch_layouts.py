"""Metadata from names and contents, and archive limits, one table each."""
from __future__ import annotations

import gzip
import io
import stat
import random
import tarfile
import zipfile
import zlib
from pathlib import Path

import pytest

import dllogscan
from dllogscan.batch import layouts, run_batch, tarstream
from dllogscan.batch.archives import Limits, iter_archive
from dllogscan.batch.worker import Config, iter_chunk

NAMES = [
    ("logs/slurm-4242.out", {"kind": "slurm", "job": "4242"}),
    ("slurm-17_3.out", {"kind": "slurm", "job": "17", "array_task": "3"}),
    ("node07/var/log/pods/ml_trainer-0_0a1b2c3d-11/trainer/0.log",
     {"kind": "pod", "namespace": "ml", "pod": "trainer-0", "container": "trainer", "node": "node07"}),
    ("dmesg-gpu12.log", {"kind": "kernel", "node": "gpu12"}),
    ("gpu12.dmesg", {"kind": "kernel", "node": "gpu12"}),
    ("nodes/gpu03/kern.log", {"kind": "kernel", "node": "gpu03"}),
    ("logs/kernel/dmesg", {"kind": "kernel"}),
    ("run/train_rank3.log", {"rank": "3"}),
    # a rotated or compressed kernel log keeps its node (logrotate's kern.log.1, kern.log.2.gz,
    # dateext's kern.log-20261130); an extension is no node (before: "log.1", "log.2.gz", "txt")
    ("gpu07/var/log/kern.log.1", {"kind": "kernel", "node": "gpu07"}),
    ("gpu07/var/log/kern.log.2.gz", {"kind": "kernel", "node": "gpu07"}),
    ("gpu07/var/log/kern.log-20261130", {"kind": "kernel", "node": "gpu07"}),
    ("dmesg-gpu12.log.1", {"kind": "kernel", "node": "gpu12"}),
    ("logs/dmesg.txt", {"kind": "kernel"}),
    ("journalctl.out", {"kind": "kernel"}),
    ("journalctl-k.log", {"kind": "kernel"}),  # an option of the command that wrote it
    ("notes/readme.txt", {}),
]


@pytest.mark.parametrize("name, want", NAMES)
def test_from_name(name, want):
    assert layouts.from_name(name) == want


CONTENTS = [
    (b"SLURM_JOB_ID=99\nSLURM_ARRAY_TASK_ID=4\nSLURMD_NODENAME=gpu1\n", {"job": "99", "task": "4", "node": "gpu1", "kind": "slurm"}),
    (b"slurmstepd: error: *** JOB 55 ON gpu2 CANCELLED AT 2026-11-30T06:00:00 DUE TO TIME LIMIT ***\n",
     {"job": "55", "node": "gpu2", "kind": "slurm", "first_time": "2026-11-30T06:00:00",
      "last_time": "2026-11-30T06:00:00"}),
    (b"Nov 30 06:00:00 gpu3 kernel: a\nNov 30 06:00:09 gpu3 kernel: b\n",
     {"node": "gpu3", "kind": "kernel", "first_time": "2026-11-30T06:00:00", "last_time": "2026-11-30T06:00:09"}),
    (b"[Mon Nov 30 06:00:00 2026] a\n[Mon Nov 30 06:01:00 2026] b\n",
     {"kind": "kernel", "first_time": "2026-11-30T06:00:00", "last_time": "2026-11-30T06:01:00"}),
    (b"[   12.5] a\n[   13.0] b\n", {"kind": "kernel"}),
    # a stamp with a zone keeps its clock and adds its offset (batch/clock.py): CRI's Z is +00:00
    (b"2026-11-30T06:00:00.123456789Z stderr F hello\n",
     {"kind": "pod", "first_time": "2026-11-30T06:00:00+00:00", "last_time": "2026-11-30T06:00:00+00:00"}),
    (b"plain text\n", {}),
    # the rank: whichever spelling comes first; RANK= only as a word of its own
    (b"LOCAL_RANK=5\n[rank 3] up\nRANK=2\n", {"rank": "3"}),
    (b"RANK=2\n[rank3] up\n", {"rank": "2"}),
    (b"LOCAL_RANK=5 WORLD_RANK=6\n", {}),
    # progress clocks are no timestamps; a dated line further on is, and so is detectron2's
    # ``[MM/DD HH:MM:SS`` (correlate/stamps.py's layouts), its year the head's ISO stamp's
    (b"eta: 0:10:34 [01:23<00:05]\n2026-11-30 06:00:00 INFO up\neta: 0:00:09\n",
     {"first_time": "2026-11-30T06:00:00", "last_time": "2026-11-30T06:00:00"}),
    (b"[11/30 05:59:32 d2.utils.events]:  eta: 0:10:34\n2026-11-30 06:00:00 INFO up\neta: 0:00:09\n",
     {"first_time": "2026-11-30T05:59:32", "last_time": "2026-11-30T06:00:00"}),
    ("\u2588\u2588 12:00:01 eta 0:10:34\nNov 30 06:00:00 host app: \u2588\n".encode(),
     {"first_time": "2026-11-30T06:00:00", "last_time": "2026-11-30T06:00:00"}),
]


@pytest.mark.parametrize("head, want", CONTENTS)
def test_from_content(head, want):
    assert layouts.from_content(head, head, year=2026) == want


FILLER = b"Epoch 1:  50%|#####     | 25/50 [00:05<00:05, 5.00it/s, loss=0.5]\n"


@pytest.mark.parametrize("head, tail, want", [
    # a stamp only past the first EDGE_PIECE bytes of the head, and only before the tail's last ones
    (FILLER * 40 + b"2026-11-30 06:00:00 INFO up\n" + FILLER * 40,
     b"cut line\n2026-11-30 07:00:00 INFO on\n" + FILLER * 60,
     {"first_time": "2026-11-30T06:00:00", "last_time": "2026-11-30T07:00:00"}),
    # a stamp on the line the piece cuts is read whole (from the block), never from its piece
    (FILLER * 31 + b"ab 2026-11-30 06:00:01 INFO x\n" + FILLER,
     FILLER + b"2026-11-30 07:00:01 INFO y " + b"z" * 2100 + b"\n" + FILLER,
     {"first_time": "2026-11-30T06:00:01", "last_time": "2026-11-30T07:00:01"}),
    # a CR LF split by the piece's edge (head and tail); a tail that is one cut line only
    (FILLER * 31 + b"a\r\n2026-11-30 06:00:02 INFO\n", FILLER * 5 + b"\r" + (b"\n2026-11-30 07:00:02 x" + b" " * 2048)[:2048],
     {"first_time": "2026-11-30T06:00:02", "last_time": "2026-11-30T07:00:02"}),
    (FILLER, b"2026-11-30 07:00:02 " + b"x" * 3000, {"last_time": "2026-11-30T07:00:02"}),
    # the tail's first line is a piece of a line: its stamp is not the last time
    (FILLER, b"2026-11-30 07:00:03 cut\n" + FILLER * 60, {}),
    # the gates and their searches in the tail when the head has none
    (FILLER * 50, FILLER * 50 + b"SLURM_ARRAY_TASK_ID=6\n[rank 2] x\n*** STEP 9.1 ON gpu4 \n",
     {"task": "6", "rank": "2", "job": "9", "node": "gpu4", "kind": "slurm"}),
])
def test_from_content_long_heads_and_tails(head, tail, want):
    assert layouts.from_content(head, tail, year=2026) == want


def test_no_gate_hides_another():
    """``_present``'s leftmost-first search reports every gate present: no gate ends with the
    start of another (or of itself), and one that holds another is listed before it."""
    gates = layouts.GATES
    for a in gates:
        for b in gates:
            assert not any(a[-k:] == b[:k] for k in range(1, min(len(a), len(b)))), (a, b)
            if a != b and b in a:
                assert gates.index(a) < gates.index(b), (a, b)


@pytest.mark.parametrize("searcher", ["ahocorasick", "in"])
def test_present_gates_are_the_ones_a_plain_search_finds(searcher, monkeypatch):
    if searcher == "in":
        monkeypatch.setattr(layouts, "_gate_searcher", lambda: None)
    elif layouts._gate_searcher() is None:
        pytest.skip("ahocorasick-rs is not installed")
    rng = random.Random(4)
    pieces = [*layouts.GATES, b"SLURM", b"**", b"[ran", b"RANK", b"*", b" ", b"\n", b"x", b"SLURM_ARRA", b"D_", b"=", b"_"]
    for _ in range(3000):
        blocks = tuple(b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))) for _ in range(rng.randint(1, 2)))
        assert layouts._present(blocks) == {g for g in layouts.GATES if any(g in b for b in blocks)}, blocks


def _tar(members: dict[str, bytes], mode: str = "w:gz") -> io.BytesIO:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    buf.seek(0)
    return buf


def _members(buf, kind: str, limits: Limits) -> list[tuple[str, str | None]]:
    out = []
    for m in iter_archive(buf, kind, "", limits):
        if m.stream is not None:
            m.stream.read()
        out.append((m.name, m.error))
    return out


def test_member_count_limit():
    got = _members(_tar({f"{i}.log": b"x\n" for i in range(5)}), "tar", Limits(members=2))
    assert [n for n, e in got if e is None] == ["0.log", "1.log"]
    assert "more than 2 members" in got[-1][1]


def test_compression_bomb_is_stopped():
    got = _members(_tar({"a.log": b"\0" * (3 << 20), "b.log": b"\0" * (3 << 20)}), "tar",
                   Limits(ratio=20, ratio_floor=1 << 20))
    assert any(e and "compression bomb" in e for _, e in got)


def test_nested_archives_stop_at_the_depth_limit():
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as zf:
        zf.writestr("deep.log", "hello\n")
    outer = _tar({"in.zip": inner.getvalue()})
    assert _members(outer, "tar", Limits(depth=1)) == [("in.zip!/deep.log", None)]
    outer.seek(0)
    assert "deeper than 0" in _members(outer, "tar", Limits(depth=0))[0][1]


def test_a_zip_symbolic_link_is_a_link_row_not_its_target_text():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        link = zipfile.ZipInfo("latest.log")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16  # as `zip -y` stores it
        zf.writestr(link, "runs/3/train.log")
        zf.writestr("runs/3/train.log", "fine\n")
    buf.seek(0)
    got = _members(buf, "zip", Limits())
    assert got[0] == ("latest.log", "is a symbolic link to runs/3/train.log (links are not followed); not scanned")
    assert got[1] == ("runs/3/train.log", None)


def test_tar_entries_without_a_file_are_rows_within_the_member_limit():
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for i in range(4):
            info = tarfile.TarInfo(f"dev{i}")
            info.type = tarfile.CHRTYPE
            tf.addfile(info)
    buf.seek(0)
    got = _members(buf, "tar", Limits(members=2))
    assert got[:2] == [("dev0", "is a device entry, not a regular file; not scanned"),
                       ("dev1", "is a device entry, not a regular file; not scanned")]
    assert "more than 2 members" in got[2][1] and len(got) == 3


def test_zip_bomb_member_is_skipped():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("bomb.log", b"\0" * (4 << 20))
        zf.writestr("ok.log", b"fine\n")
    buf.seek(0)
    got = _members(buf, "zip", Limits(ratio=20, ratio_floor=1 << 20))
    assert "compression bomb" in got[0][1] and got[1] == ("ok.log", None)


def _cut_between_members(count: int, keep: int) -> bytes:
    """A .tar.gz of ``count`` members whose gzip stream ends (no end marker) right after the
    first ``keep`` members: inflated, the data stops exactly where the next header would start."""
    plain = io.BytesIO()
    with tarfile.open(fileobj=plain, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        for i in range(count):
            data = f"step {i} loss=0.1\n".encode() * 50
            info = tarfile.TarInfo(f"m{i}.log")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    raw = plain.getvalue()
    member = 512 + -(-len(b"step 0 loss=0.1\n" * 50) // 512) * 512
    deflate = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return deflate.compress(raw[: keep * member]) + deflate.flush(zlib.Z_FULL_FLUSH)


def test_a_tar_gz_cut_between_members_is_an_error_not_a_quiet_end():
    members = _members(io.BytesIO(_cut_between_members(5, 3)), "tar", Limits())
    assert [name for name, _ in members[:3]] == ["m0.log", "m1.log", "m2.log"]
    assert all(error is None for _, error in members[:3])
    assert members[3:] == [("", "corrupt or truncated archive: unexpected end of data; members after this point not read")]


def test_a_cut_tar_gz_is_an_error_row_of_the_batch(tmp_path):
    path = tmp_path / "cut.tar.gz"
    path.write_bytes(_cut_between_members(4, 2))
    rows = [(r.result.member, r.result.error) for r in iter_chunk([str(path)], Config(classifier="off"))]
    assert rows[:2] == [("m0.log", None), ("m1.log", None)]
    assert rows[2:] == [(None, f"{path}: corrupt or truncated archive: unexpected end of data; members after this point not read")]


@pytest.mark.parametrize("inflater", ["installed", "zlib"])
def test_whole_and_cut_gzip_streams_read_as_tarfile_reads_them(inflater, monkeypatch):
    """Every byte before a cut is delivered, in reads of any size, then tarfile's own error
    (with isal when the fast extra is installed, and with zlib); a cut in the trailer loses
    nothing and is no error (tarfile never read the trailer)."""
    if inflater == "zlib":
        monkeypatch.setattr(tarstream, "_inflater", lambda: (zlib.decompressobj(-zlib.MAX_WBITS), zlib.error))
    rng = random.Random(5)
    for _ in range(100):
        data = b"".join(rng.randbytes(rng.randint(0, 3000)) if rng.random() < 0.3
                        else f"line {rng.randint(0, 9)}\n".encode() * rng.randint(0, 3000) for _ in range(rng.randint(1, 6)))
        packed = gzip.compress(data)
        for cut in (len(packed), len(packed) - rng.randint(1, 8), rng.randint(3, len(packed) - 9)):
            stream, got = tarstream.GzipStream(io.BytesIO(packed[3:cut])), b""
            try:
                while piece := stream.read(rng.choice([1, 100, 10240, -1])):
                    got += piece
                stream.finish()
                error = None
            except tarfile.ReadError as exc:
                error = str(exc)
            assert data.startswith(got)
            assert (got, error) == (data, None) if cut >= len(packed) - 8 else error == "unexpected end of data"


def _corrupt_tar_gz() -> tuple[bytes, bytes, bytes]:
    """A tar.gz of a short log and a long one whose failure comes early, its deflate data made
    bad two thirds into the long log (a block of the reserved type 3, byte-aligned by a full
    flush: zlib and isal both refuse it there); that data, and the plain tar it came from."""
    rng = random.Random(11)
    long_log = b"step 0\n" + b"RuntimeError: DataLoader worker (pid 7) is killed by signal: Bus error.\n" + b"".join(
        b"step %d loss %.5f tok %d\n" % (i, rng.random(), rng.randint(0, 99999)) for i in range(60000))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for name, data in (("a.log", b"step 1\n" * 100), ("b.log", long_log), ("c.log", b"step 2\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    tar = buf.getvalue()
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    good = deflate.compress(tar[:len(tar) * 2 // 3]) + deflate.flush(zlib.Z_FULL_FLUSH)
    return gzip.compress(b"")[:10] + good + b"\x07" + bytes(5000), long_log, tar


@pytest.mark.parametrize("inflater", ["installed", "zlib"])
def test_a_corrupt_gzip_stream_delivers_what_it_inflated_before_the_bad_record(inflater, monkeypatch):
    """Every record before the bad one is delivered, then ``finish`` raises. Before, the read
    that met the bad record raised at once and what it had inflated was lost (with tarfile's
    reads of whole records, up to 4 MB)."""
    if inflater == "zlib":
        monkeypatch.setattr(tarstream, "_inflater", lambda: (zlib.decompressobj(-zlib.MAX_WBITS), zlib.error))
    raw, _, tar = _corrupt_tar_gz()
    bad_record = (raw.index(b"\x07" + bytes(5000)) - 10) // tarstream.RECORD
    before = zlib.decompressobj(-zlib.MAX_WBITS).decompress(raw[10:10 + bad_record * tarstream.RECORD])
    stream, got = tarstream.GzipStream(io.BytesIO(raw[3:])), b""
    while piece := stream.read(1 << 20):
        got += piece
    with pytest.raises(tarfile.ReadError, match="invalid compressed data"):
        stream.finish()
    assert got == before and tar.startswith(got) and len(got) > len(tar) // 2


def test_a_corrupt_tar_gz_member_keeps_what_came_before_and_says_it_is_corrupt(tmp_path):
    """The member the bad data falls in is scanned up to there (its failure found), its row's
    error says the data is corrupt, and the archive's row says so too. Before: 'cannot read:
    invalid compressed data' with nothing scanned, and 'unexpected end of data' for the archive."""
    raw, long_log, _ = _corrupt_tar_gz()
    path = tmp_path / "corrupt.tar.gz"
    path.write_bytes(raw)
    rows = [r.result for r in iter_chunk([str(path)], Config(classifier="off"))]
    assert [(r.member, r.error is None) for r in rows] == [("a.log", True), ("b.log", False), (None, False)]
    b = rows[1]
    assert b.error == f"{path}!/b.log: the compressed data is corrupt inside this member; scanned what came before"
    assert [d.cls for d in b.diagnoses] == ["A"] and 1 << 20 < b.bytes_read < len(long_log)
    assert rows[2].error == f"{path}: corrupt or truncated archive: invalid compressed data; members after this point not read"


@pytest.mark.parametrize("inflater", ["installed", "zlib"])
def test_bad_data_that_still_inflates_fails_the_crc_check(inflater, monkeypatch, tmp_path):
    """Stored deflate blocks (level 0) with a byte of a member's text changed: it inflates, and
    before nothing told; the trailer's CRC-32 now makes the archive's row say so."""
    if inflater == "zlib":
        monkeypatch.setattr(tarstream, "_inflater", lambda: (zlib.decompressobj(-zlib.MAX_WBITS), zlib.error))
        monkeypatch.setattr(tarstream, "_crc32", lambda: zlib.crc32)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=0) as tf:
        for name in ("a.log", "b.log"):
            data = b"step 1 loss 0.5\n" * 4000
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    raw = bytearray(buf.getvalue())
    whole = bytes(raw)
    at = raw.index(b"step 1 loss 0.5\n" * 4, len(raw) // 3)
    raw[at] = ord("X")
    assert _members(io.BytesIO(whole), "tar", Limits()) == [("a.log", None), ("b.log", None)]
    members = _members(io.BytesIO(bytes(raw)), "tar", Limits())
    assert members[-1] == ("", "corrupt or truncated archive: CRC check failed (the compressed data is corrupt); "
                               "members after this point not read")


def test_the_crc_check_inflates_little_past_the_tars_end(monkeypatch):
    """Data hidden in the gzip stream past the tar's end blocks (zeros, a bomb) is inflated up to
    DRAIN_BYTES for the trailer's sake, then left unchecked: no error, no more work."""
    monkeypatch.setattr(tarstream, "DRAIN_BYTES", 1 << 20)
    tar = _tar({"a.log": b"step 1\n" * 100}).getvalue()
    plain = gzip.decompress(tar)
    packed = gzip.compress(plain + bytes(64 << 20))
    stream = tarstream.GzipStream(io.BytesIO(packed[3:]))
    assert stream.read(len(plain)) == plain
    stream.finish()
    assert not stream.done and stream.size < 32 << 20  # a record of zeros inflates to 10 MB: a few of them


def test_name_parts_are_pure_posix_paths_parts():
    """``from_name`` splits names itself: the same parts as ``PurePosixPath`` gives them."""
    from pathlib import PurePosixPath

    rng = random.Random(3)
    pieces = ["/", "\\", ".", "..", "a", "slurm-12_3.out", "//", "x y", "", "é"]
    for _ in range(20000):
        name = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        assert layouts.name_parts(name) == PurePosixPath(name.replace("\\", "/")).parts, name


def test_a_log_read_whole_gives_its_first_line_as_its_last_time(tmp_path):
    """A log under the tap's 16 KB is its own tail: its first line is whole, not the piece of a
    line the tail of a longer log starts with. Before, a two-line log whose second line has no
    stamp got no ``last_time``."""
    two = b"2026-11-30 06:00:00 INFO step 1\nRuntimeError: DataLoader worker (pid(s) 7) exited unexpectedly\n"
    assert layouts.from_content(two, two, year=2026, whole=True)["last_time"] == "2026-11-30T06:00:00"
    assert "last_time" not in layouts.from_content(two, two, year=2026)  # a tail that may start mid-line
    log = tmp_path / "short.log"
    log.write_bytes(two)
    row = dllogscan.scan_many([str(log)], classifier="off", jobs=1).iloc[0]
    assert (row["first_time"], row["last_time"]) == ("2026-11-30T06:00:00", "2026-11-30T06:00:00")
    # a longer log's tail starts mid-line: a stamp there is not its last time
    log.write_bytes(b"2026-11-30 06:00:00 INFO step 1\n" + b"x" * (20 << 10) + b" 2026-11-30 07:00:00\nno stamp\n")
    assert dllogscan.scan_many([str(log)], classifier="off", jobs=1).iloc[0]["last_time"] is None


def test_a_rotated_kernel_log_proves_its_nodes_oom_kill(tmp_path):
    """``gpu07/var/log/kern.log.1`` is node gpu07's kernel log; before, its node was read as
    "log.1" and the job's bare ``exited unexpectedly`` on gpu07 stayed oom-suspected."""
    example = Path(__file__).parent.parent / "examples" / "slurm-oom-job"
    kernel = tmp_path / "gpu07" / "var" / "log" / "kern.log.1"
    kernel.parent.mkdir(parents=True)
    kernel.write_text("[Mon Nov 30 14:02:09 2026] Memory cgroup out of memory: Killed process 26652 "
                      "(pt_data_worker) total-vm:10754900kB, anon-rss:8123456kB, file-rss:0kB\n")
    for name in ("slurm-4242.out", "slurm-4242.err"):
        (tmp_path / name).write_bytes((example / "workdir" / name).read_bytes())
    rows: list = []
    run_batch([str(tmp_path)], rows.append, Config(classifier="off"), jobs=1, progress=False)
    got = {r.result.source.rsplit("/", 1)[-1]: r for r in rows}
    assert got["kern.log.1"].meta["node"] == "gpu07"
    assert got["slurm-4242.err"].result.diagnoses[0].subclass == "oom"


def test_a_kernel_journal_names_its_host_over_its_folder(tmp_path):
    """``dllogscan batch examples/slurm-oom-job``: its ``journalctl.out`` says ``gpu07 kernel:``
    on every line, but the node was its folder's name (``slurm-oom-job``; before the rotated-name
    fix, "out"), so the job's bare ``exited unexpectedly`` on gpu07 stayed oom-suspected. A folder
    names a kernel log's node only where neither its name nor its lines do."""
    example = Path(__file__).parent.parent / "examples" / "slurm-oom-job"
    rows: list = []
    run_batch([str(example)], rows.append, Config(classifier="off"), jobs=1, progress=False)
    got = {r.result.source.rsplit("/", 1)[-1]: r for r in rows}
    assert got["journalctl.out"].meta["node"] == "gpu07"
    assert got["slurm-4242.err"].result.diagnoses[0].subclass == "oom"
    bare = tmp_path / "gpu03" / "kern.log"  # no host in its lines: the folder is the node
    bare.parent.mkdir()
    bare.write_text("[Mon Nov 30 14:02:09 2026] Out of memory: Killed process 7 (python)\n")
    rows.clear()
    run_batch([str(bare)], rows.append, Config(classifier="off"), jobs=1, progress=False)
    assert rows[0].meta["node"] == "gpu03"
