"""Zips with no central directory (cut short at the end): the members are read from their local
headers, the whole ones each get their row, the cut one keeps what it holds, and the archive's
row says what happened. Before, the whole zip was one error row ("File is not a zip file")."""
from __future__ import annotations

import io
import zipfile

import pytest

from dllogscan.batch.archives import Limits, iter_archive
from tests.hostile.test_archives import LINE, _batch_measured
from tests.hostile.zipcraft import log_text

BUS = b"RuntimeError: DataLoader worker (pid 7) is killed by signal: Bus error.\n"
STEPS = b"".join(b"step %d loss 0.%d\n" % (i, i % 10) for i in range(3000))


class _Unseekable(io.RawIOBase):
    """A pipe-like sink: zipfile then writes each member's sizes in a data descriptor after it."""

    def __init__(self) -> None:
        self.buf = io.BytesIO()

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        return self.buf.write(data)

    def seekable(self) -> bool:
        return False


def _zip(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED, streamed: bool = False) -> bytes:
    sink = _Unseekable() if streamed else io.BytesIO()
    with zipfile.ZipFile(sink, "w", method) as zf:  # type: ignore[arg-type]
        for name, data in members.items():
            zf.writestr(name, data)
    return (sink.buf if streamed else sink).getvalue()  # type: ignore[union-attr]


def _without_directory(raw: bytes, cut: int = 0) -> bytes:
    """``raw`` up to its central directory, less ``cut`` bytes more."""
    return raw[:raw.index(b"PK\x01\x02") - cut]


def _rows(data: bytes, limits: Limits = Limits()) -> list[tuple[str, str | None, bytes]]:
    out = []
    for member in iter_archive(io.BytesIO(data), "zip", "x.zip!/", limits):
        text, error = b"", member.error
        if member.stream is not None:
            try:
                while piece := member.stream.read(1 << 16):
                    text += piece
            except OSError as exc:
                error = str(exc)
        out.append((member.name, error, text))
    return out


MEMBERS = {"a.log": STEPS + BUS, "b.log": STEPS, "c.log": BUS + STEPS * 3}


@pytest.mark.parametrize("streamed", [False, True], ids=["sizes-in-header", "data-descriptor"])
def test_a_zip_cut_inside_its_last_member_keeps_every_member(streamed):
    raw = _zip(MEMBERS, streamed=streamed)
    rows = _rows(_without_directory(raw, cut=200))
    assert [r[0] for r in rows] == ["x.zip!/a.log", "x.zip!/b.log", "x.zip!/c.log", "x.zip"]
    assert rows[0][1:] == (None, MEMBERS["a.log"]) and rows[1][1:] == (None, MEMBERS["b.log"])
    name, error, text = rows[2]
    assert error == "the archive ends inside this member" and text.startswith(BUS) and len(text) < len(MEMBERS["c.log"])
    assert rows[3][1].startswith("corrupt or truncated archive: no readable central directory")
    assert rows[3][1].endswith("3 members read from their local headers, then the archive ends inside c.log")


def test_a_zip_cut_between_members_or_inside_its_directory_keeps_the_whole_ones():
    raw = _zip(MEMBERS, method=zipfile.ZIP_STORED)
    for data in (_without_directory(raw), raw[:raw.index(b"PK\x01\x02") + 20]):
        rows = _rows(data)
        assert [(r[0], r[1], r[2]) for r in rows[:3]] == [(f"x.zip!/{n}", None, t) for n, t in MEMBERS.items()]
        assert rows[3][1].endswith("3 members read from their local headers, then the members end there")


def test_a_stored_member_with_a_data_descriptor_ends_the_read_with_a_row():
    rows = _rows(_without_directory(_zip(MEMBERS, method=zipfile.ZIP_STORED, streamed=True)))
    assert rows[0] == ("x.zip!/a.log", "stored zip member whose size follows its data: its end cannot be "
                                       "found without the central directory; not read", b"")
    assert rows[1][0] == "x.zip" and "then the end of a.log cannot be found" in rows[1][1]


