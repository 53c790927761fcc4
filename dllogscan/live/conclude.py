"""The field guide's conclusion from a ladder, and its text rendering (whose controls, from the
user's output, tracebacks and stacks, are dropped as every text format drops them)."""
from __future__ import annotations

import re
from typing import Any

from ..advise.fixes import human
from ..core.printable import strip_controls
from .repro import Rung
from .sample_hang import explain
from .shards import loader_of, unsharded
from .stacks import WHY, innermost_frames

TRACEBACK_RE = re.compile(r"^Traceback \(most recent call last\):", re.M)
#: frames of the ladder itself (the child, the loader it builds, the start-up hook around the user's
#: worker_init_fn), dropped from the traceback shown
OWN_FRAME_RE = re.compile(r'^  File "(<frozen runpy>|[^"]*dllogscan/live/(child|stacks|loader)\.py)"')
#: what a worker's own exception says, by its class: the dataset code's, or the user's worker_init_fn's
RAISED = {"B/getitem": "the dataset code raises only in a worker process, so it behaves differently there "
                       "(get_worker_info(), per-worker state, a handle, thread or CUDA context made before the "
                       "fork, worker_init_fn)",
          "B/getitem-worker-init": "the worker_init_fn raised as each worker started (num_workers=0 runs none)"}


def _without_own_frames(lines: list[str]) -> list[str]:
    """A traceback's lines less the ladder's own frames (and the source lines under them)."""
    kept: list[str] = []
    skipping = False
    for line in lines:
        if line.startswith("  File "):
            skipping = bool(OWN_FRAME_RE.match(line))
        elif not line.startswith("    "):
            skipping = False
        if not skipping:
            kept.append(line)
    return kept


def real_traceback(output: str, limit: int = 60) -> str:
    """The last traceback in a rung's output (the dataset's own, at num_workers=0)."""
    starts = [m.start() for m in TRACEBACK_RE.finditer(output)]
    text = output[starts[-1]:] if starts else output
    return "\n".join(_without_own_frames(text.strip().splitlines())[-limit:])


def worker_traceback(output: str, limit: int = 60) -> str | None:
    """The traceback a worker raised, as torch re-raises it (``Original Traceback``), or None."""
    start = output.rfind("Original Traceback (most recent call last):")
    if start < 0:
        return None
    block = output[start:].split("\n\n", 1)[0].strip().splitlines()
    return "\n".join(_without_own_frames(block)[:limit])


def scaled(rungs: list[Rung]) -> str | None:
    """Measured per-worker RSS and descriptors at N=1, scaled to the largest N (where it is more than 1)."""
    one = next((r for r in rungs if r.workers == 1 and r.worker_peak), None)
    top = max((r.workers for r in rungs), default=0)
    if not one or top < 1:
        return None
    rss, fds = one.worker_peak.get("rss", 0), one.worker_peak.get("fds", 0)
    measured = f"measured at num_workers=1: {human(rss)} RSS and {fds} open descriptors per worker"
    if top == 1:  # nothing to scale: the ladder's top rung is the one measured
        return measured
    return f"{measured}; at num_workers={top} about {human(rss * top)} and {fds * top} descriptors in workers"


def loader_line(loader: dict[str, Any] | None) -> str | None:
    """``loader: batch_size=32, pin_memory=True (--pin-memory) (from mydata:make_loader; ...)``: the
    settings that are not torch's defaults, an option's named after it, then whose loader it was."""
    if not loader:
        return None
    said = [f"{k}={v}" + ("" if loader["origin"][k] in ("loader", "repro") else f" ({loader['origin'][k]})")
            for k, v in loader["settings"].items()]
    if loader["returned"] == "DataLoader":
        whose = f"from {loader['factory']}, its num_workers={loader['num_workers']} replaced by each rung's"
        if loader["class"] != "DataLoader":
            whose += f"; rebuilt as torch's DataLoader, not {loader['class']}"
    else:
        whose = f"repro's own DataLoader over the Dataset from {loader['factory']}"
    return f"loader: {', '.join(said)} ({whose})"


def loader_notes(rungs: list[Rung]) -> list[str]:
    """What of the loader's settings the rungs did not test: what a num_workers=0 rung leaves out,
    pin_memory on a machine where torch does not pin."""
    loader = loader_of(rungs)
    if not loader:
        return []
    notes = []
    left = loader["workers_only"]
    if left and any(r.workers == 0 and r.result != "skipped" for r in rungs):
        notes.append(f"num_workers=0 runs without {', '.join(left)}: torch takes "
                     f"{'it' if len(left) == 1 else 'them'} only with workers.")
    if loader["pinned"] is False:
        notes.append("pin_memory=True was not tested: torch pins memory only with CUDA (or another "
                     "accelerator), and this machine has none, so every rung loaded unpinned batches.")
    return notes


def one_process_cause(stack: str, held: dict[str, Any] | None = None) -> list[str]:
    """A hang at num_workers=0, where nothing forked: its cause among what remains in one process
    (``sample_hang.explain``; ``held``: its threads' names), the other threads, the check, and that
    the fork causes do not apply."""
    said = explain(stack, held)
    head = "Likely cause" if said["cause"] else "Cause"
    return ([f"{head}: {said['says']}, at {said['evidence']}."] + [f"  other thread: {t}" for t in said["threads"]]
            + [f"Check: {said['check']}.", f"Not the cause: {said['no_fork']}."])


