"""Where a log came from, read off its name and its first and last lines.

Slurm output files (``slurm-<jobid>[_<task>].out``, ``SLURM_JOB_ID=``, ``SLURMD_NODENAME=``,
``slurmstepd`` lines), Kubernetes pod log trees (``<namespace>_<pod>_<uid>/<container>/N.log``)
and CRI lines, kernel logs (``dmesg``, ``dmesg -T``, ``journalctl -k``) and DDP ``[rank N]``.
"""
from __future__ import annotations

import re
from functools import lru_cache

from ..correlate import stamps
from .clock import Clock

SLURM_NAME_RE = re.compile(r"slurm-(?P<job>\d+)(?:_(?P<task>\d+))?\.(?:out|err|log)\b")
POD_DIR_RE = re.compile(r"^(?P<ns>[a-z0-9][-a-z0-9]*)_(?P<pod>[a-z0-9][-.a-z0-9]*)_(?P<uid>[0-9a-f-]{8,})$")
RANK_NAME_RE = re.compile(r"(?:^|[_.-])rank[_-]?(?P<rank>\d+)(?:[_.-]|$)", re.I)
KERNEL_NAME_RE = re.compile(r"^(?:dmesg|kern(?:el)?|journal(?:ctl)?|messages|syslog)(?:\.log)?$"
                            r"|(?:^|[_.-])(?:dmesg|kern(?:el)?|journal(?:ctl)?)(?:[_.-]|$)", re.I)
KERNEL_NODE_RE = re.compile(r"^(?:dmesg|kern(?:el)?|journal(?:ctl)?|messages|syslog)[-_.](?P<node>[A-Za-z0-9][\w.-]*?)"
                            r"(?:\.(?:log|txt|out))?$|^(?P<node2>[A-Za-z0-9][\w.-]*?)[-_.](?:dmesg|kern(?:el)?|journal(?:ctl)?)"
                            r"(?:\.(?:log|txt|out))?$", re.I)
#: a rotated or compressed log's last suffixes (logrotate's ``.1``, ``.2.gz``, dateext's
#: ``-20261130``), left off before a kernel log's name is read for its node
ROTATED_RE = re.compile(r"(?:\.\d+|-\d{8})?(?:\.(?:gz|bz2|xz|zst))?$")
#: what follows ``dmesg.`` in a name without a node: its extension (``dmesg.txt``, ``journalctl.out``)
EXTENSIONS = {"log", "txt", "out", "err"}
GENERIC_DIRS = {"", ".", "log", "logs", "var", "kernel", "dmesg", "pods", "nodes", "tmp", "data", "archive"}
ENV_RE = {
    "job": re.compile(rb"SLURM_(?:ARRAY_)?JOB_ID=(\d+)"),
    "task": re.compile(rb"SLURM_ARRAY_TASK_ID=(\d+)"),
    "node": re.compile(rb"SLURMD_NODENAME=([\w.-]+)"),
    "rank": re.compile(rb"\[rank ?(\d+)\]|(?<![\w])RANK=(\d+)"),
}
ENV_GATE = {"job": (b"SLURM_",), "task": (b"SLURM_ARRAY",), "node": (b"SLURMD_",), "rank": (b"[rank", b"RANK=")}
#: the two spellings of ``ENV_RE["rank"]``, each with its literal first: searched apart, the
#: earlier match is the one the alternation finds, and neither search crawls the block byte by byte
RANK_RES = (re.compile(rb"\[rank ?(\d+)\]"), re.compile(rb"RANK=(?<!\wRANK=)(\d+)"))
STEPD_RE = re.compile(rb"\*\*\* (?:JOB|STEP) (\d+)(?:\.\w+)? ON ([\w.-]+) ")
STEPD_GATE = b"*** "
#: every gate, longest first: one that holds another comes before it (see ``_present``)
GATES = tuple(sorted({g for gates in ENV_GATE.values() for g in gates} | {STEPD_GATE}, key=len, reverse=True))
#: a journal line's host: syslog's stamp, or ``journalctl -o short-iso``'s (what ``dllogscan slurm`` reads)
JOURNAL_RE = re.compile(rb"^(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?"
                        rb"(?:Z|[+-]\d\d:?\d\d)?) ([\w.-]+) kernel: ", re.M)
#: a kernel line's start, spelled from the line break before it (searched in ``b"\n" + block``):
#: the engine skips from one line break to the next instead of trying ``^`` at every byte; the
#: forms hold no line break, so each line counts once, as ``^`` with ``re.M`` would
KERNEL_LINE_RE = re.compile(rb"\n(?:\[ *\d+\.\d+\] |\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\] |"
                            rb"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ kernel: )")
