"""What a zip's central directory says is read so that it cannot mislead (``sources/archives.py``):
entries sharing one member's data count no more compressed bytes than the file holds (1 092
entries of one 2.8 MB member, summed, had let 68 GB inflate under the 200x ratio), and a name
stored without the UTF-8 flag is read from its bytes (``jöb.log``, not ``j├╢b.log``;
``bad\\xff.log`` escaped as a tar's)."""
from __future__ import annotations

import io
import zipfile

import pytest

from dllogscan.batch.archives import Limits, Tally
from dllogscan.core.names import printable
from dllogscan.sources.archives import ZipSpent, stream_size, zip_name
from tests.hostile.zipcraft import log_text, overlapping_zip, raw_name_zip

LINE = b"step 1 loss 0.125 lr 0.001\n"


def _infos(data: bytes) -> list[zipfile.ZipInfo]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return zf.infolist()


def test_entries_sharing_one_member_count_no_more_than_the_file():
    data = overlapping_zip("job.log", LINE * 40_000, copies=50)
    spent = ZipSpent(io.BytesIO(data))
    infos = _infos(data)
    for info in infos:
        spent.add(info)
    assert len(infos) == 50 and spent.compressed == 50 * infos[0].compress_size > len(data)
    assert spent() == len(data)


def test_an_ordinary_zip_counts_the_members_read():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for i in range(3):
            zf.writestr(f"m{i}.log", LINE * (1000 * (i + 1)))
    spent = ZipSpent(buf)
    infos = _infos(buf.getvalue())
    spent.add(infos[0])
    assert spent() == infos[0].compress_size
    for info in infos[1:]:
        spent.add(info)
    assert spent() == sum(i.compress_size for i in infos) < len(buf.getvalue())


def test_overlapping_entries_trip_the_archive_ratio_after_200x_the_file():
    """The accounting ``batch/archives.py`` does for a zip, with the floor lowered to 1 MiB: the
    summed compressed sizes (~20x) never reached 200x; the file's size is passed at ~200x."""
    member = log_text(1 << 20)
    data = overlapping_zip("job.log", member, copies=400)  # 400 MiB from ~70 KB
    limits, spent = Limits(ratio_floor=1 << 20), ZipSpent(io.BytesIO(data))
    tally, read = Tally(consumed=spent), 0
    for info in _infos(data):
        spent.add(info)
        if not tally.add(info.file_size, limits):
            break
        read += 1
    assert read < 400 and read * len(member) <= limits.ratio * len(data) < (read + 1) * len(member)


class NoSeek(io.RawIOBase):
    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False


def test_stream_size_keeps_the_position():
    stream = io.BytesIO(b"x" * 100)
    stream.seek(7)
    assert stream_size(stream) == 100 and stream.tell() == 7
    assert stream_size(NoSeek()) is None  # type: ignore[arg-type]
    assert ZipSpent(NoSeek())() == 0  # type: ignore[arg-type]


@pytest.mark.parametrize("raw, want", [
    ("jöb.log".encode(), "jöb.log"),
    (b"bad\xff.log", "bad\\xff.log"),
    (b"caf\xe9/x.log", "caf\\xe9/x.log"),
    (b"plain.log", "plain.log"),
    (b"cut\x00here.log", "cut"),
])
def test_a_name_without_the_utf8_flag_is_read_from_its_bytes(raw, want):
    (info,) = _infos(raw_name_zip({raw: LINE}))
    assert not info.flag_bits & 0x800
    assert printable(zip_name(info)) == want


def test_a_name_with_the_utf8_flag_is_zipfiles():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("jöb/日本.log", LINE)  # zipfile sets the flag for a name that is not ASCII
    (info,) = _infos(buf.getvalue())
    assert info.flag_bits & 0x800 and zip_name(info) == "jöb/日本.log"


def test_a_name_read_with_another_metadata_encoding_is_kept():
    data = raw_name_zip({"jöb.log".encode("cp1252"): LINE})
    with zipfile.ZipFile(io.BytesIO(data), metadata_encoding="cp1252") as zf:
        (info,) = zf.infolist()
        assert zip_name(info, zf.metadata_encoding) == "jöb.log"
    assert zip_name(zipfile.ZipInfo("日本.log")) == "日本.log"  # made by hand: nothing to undo