def test_a_file_that_is_no_zip_is_still_one_error_row():
    rows = _rows(b"this is not a zip at all\n" * 10)
    assert rows == [("x.zip", "corrupt or truncated archive: File is not a zip file; members after this point not read", b"")]


def test_a_bomb_without_its_directory_is_stopped_by_the_archive_ratio():
    """Members each under the floor, inflating 300x together: stopped while inflating (their
    sizes in data descriptors, unknown in advance), as the archive ratio stops an ordinary zip."""
    small = Limits(ratio_floor=1 << 20)
    member = b"\n" * (900 << 10)
    raw = _without_directory(_zip({f"m{i:02d}.log": member for i in range(30)}, streamed=True))
    rows = _rows(raw, small)
    assert any("compression bomb" in (r[1] or "") for r in rows)
    assert sum(len(r[2]) for r in rows) <= 3 << 20


def test_a_member_over_its_stated_ratio_is_refused_and_the_next_one_read():
    small = Limits(ratio_floor=1 << 20)
    raw = _without_directory(_zip({"bomb.log": b"\n" * (4 << 20), "ok.log": STEPS}))
    rows = _rows(raw, small)
    assert rows[0][1].startswith("member decompresses more than 200x its size") and rows[1][1:] == (None, STEPS)


def test_a_member_over_the_member_limit_is_cut_and_the_next_one_read():
    limits = Limits(member_bytes=10_000)
    rows = _rows(_without_directory(_zip({"big.log": STEPS * 4, "next.log": BUS}, streamed=True)), limits)
    assert len(rows[0][2]) == 10_000 and rows[1][1:] == (None, BUS)


def test_a_cut_zip_through_batch_gives_each_member_its_row(tmp_path):
    path = tmp_path / "logs.zip"
    path.write_bytes(_without_directory(_zip({**MEMBERS, "big.log": log_text(3 << 20)}), cut=100))
    out, _ = _batch_measured(path, timeout=120)
    rows = {r["member"]: r for r in out["rows"]}
    assert rows["a.log"]["status"] == "ok" and rows["a.log"]["diagnoses"][0]["class"] == "A"
    assert rows["b.log"]["status"] == "ok"
    assert rows["c.log"]["status"] == "ok"
    assert rows["big.log"]["status"] == "error" and "the archive ends inside this member" in rows["big.log"]["error"]
    assert rows[None]["status"] == "error" and "4 members read from their local headers" in rows[None]["error"]
    assert out["code"] == 1


def test_a_nested_zip_in_a_cut_zip_is_read_whatever_its_size_says():
    inner = _zip({"inner.log": BUS}, streamed=True)
    rows = _rows(_without_directory(_zip({"nested.zip": inner, "b.log": STEPS}, streamed=True), cut=10))
    assert rows[0][0] == "x.zip!/nested.zip!/inner.log" and rows[0][1:] == (None, BUS)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("streamed", [False, True], ids=["sizes-in-header", "data-descriptor"])
