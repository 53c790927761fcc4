"""A ready issue reply: verdict, quoted evidence, ranked fixes with their commands."""
from __future__ import annotations

from typing import Sequence

from ..models import Diagnosis, ScanResult

CLASS_NAMES = {
    "A": "shared memory (/dev/shm) exhausted",
    "B": "a worker exited",
    "C": "file descriptors exhausted",
    "D": "CUDA used in a forked worker",
    "E": "a hang or stall",
}


def _diagnosis(d: Diagnosis, rank: int) -> list[str]:
    sub = f" / {d.subclass}" if d.subclass else ""
    out = [f"### {rank}. Class {d.cls}{sub}: {d.title}", "",
           f"Confidence **{d.confidence:.0%}** ({CLASS_NAMES.get(d.cls, 'other')})"
           + (f", seen {d.count} times" if d.count > 1 else "") + ".", ""]
    if d.evidence:
        out.append("Evidence:")
        out.append("")
        out += [f"> line {e.line}: `{e.text.replace('`', chr(39))}`" for e in d.evidence]
        out.append("")
    out += [f"- {n}" for n in d.notes]
    if d.notes:
        out.append("")
    if d.fixes:
        out.append("What to do:")
        out.append("")
        for f in d.fixes:
            out.append(f"{f.rank}. **{f.title}** — {f.why}")
            if f.commands:
                out.append("")
                out.append("   ```sh")
                out += [f"   {c}" for c in f.commands]
                out.append("   ```")
            if f.code:
                out.append("")
                out.append("   ```python")
                out += [f"   {line}" for line in f.code.strip().splitlines()]
                out.append("   ```")
        out.append("")
    return out


def to_markdown(results: Sequence[ScanResult]) -> str:
    out: list[str] = []
    for r in results:
        out.append(f"## dllogscan: `{r.source}`")
        out.append("")
        if r.error:
            out += [f"**Could not read it fully:** {r.error}", ""]
        if not r.diagnoses:
            out += ["No DataLoader worker failure found in this input.", ""]
        for i, d in enumerate(r.diagnoses, start=1):
            out += _diagnosis(d, i)
    return "\n".join(out).rstrip() + "\n"
