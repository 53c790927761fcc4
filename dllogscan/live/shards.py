"""What a rung's loader yields: its batches and samples counted, its first batches fingerprinted.

The child counts as it iterates (``Yielded.add``); the parent reads the counts back from the
rung's ``stats.json``. Nothing here holds a batch: a fingerprint is a short digest of a sample of
each array's elements.
"""
from __future__ import annotations

import hashlib
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

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
