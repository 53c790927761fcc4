"""What a rung's loader yields, and the warning for an IterableDataset that is not split
between workers (every worker yields the whole stream: each sample arrives num_workers times).

The child counts batches and samples as it iterates and fingerprints the first batches
(``Yielded.add``); the parent reads them back from the rung's ``stats.json`` and compares the
rungs (``unsharded``). Nothing here holds a batch: a fingerprint is a short digest of a sample of
each array's elements.
"""
from __future__ import annotations

import hashlib
import sys
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .repro import Rung

#: batches fingerprinted per rung: the first few of every worker, for any num_workers up to 32
FINGERPRINTED = 64
#: elements of an array read into its fingerprint, evenly spaced over it: a large batch costs little
SAMPLED = 4096
#: items of a list or tuple read into a fingerprint; how deep into nested containers
ITEMS, DEPTH = 256, 8


@dataclass
class Yielded:
    """What one rung's loader yielded before it stopped."""

    iterable: bool  # an IterableDataset (each worker runs its own __iter__)
    batches: int = 0
    samples: int | None = 0  # None: a batch's size could not be read (a custom collate_fn)
    exhausted: bool = False  # the loader ran out before the batch cap: the counts are the whole stream's
    fingerprints: list[str | None] = field(default_factory=list)  # the first FINGERPRINTED batches'

    def add(self, batch: Any, size: int | None) -> None:
        """Count ``batch`` of ``size`` samples (None: unknown) and fingerprint it while few are."""
        self.batches += 1
        self.samples = None if self.samples is None or size is None else self.samples + size
        if len(self.fingerprints) < FINGERPRINTED:
            self.fingerprints.append(fingerprint(batch))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Yielded | None:
        """The counts as the child wrote them; None when it wrote none (it failed before a batch)."""
        if not data:
            return None
        return cls(iterable=bool(data["iterable"]), batches=int(data["batches"]), samples=data["samples"],
                   exhausted=bool(data["exhausted"]), fingerprints=list(data["fingerprints"]))

    def summary(self) -> dict[str, Any]:
        """The counts without the fingerprints (the rung's JSON)."""
        return {"iterable": self.iterable, "batches": self.batches, "samples": self.samples,
                "exhausted": self.exhausted}


def samples_in(batch: Any) -> int | None:
    """How many samples the default collate_fn put in ``batch``: the first dimension of its first
    tensor (a dict's first value, a tuple's first field), or the length of a batch of strings;
    None where it cannot tell."""
    import torch

    if isinstance(batch, torch.Tensor):
        return batch.shape[0] if batch.dim() else None
    if isinstance(batch, Mapping):
        return samples_in(next(iter(batch.values()))) if batch else None
    if isinstance(batch, (list, tuple)) and batch:
        # strings are collated into a list of them; anything else into one collated item per field
        return len(batch) if isinstance(batch[0], (str, bytes)) else samples_in(batch[0])
    return None


def fingerprint(batch: Any) -> str | None:
    """A 16-digit digest of ``batch``: equal batches give equal ones. Each array adds its type,
    shape, dtype and SAMPLED evenly spaced elements. None for a batch holding something else (an
    image object, a nesting too deep): such batches are never taken for repeats."""
    digest = hashlib.blake2b(digest_size=8)
    try:
        _feed(digest, batch, 0)
    except Exception:  # noqa: BLE001 - a batch of anything: no fingerprint rather than no rung
        return None
    return digest.hexdigest()


def _arrays() -> tuple[type, ...]:
    """The array types a batch may hold: torch's tensor, and numpy's array where numpy is loaded."""
    import torch

    np = sys.modules.get("numpy")
    return (torch.Tensor, np.ndarray) if np else (torch.Tensor,)


def _feed(digest: Any, obj: Any, depth: int) -> None:
    if depth > DEPTH:
        raise ValueError("nested too deep")
    if isinstance(obj, _arrays()):
        digest.update(f"{type(obj).__name__}{tuple(obj.shape)}{obj.dtype}|".encode())
        digest.update(_sampled_bytes(obj))
    elif isinstance(obj, str):
        digest.update(b"s" + obj.encode("utf-8", "surrogatepass") + b"|")
    elif isinstance(obj, bytes):
        digest.update(b"b" + obj + b"|")
    elif obj is None or isinstance(obj, (bool, int, float, complex)):
        digest.update(f"{obj!r}|".encode())
    elif isinstance(obj, Mapping):
        digest.update(f"{{{len(obj)}".encode())
        for key, value in obj.items():
            _feed(digest, key, depth + 1)
            _feed(digest, value, depth + 1)
    elif isinstance(obj, (list, tuple)):
        digest.update(f"[{len(obj)}".encode())
        for item in obj[:ITEMS]:
            _feed(digest, item, depth + 1)
    else:
        raise TypeError(type(obj).__name__)


