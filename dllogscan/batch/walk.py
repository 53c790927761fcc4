"""Turn the command line's PATHs into a stream of chunks of work, walking lazily so that a
tree of 100 000 files is never listed in memory at once.

Symlinked directories are never followed, in a directory walk or by a glob's ``**``, so a link
back up the tree cannot repeat files or loop; the walk keeps its own stack, so a tree 10 000
levels deep costs no Python recursion.
"""
from __future__ import annotations

import fnmatch
import os
import re
from typing import Iterable, Iterator

from .archives import archive_kind

CHUNK_FILES = 128
CHUNK_BYTES = 32 << 20
GLOB_CHARS = set("*?[")


def _entries(path: str) -> list[os.DirEntry]:
    with os.scandir(path or ".") as it:
        return sorted(it, key=lambda e: e.name)


def _walk_dir(root: str) -> Iterator[tuple[str, int]]:
    """Every non-directory entry under ``root`` (symlinked directories are not followed),
    sorted within each directory, depth first; an unreadable directory is ``(path, -1)``."""
    try:
        stack = [iter(_entries(root))]
    except OSError:
        yield root, -1
        return
    while stack:
        entry = next(stack[-1], None)
        if entry is None:
            stack.pop()
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                try:
                    stack.append(iter(_entries(entry.path)))
                except OSError:
                    yield entry.path, -1
                continue
            size = entry.stat().st_size if entry.is_file() else 0
        except OSError:
            size = -1
        yield entry.path, size


def _join(path: str, name: str) -> str:
    if not path:
        return name
    return path + name if path.endswith(os.sep) else path + os.sep + name


def _matcher(part: str) -> "re.Pattern[str]":
    return re.compile(fnmatch.translate(part))


def _visible(name: str, part: str) -> bool:
    """A wildcard matches a hidden name only when it starts with a dot itself (as glob does)."""
    return not name.startswith(".") or part.startswith(".")


def _glob(pattern: str) -> Iterator[str]:
    """What ``glob.iglob(pattern, recursive=True)`` names, lazily and sorted per directory, but
    ``**`` never enters a symlinked directory (glob's does: one link back up the tree repeats
    every file, two never end), and a trailing ``**`` names its directory once instead of every
    path under it (the walk that follows lists them)."""
    parts = pattern.split(os.sep)
    first = next(i for i, part in enumerate(parts) if GLOB_CHARS & set(part))
    base = os.sep.join(parts[:first]) or (os.sep if first else "")
    rest: list[str] = []
    for part in parts[first:]:
        if part and not (part == "**" and rest and rest[-1] == "**"):
            rest.append(part)
    if base and not os.path.isdir(base):
        return
    stack = [(base, 0)]
    while stack:
        path, i = stack.pop()
        if i == len(rest):
            yield path or "."
            continue
        part, last = rest[i], i == len(rest) - 1
        if part == "**":
            if last:
                stack.append((path, i + 1))
                continue
            try:
                subdirs = [_join(path, e.name) for e in _entries(path)
                           if _visible(e.name, "") and e.is_dir(follow_symlinks=False)]
            except OSError:
                continue
            stack += [(sub, i) for sub in reversed(subdirs)]
            stack.append((path, i + 1))  # ``**`` as no directory at all comes first
        elif GLOB_CHARS & set(part):
            rx = _matcher(part)
            try:
                names = [e.name for e in _entries(path)
                         if rx.match(e.name) and _visible(e.name, part) and (last or e.is_dir())]
            except OSError:
                continue
            stack += [(_join(path, name), i + 1) for name in reversed(names)]
        else:
            target = _join(path, part)
            if os.path.isdir(target) if not last else os.path.lexists(target):
                stack.append((target, i + 1))


def expand(paths: Iterable[str]) -> Iterator[tuple[str, int]]:
    """(path, size) for each file named, found under a directory, or matched by a glob; a path
    that does not exist is passed on too (its row will say so). A path named again (``a.log
    ./a.log``), or lying under a folder named too (``logs/ logs/a.log``, ``logs/ 'logs/*/*.out'``),
    is left to that folder's walk: one row per source, however the arguments overlap."""
    paths = list(paths)
    overlaps = _Overlaps(paths)
    for arg in paths:
        if overlaps.seen(arg):
            continue
        if os.path.isdir(arg):
            yield from _walk_dir(arg)
        elif not os.path.lexists(arg) and GLOB_CHARS & set(arg):
            for match in _glob(arg):
                if overlaps.under_root(match):
                    continue
                if os.path.isdir(match) and not os.path.islink(match):
                    yield from _walk_dir(match)
                else:
                    yield match, 0 if os.path.isdir(match) else _size(match)
        else:
            yield arg, _size(arg)


class _Overlaps:
    """Which arguments (and glob matches) another argument already covers: the same path again,
    or a path under a folder named as an argument (that folder's walk reads it). Paths are
    compared resolved (a link to a folder is that folder) where a folder is named; else as
    written, normalized, so a long list of files costs no system call each."""

    def __init__(self, paths: list[str]) -> None:
        self.roots = {os.path.realpath(p) for p in paths if os.path.isdir(p)}
        self.done: set[str] = set()

    def seen(self, arg: str) -> bool:
        """Whether an argument is covered (remembered: the command line bounds how many)."""
        key = os.path.realpath(arg) if self.roots else os.path.normpath(os.path.abspath(arg))
        if key in self.done:
            return True
        self.done.add(key)
        return self._in_root(key) and os.path.lexists(arg)  # a missing path keeps its row

    def under_root(self, match: str) -> bool:
        """Whether a glob's match lies under a folder named as an argument (not remembered: a
        glob may match a million files)."""
        return bool(self.roots) and self._in_root(os.path.realpath(match))

    def _in_root(self, key: str) -> bool:
        parent = os.path.dirname(key)
        while parent != key:
            if parent in self.roots:
                return True
            key, parent = parent, os.path.dirname(parent)
        return False


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
