"""Follow a growing file as ``tail -F`` does (for ``watch``): poll it, read what was appended in
bounded pieces, and hand on its complete lines, numbered as in the whole file.

Rules:
- a file that does not exist yet is waited for. One that the path names anew (another device or
  inode: rotated by renaming and creating) is read from its start after the rest of the old one;
  one that is gone is read to its end and waited for again; one shorter than what was read
  (truncated in place, ``copytruncate``) is read again from its start. Each says so once
  (``Notice``); the last three number lines from 1 again (``Notice.restart``);
- the file there at start is read from its last ``context`` bytes, from the first line start in
  them (like ``tail``), or from its beginning (``from_start``); a file that appears later, from its
  beginning. What a file held when it was opened is ``backlog``; read from the end, it is
  ``context`` too (support for a verdict, not news). The lines before the start are counted once,
  in ``READ_BYTES`` pieces, so numbers are those of the whole file and no more than one piece is
  ever held;
- what a file is, from its first bytes: the caller's ``encoding_of`` (``normalize.encoding.
  text_encoding``, which sources may not import) names UTF-16 or UTF-32, read on as UTF-8;
  ``streams.sniff`` refuses binary data (SourceError). A head too short to tell, with something
  odd in it (NUL bytes: the start of UTF-16), is waited on until ``DECIDE_BYTES`` are there;
- an unfinished last line is held until its newline comes, its first ``LONG_LINE`` bytes only;
  what arrived of it is handed on as well (``Piece.partial``: a tqdm bar redrawn with ``\\r``
  never ends its line).

May import: ``core``, ``sources``.
"""
from __future__ import annotations

import codecs
import os
import shlex
import stat
from dataclasses import dataclass
from typing import Callable, Iterator

from ..core.errors import SourceError
from ..core.names import printable
from .streams import COMPRESSIONS, SNIFF_BYTES, sniff

