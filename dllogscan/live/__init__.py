"""The live side (needs the ``torch`` extra): doctor, the reproduction ladder, the guard.

Nothing here is imported by the plain scan path; each command imports it when it runs.

A way in. May import: the stages and ``pipeline``; not ``cli``.
"""
from __future__ import annotations

from ..core.errors import DllogscanError

INSTALL_HINT = 'pip install "dllogscan[torch]"'


class MissingTorch(DllogscanError):
    """torch (or psutil) is not installed; the message names which."""


def require_torch(what: str) -> None:
    """Raise ``MissingTorch`` naming the command when torch or psutil cannot be imported."""
    for name in ("torch", "psutil"):
        try:
            __import__(name)
        except ImportError:
            raise MissingTorch(f"dllogscan {what} needs {name}: {INSTALL_HINT}") from None
