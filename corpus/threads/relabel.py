"""The second, independent labelling pass over corpus/threads/.

    python3 corpus/threads/relabel.py sheet [--part N/M] [--new] > sheet.jsonl  # blind: no label
    python3 corpus/threads/relabel.py apply < second.jsonl                      # record them

``--new`` keeps the items no second pass has labelled yet. A sheet row is {"id", "text", "why"}:
what a second labeller reads, without the first label (the stem names the label, so the row
carries a stable opaque id, sha1 of the stem, instead).
A second-label row is {"id", "label", "subclass", "undecidable"} (``undecidable``: the text and
``why`` do not decide the class). ``apply`` writes ``labels.second`` and sets ``ambiguous`` when the
two passes disagree on the class or the second finds the class undecidable (not where a written
rule, ``labels.rule``, set the label: that stays); the first pass's own flag is kept as
``ambiguous_first``.
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LABELS = {"A", "B", "C", "D", "E", "none"}


def opaque(stem: str) -> str:
    return "t" + hashlib.sha1(stem.encode()).hexdigest()[:10]


def sheet(part: str | None, new_only: bool = False) -> None:
    metas = sorted(HERE.glob("*.meta.json"))
    if new_only:
        metas = [p for p in metas if not json.loads(p.read_text(encoding="utf-8"))["labels"].get("second")]
    if part:
        n, m = (int(x) for x in part.split("/"))
        metas = metas[n - 1::m]
    for meta_path in metas:
        stem = meta_path.name[: -len(".meta.json")]
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        text = (HERE / f"{stem}.md").read_text(encoding="utf-8")
        print(json.dumps({"id": opaque(stem), "text": text, "why": meta["why"]}, ensure_ascii=False))


def apply() -> int:
    stems = {opaque(p.name[: -len(".meta.json")]): p.name[: -len(".meta.json")] for p in HERE.glob("*.meta.json")}
    bad = 0
    for line in sys.stdin:
        if not line.strip():
            continue
        row = json.loads(line)
        path = HERE / f"{stems.get(row.get('id'), '?')}.meta.json"
        if not path.exists() or row.get("label") not in LABELS:
            print(f"{row.get('id')}: unknown id or label {row.get('label')!r}", file=sys.stderr)
            bad += 1
            continue
        meta = json.loads(path.read_text(encoding="utf-8"))
        meta.setdefault("ambiguous_first", meta["ambiguous"])
        rule = meta["labels"].get("rule")
        meta["labels"] = {"first": meta["labels"]["first"], "second": row["label"]}
        if row.get("subclass"):
            meta["labels"]["second_subclass"] = row["subclass"]
        if rule:  # a written rule set the label (README): the passes are recorded, the rule decides
            meta["labels"]["rule"] = rule
        else:
            meta["ambiguous"] = bool(row["label"] != meta["label"] or row.get("undecidable"))
        path.write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["sheet"]:
        args = sys.argv[2:]
        sheet(args[args.index("--part") + 1] if "--part" in args else None, "--new" in args)
    elif sys.argv[1:2] == ["apply"]:
        sys.exit(apply())
    else:
        sys.exit(__doc__)
