"""A compressed log cut short, or followed by garbage, is scanned up to its last decodable byte
(what ``zcat`` recovers), its diagnoses reported and the cut kept as the result's error. The
decoder's last read step (256 KiB) before the cut used to be dropped, and all of a smaller log."""
from __future__ import annotations

import bz2
import gzip
import lzma
import zlib
from typing import Callable

import pytest

from dllogscan.pipeline import runner as pipeline
from dllogscan.sources import streams as sources
from tests.hostile.clirun import cli, no_traceback

BUS = b"RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error.\n"
LONG = b"".join(b"step %d loss 0.1\n" % i for i in range(200_000)) + BUS
SHORT = b"step 1\n" + BUS
TRUNCATED = "truncated compressed stream (ended before its end marker)"
COMPRESS: dict[str, Callable[[bytes], bytes]] = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}
DECODER: dict[str, Callable[[], object]] = {"gz": lambda: zlib.decompressobj(31), "bz2": bz2.BZ2Decompressor,
                                            "xz": lzma.LZMADecompressor}


def _recoverable(data: bytes, kind: str) -> bytes:
    """What a streaming decoder (``zcat``) gets out of ``data`` before it ends."""
    return DECODER[kind]().decompress(data)  # type: ignore[attr-defined]


def _scan(data: bytes, name: str):
    return pipeline.run(sources.from_bytes(data, name), pipeline.get_scanner())


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", sorted(COMPRESS))
@pytest.mark.parametrize("text", [LONG, SHORT], ids=["200k-lines", "2-lines"])
def test_a_cut_stream_keeps_every_decodable_byte(kind, text):
    cut = COMPRESS[kind](text)[:-8]
    want = _recoverable(cut, kind)
    assert want == text  # the cut takes only the end marker and checksum: every line is there
    result = _scan(cut, f"t.log.{kind}")
    assert result.error == f"t.log.{kind}: {TRUNCATED}"
    assert (result.bytes_read, result.lines) == (len(want), want.count(b"\n"))
    assert [d.cls for d in result.diagnoses][:1] == ["A"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", sorted(COMPRESS))
def test_a_stream_cut_in_the_middle_keeps_what_came_before(kind):
    packed = COMPRESS[kind](LONG)
    cut = packed[: len(packed) // 2]
    result = _scan(cut, "t.log")
    assert result.error == f"t.log: {TRUNCATED}"
    assert result.bytes_read == len(_recoverable(cut, kind)) > 0


@pytest.mark.timeout(60)
@pytest.mark.parametrize("layers", [2, 3])
def test_a_cut_outer_layer_keeps_every_byte_of_the_inner_ones(layers):
    """A ``.log.gz.gz`` whose outer stream lost its checksum: the inner stream is whole."""
    packed = LONG
    for _ in range(layers):
        packed = gzip.compress(packed)
    result = _scan(packed[:-8], "t.gz")
    assert result.error == f"t.gz: {TRUNCATED}"
    assert result.lines == LONG.count(b"\n") and result.diagnoses[0].cls == "A"


@pytest.mark.timeout(60)
def test_a_cut_twice_compressed_stream_keeps_what_both_decoders_recover():
    packed = gzip.compress(gzip.compress(LONG))
    cut = packed[: len(packed) // 2]
    result = _scan(cut, "t.gz")
    assert result.error == f"t.gz: {TRUNCATED}"
    assert result.bytes_read == len(_recoverable(_recoverable(cut, "gz"), "gz")) > 0


@pytest.mark.timeout(60)
@pytest.mark.parametrize("inner", [False, True], ids=["outer", "inner-layer"])
def test_trailing_garbage_after_a_gzip_member_is_the_error_not_the_whole_file(inner):
    packed = gzip.compress(LONG) + b"garbage"
    result = _scan(gzip.compress(packed) if inner else packed, "t.gz")
    assert result.lines == LONG.count(b"\n") and result.diagnoses[0].cls == "A"
    assert result.error == "t.gz: trailing garbage after the compressed data (not a gzip member); not read"


@pytest.mark.timeout(60)
def test_members_before_the_garbage_are_all_read():
    packed = gzip.compress(b"step 1\n") + gzip.compress(BUS) + b"\x00\x00junk"
    result = _scan(packed, "t.gz")
    assert result.lines == 2 and result.diagnoses[0].cls == "A" and "trailing garbage" in result.error


@pytest.mark.timeout(120)
def test_the_cli_reports_the_cut_and_its_exit_codes(tmp_path):
    """Exit 1 where the recovered text holds a failure, 3 where it holds none (README's table)."""
    found, healthy = tmp_path / "cut.log.gz", tmp_path / "healthy.log.gz"
    found.write_bytes(gzip.compress(LONG)[:-8])
    healthy.write_bytes(gzip.compress(LONG[: -len(BUS)])[:-8])
    proc = cli(str(found), "-f", "json")
    assert proc.returncode == 1 and b'"lines": 200001' in proc.stdout
    assert TRUNCATED in no_traceback(proc)
    proc = cli(str(healthy), "-f", "json")
    assert proc.returncode == 3 and b'"lines": 200000' in proc.stdout
