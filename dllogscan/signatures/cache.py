"""Remember that an exact set of signature files was validated, so a start skips the work.

Validating the database compiles every pattern and runs every example (~60 ms of a ~180 ms
start). The key is a hash of each file's name and bytes, this validating code, the installed
``regex`` and Python; the entry (``sig-<key>.ok`` in ``~/.cache/dllogscan``, honouring
``XDG_CACHE_HOME``) holds the parsed TOML as ``marshal`` data. A changed file is a new key and
is validated afresh; a missing, unreadable or corrupt entry just means validating again.
"""
from __future__ import annotations

import hashlib
import marshal
import os
import sys
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from ..core.paths import read_cached, write_cached

VERSION = b"1"


def _regex_fingerprint() -> bytes:
    """The installed ``regex`` without importing it (~25 ms): its files' names, sizes, times."""
    spec = find_spec("regex")
    if spec is None or not spec.origin:
        return b"no-regex"
    folder = Path(spec.origin).parent
    parts = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.is_file() and entry.name.endswith((".py", ".so", ".pyd")):
            st = entry.stat()
            parts.append(f"{entry.name}:{st.st_size}:{st.st_mtime_ns}")
    return "|".join(parts).encode()


def key(files: list[tuple[str, bytes]]) -> str:
    h = hashlib.sha256(VERSION + sys.version.encode() + _regex_fingerprint())
    for module in ("database.py", "loader.py", "cache.py", "schema.py", "probes.py"):
        h.update(Path(__file__).with_name(module).read_bytes())
    for name, data in files:
        h.update(b"\0%d\0%s\0" % (len(name), name.encode()))
        h.update(hashlib.sha256(data).digest())
    return h.hexdigest()[:32]


def load(cache_key: str) -> list[dict[str, Any]] | None:
    """The parsed TOML of a set validated before, or None (absent, unreadable, corrupt)."""
    blob = read_cached(f"sig-{cache_key}.ok")
    if blob is None:
        return None
    try:
        data = marshal.loads(blob)
    except (EOFError, ValueError, TypeError):
        return None
    if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
        return None
    return data


def store(cache_key: str, parsed: list[dict[str, Any]]) -> None:
    """Record a set that passed validation; values marshal cannot hold (TOML dates) or a
    read-only cache folder just mean no entry."""
    try:
        blob = marshal.dumps(parsed)
    except ValueError:
        return
    write_cached(f"sig-{cache_key}.ok", blob)