CRI_LINE_RE = re.compile(rb"^\d{4}-\d\d-\d\dT[\d:.]+(?:Z|[+-]\d\d:\d\d) (?:stdout|stderr) [FP] ", re.M)


def name_parts(name: str) -> tuple[str, ...]:
    """``PurePosixPath(name).parts`` with backslashes read as slashes (empty and ``.`` parts
    dropped, a leading ``/`` or exactly two ``//`` kept as the root), without building a path:
    a third of ``from_name``'s time, which runs once per source."""
    text = name.replace("\\", "/")
    parts = [part for part in text.split("/") if part and part != "."]
    if text.startswith("/"):
        parts.insert(0, "//" if text.startswith("//") and not text.startswith("///") else "/")
    return tuple(parts)


def from_name(name: str) -> dict[str, str]:
    """Metadata in a path or archive member name."""
    meta: dict[str, str] = {}
    parts = name_parts(name)
    base = parts[-1] if parts else name
    m = SLURM_NAME_RE.search(base)
    if m:
        meta.update(kind="slurm", job=m.group("job"))
        if m.group("task"):
            meta["array_task"] = m.group("task")
    for i, part in enumerate(parts[:-1]):
        pm = POD_DIR_RE.match(part)
        if pm and i + 2 < len(parts) and re.fullmatch(r"\d+\.log(?:\.\d+)?(?:\.gz)?", parts[-1]):
            meta.update(kind="pod", namespace=pm.group("ns"), pod=pm.group("pod"), container=parts[i + 1])
        if part in ("var", "pods", "nodes") and i > 0 and parts[i - 1] not in GENERIC_DIRS and part != "nodes":
            meta.setdefault("node", parts[i - 1])
        if part == "nodes" and i + 1 < len(parts) - 1:
            meta.setdefault("node", parts[i + 1])
    rm = RANK_NAME_RE.search(base)
    if rm:
        meta["rank"] = rm.group("rank")
    if KERNEL_NAME_RE.search(base):
        meta["kind"] = "kernel"
        km = KERNEL_NODE_RE.match(ROTATED_RE.sub("", base, count=1))
        node = km and (km.group("node") or km.group("node2"))
        if node and len(node) > 1 and node.lower() not in GENERIC_DIRS | EXTENSIONS:  # -k: an option
            meta["node"] = node
    return meta


def folder_node(meta: dict[str, str], name: str) -> dict[str, str]:
    """``meta`` with a kernel log's folder as its node (``gpu03/kern.log``) where neither its name
    nor its lines named one: a guess that a journal's own host names (``gpu07 kernel:``) outrank."""
    parts = name_parts(name)
    if ("node" in meta or len(parts) < 2 or parts[-2].lower() in GENERIC_DIRS
            or not KERNEL_NAME_RE.search(parts[-1])):
        return meta
    return {**meta, "node": parts[-2]}


def from_content(head: bytes, tail: bytes, year: int | None = None, clock: Clock | None = None,
                 whole: bool = False) -> dict[str, str]:
    """Metadata in the first and last bytes of a log: Slurm variables, slurmstepd, journal host,
    the kind of log, and the first and last timestamps seen (read by ``clock``, the log's: by
    default one over ``head`` with ``year`` for a stamp without one, ``batch/clock.py``).
    ``whole``: ``tail`` starts at the log's first byte, so its first line is no piece of one."""
    meta: dict[str, str] = {}
    # searched as one block ``head + b"\n" + tail`` would be, without making it: no pattern or
    # gate spans a line break, so the first match is the head's, else the tail's
    blocks = (head,) if tail == head else (head, tail)
    present = _present(blocks)
    for key, rx in ENV_RE.items():
        if not any(gate in present for gate in ENV_GATE[key]):
            continue
        m = _in_blocks(blocks, lambda block: _first(block, RANK_RES) if key == "rank" else rx.search(block))
        if m:
            meta[key] = next(g for g in m.groups() if g).decode()
    m = _in_blocks(blocks, STEPD_RE.search) if STEPD_GATE in present else None
    if m:
        meta.setdefault("job", m.group(1).decode())
        meta.setdefault("node", m.group(2).decode())
    journal = JOURNAL_RE.search(head) if b" kernel: " in head else None
    if journal:
        meta["node"] = journal.group(1).decode()
    start = head[:4096]
    # each form of a kernel line starts a line with "[" or holds " kernel: "; a CRI line names its stream
    if (start[:1] == b"[" or b"\n[" in start or b" kernel: " in start) and len(KERNEL_LINE_RE.findall(b"\n" + start)) >= 2:
        meta["kind"] = "kernel"
    elif (b" stdout " in start or b" stderr " in start) and CRI_LINE_RE.search(start):
        meta["kind"] = "pod"
    elif "job" in meta:
        meta["kind"] = "slurm"
    # many progress logs hold no clock at all: one search over the block, not one per line
    clock = clock or Clock(head, year)
    first = _first_time(head, clock) if stamps.may_hold(head) else None
    last = _last_time(tail, clock, whole) if stamps.may_hold(tail) else None
    if first:
        meta["first_time"] = first
    if last:
        meta["last_time"] = last
    return meta


