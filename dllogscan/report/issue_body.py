"""``dllogscan report``: a ready-to-file issue body with the environment, the signatures that
matched, the evidence and a stable duplicate key (the same failure always gets the same key)."""
from __future__ import annotations

import platform
import re
import sys
from typing import Sequence

from ..core.models import Diagnosis, ScanResult
from ..core.printable import strip_controls
from .markdown import code, fence, verdict

KEY_PART_RE = re.compile(r"[^A-Za-z0-9_.-]+")


def _part(value: str | None) -> str:
    return KEY_PART_RE.sub("", value or "")[:80] or "-"


def duplicate_key(d: Diagnosis) -> str:
    """``dllogscan:<class>/<subclass>:<exception or signal>:<signature>``, from the class, the
    subclass, the exception (or signal, in lower case: PyTorch writes "Bus error" and "bus error")
    name and a signature: never pids, paths or hosts. The signature is the first by name of the
    class's own (else of all), not the first in the text, so a whole log and its last line agree."""
    cause = d.facts.get("exception") or (d.facts.get("signal") or "").lower()
    own = sorted(s for s in d.signatures if s.startswith(f"{d.cls}."))
    sig = (own or sorted(d.signatures) or [d.method])[0]
    return f"dllogscan:{d.cls}/{_part(d.subclass)}:{_part(cause)}:{_part(sig)}"


def _package_version(name: str) -> str:
    """A package's installed version from its metadata (nothing imported, so torch stays cold)."""
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def environment() -> list[tuple[str, str]]:
    from .. import __version__

    return [("dllogscan", __version__), ("python", platform.python_version()),
            ("platform", f"{platform.system()} {platform.release()} ({platform.machine()})"),
            ("torch", _package_version("torch")), ("implementation", sys.implementation.name)]


def to_issue_body(results: Sequence[ScanResult]) -> str:
    out: list[str] = []
    for r in results:
        d = r.diagnoses[0] if r.diagnoses else None
        title = f"DataLoader class {d.cls}/{d.subclass or '-'}: {d.title}" if d else "DataLoader: no known failure found"
        out += [f"### {title}", "", verdict(r), ""]
        if d:
            out += [f"Duplicate key: `{duplicate_key(d)}`", ""]
        out += ["#### Environment", "", "| | |", "| --- | --- |"]
        out += [f"| {k} | {v} |" for k, v in environment()]
        out += ["", f"Source: {code(r.source)} ({r.lines} lines{', read as a ' + r.document if r.document else ''})", ""]
        if r.error:
            out += [f"Could not read it fully: {code(r.error)}", ""]
        for i, diag in enumerate(r.diagnoses, start=1):
            out += [f"#### {i}. Class {diag.cls}/{diag.subclass or '-'} ({diag.confidence:.0%})", "",
                    f"- key: `{duplicate_key(diag)}`",
                    f"- signatures: {', '.join(f'`{s}`' for s in diag.signatures) or diag.method}"]
            out += [f"- {k}: {code(str(v))}" for k, v in sorted(diag.facts.items())]
            out += ["", "Evidence:", ""] + fence([f"{e.line}: {e.text}" for e in diag.evidence], "text")
            if diag.fixes:
                out += ["", f"Suggested first fix: **{diag.fixes[0].title}**"]
            out.append("")
    out.append("<sub>Written by dllogscan report; review before filing (`--redact` hides credentials, hosts, users, IPs, job ids, e-mails).</sub>")
    return strip_controls("\n".join(out).rstrip() + "\n")
