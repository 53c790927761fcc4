"""An archive in a pooled batch is read once by the parent while workers scan its members
(``batch/members.py``): the same rows as one process streaming it, rows arriving while the
archive is still being read, members over the shipping size and members cut short alike."""
from __future__ import annotations

import gzip
import io
import tarfile
import zlib
from pathlib import Path

import pytest

from dllogscan.sources import streams as sources
from dllogscan.batch import Config, Limits, engines, members, run_batch
from dllogscan.batch.rows import status
from dllogscan.batch.archives import Member
from dllogscan.batch.worker import scan_stream
from tests.batch_data import BUS, exited
from tests.conftest import FIXTURES, MINI, progress_lines

SIGS = (str(MINI), str(FIXTURES / "batch_signatures.toml"))
CONFIG = Config(SIGS, False, classifier="off")


def _archive(path, count: int) -> None:
    with tarfile.open(path, "w:gz") as tf:
        for i in range(count):
            body = progress_lines(40 + i % 7) + (BUS if i % 5 == 0 else exited(str(1000 + i)) if i % 7 == 0 else "")
            data = f"SLURM_JOB_ID={i}\n{body}".encode()
            info = tarfile.TarInfo(f"logs/slurm-{i}.out")
            info.size, info.mtime = len(data), 1796018400
            tf.addfile(info, io.BytesIO(data))


def _rows(path, jobs: int) -> dict:
    out: list = []
    run_batch([str(path)], out.append, CONFIG, jobs=jobs)
    return {(r.result.member, r.result.source): (r.result.to_dict(), r.meta) for r in out}


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    path = tmp_path_factory.mktemp("members") / "logs.tar.gz"
    _archive(path, 120)
    return path


def test_pooled_rows_equal_one_process(many, monkeypatch):
    monkeypatch.setattr(members, "BATCH_MEMBERS", 7)
    pooled, inline = _rows(many, 2), _rows(many, 1)
    assert len(pooled) == 120 and pooled == inline
    assert sum(1 for d, _ in pooled.values() if d["diagnoses"]) == 24 + 14  # every 5th member, and every 7th that is not a 5th


def test_large_members_are_scanned_by_the_reader(many, monkeypatch):
    monkeypatch.setattr(members, "SHIP_BYTES", 3000)
    assert _rows(many, 2) == _rows(many, 1)


class Failing(io.RawIOBase):
    """A member stream whose read breaks after some bytes, as a damaged gzip stream does."""

    def __init__(self, data: bytes) -> None:
        self.rest = data

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if not self.rest:
            raise EOFError("Compressed file ended before the end-of-stream marker was reached")
        n = min(len(buffer), len(self.rest))
        buffer[:n], self.rest = self.rest[:n], self.rest[n:]
        return n


def test_a_member_whose_read_fails_reads_the_same_in_a_worker():
    data = (progress_lines(3000) + BUS).encode()
    here = scan_stream("a.tar.gz", "m.log", lambda: sources._decompressing(Failing(data), "m.log"), CONFIG, None)
    read, error = members._read(Member("m.log", Failing(data), len(data)))  # type: ignore[arg-type]
    assert read == data and isinstance(error, EOFError)
    [shipped] = members.scan_shipped([members.Shipped("a.tar.gz", "m.log", None, read, error)], CONFIG)
    assert shipped == here
    assert "truncated compressed stream" in here.result.error


def test_rows_come_back_while_the_archive_is_read(many, monkeypatch):
    monkeypatch.setattr(members, "BATCH_MEMBERS", 4)
    produced = []
    real = members.batches

    def counting(path, config):
        for item in real(path, config):
            produced.append(item)
            yield item

    monkeypatch.setattr(members, "batches", counting)
    first_seen = []
    for _ in engines.run_pool([[str(many)]], CONFIG, 2):
        first_seen.append(len(produced))
    assert len(produced) == 30
    assert first_seen[0] <= 2 * 2 + 1  # at most 2 x jobs batches in flight before the first row


def _cut_inputs(root: Path) -> bytes:
    data = b"step 1\n" * 1000 + b"RuntimeError: DataLoader worker (pid 12) is killed by signal: Killed.\n"
    (root / "big.log").write_bytes(data)
    (root / "big.log.gz").write_bytes(gzip.compress(data))
    with tarfile.open(root / "a.tar", "w") as tar:
        info = tarfile.TarInfo("m.log")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return data


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_file_is_read_whole_and_a_member_cut_at_the_limit_says_so(tmp_path, jobs):
    """Before: a file over the member limit (1 GiB) was cut with "input cut at None bytes
    (--max-bytes)" (batch has no such option) and lost the diagnosis past the cut; a member over
    it was cut silently (status ok). Now a file is read whole, as ``dllogscan FILE`` reads it,
    and a cut member's row names the limit (here 1 000 bytes)."""
    data = _cut_inputs(tmp_path)
    rows = {}
    run_batch([str(tmp_path)], lambda r: rows.setdefault(r.result.member or Path(r.result.source).name, r),
              Config(limits=Limits(member_bytes=1000)), jobs=jobs, progress=False)
    for name in ("big.log", "big.log.gz"):
        r = rows[name].result
        assert r.error is None and r.bytes_read == len(data) and r.diagnoses[0].subclass == "oom"
    member = rows["m.log"].result
    assert member.error == (f"{tmp_path}/a.tar!/m.log: member cut at 1,000 bytes (the batch's limit for one "
                            "archive member, Limits.member_bytes); scanned what came before")
    assert status(rows["m.log"]) == "error" and member.bytes_read == 1000


def _cut_in_last_member(root: Path, compress: bool) -> tuple[Path, int]:
    """A tar (gzipped or plain) of two logs, cut short inside the second one, after its failure
    line: a copy of the archive stopped while it was written or sent. Returns the path and the
    number of the second log's bytes it still holds."""
    second = BUS.encode() + b"step 2\n" * 4000
    plain = io.BytesIO()
    with tarfile.open(fileobj=plain, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        for name, data in (("a.log", b"step 1\n" * 100), ("b.log", second)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    start = plain.getvalue().index(second)
    held = 5000
    raw = plain.getvalue()[: start + held]
    if compress:  # the gzip stream stops there too: no end marker, as a cut copy's
        deflate = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        raw = deflate.compress(raw) + deflate.flush(zlib.Z_FULL_FLUSH)
    path = root / ("cut.tar.gz" if compress else "cut.tar")
    path.write_bytes(raw)
    return path, held


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("compress", [True, False])
def test_a_member_the_archive_cuts_short_keeps_what_it_holds(tmp_path, compress, jobs):
    """Before: the member an archive was cut inside was an error row with no diagnosis ("cannot
    read: unexpected end of data"), its bytes dropped by tarfile's short read, while the same
    log as a cut ``.gz`` is scanned to its last byte. Now the member's row has its diagnosis and
    says where the archive ended; the archive's own error row follows as before."""
    path, held = _cut_in_last_member(tmp_path, compress)
    rows = []
    run_batch([str(path)], rows.append, CONFIG, jobs=jobs, progress=False)
    got = {r.result.member: r.result for r in rows}  # a pool may send the archive's row first
    assert len(rows) == 3 and got["a.log"].error is None
    member = got["b.log"]
    assert member.bytes_read == held and [d.cls for d in member.diagnoses] == ["A"]
    assert member.error == f"{path}!/b.log: the archive ends inside this member; scanned what came before"
    assert got[None].error == (f"{path}: corrupt or truncated archive: unexpected end of data; members after "
                               "this point not read")