def _first(data: bytes, patterns) -> "re.Match[bytes] | None":
    """The leftmost match of any of ``patterns`` (the first pattern's on a tie)."""
    best = None
    for rx in patterns:
        m = rx.search(data)
        if m and (best is None or m.start() < best.start()):
            best = m
    return best


@lru_cache(maxsize=1)
def _gate_searcher():
    """A leftmost-first Aho-Corasick search over ``GATES`` (the library's vectorised literal
    search: one pass instead of one ``in`` per gate), or None where ahocorasick-rs is missing."""
    try:
        import ahocorasick_rs  # noqa: PLC0415 - the plain install's prefilter; optional here
    except ImportError:
        return None
    return ahocorasick_rs.BytesAhoCorasick(list(GATES), matchkind=ahocorasick_rs.MATCHKIND_LEFTMOST_FIRST)


def _present(blocks: tuple[bytes, ...]) -> set[bytes]:
    """The gates found in any of ``blocks``. A leftmost-first search reports every occurrence
    that overlaps no other: no gate's end is another's start, and where two start at one offset
    the longer, listed first, is reported and holds the shorter (``tests/test_batch_layouts.py``
    checks both of ``GATES``)."""
    searcher = _gate_searcher()
    if searcher is None:
        return {gate for gate in GATES if any(gate in block for block in blocks)}
    found = {GATES[i] for block in blocks for i, _, _ in searcher.find_matches_as_indexes(block)}
    return found | {gate for gate in GATES for longer in found if gate in longer}


def _in_blocks(blocks: tuple[bytes, ...], search) -> "re.Match[bytes] | None":
    """The first block's match of ``search``, else the next one's."""
    for block in blocks:
        m = search(block)
        if m:
            return m
    return None


#: the bytes of a head or tail whose whole lines are tried for a timestamp before all of it is
#: split (a stamp is usually on the first or last lines)
EDGE_PIECE = 2048
#: the bytes of a line searched for its stamp
LINE_PIECE = 200


def _first_time(head: bytes, clock: Clock) -> str | None:
    """``_edge_time`` over the lines of ``head``: the whole lines of its first ``EDGE_PIECE``
    bytes first (a prefix's lines but its last are the block's first lines), then all of them."""
    if len(head) > EDGE_PIECE:
        stamp = _edge_time(head[:EDGE_PIECE].splitlines()[:-1], clock)
        if stamp:
            return stamp
    return _edge_time(head.splitlines(), clock)


def _last_time(tail: bytes, clock: Clock, whole: bool = False) -> str | None:
    """``_edge_time`` over the lines of ``tail`` from its end, its first (cut) line left out
    unless it is the only one or ``whole`` (the tail is the whole log): the whole lines of its
    last ``EDGE_PIECE`` bytes first."""
    if len(tail) > EDGE_PIECE:
        stamp = _edge_time(reversed(tail[-EDGE_PIECE:].splitlines()[1:]), clock)
        if stamp:
            return stamp
    lines = tail.splitlines()
    return _edge_time(reversed(lines if whole else lines[1:] or lines), clock)


def _edge_time(lines, clock: Clock, tries: int = 200) -> str | None:
    """The time of the first of ``lines`` (up to ``tries``) whose first ``LINE_PIECE`` bytes hold
    a stamp (the others cost one search of ``stamps.DATED_RE`` each)."""
    for i, line in enumerate(lines):
        if i >= tries:
            break
        if not stamps.DATED_RE.search(line, 0, LINE_PIECE):
            continue
        stamp = clock.time(line[:LINE_PIECE])
        if stamp:
            return stamp
    return None


def merge(name_meta: dict[str, str], content_meta: dict[str, str]) -> dict[str, str]:
    """Names decide the ids; contents fill what names lack; kernel-looking contents make a kernel log."""
    out = {**content_meta, **name_meta}
    if content_meta.get("kind") == "kernel":
        out["kind"] = "kernel"
    return out
