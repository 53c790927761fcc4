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
__all__ = ["scan", "Diagnosis", "Evidence", "Fix", "Hit", "ScanResult", "__version__"]
