"""Turn the command line's PATHs into a stream of chunks of work, walking lazily so that a
tree of 100 000 files is never listed in memory at once."""
from __future__ import annotations

import glob
import os
from typing import Iterable, Iterator

from .archives import archive_kind

CHUNK_FILES = 128
CHUNK_BYTES = 32 << 20
GLOB_CHARS = set("*?[")


def _walk_dir(root: str) -> Iterator[tuple[str, int]]:
    """Every non-directory entry under ``root`` (symlinked directories are not followed),
    sorted within each directory."""
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        yield root, -1
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                yield from _walk_dir(entry.path)
                continue
            size = entry.stat().st_size if entry.is_file() else 0
        except OSError:
            size = -1
        yield entry.path, size


def expand(paths: Iterable[str]) -> Iterator[tuple[str, int]]:
    """(path, size) for each file named, found under a directory, or matched by a glob; a path
    that does not exist is passed on too (its row will say so)."""
    for arg in paths:
        if os.path.isdir(arg):
            yield from _walk_dir(arg)
        elif not os.path.lexists(arg) and GLOB_CHARS & set(arg):
            for match in sorted(glob.iglob(arg, recursive=True)):
                yield from (_walk_dir(match) if os.path.isdir(match) else [(match, _size(match))])
        else:
            yield arg, _size(arg)


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return -1


def chunks(paths: Iterable[str], max_files: int = CHUNK_FILES, max_bytes: int = CHUNK_BYTES) -> Iterator[list[str]]:
    """Group files into chunks (one task each); an archive is always a chunk of its own."""
    batch: list[str] = []
    size = 0
    for path, nbytes in expand(paths):
        if archive_kind(path):
            yield [path]
            continue
        batch.append(path)
        size += max(nbytes, 0)
        if len(batch) >= max_files or size >= max_bytes:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch
