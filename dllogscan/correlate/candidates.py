"""Combine signature hits into ranked diagnoses: conditions, cross-evidence, absorption.

Rules, all driven by fields of the signature data:
- ``requires`` / ``excludes`` keep or drop a hit by the other hits around it;
- hits of one class form one candidate; its subclass comes from the highest-``priority`` hit;
- a ``cause`` hit whose ``link`` fact (the pid) equals the failure's counts with ``linked_weight``;
- a failure with ``absorbs`` swallows nearby candidates of those classes (a ``Caught
  RuntimeError`` whose traceback says ``unable to write to file </torch_...>`` is class A);
- a ``*-suspected`` candidate yields to any other failure, and context alone never outvotes one;
- without a failure of their class, ``cause``/``context`` hits count only where their ``alone``
  rule allows (the OOM killer's line makes B alone only when it killed a python process);
- a diagnosis holding a ``canonical`` hit (the field guide's own failure texts: bus error,
  ``exited unexpectedly``, ancdata, errno 24, CUDA re-initialisation, ``DataLoader timed out``),
  its own or absorbed, is marked so: the classifier may re-rank it, never veto it;
- a measured silence after the last progress line (``cadence.Silence``) joins a class-E diagnosis
  (both its lines cited, confidence raised by its ``weight``, ``cadence.WEIGHT``) or, with no diagnosis at all,
  makes E/hang at that weight; beside a failure of another class it stays out (a dead worker
  explains the stop);
- a diagnosis that rests on a scheduler's time-limit kill alone (``KILL_ONLY``) goes where the
  timestamps show progress at its cadence up to that line (``cadence.Steady``): the job ran out of
  time while still training, which is no hang; a note says so.
"""
from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core.models import Diagnosis, Evidence, Hit
from ..signatures.database import BUILTIN_CONDITIONS, CLASSES, Condition, Database, Signature

if TYPE_CHECKING:  # cadence.py is imported only when a silence is measured
    from .cadence import Silence, Steady
    from .stall import Stall

PROGRESS_RE = re.compile(
    r"\d{1,3}%\||\d(?:\.\d+)?\s?(?:it/s|s/it)\b|\b(?:epoch|step|iter(?:ation)?|batch)\b\s*[:=\[#]?\s*\d"
    r"|\bloss\b\s*[:=]", re.IGNORECASE)

#: a traceback frame in the data-loading code: PyTorch's ``torch/utils/data`` or a file named for a
#: data loader (``libdfdata/torch_dataloader.py``), where an interrupted loop was waiting on its data
LOADER_FRAME_RE = re.compile(
    r'File "[^"\n]*(?:torch[/\\]utils[/\\]data[/\\]|data_?loader[^"/\\\n]*\.py")[^\n]*, line \d+', re.IGNORECASE)

#: a worker process's own loop (``torch/utils/data/_utils/worker.py``): where an idle worker waits
#: for indices, interrupted with every Ctrl-C, whether the main loop stalled or not
WORKER_LOOP_FRAME_RE = re.compile(r'File "[^"\n]*_utils[/\\]worker\.py"', re.IGNORECASE)

EXCEPTION_LINE_RE = re.compile(
    r"^(?:[A-Za-z_][\w]*\.)*[A-Z][\w]*(?:Error|Exception|Interrupt|Exit|Fault|Warning)\b(?::.*)?$"
    r"|^(?:KeyError|StopIteration|AssertionError|IndexError)\b.*$")
#: text that is about PyTorch training at all (the ``@relevant`` condition, the classifier's gate).
#: "train" as a verb (session 29: "whenever I train on multiple GPUs it ends with [Errno 24]", a
#: first-person rewrite in bench/style_shift that lost its C; scope.toml's ``training`` words
#: had it already): the grouped CV of corpus/threads moved no verdict, the rewrites 1 more C.
#: The DataLoader's own keyword arguments (session 31: workers_per_gpu, mmcv's name for
#: num_workers; worker_init_fn, persistent_workers, prefetch_factor, pin_memory): grouped CV, 1 more E
#: thread (an mmdetection config that "hangs with workers_per_gpu > 0"), no other verdict moved
RELEVANT = re.compile(
    r"dataloader|data loader|num_workers|workers_per_gpu|worker_init_fn|persistent_workers|prefetch_factor"
    r"|pin_memory|__getitem__|dataset|torch|pytorch|worker process|pt_data_worker"
    r"|\bepochs?\b|training|\btrain(?:s|ed)?\b|训练|数据|学習|データ|학습|обучени|entrenamiento|treinamento|trainings?lauf",
    re.IGNORECASE)
MAX_EVIDENCE = 8
DIGITS_RE = re.compile(r"\d+")
#: what a cited line's shape leaves out: its numbers (pids, line numbers), its spacing and the
#: punctuation it ends with, so one message printed twice (by each worker, or cut short the second
#: time) is cited once
SHAPE_NOISE_RE = re.compile(r"\s+|[.:;,]+\s*$")
#: the classes a diagnosis can have: every class the signature data may name but "none" (facts)
FAILURE_CLASSES = tuple(c for c in CLASSES if c != "none")

#: the DataLoader's own words (the ``@loader`` condition): narrower than RELEVANT (no "torch",
#: "dataset" or "training") and than a prose "worker" (a Celery or Gunicorn worker is none of the
#: loader's); also the names code gives a DataLoader (``for x, y in train_loader:``, ``val_loader``,
#: ``trainloader``: the same names as ``loader_text`` in data/prose.toml)
LOADER_WORDS = re.compile(
    r"num_workers|num-workers|workers_per_gpu|data ?loader"
    r"|\b(?:train|val|valid|validation|test|eval)_?(?:data_?)?loader\b", re.IGNORECASE)

#: the built-in conditions that read the lines around a hit, both ways (``@progress`` reads before)
WINDOW_CONDITIONS = {"@relevant": RELEVANT, "@loader": LOADER_WORDS, "@loader-frame": LOADER_FRAME_RE}


@dataclass
class Candidate:
    """Hits of one class that together make one diagnosis."""

    cls: str
    hits: list[tuple[Hit, Signature, float]] = field(default_factory=list)
    absorbed: list[tuple[Hit, Signature, float]] = field(default_factory=list)

    @property
    def has_failure(self) -> bool:
        return any(sig.role in ("failure", "cause") for _, sig, _ in self.hits)

    def top(self) -> tuple[Hit, Signature, float]:
        return max(self.hits, key=lambda t: (t[1].priority, t[2], -t[0].line))

    def confidence(self) -> float:
        best: dict[str, float] = {}
        for _, sig, weight in self.hits:
            best[sig.id] = max(best.get(sig.id, 0.0), weight)
        miss = 1.0
        for weight in best.values():
            miss *= 1.0 - weight
        return min(0.99, 1.0 - miss)


def _pids(facts: dict[str, str]) -> set[str]:
    out = set()
    for key in ("pid", "pids"):
        out.update(DIGITS_RE.findall(facts.get(key, "")))
    return out


def _builtin_holds(name: str, cond: Condition, hit: Hit) -> bool:
    """``@progress``: a progress line before the hit; ``@relevant``: a line about PyTorch training;
    ``@loader``: a line naming the DataLoader or its worker count; ``@loader-frame``: a traceback
    frame in the data-loading code (the hit's captured lines count); ``@loader-frame-below``: such
    a frame, not a worker's own loop, in the traceback that the hit's line begins (its captured
    lines up to the first exception line)."""
    if name == "@progress":
        window = [t for n, t in hit.before if not cond.within or hit.line - n <= cond.within]
        return any(PROGRESS_RE.search(t) for t in window)
    if name == "@loader-frame-below":
        for n, text in hit.after:
            if (cond.within and n - hit.line > cond.within) or EXCEPTION_LINE_RE.match(text.strip()):
                return False
            if LOADER_FRAME_RE.search(text) and not WORKER_LOOP_FRAME_RE.search(text):
                return True
        return False
    window = [t for n, t in hit.before + hit.after if not cond.within or abs(hit.line - n) <= cond.within]
    pattern = WINDOW_CONDITIONS[name]
    return any(pattern.search(t) for t in window + [hit.text])


