"""GitHub Actions workflow commands: one ``::error`` annotation per diagnosis, so a failed
training job in CI shows the diagnosis on the run page.

Escaping follows the runner's rules (actions/toolkit ``command.ts``): in the message ``%``,
``\\r`` and ``\\n``; in properties also ``:`` and ``,``. GitHub shows at most 10 error annotations
per step; past that a single notice says how many were left out.
"""
from __future__ import annotations

from typing import Sequence

from ..core.models import Diagnosis, ScanResult
from ..core.printable import strip_controls

MAX_ERRORS = 10
MAX_MESSAGE = 4000
MAX_TITLE = 200


def escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def command(kind: str, message: str, **props: object) -> str:
    """``::kind key=value,...::message`` with both parts escaped and the message capped."""
    if len(message) > MAX_MESSAGE:
        message = message[: MAX_MESSAGE - 1] + "…"
    prop = ",".join(f"{k}={escape_property(str(v))}" for k, v in props.items() if v not in (None, ""))
    return f"::{kind}{' ' + prop if prop else ''}::{escape_data(message)}"


def _file(r: ScanResult) -> str | None:
    """Only a real file path can anchor an annotation (not stdin, a paste or a flattened issue)."""
    return None if r.source in ("-", "paste", "text") or r.document else r.source


def _message(d: Diagnosis) -> str:
    lines = [f"{d.title} ({d.confidence:.0%} sure)"]
    lines += [f"line {e.line}: {e.text}" for e in d.evidence[:3]]
    for f in d.fixes[:2]:
        lines.append(f"Fix {f.rank}: {f.title}" + (f" — run: {f.commands[0]}" if f.commands else ""))
    return "\n".join(lines)


def to_github(results: Sequence[ScanResult]) -> str:
    out: list[str] = []
    errors = left_out = 0
    for r in results:
        if r.error:
            out.append(command("warning", f"dllogscan: {r.error}", title="dllogscan: input not fully read"))
        if not r.diagnoses:
            said = (f"no DataLoader worker failure diagnosed in {r.source}; note: " + " / ".join(r.notes)
                    if r.notes else f"no DataLoader worker failure found in {r.source}")
            out.append(command("notice", f"dllogscan: {said}"))
        for d in r.diagnoses:
            if errors >= MAX_ERRORS:
                left_out += 1
                continue
            errors += 1
            sub = f"/{d.subclass}" if d.subclass else ""
            title = f"dllogscan: DataLoader class {d.cls}{sub}"[:MAX_TITLE]
            line = d.evidence[0].line if d.evidence and _file(r) else None
            out.append(command("error", _message(d), file=_file(r), line=line, title=title))
    if left_out:
        out.append(command("notice", f"dllogscan: {left_out} more diagnoses not annotated "
                                     f"(GitHub shows at most {MAX_ERRORS} errors per step)"))
    return "".join(strip_controls(line) + "\n" for line in out)
