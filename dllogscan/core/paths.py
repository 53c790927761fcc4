"""Where dllogscan's own files live: the package, its data folder and the user's cache."""
from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = PACKAGE_DIR / "data"


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/dllogscan`` (``~/.cache/dllogscan``): compiled prefilters, validated
    signature sets."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dllogscan"
