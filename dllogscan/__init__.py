"""dllogscan: diagnose PyTorch DataLoader worker crashes and stalls from logs.

    >>> import dllogscan
    >>> result = dllogscan.scan("job.log")          # doctest: +SKIP
    >>> result.diagnoses[0].cls, result.diagnoses[0].subclass  # doctest: +SKIP
    ('A', 'bus-error')
"""
from __future__ import annotations

from .api import scan
from .models import Diagnosis, Evidence, Fix, Hit, ScanResult

__version__ = "0.1.0"
__all__ = ["scan", "guard", "guarded", "Diagnosis", "Evidence", "Fix", "Hit", "ScanResult", "__version__"]


def __getattr__(name: str):
    """``guard`` and ``guarded`` load the live side (torch) only when first used."""
    if name in ("guard", "guarded"):
        from .live import require_torch

        require_torch(name)
        from .live import guard as module

        return getattr(module, name)
    raise AttributeError(f"module 'dllogscan' has no attribute {name!r}")
