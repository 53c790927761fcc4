"""Attach ranked fixes to each diagnosis, with the facts found filled into their commands."""
from __future__ import annotations

import dataclasses
import math
import re

from ..core.models import Diagnosis, Fix
from ..signatures.database import PLACEHOLDER_RE, Database, FixEntry
from .platform import (WINDOWS_START, default_start, kept, macos_shown, namespaced, platforms_shown, settled,
                       windows_shown)
from .versions import missing_options, needs_note

SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGTP]?)(i?B?)?\s*$", re.IGNORECASE)
UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}
DEFAULT_PREFETCH = 2
SHM_HEADROOM = 1.5  # suggest half as much again as the estimated demand
DEMAND_NOTE = "Shared-memory demand estimate:"
#: what the advice raises /dev/shm to when the log does not tell the demand (``{shm_suggest|8g}``)
DEFAULT_SUGGEST = "8g"
#: a /dev/shm that ``df`` shows at least this full (Use%) is not ample, whatever its size
FULL_PERCENT = 90
#: ample: at least this many times what the advice would raise /dev/shm to
AMPLE_FACTOR = 2
AMPLE_NOTE = "Ample /dev/shm:"
#: the open-files limit the advice sets (``ulimit -n 65536`` in ``signatures/fixes.toml``)
FD_TARGET = 65536
FD_NOTE = "Ample open-files limit:"
#: the /dev/shm a Docker container or a Kubernetes pod (containerd) gets unless raised
RUNTIME_DEFAULT_SHM = 64 << 20
SMALL_NOTE = "Small /dev/shm:"
#: what a title gains where a situation contradicts the cause it names (or points past it)
SITUATION_TITLES = {"shm-ample": " (but the /dev/shm shown looks ample)",
                    "fd-limit-ample": " (but the open-files limit shown is high)",
                    "shm-small": " (and the /dev/shm shown is small)",
                    "windows": "", "macos": "", "keras": "", "mxnet": ""}
#: a class-D verdict that stands on these signatures is about another framework's loader, whose
#: workers fork as the DataLoader's do: its fixes are that framework's (``when`` in fixes.toml)
LOADER_SITUATIONS = {"D.cuda-fork.keras-multiprocessing": "keras", "D.cuda-fork.mxnet-init-error": "mxnet"}
#: the worker exit whose details were lost (``DataLoader worker (pid N) exited unexpectedly with exit code 1``)
EXIT_CODE_ID = "B.crash.exit-code"
KERAS_NOTE = "Keras:"
MXNET_NOTE = "MXNet:"
#: a bare worker exit's title names the first check; Windows has no OOM killer, so there it names
#: the commit limit instead (``situation_title``)
OOM_FIRST = ": check the OOM killer first)"
WINDOWS_FIRST = ": on Windows, check the commit limit first)"
MACOS_FIRST = ": on a Mac, check memory pressure and swap first)"
#: class A's title names /dev/shm, which Windows and a Mac do not have: there it names shared memory
SHM_TOO_SMALL = "/dev/shm too small for the batches in flight"
SHM_SHORT = "shared memory could not hold the batches in flight"
WINDOWS_NOTE = "Windows:"
MACOS_NOTE = "macOS:"
MACOS_SIGNAL_RE = re.compile(r"[A-Z][A-Za-z/ ]{1,40}: \d{1,3}")  # fact.macos-signal's value: "Killed: 9"
START_METHOD_NOTE = "Start method:"


def parse_size(text: str) -> int | None:
    """``64M`` / ``8g`` / ``1.5GiB`` / ``67108864`` -> bytes."""
    m = SIZE_RE.match(text or "")
    if not m:
        return None
    return int(float(m.group(1)) * UNITS[m.group(2).upper()])


def human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover


def batch_bytes_from_shape(shape: str, itemsize: int = 4) -> int | None:
    """``64, 3, 224, 224`` -> bytes of one float32 batch tensor."""
    dims = [int(d) for d in re.findall(r"\d+", shape or "")]
    if not dims:
        return None
    total = itemsize
    for d in dims:
        total *= d
    return total


