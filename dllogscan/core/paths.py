"""Where dllogscan's own files live: the package, its data folder and the user's cache, and how
a cache entry is read and written (a missing or unwritable cache only means doing the work again)."""
from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = PACKAGE_DIR / "data"


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/dllogscan`` (``~/.cache/dllogscan``): compiled prefilters, validated
    signature sets, the classifier's parameters in binary."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dllogscan"


def read_cached(name: str) -> bytes | None:
    """The bytes of cache entry ``name``, or None when it is absent or unreadable."""
    try:
        return (cache_dir() / name).read_bytes()
    except OSError:
        return None


def write_cached(name: str, blob: bytes) -> None:
    """Store cache entry ``name`` whole or not at all (written aside, then renamed, so a reader
    never sees half of it); a read-only or missing home just means no entry."""
    path = cache_dir() / name
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(blob)
        os.replace(tmp, path)
    except OSError:
        pass


def data_document(path: Path) -> dict:
    """A TOML data file; one that cannot be read or parsed raises ``SignatureError`` naming it."""
    import tomllib

    from .errors import SignatureError

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SignatureError(f"{path}: cannot load: {exc}") from None


def alternatives(*patterns: str) -> str:
    """One pattern that matches where any of the non-empty ``patterns`` does."""
    return "|".join(f"(?:{p})" for p in patterns if p)


def data_pattern(path: Path, where: str, pattern: str):
    """A data file's case-insensitive pattern, compiled; a bad one raises ``SignatureError`` naming
    the file and ``where`` in it."""
    import regex

    from .errors import SignatureError

    try:
        return regex.compile(pattern, regex.IGNORECASE)
    except regex.error as exc:
        raise SignatureError(f"{path}: {where}: bad pattern: {exc}") from None


def data_entries(path: Path, key: str) -> list[dict]:
    """The ``[[key]]`` tables of a TOML data file (see ``data_document``)."""
    return list(data_document(path).get(key, []))