def _sampled_bytes(array: Any) -> bytes:
    """The bytes of at most SAMPLED elements of ``array``, evenly spaced over it."""
    import torch

    if not isinstance(array, torch.Tensor):  # numpy's
        if array.dtype.hasobject:  # its bytes would be addresses
            raise TypeError("an array of objects")
        picked = array.reshape(-1)[::max(1, array.size // SAMPLED)][:SAMPLED]
        return sys.modules["numpy"].ascontiguousarray(picked).tobytes()
    picked = array.detach().reshape(-1)[::max(1, array.numel() // SAMPLED)][:SAMPLED]
    return picked.cpu().contiguous().view(torch.uint8).numpy().tobytes()


#: what a worker should do instead, written out under the warning
FIX = """Fix: split the stream by worker in __iter__ with get_worker_info() (its id and num_workers):

    def __iter__(self):
        items = self.read()  # the whole stream, as now
        info = torch.utils.data.get_worker_info()
        if info is None:  # num_workers=0: the main process yields it all
            return iter(items)
        return itertools.islice(items, info.id, None, info.num_workers)  # every num_workers-th item

or give each worker its own files or range, in __iter__ or in a worker_init_fn that sets them on
get_worker_info().dataset (the worker's copy)."""
#: the fix for a DataPipe, which torch's DataLoader splits by itself in each worker, at the pipe's
#: sharding_filter (torch.utils.data.graph_settings.apply_sharding, run by the worker's start-up)
FIX_DATAPIPE = """Fix: add a sharding_filter to the DataPipe, after the steps every worker should run whole
(listing files, shuffling with a shared seed) and before the costly ones (reading, decoding):

    pipe = pipe.shuffle().sharding_filter().map(decode)

the DataLoader then keeps every num_workers-th item in each worker."""
#: what the warning says of the user's worker_init_fn: one ran and did not split the stream, the
#: user's DataLoader has none, or none was given to repro's own DataLoader
INIT_RAN = "Your worker_init_fn ({}) ran in every worker and did not split it."
LOADER_WITHOUT_INIT = "Your DataLoader has no worker_init_fn that could split it."
NO_INIT = ("No worker_init_fn of yours ran: if your DataLoader splits the stream in one, give repro the "
           "DataLoader (a factory that returns it) or --worker-init module:fn.")


@dataclass(frozen=True)
class Repeats:
    """How a rung with workers compares with the one stream of the reference rung (0, else 1)."""

    workers: int
    yielded: Yielded
    times: float | None  # how many times the reference's whole stream it yielded; None: no sign of it
    copies: int  # of its fingerprinted batches, how many repeat one it already yielded
    first: int  # how many times the reference's first batch arrived among them

    @property
    def found(self) -> bool:
        return self.times is not None or self.copies > 0


def more_than_the_stream(whole: Yielded, got: Yielded, workers: int) -> float | None:
    """``got`` / ``whole`` where a rung of ``workers`` workers yielded about ``workers`` times the
    whole stream (at least half way from 1 to ``workers`` times), more than any split of it gives;
    else None. Needs ``whole`` to have run out (a stream cut at the batch cap is a sample, and a
    rung cut there yields the cap however it splits); a cut ``got`` counts as at least that much.
    Samples where both were counted; else batches, where each worker's last may be short."""
    if not whole.exhausted or not whole.batches:
        return None
    if whole.samples and got.samples is not None:
        have, of, short = got.samples, whole.samples, 0
    else:
        have, of, short = got.batches, whole.batches, workers - 1
    if have > of + short and have >= of * (workers + 1) / 2:
        return have / of
    return None


def repeated_batches(reference: list[str | None], got: list[str | None]) -> tuple[int, int]:
    """(copies, first): how many of ``got``'s batches repeat one it already yielded that the reference
    also yielded, and how many times the reference's first batch is among them. (0, 0) where the
    reference repeats itself (the data does, not the workers) or has no fingerprints."""
    known = [f for f in reference if f]
    seen = set(known)
    if not known or len(seen) < len(known):
        return 0, 0
    arrivals = Counter(f for f in got if f in seen)
    return sum(n - 1 for n in arrivals.values()), arrivals[reference[0]] if reference[0] else 0


def compare(rungs: list[Rung]) -> tuple[Rung, list[Repeats]] | None:
    """The reference rung (num_workers=0, else 1; passed; an IterableDataset) and how each passed
    rung with two or more workers compares with it; None without a reference."""
    single = sorted((r for r in rungs if r.workers <= 1 and r.result == "pass" and r.yielded),
                    key=lambda r: r.workers)
    ref = single[0].yielded if single else None
    if ref is None or not ref.iterable:
        return None
    out = []
    for r in rungs:
        if r.workers >= 2 and r.result == "pass" and r.yielded:
            copies, first = repeated_batches(ref.fingerprints, r.yielded.fingerprints)
            out.append(Repeats(r.workers, r.yielded, more_than_the_stream(ref, r.yielded, r.workers),
                               copies, first))
    return single[0], out


def unsharded(rungs: list[Rung]) -> dict[str, Any] | None:
    """The warning for an IterableDataset that every worker yields whole (no per-worker split): a
    rung with workers yielding about num_workers times the single-process stream, or the same
    first batches again. None where nothing shows it: a map-style dataset, a split stream, an
    endless one whose rungs all differ (their counts, cut at the cap, are equal whatever the split).
    It says whether a worker_init_fn of the user's ran (and did not split it) or none did."""
    compared = compare(rungs)
    found = [c for c in compared[1] if c.found] if compared else []
    if not compared or not found:
        return None
    ref = compared[0]
    counted = ref.yielded.samples and all(c.yielded.samples is not None for c in found)
    unit = "samples" if counted else "batches"
    lines = [f"num_workers={ref.workers}: " + (f"{_amount(ref.yielded, unit)}, the whole stream"
                                               if ref.yielded.exhausted else _all_differ(ref.yielded, unit))]
    one = next((r for r in rungs if r.workers == 1 and r.result == "pass" and r.yielded), None)
    if one and one is not ref:
        lines.append(f"num_workers=1: {_amount(one.yielded, unit)}")
    for c in found:
        said = _amount(c.yielded, unit)
        if c.times is not None:
            least = "" if c.yielded.exhausted else "at least "
            said += f", {least}{c.times:.1f} times num_workers={ref.workers}'s"
        if c.copies:
            said += (f"; {c.copies} of its first {len(c.yielded.fingerprints)} batches repeat earlier ones "
                     f"(num_workers={ref.workers}'s first batch arrived {c.first} times)")
        lines.append(f"num_workers={c.workers}: {said}")
    loader = loader_of(rungs)
    init, said = _user_init(loader)
    datapipe = bool(loader and loader.get("datapipe"))
    if datapipe:
        said = "It has no sharding_filter, where torch's DataLoader would split it."
    return {"kind": "unsharded-iterable",
            "text": (f"The {'DataPipe' if datapipe else 'IterableDataset'} is not split between workers: each "
                     "worker yields the same stream, so every sample arrives num_workers times. ") + said,
            "worker_init_fn": init,
            "evidence": lines,
            "rungs": [{"workers": c.workers, "times": None if c.times is None else round(c.times, 2),
                       "repeated_batches": c.copies, "first_batch_arrivals": c.first} for c in found],
            "fix": FIX_DATAPIPE if datapipe else FIX}


def loader_of(rungs: list[Rung]) -> dict[str, Any] | None:
    """What the ladder's loader was (every rung builds it from the same factory and options), from
    the first rung that built one; None where none did."""
    return next((r.loader for r in rungs if r.loader), None)


def _user_init(loader: dict[str, Any] | None) -> tuple[str | None, str]:
    """(the name of the user's worker_init_fn the rungs' ``loader`` ran, the loader's or
    --worker-init's, or None; what the warning says of it)."""
    init = loader["settings"].get("worker_init_fn") if loader else None
    if init:
        return init, INIT_RAN.format(init)
    return None, LOADER_WITHOUT_INIT if loader and loader["returned"] == "DataLoader" else NO_INIT


def _amount(y: Yielded, unit: str) -> str:
    """'600 samples' from a rung that ran out; 'cut at --batches 8 (16 samples)' from one cut there."""
    if y.exhausted:
        return f"{y.samples if unit == 'samples' else y.batches} {unit}"
    return f"cut at --batches {y.batches}" + (f" ({y.samples} samples)" if unit == "samples" else "")


def _all_differ(y: Yielded, unit: str) -> str:
    """'cut at --batches 8 (16 samples), all 8 different' of a reference rung cut at the cap."""
    of = len(y.fingerprints)
    return f"{_amount(y, unit)}, {'all' if of == y.batches else 'the first'} {of} different"