READ_BYTES = 1 << 20
CONTEXT_BYTES = 256 << 10
LONG_LINE = 64 << 10
DECIDE_BYTES = 512
#: byte-order marks, UTF-32's first (UTF-16's little-endian one is its prefix)
BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
        (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


@dataclass(frozen=True)
class Piece:
    """Lines read in one go: complete ones (UTF-8, each ending in ``\\n``) from ``first_line`` on,
    and what arrived of the unfinished line after them (line ``first_line`` + their count)."""

    first_line: int
    data: bytes
    partial: bytes = b""
    backlog: bool = False
    context: bool = False

    @property
    def count(self) -> int:
        return self.data.count(b"\n")


@dataclass(frozen=True)
class Notice:
    """What happened to the file, in words; ``restart``: lines are numbered from 1 again."""

    text: str
    restart: bool = False


def _byte_order(codec: str, head: bytes) -> tuple[str, int]:
    """``codec`` with its byte order named (a decoder may start mid-file then), and the length of
    the byte-order mark ``head`` starts with."""
    for bom, name in BOMS:
        if name.startswith(codec) and head.startswith(bom):
            return name, len(bom)
    return codec, 0


class Follower:
    """One path, followed; ``read()`` once per poll."""

    def __init__(self, path: str, from_start: bool = False, context: int = CONTEXT_BYTES,
                 encoding_of: Callable[[bytes], str | None] | None = None) -> None:
        self.path, self.name = path, printable(path)
        self.from_start, self.context = from_start, context
        self.encoding_of = encoding_of or (lambda head: None)
        self.fd: int | None = None
        self.ident: tuple[int, int] | None = None
        self.opened = 0  # files opened so far
        self.waiting = False
        self.tail = False  # the open file is read from its end (the one there at start)
        self.told = False  # where the first file is read from was said
        self.written = 0.0  # the open file's modification time when it was opened (wall clock)
        self._new_file()

    def _new_file(self) -> None:
        """Read the open file from its start, as it is now (its backlog: what it holds now)."""
        self.offset, self.line, self.carry, self.long, self.skip = 0, 1, b"", False, False
        found = os.fstat(self.fd) if self.fd is not None else None
        self.at_open = (found.st_size, found.st_mtime) if found is not None else (0, 0.0)
        self.decoder: Callable[[bytes], bytes] | None = None  # None: not told yet what the file is
        self.backlog_until, self.as_context = 0, False

    @property
    def unfinished(self) -> bytes:
        """The unfinished last line read so far (its first ``LONG_LINE`` bytes)."""
        return self.carry

    @property
    def lines(self) -> int:
        """The number of the last complete line read."""
        return self.line - 1

    def read(self) -> Iterator[Piece | Notice]:
        """What the file holds now that was not read yet, and what happened to it."""
        st = self._stat()
        if self.fd is not None and (st is None or (st.st_dev, st.st_ino) != self.ident):
            yield from self._drain()
            self.close()
            if st is not None:
                yield Notice(f"{self.name} was replaced: reading the new file from its start", restart=True)
        if self.fd is None:
            if st is None:
                if not self.waiting:
                    self.waiting = True
                    yield Notice(f"{self.name} is gone: waiting for it to appear again" if self.opened
                                 else f"{self.name} does not exist yet: waiting for it to appear")
                return
            if self.waiting:
                yield Notice(f"{self.name} appeared" + (": reading it from its start" if self.opened else ""),
                             restart=bool(self.opened))
            self._open(tail=not self.from_start and not self.opened and not self.waiting)
            if self.fd is None:
                return
        elif st is not None and st.st_size < self.offset:
            yield Notice(f"{self.name} was truncated: reading it again from its start", restart=True)
            self._new_file()
        if self.decoder is None:
            told = self._tell()
            if told is None and self.decoder is None and not self.told:  # empty, or too short to tell
                self.told = True
                told = Notice(f"following {self.name} from its {'end' if self.tail else 'start'}")
            if told is not None:
                yield told
        yield from self._drain()

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
        self.fd, self.ident = None, None

    def _stat(self) -> os.stat_result | None:
        try:
            st = os.stat(self.path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise SourceError(f"{self.name}: cannot read: {exc.strerror or exc}") from None
        if stat.S_ISDIR(st.st_mode):
            raise SourceError(f"{self.name}: is a directory; name a log file")
        if not stat.S_ISREG(st.st_mode):
            raise SourceError(f"{self.name}: not a regular file; watch follows a log file as it grows")
        return st

    def _open(self, tail: bool) -> None:
        try:
            self.fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return  # gone between the stat and the open: the next poll waits for it
        except OSError as exc:
            raise SourceError(f"{self.name}: cannot read: {exc.strerror or exc}") from None
        opened = os.fstat(self.fd)
        self.ident, self.waiting, self.tail = (opened.st_dev, opened.st_ino), False, tail
        self.opened += 1
        self._new_file()

    def _pread(self, size: int, at: int) -> bytes:
        try:
            return os.pread(self.fd, size, at)  # type: ignore[arg-type]
        except OSError as exc:
            raise SourceError(f"{self.name}: cannot read: {exc.strerror or exc}") from None

    def _tell(self) -> Notice | None:
        """Tell what the open file is and where to start (the rules above), and say so (the first
        file, or one not read as UTF-8); ``decoder`` stays None while its head is too short to tell."""
        head = self._pread(SNIFF_BYTES, 0)
        codec = self.encoding_of(head) if head else None
        packed = next((kind for magic, kind in COMPRESSIONS.items() if head.startswith(magic)), None)
        if packed and not codec:  # sniff's words are a scan's, which inflated it before
            raise SourceError(f"{self.name}: looks like {packed}-compressed data, not a log being written "
                              f"(read it with `dllogscan {shlex.quote(self.name)}`); not followed")
        reason = None if codec or not head else sniff(head)
        if not head or (reason and len(head) < DECIDE_BYTES):
            return None
        if reason:
            raise SourceError(f"{self.name}: {reason}; not followed")
        codec, bom = _byte_order(codec, head) if codec else (None, 0)
        (size, self.written), start, where = self.at_open, bom, "its start"
        self.backlog_until = size
        tail, self.tail = self.tail, False  # once: a truncated file is read again from its start
        if tail and size - bom > self.context:
            unit = 4 if codec and "32" in codec else 2 if codec else 1
            start += (size - bom - self.context) // unit * unit
            newline = "\n".encode(codec or "utf-8")
            self.line = 1 + self._newlines(bom, start, codec)
            self.skip = start > bom and self._pread(len(newline), start - len(newline)) != newline
            self.line += self.skip
        if tail:
            self.as_context = True
            where = "its end" + (f" (its lines from {self.line} on are read as context)" if size > start else "")
        self.offset = start
        if codec:
            decoder = codecs.getincrementaldecoder(codec)(errors="replace")
            self.decoder = lambda raw: decoder.decode(raw).encode("utf-8", errors="replace")
        else:
            self.decoder = lambda raw: raw
        told, self.told = self.told, True
        if told and not codec:
            return None  # a restart said where it reads from
        return Notice(f"following {self.name} from {where}" + (f", read as {codec}" if codec else ""))

    def _newlines(self, start: int, end: int, codec: str | None) -> int:
        """The newlines in bytes ``start`` to ``end`` of the open file, read a piece at a time."""
        decoder = codecs.getincrementaldecoder(codec)(errors="replace") if codec else None
        count, at = 0, start
        while at < end:
            raw = self._pread(min(READ_BYTES, end - at), at)
            if not raw:
                break
            at += len(raw)
            count += raw.count(b"\n") if decoder is None else decoder.decode(raw).count("\n")
        return count

    def _drain(self) -> Iterator[Piece]:
        """Everything after ``offset``, a piece at a time (the backlog's last piece ends where it did)."""
        while self.fd is not None and self.decoder is not None:
            backlog = self.offset < self.backlog_until
            size = min(READ_BYTES, self.backlog_until - self.offset) if backlog else READ_BYTES
            raw = self._pread(size, self.offset)
            if not raw:
                return
            self.offset += len(raw)
            piece = self._lines(self.decoder(raw), backlog, backlog and self.as_context)
            if piece is not None:
                yield piece

    def _lines(self, text: bytes, backlog: bool, context: bool) -> Piece | None:
        """The complete lines ``text`` finishes, the rest held (the rules above)."""
        if self.skip:  # the line the start fell in is not whole
            cut = text.find(b"\n")
            if cut == -1:
                return None
            text, self.skip = text[cut + 1:], False
        last = text.rfind(b"\n")
        partial = text[last + 1:]
        if last == -1:
            self._hold(partial)
            return Piece(self.line, b"", partial, backlog, context) if partial else None
        first = text.find(b"\n")
        self._hold(text[:first])
        data = self.carry + b"\n" + text[first + 1:last + 1]
        self.carry, self.long = b"", False
        self._hold(partial)
        piece = Piece(self.line, data, partial, backlog, context)
        self.line += piece.count
        return piece

    def _hold(self, more: bytes) -> None:
        """Add to the unfinished line: its first ``LONG_LINE`` bytes are kept, the rest dropped."""
        if not self.long:
            self.carry += more
            if len(self.carry) > LONG_LINE:
                self.carry, self.long = self.carry[:LONG_LINE], True
