"""dllogscan: diagnose PyTorch DataLoader worker crashes and stalls from logs.

    >>> import dllogscan
    >>> result = dllogscan.scan("job.log")          # doctest: +SKIP
    >>> result.diagnoses[0].cls, result.diagnoses[0].subclass  # doctest: +SKIP
    ('A', 'bus-error')
"""
from __future__ import annotations

from .api import scan, scan_file, scan_text
from .core.models import Diagnosis, Evidence, Fix, Hit, ScanResult

__version__ = "0.1.0"
__all__ = ["scan", "scan_text", "scan_file", "scan_many", "guard", "guarded", "Diagnosis", "Evidence", "Fix", "Hit", "ScanResult",
           "__version__"]


def __getattr__(name: str):
    """``scan_many`` (batch) and ``guard`` / ``guarded`` (live side, torch) load on first use,
    so ``import dllogscan`` stays light."""
    if name == "scan_many":
        from .batch import scan_many
        return scan_many
    if name in ("guard", "guarded"):
        from .live import require_torch

        require_torch(name)
        from .live import guard as module

        return getattr(module, name)
    raise AttributeError(f"module 'dllogscan' has no attribute {name!r}")
