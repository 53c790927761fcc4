"""Wire a batch: walk the paths, run the chunks on an engine, hold back the few records the
cross-file pass may change, write everything else as it arrives."""
from __future__ import annotations

import itertools
import os
from contextlib import closing
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from . import engines, walk
from ..core.errors import UsageError
from .archives import is_link
from .crossfile import CrossFile, pending
from .progress import Progress
from .worker import Config, Record, database


@dataclass
class Stats:
    sources: int = 0
    found: int = 0
    errors: int = 0
    bytes: int = 0
    seconds: float = 0.0
    links: int = 0  # rows of links not followed, counted apart from the errors


def without(work: Iterable[list[str]], skip: Iterable[str], left_out: list[str] | None = None) -> Iterator[list[str]]:
    """The chunks of ``work`` without the files named in ``skip`` (the batch's own output file,
    which may sit in a folder being scanned), known by their identity (device and inode, as a
    link or another name of it has too): one ``stat`` per path, where a real path costs one per
    folder of it (90 ms over 3 000 logs, in the process that gathers the rows). The outputs are
    looked at again for each chunk: a Parquet file appears with its first row group. The paths
    left out are added to ``left_out``."""
    skip = list(skip)
    for chunk in work:
        outputs = {ident for ident in map(_identity, skip) if ident is not None}
        kept = [p for p in chunk if _identity(p) not in outputs] if outputs else chunk
        if left_out is not None and len(kept) < len(chunk):
            left_out.extend(p for p in chunk if p not in kept)
        if kept:
            yield kept


def _identity(path: str) -> tuple[int, int] | None:
    """The file's device and inode (a link's target's), or None when it cannot be looked at."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def inputs(paths: list[str], skip: Iterable[str] = ()) -> Iterator[list[str]]:
    """The chunks of work under ``paths``, the first found before any worker starts: no file at
    all (a glob that matches nothing, empty folders) is a ``UsageError``, as a missing file is
    for a scan, and so is finding only the output file. A path named that does not exist is
    still a row of its own (``walk.expand``)."""
    skip, left_out = list(skip), []
    overwritten = _linked_input(paths, skip)
    if overwritten is not None:
        raise UsageError(overwritten)
    work = without(walk.chunks(paths), skip, left_out)
    first = next(work, None)
    if first is None and left_out:
        raise UsageError(_only_output(left_out, skip))
    if first is None:
        raise UsageError(f"no input files found in {', '.join(paths) or '(no path)'}")
    return itertools.chain([first], work)


def _linked_input(paths: list[str], skip: list[str]) -> str | None:
    """Why the batch must not start when an output is a symbolic link to a file named as an input
    or under a folder named so: writing the rows would replace that log, which the batch leaves
    out as its own output (``without``). Checked before any row is written; ``None`` when none is."""
    for out in skip:
        if not (os.path.islink(out) and os.path.isfile(out)):
            continue
        target = os.path.realpath(out)
        for path in paths:
            real = os.path.realpath(path)
            if target == real or (os.path.isdir(path) and target.startswith(os.path.join(real, ""))):
                return f"--out {out} (a link to {target}): is an input too ({path}); name another file"
    return None


def _only_output(left_out: list[str], skip: list[str]) -> str:
    """What a batch says when every file it found is its own output (before session 63: "no
    input files found")."""
    out = next((s for s in skip if _identity(s) == _identity(left_out[0])), skip[0])
    found = "the only input" if len(left_out) == 1 else "every input found"
    return f"--out {out}: {found} ({', '.join(left_out)}) is this file; nothing else to scan; name another file"


def run_batch(paths: Iterable[str], sink: Callable[[Record], None], config: Config | None = None,
              engine: str = "local", jobs: int | None = None, scheduler: str | None = None,
              progress: bool | None = None, skip: Iterable[str] = ()) -> Stats:
    """Scan every source under ``paths``, passing each finished record to ``sink``; the files in
    ``skip`` (the output being written) are not sources. ``UsageError`` when there is no file."""
    config = config or Config()
    cross = CrossFile(database(config))  # loads (and checks) the signatures before any work
    work = inputs(list(paths), skip)
    held: list[Record] = []
    with Progress(progress) as bar:
        try:
            # closed on any way out (a Ctrl-C while a row is written included): the engine ends
            # its workers then, whatever else still holds the generator
            with closing(engines.run(work, config, engine, jobs, scheduler)) as records:
                for rec in records:
                    cross.add(rec)
                    bar.advance(bool(rec.result.diagnoses), bool(rec.result.error), rec.result.bytes_read,
                                is_link(rec.result.error))
                    if pending(rec):
                        held.append(rec)
                    else:
                        sink(rec)
            held = [cross.resolve(r) for r in held]
        finally:
            for rec in held:
                sink(rec)
    return Stats(bar.files, bar.failures, bar.errors, bar.bytes, bar.seconds, bar.links)