def _condition_holds(cond: Condition, hit: Hit, index: dict[str, list[Hit]]) -> bool:
    """True when any of the condition's ids (built-ins or signatures) holds near ``hit``."""
    if any(_builtin_holds(i, cond, hit) for i in cond.ids if i in BUILTIN_CONDITIONS):
        return True
    for sig_id, others in index.items():
        if not cond.matches_id(sig_id):
            continue
        for other in others:
            if other is hit:
                continue
            if cond.within and abs(other.line - hit.line) > cond.within:
                continue
            if cond.same and (not hit.facts.get(cond.same)
                              or hit.facts.get(cond.same) != other.facts.get(cond.same)):
                continue
            return True
    return False


def filter_hits(hits: list[Hit], db: Database) -> list[Hit]:
    """Drop hits whose ``requires`` do not hold or whose ``excludes`` do."""
    index: dict[str, list[Hit]] = defaultdict(list)
    for hit in hits:
        index[hit.signature].append(hit)
    kept = []
    for hit in hits:
        sig = db.by_id[hit.signature]
        if all(_condition_holds(c, hit, index) for c in sig.requires) and not any(
                _condition_holds(c, hit, index) for c in sig.excludes):
            kept.append(hit)
    return kept


#: facts whose workaround value never replaces a value already seen: a worker failure needs
#: workers, so a ``num_workers=0`` after ``num_workers=8`` is the rerun the reporter tried ("with
#: num_workers=0 it runs"), not the setting of the run that failed (and a fix filled in with 0 would
#: be wrong: spawn with no workers); likewise Keras's ``use_multiprocessing=False`` after ``=True``
#: (threads instead of forked workers). PyTorch's own hint ("Rerunning with num_workers=0 may give
#: better error trace") gives no fact at all: ``fact.num-workers`` skips it (signatures/facts.toml)
WORKAROUNDS: dict[str, Callable[[str], bool]] = {"num_workers": lambda v: v.strip("0") == "",
                                                  "use_multiprocessing": lambda v: v == "False"}


def collect_facts(hits: list[Hit], db: Database) -> dict[str, str]:
    """Configuration facts (``fact`` role): the last value seen wins, except that a workaround's
    value (no workers, threads) does not replace a setting already seen (``WORKAROUNDS``)."""
    facts: dict[str, str] = {}
    for hit in hits:
        if db.by_id[hit.signature].role != "fact":
            continue
        for key, value in hit.facts.items():
            workaround = WORKAROUNDS.get(key)
            if workaround and workaround(value) and key in facts and not workaround(facts[key]):
                continue
            facts[key] = value
    return facts


def _build_candidates(hits: list[Hit], db: Database) -> dict[str, Candidate]:
    cands: dict[str, Candidate] = {}
    failure_pids: dict[str, set[str]] = defaultdict(set)
    for hit in hits:
        sig = db.by_id[hit.signature]
        if sig.role == "failure":
            failure_pids[sig.cls] |= _pids(hit.facts)
    for hit in hits:
        sig = db.by_id[hit.signature]
        if sig.role == "fact" or sig.cls not in FAILURE_CLASSES:
            continue
        weight = sig.weight
        target = sig.refines or sig.cls
        if sig.role == "cause" and sig.link and hit.facts.get(sig.link) in failure_pids.get(target, ()):
            weight = sig.linked_weight if sig.linked_weight is not None else weight
        cands.setdefault(sig.cls, Candidate(sig.cls)).hits.append((hit, sig, weight))
    for cls, cand in list(cands.items()):
        if not any(sig.role == "failure" for _, sig, _ in cand.hits):
            cand.hits = [t for t in cand.hits if t[1].may_stand_alone(t[0].facts)]
            if not cand.hits:
                del cands[cls]
    return cands


def _citable(hits: list[tuple[Hit, Signature, float]]) -> list[tuple[Hit, Signature, float]]:
    """Hits worth citing for another class: not the weightless support frames of a context."""
    return [t for t in hits if not (t[1].role == "context" and t[1].weight == 0)]


