"""Turn the command line's PATHs into a stream of chunks of work, walking lazily so that a
tree of 100 000 files is never listed in memory at once.

Symlinked directories are never followed, in a directory walk or by a glob's ``**``, so a link
back up the tree cannot repeat files or loop; the walk keeps its own stack, so a tree 10 000
levels deep costs no Python recursion.
"""
from __future__ import annotations

import os
from functools import partial
from stat import S_ISDIR
from typing import Callable, Iterable, Iterator

from .archives import archive_kind
from .globs import CACHED_DIRS, GLOB_CHARS, Pattern, matcher, split, visible

CHUNK_FILES = 128
CHUNK_BYTES = 32 << 20


def _entries(path: str) -> list[os.DirEntry]:
    with os.scandir(path or ".") as it:
        return sorted(it, key=lambda e: e.name)


def _walk_dir(root: str, skip: Callable[[os.DirEntry], bool] | None = None) -> Iterator[tuple[str, int]]:
    """Every non-directory entry under ``root`` (symlinked directories are not followed, nor
    those ``skip`` says), sorted within each directory, depth first; an unreadable directory is
    ``(path, -1)``."""
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
                if skip is not None and skip(entry):
                    continue
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


def _glob(pattern: str) -> Iterator[str]:
    """What ``glob.iglob(pattern, recursive=True)`` names, lazily and sorted per directory, but
    ``**`` never enters a symlinked directory (glob's does: one link back up the tree repeats
    every file, two never end), and a trailing ``**`` names its directory once instead of every
    path under it (the walk that follows lists them)."""
    base, rest = split(pattern)
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
                           if visible(e.name, "") and e.is_dir(follow_symlinks=False)]
            except OSError:
                continue
            stack += [(sub, i) for sub in reversed(subdirs)]
            stack.append((path, i + 1))  # ``**`` as no directory at all comes first
        elif GLOB_CHARS & set(part):
            rx = matcher(part)
            try:
                names = [e.name for e in _entries(path)
                         if rx.match(e.name) and visible(e.name, part) and (last or e.is_dir())]
            except OSError:
                continue
            stack += [(_join(path, name), i + 1) for name in reversed(names)]
        else:
            target = _join(path, part)
            if os.path.isdir(target) if not last else os.path.lexists(target):
                stack.append((target, i + 1))


def expand(paths: Iterable[str]) -> Iterator[tuple[str, int]]:
    """(path, size) for each file named, found under a directory, or matched by a glob; a path
    that does not exist is passed on too (its row will say so). One row per source, however the
    arguments overlap: a path lying under a folder named too (``logs/ logs/a.log``, ``logs/
    'logs/*/*.out'``) is left to that folder's walk, and any other path to the first argument
    that reads it (``a.log ./a.log``, ``'*.log' 'd*.log'``, ``'*.log' a.log``)."""
    paths = list(paths)
    overlaps = _Overlaps(paths)
    for arg in paths:
        if overlaps.seen(arg):
            continue
        if os.path.isdir(arg):
            yield from _walk_dir(arg)
        elif not os.path.lexists(arg) and GLOB_CHARS & set(arg):
            yield from _expand_glob(arg, overlaps)
        elif not (os.path.lexists(arg) and overlaps.globbed(arg)):  # a missing path keeps its row
            yield arg, _size(arg)


def _expand_glob(pattern: str, overlaps: _Overlaps) -> Iterator[tuple[str, int]]:
    """A glob's matches, a directory matched walked, less what another argument reads (a folder
    named, or a path named or globbed before) and what the glob reads itself by walking a
    directory above a match (``'logs/**/*'`` names ``logs/a`` and ``logs/a/b.log``)."""
    own = Pattern(pattern)
    for match in _glob(pattern):
        if overlaps.under_root(match) or overlaps.named(match) or \
                overlaps.globbed(match, own if own.deep else None):
            continue
        info = _stat(match)  # one system call for a file matched (there were three)
        if info is None or not S_ISDIR(info.st_mode):
            yield match, -1 if info is None else info.st_size
        elif os.path.islink(match):
            yield match, 0
        else:
            for path, size in _walk_dir(match, overlaps.is_root if overlaps.roots else None):
                if not (overlaps.named(path) or overlaps.globbed(path)):
                    yield path, size
    overlaps.globs.append(own)


