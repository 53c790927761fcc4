"""The text a classifier reads for one source: all of it when small, else the parts that matter."""
from __future__ import annotations

from ..normalize import lines as normalize
from ..scan.output import ScanOutput

MAX_DIGEST_LINES = 4000
#: inputs up to this size are read whole (reports, pastes); longer logs by their telling parts,
#: which keeps the classifier at a few milliseconds on a 100 KB job log
FULL_TEXT_BYTES = 64 * 1024


def digest_lines(out: ScanOutput) -> list[tuple[int, str]]:
    """Numbered clean lines: the whole input when it fit in the kept prefix, else its head,
    the lines around every signature hit, and its tail."""
    if out.bytes_read <= FULL_TEXT_BYTES and out.prefix:
        lines = []
        for i, raw in enumerate(out.prefix.split(b"\n"), start=1):
            text = normalize.clean(raw)
            if text:
                lines.append((i, text))
        return lines[:MAX_DIGEST_LINES]
    seen: dict[int, str] = dict(out.head)
    for hit in out.hits:
        seen.update(hit.before)
        seen[hit.line] = hit.text
        seen.update(hit.after)
    seen.update(out.tail)
    return sorted(seen.items())[:MAX_DIGEST_LINES]


def digest_text(out: ScanOutput) -> str:
    return "\n".join(text for _, text in digest_lines(out))