def _below(zero: Rung, traceback: str | None) -> str:
    """What the report shows under the num_workers=0 verdict (it says nothing is there when so)."""
    if zero.result == "hang":
        return "its stack is below" if zero.stacks else "no stack could be dumped from it (nothing is below)"
    if traceback and TRACEBACK_RE.search(zero.output):
        return "the real traceback is below"
    return "the end of its output is below" if traceback else "it printed nothing"


def conclude(rungs: list[Rung]) -> dict[str, Any]:
    """{"verdict": dataset-code | multiprocessing | no-failure, "text": ..., extras}; "warnings":
    what the passed rungs showed beside the verdict (an IterableDataset every worker yields whole);
    "notes": what of the loader's settings the rungs did not test (``loader_notes``)."""
    zero = next((r for r in rungs if r.workers == 0), None)
    bad = [r for r in rungs if r.result in ("fail", "hang")]
    measured = scaled(rungs)
    out: dict[str, Any] = {"measured": measured}
    if zero and zero.result in ("fail", "hang"):
        out["verdict"] = "dataset-code"
        what = "hangs" if zero.result == "hang" else "fails"
        out["traceback"] = real_traceback(zero.output) if zero.result == "fail" else None
        out["text"] = (f"It {what} with num_workers=0: the bug is in the dataset code (or its transforms), "
                       f"not in the worker settings. Fix it there; {_below(zero, out['traceback'])}.")
    elif bad:
        first = bad[0]
        how = f"{'hangs' if first.result == 'hang' else 'fails'} with num_workers={first.workers}"
        cls = f"{first.cls or '?'}{'/' + first.subclass if first.subclass else ''}"
        raised = worker_traceback(first.output) if first.result == "fail" and cls in RAISED else None
        out["verdict"] = "multiprocessing"
        if zero is None:
            out["text"] = (f"It {how} (num_workers=0 was not run: add 0 to --workers to tell the dataset code "
                           f"from the worker settings); class {cls}.")
        elif raised:
            out["text"] = (f"It passes with num_workers=0 and {how}: {RAISED[cls]}; class {cls}. "
                           "The worker's traceback is below.")
        else:
            out["text"] = (f"It passes with num_workers=0 and {how}: the bug is in multiprocessing (shared "
                           f"memory, descriptors, fork safety, worker memory); class {cls}.")
        if raised:
            out["traceback"] = raised
        # B/getitem's fixes rerun the loader or the dataset in the main process (worker_init's, with
        # num_workers=0): where that passed, they cannot show the error
        if first.diagnosis and first.diagnosis.fixes and not (raised and zero is not None):
            out["fixes"] = [f.to_dict() for f in first.diagnosis.fixes]
    else:
        out["verdict"] = "no-failure"
        out["text"] = "Every rung passed: the failure does not reproduce with these settings."
    out["warnings"] = [w for w in (unsharded(rungs),) if w]
    out["notes"] = loader_notes(rungs)
    return out


def render(rungs: list[Rung], conclusion: dict[str, Any]) -> str:
    said = [line for line in (loader_line(loader_of(rungs)),) if line] + conclusion.get("notes", [])
    lines = said + [""] * bool(said) + [f"{'rung':<16}{'result':<9}{'class':<22}evidence"]
    for r in rungs:
        cls = f"{r.cls}/{r.subclass}" if r.cls and r.subclass else (r.cls or "-")
        lines.append(f"{'num_workers=' + str(r.workers):<16}{r.result:<9}{cls:<22}{r.evidence()[:110]}")
    lines += ["", conclusion["text"]]
    if conclusion.get("measured"):
        lines.append(conclusion["measured"][0].upper() + conclusion["measured"][1:] + ".")
    if conclusion.get("traceback"):
        lines += ["", conclusion["traceback"]]
    for f in conclusion.get("fixes", []):
        lines.append(f"  {f['rank']}. {f['title']}")
        lines += [f"       $ {c}" for c in f["commands"]]
    causes: set[str] = set()
    shown: dict[tuple[str, str], int] = {}  # (who, innermost frames) -> the rung that showed them
    for r in rungs:
        if r.result == "hang" and r.workers == 0 and "one process" not in causes:
            causes.add("one process")  # nothing forked: the fork reasons of WHY do not apply
            lines += one_process_cause(r.stacks.get(r.main_pid, "") if r.main_pid else "", r.held)
        elif r.cause and r.workers and r.cause[0] not in causes:
            causes.add(r.cause[0])
            lines.append(f"Likely cause: {r.cause[0]} ({WHY.get(r.cause[0], '')}).")
        same: list[int] = []
        for pid in sorted(r.stacks, key=lambda p: p == r.main_pid):
            who = "main process" if pid == r.main_pid else "worker"
            frames = innermost_frames(r.stacks[pid], 6 if who == "worker" else 3)
            if (who, frames) in shown:  # a second hung rung stands where the first did
                same.append(shown[(who, frames)])
                continue
            shown[(who, frames)] = r.workers
            lines += ["", f"Stack of {who} pid {pid} (num_workers={r.workers}), innermost frames first:", frames]
        if same:
            lines += ["", f"num_workers={r.workers}: {len(same)} more stack(s), the same innermost frames as "
                          f"num_workers={', '.join(str(w) for w in sorted(set(same)))} showed above."]
    for w in conclusion.get("warnings", []):
        lines += ["", f"Warning: {w['text'][0].lower()}{w['text'][1:]}"]
        lines += [f"  {e}" for e in w["evidence"]] + [w["fix"]]
    return strip_controls("\n".join(lines) + "\n")