def test_a_cut_zip_bomb_at_default_limits_through_batch(tmp_path, streamed):
    """Three 30 MiB members (each under the 64 MiB floor) with no central directory: the third is
    refused as in a whole zip (``test_archives``), the first two read whole, also where each
    member's deflate data ends inside one read of the archive (a member after one with a data
    descriptor was once fed bytes twice: 'invalid code lengths set')."""
    member = LINE * ((30 << 20) // len(LINE))
    path = tmp_path / "bomb.zip"
    path.write_bytes(_without_directory(_zip({"a.log": member, "b.log": member, "c.log": member}, streamed=streamed)))
    out, _ = _batch_measured(path, timeout=120)
    rows = out["rows"]
    assert [(r["member"], r["status"]) for r in rows] == [("a.log", "ok"), ("b.log", "ok"), ("c.log", "error"), (None, "error")]
    assert "compression bomb" in rows[2]["error"] and "compression bomb" in rows[3]["error"]
    assert out["code"] == 3 and out["maxrss_mb"] < 400


def test_random_zips_cut_anywhere_give_whole_members_and_a_prefix():
    """Stored and deflated members, sizes in the header or in a descriptor, cut at any byte before
    the central directory: every member before the cut reads whole, the one cut reads a prefix of
    itself, and nothing raises but the cut's own error."""
    import random

    rng = random.Random(4)
    for _ in range(60):
        members = {f"m{i}.log": (STEPS + rng.randbytes(rng.randint(0, 3000)))[: rng.randint(0, 200_000)]
                   for i in range(rng.randint(1, 4))}
        raw = _zip(members, method=rng.choice([zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED]),
                   streamed=rng.random() < 0.5)
        data = _without_directory(raw, cut=rng.randint(0, raw.index(b"PK\x01\x02")))
        rows = _rows(data)
        assert rows[-1][0] == "x.zip"
        for name, error, text in rows[:-1]:
            original = members[name.removeprefix("x.zip!/")]
            assert original.startswith(text), name
            assert error is not None or text == original, name


def _corrupt_zip(method: int = zipfile.ZIP_DEFLATED, streamed: bool = False) -> bytes:
    """MEMBERS zipped (deflated at level 0: the text stays as it is), without a central directory,
    with one byte of a.log's text changed: the data still reads, only its CRC-32 tells."""
    sink = _Unseekable() if streamed else io.BytesIO()
    with zipfile.ZipFile(sink, "w", method, compresslevel=0) as zf:  # type: ignore[arg-type]
        for name, data in MEMBERS.items():
            zf.writestr(name, data)
    raw = _without_directory((sink.buf if streamed else sink).getvalue())  # type: ignore[union-attr]
    at = raw.index(b"step 1500 loss") + 5
    return raw[:at] + bytes([raw[at] ^ 0x20]) + raw[at + 1:]


@pytest.mark.parametrize("method, streamed", [(zipfile.ZIP_STORED, False), (zipfile.ZIP_DEFLATED, False),
                                              (zipfile.ZIP_DEFLATED, True)],
                         ids=["stored", "deflated", "deflated-data-descriptor"])
def test_a_member_whose_data_is_corrupt_but_reads_keeps_its_bytes_and_says_so(method, streamed):
    """Before, a byte changed in a member's data (stored, or deflated at level 0, so that it still
    inflates) gave that member's row no error: its CRC-32 was not checked."""
    rows = _rows(_corrupt_zip(method, streamed))
    assert [r[0] for r in rows] == ["x.zip!/a.log", "x.zip!/b.log", "x.zip!/c.log", "x.zip"]
    name, error, text = rows[0]
    assert error == "the member's CRC-32 does not match its data (the data is corrupt)"
    assert len(text) == len(MEMBERS["a.log"]) and text != MEMBERS["a.log"] and text.endswith(BUS)
    assert rows[1][1:] == (None, MEMBERS["b.log"]) and rows[2][1:] == (None, MEMBERS["c.log"])
    assert rows[3][1].endswith("3 members read from their local headers, then the members end there")


def test_a_corrupt_member_through_batch_is_scanned_with_its_error(tmp_path):
    path = tmp_path / "logs.zip"
    path.write_bytes(_corrupt_zip(streamed=True))
    out, _ = _batch_measured(path, timeout=120)
    rows = {r["member"]: r for r in out["rows"]}
    assert rows["a.log"]["status"] == "error" and rows["a.log"]["diagnoses"][0]["class"] == "A"
    assert rows["a.log"]["error"].endswith("does not match its data (the data is corrupt); scanned what came before")
    assert rows["b.log"]["status"] == rows["c.log"]["status"] == "ok"


def test_a_corrupt_member_left_before_its_end_does_not_stop_the_read():
    """The CRC-32 is compared where ``finish`` inflates the rest of a member the reader left (at
    the member limit): the mismatch is not raised there, and the next members are still found."""
    rows = _rows(_corrupt_zip(streamed=True), Limits(member_bytes=1000))
    assert [(r[0], r[1], len(r[2])) for r in rows[:3]] == [(f"x.zip!/{n}", None, 1000) for n in MEMBERS]
    assert rows[3][1].endswith("3 members read from their local headers, then the members end there")