def _absorb(cands: dict[str, Candidate]) -> None:
    for cand in list(cands.values()):
        for hit, sig, _ in list(cand.hits):
            for victim_cls in sig.absorbs:
                victim = cands.get(victim_cls)
                if victim is None or victim is cand or sig.role != "failure":
                    continue
                if any(abs(h.line - hit.line) <= sig.absorb_within for h, _, _ in victim.hits):
                    cand.absorbed += _citable(victim.hits + victim.absorbed)
                    del cands[victim_cls]
    decisive = {c for c, cand in cands.items() if cand.has_failure}
    for cls, cand in list(cands.items()):
        sub = cand.top()[1].subclass or ""
        others = decisive - {cls}
        if (sub.endswith("-suspected") or not cand.has_failure) and others:
            winner = cands[min(others, key=lambda c: -cands[c].confidence())]
            winner.absorbed += _citable(cand.hits + cand.absorbed)
            del cands[cls]


def _exception_line(hit: Hit) -> tuple[int, str] | None:
    """The real exception at the end of a captured traceback (``KeyError: 'label'``)."""
    # a frame hit, or an old-style re-raise whose message is the traceback: the traceback is running
    seen_traceback = hit.text.lstrip().startswith("File ") or "Traceback (most recent call last)" in hit.text
    for line, text in hit.after:
        if "Traceback (most recent call last)" in text:
            seen_traceback = True
            continue
        if seen_traceback and EXCEPTION_LINE_RE.match(text) and not text.startswith("File "):
            return line, text
    return None


def shape(text: str) -> str:
    """A cited line as its message: numbers, spacing and closing punctuation left out."""
    return SHAPE_NOISE_RE.sub(" ", DIGITS_RE.sub("#", text)).strip()


def same_message(line: str, cited: str) -> bool:
    """Whether a line of this ``shape`` repeats a cited one: the same message, or one of the two
    cut short where the other goes on (at least 20 characters in common)."""
    short, long = sorted((line, cited), key=len)
    return line == cited or (len(short) >= 20 and long.startswith(short))


def _evidence(cand: Candidate) -> tuple[tuple[Evidence, ...], int, dict[str, str]]:
    ordered = sorted(cand.hits, key=lambda t: (-t[1].priority, t[0].line)) + sorted(
        cand.absorbed, key=lambda t: t[0].line)
    evidence: list[Evidence] = []
    shapes: list[str] = []
    facts: dict[str, str] = {}
    pids: list[str] = []
    for hit, sig, _ in ordered:
        for key, value in hit.facts.items():
            facts.setdefault(key, value)
        for pid in sorted(_pids(hit.facts)):
            if pid not in pids:
                pids.append(pid)
        form = shape(hit.text)
        if any(e.line == hit.line for e in evidence):
            continue
        repeated = next((k for k, cited in enumerate(shapes) if same_message(form, cited)), None)
        if repeated is not None:
            if len(form) > len(shapes[repeated]):  # the cited one was cut short: cite the whole
                shapes[repeated] = form
                evidence[repeated] = Evidence(hit.line, hit.text, sig.id)
            continue
        shapes.append(form)
        evidence.append(Evidence(hit.line, hit.text, sig.id))
        real = _exception_line(hit)
        if real and all(e.line != real[0] for e in evidence):
            told = shape(real[1])
            if not any(same_message(told, cited) for cited in shapes):
                shapes.append(told)  # shapes[k] is always evidence[k]'s
                evidence.append(Evidence(real[0], real[1], sig.id + "#exception"))
            name, _, message = real[1].partition(":")
            facts.setdefault("exception", name.rsplit(".", 1)[-1].strip())
            if message.strip():
                facts.setdefault("message", message.strip()[:200])
    # one failure prints several texts (the worker's ERROR line, then the main process's
    # RuntimeError); the count is how often the deciding text repeats (ranks, workers, epochs)
    top_id = cand.top()[1].id
    failures = len({h.line for h, s, _ in cand.hits if s.id == top_id})
    if pids:
        facts["pids"] = ", ".join(pids[:16])
    return tuple(evidence[:MAX_EVIDENCE]), max(failures, 1), facts


