"""A glob argument's parts, and the test of one path against them, with the meaning that
``walk._glob`` gives them: ``**`` crosses only directories that are not symlinks and not hidden,
a wildcard names a hidden entry only when it starts with a dot itself, and a trailing ``**``
names its directory alone (the walk that follows reads what is under it).

``Pattern.covers`` says whether a glob argument's expansion reads a path (the glob names it, or
a directory above it that the glob names and the walk enters), so that a later argument can leave
the path to it without remembering any of the glob's matches. Paths are compared as written,
made absolute: one reached through a link by one argument and by its real name by another is
not recognised.
"""
from __future__ import annotations

import fnmatch
import os
import re
from typing import Callable

GLOB_CHARS = set("*?[")
NOTHING: frozenset[int] = frozenset()
#: how many directories a pattern remembers before it starts again (memory bounded)
CACHED_DIRS = 4096

#: what a pattern knows of a directory: the parts it may stand at there (by index), and whether
#: the directory lies under a match that the walk reads
DirState = tuple[frozenset[int], bool]


def split(pattern: str) -> tuple[str, list[str]]:
    """The literal directory before the first wildcard part, and the parts from there on (empty
    parts and a ``**`` right after another dropped)."""
    parts = pattern.split(os.sep)
    first = next(i for i, part in enumerate(parts) if GLOB_CHARS & set(part))
    base = os.sep.join(parts[:first]) or (os.sep if first else "")
    rest: list[str] = []
    for part in parts[first:]:
        if part and not (part == "**" and rest and rest[-1] == "**"):
            rest.append(part)
    return base, rest


def matcher(part: str) -> "re.Pattern[str]":
    return re.compile(fnmatch.translate(part))


def visible(name: str, part: str) -> bool:
    """A wildcard matches a hidden name only when it starts with a dot itself (as glob does)."""
    return not name.startswith(".") or part.startswith(".")


class Pattern:
    """One glob argument as a test of paths (``covers``), one directory at a time: what is known
    of a directory is kept (``CACHED_DIRS`` of them), so the files of one directory cost one
    wildcard match each."""

    def __init__(self, pattern: str) -> None:
        base, self.rest = split(pattern)
        self.base = os.path.abspath(base or os.curdir)
        self.under = self.base if self.base.endswith(os.sep) else self.base + os.sep
        self.rx = [matcher(p) if p != "**" and GLOB_CHARS & set(p) else None for p in self.rest]
        self.end = len(self.rest)
        # a '.' or '..' part names a path that made absolute is spelled otherwise: no test of it
        self.usable = not {os.curdir, os.pardir} & set(self.rest)
        # only a '**' before the last part names paths of more than one depth, one maybe under another
        self.deep = self.usable and "**" in self.rest[:-1]
        self.bare = self.usable and self.end in self._closure({0})  # 'logs/**' names logs itself
        self._dirs: dict[str, DirState] = {}

    def covers(self, folder: str, name: str, state: DirState, is_dir: Callable[[], bool]) -> bool:
        """Whether the glob's expansion reads ``folder``/``name`` (``folder`` absolute, ``state``
        its ``dir_state``; ``is_dir`` is asked only where a part wants a directory)."""
        states, read = state
        if read:
            return True
        if states:
            return self.end in self._step(states, name, is_dir, real_dir=False)
        return self.bare and os.path.join(folder, name) == self.base

    def dir_state(self, folder: str) -> DirState:
        """What the pattern knows of ``folder`` (absolute, normalized): from its base down, one
        part at a time, each directory's own answer kept."""
        if not self.usable or not (folder == self.base or folder.startswith(self.under)):
            return NOTHING, False
        if len(self._dirs) > CACHED_DIRS:
            self._dirs.clear()
        below: list[str] = []
        while folder not in self._dirs and folder != self.base:
            below.append(folder)
            folder = os.path.dirname(folder)
        state = self._dirs.get(folder)
        if state is None:  # the base: the glob names it only as a trailing '**' does
            state = self._dirs[folder] = (self._closure({0}), self.bare and _real_dir(folder))
        for path in reversed(below):
            real = not os.path.islink(path)
            states = self._step(state[0], os.path.basename(path), _yes, real)
            state = self._dirs[path] = (states, real and (state[1] or self.end in states))
        return state

    def _step(self, states: frozenset[int], name: str, is_dir: Callable[[], bool], real_dir: bool) -> frozenset[int]:
        """The parts that may follow once ``name`` is read (``real_dir``: a directory, not a link,
        that a non-trailing ``**`` may cross)."""
        out: set[int] = set()
        for i in states:
            if i == self.end:
                continue
            part, last, rx = self.rest[i], i == self.end - 1, self.rx[i]
            if part == "**":
                if not last and real_dir and visible(name, ""):
                    out.add(i)
            elif (rx.match(name) and visible(name, part) if rx else name == part) and (last or is_dir()):
                out.add(i + 1)
        return self._closure(out)

    def _closure(self, states: set[int]) -> frozenset[int]:
        """A ``**`` may stand for no directory at all."""
        return frozenset(states | {i + 1 for i in states if i < self.end and self.rest[i] == "**"})


def _yes() -> bool:
    return True


def _real_dir(path: str) -> bool:
    return os.path.isdir(path) and not os.path.islink(path)