class _Overlaps:
    """Which arguments (and glob matches) another argument already covers: the same path again,
    a path under a folder named as an argument (that folder's walk reads it), or a path that an
    earlier glob reads. Paths are compared resolved (a link to a folder is that folder) where a
    folder is named; else as written, normalized, so a long list of files costs no system call
    each. Only the arguments are remembered, never a glob's matches (it may match a million)."""

    def __init__(self, paths: list[str]) -> None:
        self.roots = {os.path.realpath(p) for p in paths if os.path.isdir(p)}
        self.inodes = {_inode(p) for p in self.roots}
        self.done: set[str] = set()
        self.names: set[str] = set()  # the last part of each key in done: a cheap test first
        self.globs: list[Pattern] = []  # the glob arguments expanded so far
        self._folders: dict[str, str] = {}  # directories made absolute, and resolved: kept a while
        self._real: dict[str, str] = {}

    def seen(self, arg: str) -> bool:
        """Whether an argument is covered (remembered: the command line bounds how many)."""
        key = self._key(arg)
        if key in self.done:
            return True
        self.done.add(key)
        self.names.add(os.path.basename(key))
        return self._in_root(key) and os.path.lexists(arg)  # a missing path keeps its row

    def named(self, path: str) -> bool:
        """Whether a glob's match (or a file under one) was named as an argument before."""
        return os.path.basename(path) in self.names and self._key(path) in self.done

    def globbed(self, path: str, own: Pattern | None = None) -> bool:
        """Whether an earlier glob reads ``path``, or ``own`` (the glob that matched it) reads it
        by walking a directory above it."""
        if not self.globs and own is None:
            return False
        head, name = os.path.split(path)
        folder = _cached(self._folders, head, os.path.abspath)
        if own is not None and own.dir_state(folder)[1]:
            return True
        is_dir = partial(os.path.isdir, path)  # asked only where a part wants a directory
        return any(g.covers(folder, name, g.dir_state(folder), is_dir) for g in self.globs)

    def under_root(self, match: str) -> bool:
        """Whether a glob's match is a folder named as an argument, or lies under one (not
        remembered: a glob may match a million files). A link matched is where it lies, not
        where it leads."""
        if not self.roots:
            return False
        key = self._lies(match)
        return key in self.roots or self._in_root(key)

    def is_root(self, entry: os.DirEntry) -> bool:
        """Whether a directory met in a glob's walk is a folder named (left to its own walk)."""
        return entry.inode() in self.inodes and os.path.realpath(entry.path) in self.roots

    def _key(self, path: str) -> str:
        """Where a folder is named, a folder (or a link to one) resolved, anything else where it
        lies (a link to a file is a source of its own, as in a walk); else the path as written."""
        if not self.roots:
            return os.path.normpath(os.path.abspath(path))
        return os.path.realpath(path) if os.path.isdir(path) else self._lies(path)

    def _lies(self, path: str) -> str:
        head, name = os.path.split(path)
        return os.path.join(_cached(self._real, head, os.path.realpath), name)

    def _in_root(self, key: str) -> bool:
        parent = os.path.dirname(key)
        while parent != key:
            if parent in self.roots:
                return True
            key, parent = parent, os.path.dirname(parent)
        return False


def _cached(cache: dict[str, str], head: str, how: Callable[[str], str]) -> str:
    """``how(head)``, kept (a glob's matches come a directory at a time), ``CACHED_DIRS`` at most."""
    done = cache.get(head)
    if done is None:
        if len(cache) > CACHED_DIRS:
            cache.clear()
        done = cache[head] = how(head or os.curdir)
    return done


def _inode(path: str) -> int:
    try:
        return os.stat(path).st_ino
    except OSError:
        return -1


def _size(path: str) -> int:
    info = _stat(path)
    return -1 if info is None else info.st_size


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


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