def correlate(hits: list[Hit], db: Database, min_confidence: float = 0.5) -> tuple[list[Diagnosis], dict[str, str]]:
    """Hits of one source -> ranked diagnoses (most likely first, each with the facts of its own
    evidence) and the source's configuration facts (the pipeline puts those under every verdict)."""
    hits = filter_hits(hits, db)
    facts = collect_facts(hits, db)
    cands = _build_candidates(hits, db)
    _absorb(cands)
    out = []
    for cand in cands.values():
        conf = cand.confidence()
        if conf < min_confidence:
            continue
        top_hit, top_sig, _ = cand.top()
        evidence, count, dfacts = _evidence(cand)
        out.append(Diagnosis(
            cls=cand.cls, subclass=top_sig.subclass, title=top_sig.title, confidence=conf,
            evidence=evidence, signatures=tuple(dict.fromkeys(s.id for _, s, _ in cand.hits)),
            facts=dfacts, count=count,
            canonical=any(sig.canonical for _, sig, _ in cand.hits + cand.absorbed)))
    out.sort(key=lambda d: (-d.confidence, d.evidence[0].line if d.evidence else 0))
    return out, facts


SILENCE_ID = "E.hang.progress-silence"


def with_silence(diagnoses: list[Diagnosis], silence: Silence | Stall | None) -> list[Diagnosis]:
    """Weigh a measured silence (or a stall seen live, ``stall.Stall``) into the diagnoses of one
    source (see the rules above)."""
    if silence is None or any(d.cls != "E" and d.confidence > 0 for d in diagnoses):
        return diagnoses
    diagnoses = [d for d in diagnoses if d.cls == "E"]  # weightless support of another class goes
    if not diagnoses and not silence.stopped:
        return []  # a long pause the program ended itself and finished after: no hang
    cited = tuple(dict.fromkeys((Evidence(silence.last_line, silence.last_text, SILENCE_ID),  # a stall's may be one
                                 Evidence(silence.end_line, silence.end_text, SILENCE_ID))))
    note = silence.describe()
    if not diagnoses:
        return [Diagnosis(cls="E", subclass="hang", title="Progress stopped: a long silence after regular "
                          "progress lines (a stalled loader is the usual cause)", confidence=silence.weight,
                          evidence=cited, signatures=(SILENCE_ID,), facts=silence.facts(), notes=(note,))]
    out = []
    for d in diagnoses:
        have = {e.line for e in d.evidence}
        evidence = d.evidence[:1] + tuple(e for e in cited if e.line not in have) + d.evidence[1:]
        conf = min(0.99, 1.0 - (1.0 - d.confidence) * (1.0 - silence.weight))
        out.append(dataclasses.replace(d, confidence=conf, evidence=evidence[:MAX_EVIDENCE],
                                       signatures=d.signatures + (SILENCE_ID,),
                                       facts={**d.facts, **silence.facts()}, notes=d.notes + (note,)))
    return out


#: signatures that say only that a scheduler ended the job at its time limit after progress lines:
#: a hang only if progress had stopped before it (``without_steady_kill``)
KILL_ONLY = frozenset({"E.hang.slurm-time-limit"})


def rests_on_kill(diagnoses: list[Diagnosis]) -> bool:
    """True when some diagnosis has no evidence but a time-limit kill (``KILL_ONLY``)."""
    return any(d.cls == "E" and set(d.signatures) <= KILL_ONLY for d in diagnoses)


def without_steady_kill(diagnoses: list[Diagnosis], steady: Steady | None) -> tuple[list[Diagnosis], tuple[str, ...]]:
    """Less the diagnoses that rest on a time-limit kill alone where the timing shows the job at
    work up to that line (``cadence.Steady``), with the note that says so."""
    if steady is None:
        return diagnoses, ()
    kept, notes = [], []
    for d in diagnoses:
        if d.cls == "E" and set(d.signatures) <= KILL_ONLY and any(
                steady.last_line < e.line <= steady.end_line for e in d.evidence):
            notes.append(f"Line {steady.end_line}: the job was ended at its time limit while still making progress "
                         f"({steady.describe()}): it ran out of time, it did not hang. Ask for more time "
                         "(sbatch --time) or resume from its last checkpoint.")
        else:
            kept.append(d)
    return kept, tuple(notes)
