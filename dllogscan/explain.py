"""``dllogscan explain``: every hit, which conditions held, the facts, and the verdict."""
from __future__ import annotations

from pathlib import Path

from . import api, pipeline
from .correlate import filter_hits


def explain(path: str, signatures: list[str]) -> str:
    result = api.scan(path if path == "-" else Path(path), signatures=signatures)
    db = pipeline.get_scanner(signatures).db
    kept = {id(h) for h in filter_hits(list(result.hits), db)}
    lines = [f"source: {result.source}  lines: {result.lines}  bytes: {result.bytes_read}"]
    if result.error:
        lines.append(f"error: {result.error}")
    lines.append(f"signature hits: {len(result.hits)}")
    for hit in result.hits:
        sig = db.by_id[hit.signature]
        state = "kept" if id(hit) in kept else "dropped (requires/excludes)"
        lines.append(f"  line {hit.line:>7}  {sig.id}  [{sig.role}, class {sig.cls}, weight {sig.weight}, "
                     f"priority {sig.priority}] {state}")
        lines.append(f"                {hit.text}")
        if hit.facts:
            lines.append("                facts: " + ", ".join(f"{k}={v}" for k, v in hit.facts.items()))
    if result.facts:
        lines.append("source facts: " + ", ".join(f"{k}={v}" for k, v in result.facts.items()))
    lines.append(f"verdict: {len(result.diagnoses)} diagnosis(es)")
    for d in result.diagnoses:
        lines.append(f"  {d.cls}/{d.subclass}  {d.confidence:.2f}  via {d.method}: {', '.join(d.signatures)}")
    return "\n".join(lines) + "\n"
