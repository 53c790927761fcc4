"""``dllogscan explain``: every hit, which conditions held, the facts, the classifier's view,
and the verdict."""
from __future__ import annotations

import sys
from pathlib import Path

from .. import api
from ..pipeline import runner as pipeline
from ..sources import streams as sources
from ..correlate.candidates import filter_hits
from ..correlate.scope import ELSEWHERE
from ..core.errors import SourceError


def classifier_view(source: sources.Source, scanner) -> list[str]:
    """What the text classifier makes of the source, whether or not the verdict consulted it."""
    from ..classify import light
    from ..classify.combine import about_training, scaled, speaks_of_loader
    from ..classify.digest import digest_lines
    from ..classify.prose import first_ruled_out, ruled_out_classes

    model = light.shipped()
    if model is None:
        return ["classifier: no model shipped (run `dllogscan train`)"]
    out, _ = pipeline.scan_source(source, scanner)
    lines = digest_lines(out) if out is not None else []
    if not lines:
        return ["classifier: no text to read"]
    pred = model.predict(["\n".join(t for _, t in lines)])[0]
    ranked = sorted(pred.items(), key=lambda kv: -kv[1])
    texts = [t for _, t in lines]
    relevant = about_training(texts)
    loader = speaks_of_loader(texts)
    aside = ""
    for cls in sorted(ruled_out_classes()):
        if (found := first_ruled_out(lines, cls)) is not None:
            rule, (line, _) = found
            kind = "hang" if cls == "E" else f"class {cls}"
            aside += f"; no {kind} from the classifier or a prose sentence ({rule.id}: line {line})"
    thresholds = ", ".join(f"{c} {t:.0%}" for c, t in sorted(model.thresholds.items()))
    scaling = getattr(model, "verdict_scaling", None)
    shown = ("; a verdict it weighs in on shows how often such verdicts were right, out of fold: "
             + ", ".join(f"{c:.0%} -> {scaled(c, scaling):.0%}" for c in (0.5, 0.7, 0.9, 0.99))) if scaling else ""
    return [f"classifier ({len(lines)} lines read; about training or a data loader: {'yes' if relevant else 'no'}; "
            f"speaks of the data loader or its epochs: {'yes' if loader else 'no (no hang from the classifier alone)'}{aside}): "
            + ", ".join(f"{label} {p:.0%}" for label, p in ranked[:5])
            + (f"; calibrated (temperature {model.temperature:.2f}); it diagnoses alone at {thresholds}"
               if thresholds else "") + shown]


def scan_view(source: sources.Source, scanner) -> list[str]:
    """What the scan saw beyond its hits: what cadence.py measures at the end of the source,
    whether or not the verdict used it, and whether it read Unicode blanks as spaces
    (``normalize/blanks.py``)."""
    from ..correlate.cadence import timing

    out, _ = pipeline.scan_source(source, scanner)
    silence, two_zones = timing(out.end, out.end_line) if out is not None else (None, None)
    shown = silence or two_zones
    lines = [f"timing: {shown.describe()}" if shown else "timing: no silence after timestamped progress lines"]
    if out is not None and out.folded:
        lines.append("normalize: some lines hold no-break, zero-width or other Unicode blank characters; they were "
                     "read as spaces, and the hits above show them so (the file's bytes differ: grep it for a "
                     "word, not for the whole line)")
    return lines


def explain(path: str, signatures: list[str]) -> str:
    """The explanation of one input; raises SourceError when it cannot be read at all."""
    if path == "-":  # read once: the scan and the classifier's view both need it
        data = sys.stdin.buffer.read(sources.DEFAULT_STDIN_LIMIT)
        source = sources.from_bytes(data, "-")
    else:
        source = api.as_source(Path(path), None, None)
    scanner = pipeline.get_scanner(signatures)
    result = pipeline.run(source, scanner)
    if result.error and not result.lines:
        raise SourceError(result.error)  # nothing was read: an error (exit 2), not an explanation
    db = scanner.db
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
    lines += scan_view(source, scanner)
    lines += classifier_view(source, scanner)
    lines.append(f"verdict: {len(result.diagnoses)} diagnosis(es)")
    for d in result.diagnoses:
        lines.append(f"  {d.cls}/{d.subclass}  {d.confidence:.2f}  via {d.method}: {', '.join(d.signatures)}")
        if d.cls == ELSEWHERE:
            lines += [f"    moved out of A-E (data/scope.toml): {note}" for note in d.notes]
    lines += [f"  note: {note}" for note in result.notes]
    return "\n".join(lines) + "\n"
