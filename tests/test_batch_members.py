"""An archive in a pooled batch is read once by the parent while workers scan its members
(``batch/members.py``): the same rows as one process streaming it, rows arriving while the
archive is still being read, members over the shipping size and members cut short alike."""
from __future__ import annotations

import io
import tarfile

import pytest

from dllogscan.sources import streams as sources
from dllogscan.batch import Config, engines, members, run_batch
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
