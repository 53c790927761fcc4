"""sources/follow.py: a file followed as tail -F does, poll by poll, on real files."""
from __future__ import annotations

import codecs
import os

import pytest

from dllogscan.core.errors import SourceError
from dllogscan.normalize.encoding import text_encoding
from dllogscan.sources.follow import LONG_LINE, Follower, Notice, Piece


def poll(follower: Follower) -> tuple[list[str], list[Piece]]:
    items = list(follower.read())
    return [i.text for i in items if isinstance(i, Notice)], [i for i in items if isinstance(i, Piece)]


def lines(pieces: list[Piece]) -> list[tuple[int, bytes]]:
    return [(p.first_line + k, line) for p in pieces for k, line in enumerate(p.data.split(b"\n")[:-1])]


def test_waits_for_the_file_then_reads_it_all_and_a_line_in_two_writes(tmp_path):
    path = tmp_path / "job.log"
    follower = Follower(str(path))
    assert poll(follower)[0] == [f"{path} does not exist yet: waiting for it to appear"]
    assert poll(follower) == ([], [])  # said once
    path.write_bytes(b"one\ntw")
    said, pieces = poll(follower)
    assert said == [f"{path} appeared", f"following {path} from its start"]
    assert lines(pieces) == [(1, b"one")] and pieces[-1].partial == b"tw" and follower.unfinished == b"tw"
    with path.open("ab") as f:
        f.write(b"o\nthree\n")
    assert lines(poll(follower)[1]) == [(2, b"two"), (3, b"three")] and follower.lines == 3


def test_rotation_reads_the_old_rest_then_the_new_file_from_line_1(tmp_path):
    path = tmp_path / "job.log"
    path.write_bytes(b"a\n")
    follower = Follower(str(path), from_start=True)
    poll(follower)
    path.rename(tmp_path / "job.log.1")
    with (tmp_path / "job.log.1").open("ab") as f:
        f.write(b"b\n")
    path.write_bytes(b"new\n")
    said, pieces = poll(follower)
    assert said == [f"{path} was replaced: reading the new file from its start"]
    assert lines(pieces) == [(2, b"b"), (1, b"new")]
    path.write_bytes(b"x\n")  # truncated in place (copytruncate), then written
    said, pieces = poll(follower)
    assert said == [f"{path} was truncated: reading it again from its start"] and lines(pieces) == [(1, b"x")]
    path.unlink()
    assert poll(follower)[0] == [f"{path} is gone: waiting for it to appear again"]
    path.write_bytes(b"back\n")
    said, pieces = poll(follower)
    assert said == [f"{path} appeared: reading it from its start"] and lines(pieces) == [(1, b"back")]


@pytest.mark.parametrize("codec, bom", [(None, b""), ("utf-16-le", codecs.BOM_UTF16_LE), ("utf-16-be", b"")])
def test_from_the_end_lines_keep_their_numbers_in_the_file(tmp_path, codec, bom):
    path = tmp_path / "big.log"
    text = "".join(f"línea {i}\n" for i in range(1, 20001))
    path.write_bytes(bom + text.encode(codec or "utf-8"))
    follower = Follower(str(path), context=999, encoding_of=text_encoding)
    said, pieces = poll(follower)
    assert said[0].startswith(f"following {path} from its end")
    got = lines(pieces)
    assert got and all(p.context and p.backlog for p in pieces)
    assert all(line == f"línea {n}".encode() for n, line in got) and got[-1][0] == 20000
    with path.open("ab") as f:
        f.write("nueva\n".encode(codec or "utf-8"))
    (piece,) = poll(follower)[1]
    assert lines([piece]) == [(20001, "nueva".encode())] and not piece.context


def test_a_long_unfinished_line_is_held_cut(tmp_path):
    path = tmp_path / "bar.log"
    path.write_bytes(b"")
    follower = Follower(str(path))
    poll(follower)
    with path.open("ab") as f:
        f.write(b"\r 10%|#| 1/10 [00:01<00:09, 1.0it/s]" * 5000)
    (piece,) = poll(follower)[1]
    assert piece.data == b"" and piece.partial.startswith(b"\r 10%")
    assert len(follower.unfinished) == LONG_LINE
    with path.open("ab") as f:
        f.write(b"more\nnext\n")
    (piece,) = poll(follower)[1]
    assert [len(x) for x in piece.data.split(b"\n")] == [LONG_LINE, 4, 0] and piece.first_line == 1


def test_binary_is_refused_in_one_line_and_a_short_odd_head_waited_on(tmp_path):
    path = tmp_path / "weights.bin"
    path.write_bytes(b"\x00\x01\x02")
    follower = Follower(str(path), encoding_of=text_encoding)
    assert poll(follower)[1] == []  # too short to tell
    path.write_bytes(bytes(range(256)) * 8)
    with pytest.raises(SourceError, match=r"weights\.bin: looks binary .*; not followed"):
        poll(follower)
    with pytest.raises(SourceError, match="is a directory"):
        poll(Follower(str(tmp_path)))
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "pipe")
        with pytest.raises(SourceError, match="not a regular file"):
            poll(Follower(str(tmp_path / "pipe")))


@pytest.mark.parametrize("kind, pack", [("gzip", "gzip"), ("bzip2", "bz2"), ("xz", "lzma")])
def test_a_compressed_log_is_refused_as_compressed(tmp_path, kind, pack):
    """Before: a .gz was refused as "data compressed more than 3 times" (the words of a scan,
    which had inflated it three times; watch reads the file as it is) and a .bz2 as binary."""
    import importlib

    path = tmp_path / "job.log.x"
    path.write_bytes(importlib.import_module(pack).compress(b"epoch 1 step 2 loss=0.5\n" * 400))
    with pytest.raises(SourceError) as info:
        poll(Follower(str(path), encoding_of=text_encoding))
    assert str(info.value) == (f"{path}: looks like {kind}-compressed data, not a log being written "
                               f"(read it with `dllogscan {path}`); not followed")
