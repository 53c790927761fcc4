"""The live side (needs the ``torch`` extra): doctor, the reproduction ladder, the guard.

Nothing here is imported by the plain scan path; each command imports it when it runs.

A way in. May import: the stages and ``pipeline``; not ``cli``.
"""
from __future__ import annotations

from ..core.errors import DllogscanError

INSTALL_HINT = 'pip install "dllogscan[torch]"'


class MissingTorch(DllogscanError):
    """torch (or psutil) is not installed."""


def require_torch(what: str) -> None:
    """Raise ``MissingTorch`` naming the command when torch or psutil cannot be imported."""
    try:
        import psutil  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        raise MissingTorch(f"dllogscan {what} needs torch: {INSTALL_HINT}") from None