def fewer_workers(facts: dict[str, str]) -> dict[str, str]:
    """``{fewer_workers}``: half the worker count the text shows (at least 1), for the fixes that
    lower it; nothing where the count is unknown or 0 (the fix's own default stands)."""
    workers = facts.get("num_workers", "")
    if not workers.isdigit() or int(workers) < 1:
        return {}
    return {"fewer_workers": str(max(1, int(workers) // 2))}


#: how a made setting reads in a fix's title (default ``fact=value``)
SETTING_WORDS = {"start_method": "the {value} start method"}


def already_set(fix: FixEntry, facts: dict[str, str]) -> str | None:
    """The setting ``fix`` makes, as the text shows it already made (``persistent_workers=True``);
    None where the fix makes no such setting or the text does not show it."""
    if not fix.already:
        return None
    for fact, values in fix.already:
        if facts.get(fact, "").lower() not in values:
            return None
    return ", ".join(SETTING_WORDS.get(fact, "{fact}={value}").format(fact=fact, value=facts[fact])
                     for fact, _ in fix.already)


def already_note(fix: FixEntry, facts: dict[str, str]) -> str:
    """What a fix's title gains where the text already shows its setting made."""
    made = already_set(fix, facts)
    return "" if made is None else f" (the text already shows {made}: it did not prevent this)"


def fill_values(facts: dict[str, str]) -> dict[str, str]:
    """What the fixes are filled with: the facts, less a worker count of 0, plus (not shown as a
    fact) the lower worker count. A text about a worker failure that shows only ``num_workers=0``
    shows the reporter's workaround, not the failing setting, and a fix that sets up workers with
    0 of them is code PyTorch refuses (spawn, persistent_workers: ``... needs num_workers > 0``)
    or that does nothing (a timeout, which only the workers' queue reads): such a fix shows
    ``<num_workers>``, or its default. Where no worker's pid is known, ``{pid}`` reads the job's own
    (``job_pid``, which ``watch`` knows), not shown as a ``pid`` fact."""
    values = {**facts, **fewer_workers(facts)}
    if "pid" not in values and "job_pid" in values:  # no worker's pid: the job's own (a watched stall)
        values["pid"] = values["job_pid"]
    if "num_workers" in values and not values["num_workers"].strip("0"):
        del values["num_workers"]
    return values


def shm_demand(facts: dict[str, str]) -> dict[str, str]:
    """``num_workers x prefetch_factor x batch_bytes`` when the log reveals them (a printed batch
    shape counts as float32)."""
    out: dict[str, str] = {}
    workers = facts.get("num_workers")
    batch_bytes = parse_size(facts.get("batch_bytes", "")) or batch_bytes_from_shape(facts.get("batch_shape", ""))
    if not (workers and workers.isdigit() and int(workers) > 0 and batch_bytes):
        return out
    prefetch = facts.get("prefetch_factor") or str(DEFAULT_PREFETCH)
    if not prefetch.isdigit():
        return out
    demand = int(workers) * int(prefetch) * batch_bytes
    out.setdefault("batch_bytes", human(batch_bytes))
    gib = max(1, math.ceil(demand * SHM_HEADROOM / (1 << 30)))
    out["shm_suggest"], out["shm_suggest_k8s"] = f"{gib}g", f"{gib}Gi"
    out["shm_demand"] = human(demand)
    out["shm_demand_bytes"] = str(demand)
    shm = parse_size(facts.get("shm_size", ""))
    if shm:
        out["shm_ratio"] = f"{demand / shm:.1f}"
    return out


def situations(diagnosis: Diagnosis, facts: dict[str, str]) -> frozenset[str]:
    """What the facts show beyond the class, where the usual first fix would change nothing:
    ``shm-ample`` for class A when the log shows a /dev/shm at least twice what the advice would
    raise it to (the demand estimate's size, else 8g) and ``df`` did not show it full;
    ``fd-limit-ample`` for class C when ``ulimit -a`` shows an open-files limit no lower than the
    one the advice would set; ``shm-small`` for a worker death of class B whose text names no cause
    when the log shows a small or full /dev/shm (``shm_small``), where the usual first check (the
    OOM killer) is not the likeliest; ``windows`` for class A or such a death on Windows, ``macos``
    for such a death or a SIGKILL on a Mac (neither keeps an OOM killer log); ``keras`` or ``mxnet``
    for class D standing on that framework's loader or its wording of the error
    (``LOADER_SITUATIONS``), and ``keras`` for class D or E where the text runs Keras's workers as
    processes (``keras_workers``)."""
    if diagnosis.cls == "D":
        shown = {s for sig, s in LOADER_SITUATIONS.items() if sig in diagnosis.signatures}
        return frozenset(shown | ({"keras"} if keras_workers(facts) else set()))
    if diagnosis.cls == "E" and keras_workers(facts):
        return frozenset({"keras"})
    if diagnosis.cls == "A" and windows_shown(facts):
        return frozenset({"windows"})
    if diagnosis.cls == "A" and macos_shown(facts):
        return frozenset({"macos"})
    if diagnosis.cls == "A":
        size, target = _shm_size_and_target(facts)
        ample = size and target and size >= AMPLE_FACTOR * target and not _shm_full(facts)
        return frozenset({"shm-ample"}) if ample else frozenset()
    if diagnosis.cls == "C":
        limit = facts.get("open_files", "")
        ample = limit == "unlimited" or (limit.isdigit() and int(limit) >= FD_TARGET)
        return frozenset({"fd-limit-ample"}) if ample else frozenset()
    if diagnosis.cls == "B" and unexplained_exit(diagnosis, facts) and windows_shown(facts):
        return frozenset({"windows"})
    if diagnosis.cls == "B" and (unexplained_exit(diagnosis, facts) or diagnosis.subclass == "oom") \
            and macos_shown(facts):
        return frozenset({"macos"})
    if diagnosis.cls == "B" and unexplained_exit(diagnosis, facts) and shm_small(facts):
        return frozenset({"shm-small"})
    return frozenset()


def keras_workers(facts: dict[str, str]) -> bool:
    """The text passes ``use_multiprocessing=True`` (``fact.keras-multiprocessing``): Keras runs its
    Sequence or generator in forked processes, not threads."""
    return facts.get("use_multiprocessing") == "True"


def unexplained_exit(diagnosis: Diagnosis, facts: dict[str, str]) -> bool:
    """A worker death whose text names no cause: a bare "exited unexpectedly", or an exit code
    whose details were lost, its code shown or cut off (not a segfault or an exception with its
    traceback)."""
    return diagnosis.subclass == "oom-suspected" or (
        diagnosis.subclass == "crash" and ("exit_code" in facts or EXIT_CODE_ID in diagnosis.signatures))


def shm_small(facts: dict[str, str]) -> bool:
    """The /dev/shm the log shows is the runtime default (64 MiB) or less, over ``FULL_PERCENT``
    full, or smaller than the demand estimate."""
    if _shm_full(facts):
        return True
    size = parse_size(facts.get("shm_size", ""))
    demand = facts.get("shm_demand_bytes", "")
    return bool(size) and (size <= RUNTIME_DEFAULT_SHM or (demand.isdigit() and size < int(demand)))


def above_current(facts: dict[str, str]) -> dict[str, str]:
    """A suggested /dev/shm never at or below the one the log shows: twice that instead."""
    size, target = _shm_size_and_target(facts)
    if not (size and target and target <= size):
        return {}
    gib = max(1, math.ceil(2 * size / (1 << 30)))
    return {"shm_suggest": f"{gib}g", "shm_suggest_k8s": f"{gib}Gi"}


def _shm_full(facts: dict[str, str]) -> bool:
    """``df`` showed /dev/shm at least ``FULL_PERCENT`` used."""
    use = facts.get("shm_use", "")
    return use.isdigit() and int(use) >= FULL_PERCENT


def _shm_size_and_target(facts: dict[str, str]) -> tuple[int | None, int | None]:
    return parse_size(facts.get("shm_size", "")), parse_size(facts.get("shm_suggest") or DEFAULT_SUGGEST)


def situation_notes(shown: frozenset[str], facts: dict[str, str], cls: str = "",
                    start: tuple[str, str] | None = None) -> tuple[str, ...]:
    """One sentence per situation shown: the fact, and why the fixes below differ (``start``: how
    the workers started, ``default_start``)."""
    notes = []
    use = f", {facts['shm_use']}% used when df ran" if facts.get("shm_use") else ""
    if "shm-ample" in shown:
        notes.append(f"{AMPLE_NOTE} {facts['shm_size']} here{use}, at least twice the "
                     f"{facts.get('shm_suggest') or DEFAULT_SUGGEST} the usual advice would raise it to, so its size "
                     "is an unlikely cause. The fixes below check where and when it was measured, then the other "
                     "causes of SIGBUS.")
    if "shm-small" in shown:
        notes.append(f"{SMALL_NOTE} {facts.get('shm_size', '?')} here{use}; a container or pod gets 64M unless "
                     "raised. Workers hand every batch to the main process through /dev/shm, and a worker "
                     "that cannot write there dies, with a bus error or with no message at all: check it "
                     "before the other causes of a worker's death.")
    if "windows" in shown:
        shown_by = windows_evidence(facts["windows"])
        what = ("Shared batches live in file mappings that count against the commit limit (RAM plus the paging "
                "file)." if cls == "A" else
                "There a worker dies when the commit limit (RAM plus the paging file) runs out, each spawned "
                "worker committing its own copy of torch, or on an error its own traceback prints above this line.")
        notes.append(f"{WINDOWS_NOTE} the text shows a Windows machine ({shown_by}), which has no OOM killer "
                     f"and no /dev/shm. {what} The fixes below check that; the Linux commands are left out.")
    if "macos" in shown:
        spawned = ", and each spawned worker loads its own copy of torch" if start and start[0] == "spawn" else ""
        what = ("PyTorch's one sharing strategy there, file_system, keeps each batch a worker hands over in a named "
                "shared-memory object, backed like the rest of memory by RAM, compression and swap." if cls == "A" else
                f"As memory runs short it compresses and swaps{spawned}; a worker's own error prints above this line.")
        notes.append(f"{MACOS_NOTE} the text shows a Mac ({macos_evidence(facts['macos'])}), which keeps no OOM "
                     f"killer log and has no /proc or /dev/shm. {what} The fixes below check that; the Linux commands "
                     "are left out.")
    if "keras" in shown:
        what = ("a forked worker cannot use the CUDA (or TensorFlow GPU) state it inherited" if cls == "D" else
                "a forked worker can wait forever on a lock that one of the parent's threads (TensorFlow runs "
                "pools of them) held at the fork, and Keras waits forever for a batch whose worker died")
        notes.append(f"{KERAS_NOTE} the text runs Keras's loader with use_multiprocessing, whose Sequence or "
                     f"generator workers are forked processes like the DataLoader's: {what}. The fixes below are "
                     "Keras's.")
    if "mxnet" in shown:
        notes.append(f"{MXNET_NOTE} the CUDA error is MXNet's (mshadow's check on cudaSuccess) beside a data "
                     "loader's words: the gluon DataLoader's workers are forked processes, which cannot use the "
                     "CUDA state they inherited. The fixes below are MXNet's.")
    if "fd-limit-ample" in shown:
        notes.append(f"{FD_NOTE} ulimit shows {facts['open_files']} open files, no lower than the {FD_TARGET} the "
                     "usual advice would raise it to, so raising it again is unlikely to help. The fixes below look "
                     "for what holds the descriptors.")
    return tuple(notes)


def start_method_note(cls: str, start: tuple[str, str] | None, dropped: bool) -> tuple[str, ...]:
    """Where the workers did not fork by a default (``default_start``): for another class than F,
    that a fix switching away from fork was left out, where one was (Windows' own note says why
    there); for a worker that could not start (class F) under Python 3.14's forkserver, how that
    default differs from fork."""
    forkserver_f = cls == "F" and start is not None and start[0] == "forkserver"
    if start is None or start[1] == WINDOWS_START or not (dropped or forkserver_f):
        return ()
    if forkserver_f:
        return (f"{START_METHOD_NOTE} the workers started with forkserver ({start[1]}). Like spawn, it "
                "pickles the dataset, collate_fn and worker_init_fn and re-imports the main module, so "
                "code that worked under fork on an older Python can fail here. "
                "multiprocessing_context='fork' brings fork back, with its hazards (CUDA initialised "
                "before the workers start, threads and locks).",)
    return (f"{START_METHOD_NOTE} the workers started with {start[0]} ({start[1]}), not fork: the fix that "
            "switches away from fork is left out.",)


def windows_evidence(value: str) -> str:
    """What showed Windows, from the fact's value: a drive letter (a frame's path), ``WinError``,
    or the ``Windows`` / ``win32`` of an environment report's line (``signatures/facts.toml``)."""
    if len(value) == 1:
        return f"a path on drive {value}:"
    if value == "WinError":
        return "a Windows error number"
    return "its environment report names the system"


def macos_evidence(value: str) -> str:
    """What showed a Mac, from the fact's value: a frame's folder, a signal named as macOS names it
    (``Killed: 9``) or the environment report."""
    if value.startswith("/") or value.endswith("Python.framework"):
        return f"a path under {value}"
    if MACOS_SIGNAL_RE.fullmatch(value):
        return f"the worker's signal is named as macOS names it, {value!r}"
    return "its environment report names the system"


def situation_title(title: str, shown: frozenset[str]) -> str:
    """``title`` saying which situations contradict it; advised again (a pod's own /dev/shm), it
    follows the facts of now, not those of the first advice."""
    title = title.replace(WINDOWS_FIRST, OOM_FIRST).replace(MACOS_FIRST, OOM_FIRST).replace(SHM_SHORT, SHM_TOO_SMALL)
    for suffix in SITUATION_TITLES.values():
        title = title.removesuffix(suffix)
    if "windows" in shown:
        title = title.replace(OOM_FIRST, WINDOWS_FIRST)
    if "macos" in shown:
        title = title.replace(OOM_FIRST, MACOS_FIRST)
    if shown & {"windows", "macos"}:
        title = title.replace(SHM_TOO_SMALL, SHM_SHORT)
    return title + "".join(SITUATION_TITLES[s] for s in sorted(shown))



def fill(template: str, facts: dict[str, str]) -> str:
    """Replace ``{pid}`` placeholders by facts; an unknown one reads ``<pid>``, or its default
    when written ``{shm_suggest|8g}``."""
    return PLACEHOLDER_RE.sub(lambda m: facts.get(m.group(1)) or m.group(2) or f"<{m.group(1)}>", template)


def advise(diagnosis: Diagnosis, db: Database) -> Diagnosis:
    """The diagnosis with its ranked fixes (and the shm demand estimate for class A); a fix or a
    command made for another platform than the one the text shows is left out (``platform.py``)."""
    facts = dict(diagnosis.facts)
    if "pid" not in facts and facts.get("pids"):
        facts["pid"] = facts["pids"].split(",")[0].strip()
    facts.update(shm_demand(facts))
    shown = situations(diagnosis, facts)
    if diagnosis.cls == "A" and not shown:
        facts.update(above_current(facts))
    start = default_start(facts)
    fitting = kept(db.fixes_for(diagnosis.cls, diagnosis.subclass, shown), platforms_shown(facts, diagnosis.signatures))
    entries = [(f, commands) for f, commands in fitting if not settled(f, start and start[0])]  # no-op switches
    # stable: fixes whose setting the text shows made, or whose code this PyTorch cannot run, go last
    entries = sorted(entries, key=lambda e: already_set(e[0], facts) is not None
                     or bool(missing_options(e[0], facts)))
    values = fill_values(facts)
    fixes = tuple(
        Fix(rank=i, title=fill(f.title, values) + already_note(f, facts) + needs_note(f, facts),
            why=fill(f.why, values),
            commands=tuple(namespaced(fill(c, values), facts) for c in commands),
            code=fill(f.code, values) if f.code else None)
        for i, (f, commands) in enumerate(entries, start=1))
    # advising twice adds each note once
    notes = tuple(n for n in diagnosis.notes
                  if not n.startswith((DEMAND_NOTE, AMPLE_NOTE, FD_NOTE, SMALL_NOTE, WINDOWS_NOTE, MACOS_NOTE,
                                       KERAS_NOTE, MXNET_NOTE, START_METHOD_NOTE)))
    notes += situation_notes(shown, facts, diagnosis.cls, start)
    notes += start_method_note(diagnosis.cls, start, dropped=len(entries) < len(fitting))
    if "shm_demand" in facts:
        note = (f"{DEMAND_NOTE} {facts['num_workers']} workers x "
                f"{facts.get('prefetch_factor', DEFAULT_PREFETCH)} prefetched batches x "
                f"{facts['batch_bytes']} per batch = {facts['shm_demand']}")
        if "shm_size" in facts:
            note += f" against /dev/shm of {facts['shm_size']}"
        notes = notes + (note,)
    return dataclasses.replace(diagnosis, title=situation_title(diagnosis.title, shown), fixes=fixes, facts=facts,
                               notes=notes)
