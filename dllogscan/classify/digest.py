"""The text a classifier reads for one source: all of it when small, else the parts that matter,
less the furniture of a bug report: an environment report (``normalize.environment``) and an
issue template's headings, checkboxes and instructions (``normalize.templates``)."""
from __future__ import annotations

from ..core import sections
from ..normalize import lines as normalize
from ..normalize.environment import environment_lines
from ..normalize.templates import template_lines
from ..scan.output import ScanOutput

MAX_DIGEST_LINES = 4000
#: inputs up to this size are read whole (reports, pastes); longer logs by their telling parts,
#: which keeps the classifier at a few milliseconds on a 100 KB job log
FULL_TEXT_BYTES = 64 * 1024


def digest_lines(out: ScanOutput) -> list[tuple[int, str]]:
    """Numbered clean lines: the whole input when it fit in the kept prefix, else its head,
    the lines around every signature hit, and its tail; never a bug report's furniture (``own_words``)."""
    if out.bytes_read <= FULL_TEXT_BYTES and out.prefix:
        lines = []
        for i, raw in enumerate(out.prefix.split(b"\n"), start=1):
            text = normalize.clean(raw)
            if text:
                lines.append((i, text))
        return own_words(lines)[:MAX_DIGEST_LINES]
    seen: dict[int, str] = dict(out.head)
    for hit in out.hits:
        seen.update(hit.before)
        seen[hit.line] = hit.text
        seen.update(hit.after)
    seen.update(out.tail)
    return own_words(sorted(seen.items()))[:MAX_DIGEST_LINES]


def own_words(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """``lines`` less an environment report's (versions and hardware, ``data/environment.toml``),
    an issue template's (``data/templates.toml``) and the part headers a flattened thread got
    from the tool (``--- comment 2 by bob ---``, ``core.sections``): what the reporter wrote or pasted."""
    drop = environment_lines(lines) | template_lines(lines)
    drop |= {n for n, t in lines if t.startswith("--- ") and sections.HEADER.fullmatch(t)}
    return [(n, t) for n, t in lines if n not in drop] if drop else lines


def digest_text(out: ScanOutput) -> str:
    return "\n".join(text for _, text in digest_lines(out))
