"""Write one bench's figures into its own block of ``bench/RESULTS.md`` (between
``<!-- NAME:start -->`` and ``<!-- NAME:end -->``), leaving the rest of the file as it is."""
from __future__ import annotations

from pathlib import Path


def write_block(path: Path, name: str, text: str) -> None:
    """Replace the ``name`` block of ``path`` with ``text`` (appended when the block is absent)."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    old = path.read_text() if path.exists() else ""
    block = f"{start}\n{text}\n{end}"
    if start in old and end in old:
        new = old[:old.index(start)] + block + old[old.index(end) + len(end):]
    else:
        new = old.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(new)
