"""Add real threads to corpus/threads/: validate, check against the held-out list, refuse duplicates.

    python3 corpus/threads/add.py < items.jsonl            # add them
    python3 corpus/threads/add.py --check < items.jsonl    # the same checks, nothing written
    python3 corpus/threads/add.py --url URL [URL ...]      # held out, already here, or new?

One JSON object per line: {"stem": "...", "text": "<the .md body>", "meta": {...sidecar...}}.
The sidecar's fields are described in README.md here. An item is refused (and named on stderr)
when a field is missing or wrong, when its URL is held out (../shared/heldout/check.py), or when a
thread with the same canonical URL is already in the corpus or earlier in the input. Exit 1 when
anything was refused (``--url``: when any URL is held out or already here). Finders run ``--url``
on each candidate before writing it up and ``--check`` on their file (BRIEF.md here).
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
HELDOUT = HERE.parents[2] / "shared" / "heldout"
LABELS = {"A", "B", "C", "D", "E", "none"}
B_SUBS = {"oom", "getitem", "crash"}
E_CAUSES = {"lock-fork", "cv-threads", "hdf5-lmdb", "tokenizers", "slow-start", "timeout",
            "nccl-data-stall", "unknown", None}
STEM = re.compile(r"^(?:[a-e]|none)-[a-z0-9][a-z0-9._-]{2,120}$")


def _canonical():
    if not HELDOUT.exists():
        sys.exit(f"Error: {HELDOUT} not found: cannot check held-out sources")
    sys.path.insert(0, str(HELDOUT))
    from check import canonical, is_held_out  # type: ignore[import-not-found]
    return canonical, is_held_out


def existing_urls(canonical) -> dict[str, str]:
    seen = {}
    for meta in HERE.glob("*.meta.json"):
        url = json.loads(meta.read_text(encoding="utf-8")).get("source_url", "")
        seen[canonical(url)] = meta.name
    return seen


def problems(item: dict) -> list[str]:
    out = []
    stem, text, meta = item.get("stem", ""), item.get("text", ""), item.get("meta", {})
    if not STEM.match(stem):
        out.append(f"stem {stem!r}: lower-case '<label>-<owner>-<repo>-<n>' expected")
    if not isinstance(text, str) or len(text.strip()) < 80:
        out.append("text missing or under 80 characters")
    label = meta.get("label")
    if label not in LABELS:
        out.append(f"label {label!r}")
    elif not stem.startswith(label.lower() + "-"):
        out.append("stem must start with the label")
    if label == "B" and meta.get("subclass") not in B_SUBS:
        out.append("class B needs subclass oom|getitem|crash")
    if label == "E" and meta.get("e_cause") not in E_CAUSES:
        out.append(f"e_cause {meta.get('e_cause')!r}")
    for key in ("scenario", "source_url", "why"):
        if not isinstance(meta.get(key), str) or not meta.get(key).strip():
            out.append(f"{key} missing")
    if meta.get("source_kind") not in {"issues", "pages"}:
        out.append("source_kind must be issues|pages")
    if not isinstance(meta.get("ambiguous"), bool):
        out.append("ambiguous must be true/false")
    labels = meta.get("labels")
    if not isinstance(labels, dict) or (labels.get("first") != label and not labels.get("rule")):
        out.append("labels.first must equal label (unless a written rule, labels.rule, set it)")
    ev = meta.get("evidence")
    if ev and ev not in text:
        out.append("evidence is not a substring of text")
    return out


def verdict(url: str, seen: dict[str, str], canonical, is_held_out) -> str | None:
    """Why ``url`` cannot be used (held out, or a thread already here), or None when it is new."""
    if is_held_out(url):
        return f"HELD OUT: {url} (never use it)"
    if canonical(url) in seen:
        return f"duplicate of {seen[canonical(url)]}"
    return None


def check_urls(urls: list[str]) -> int:
    canonical, is_held_out = _canonical()
    seen = existing_urls(canonical)
    found = [(url, verdict(url, seen, canonical, is_held_out)) for url in urls]
    for url, why in found:
        print(f"{url}: {why or 'new'}")
    return 1 if any(why for _, why in found) else 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--url"]:
        return check_urls(argv[1:])
    write = argv[:1] != ["--check"]
    canonical, is_held_out = _canonical()
    seen = existing_urls(canonical)
    refused = 0
    for n, line in enumerate(sys.stdin, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            print(f"line {n}: not JSON: {exc}", file=sys.stderr)
            refused += 1
            continue
        stem = item.get("stem", f"line {n}")
        errs = problems(item)
        url = item.get("meta", {}).get("source_url", "")
        if url and (why := verdict(url, seen, canonical, is_held_out)):
            errs.append(why)
        if STEM.match(stem) and (HERE / f"{stem}.meta.json").exists():
            errs.append(f"a thread named {stem} is already here")
        if errs:
            print(f"{stem}: refused: " + "; ".join(errs), file=sys.stderr)
            refused += 1
            continue
        seen[canonical(url)] = stem
        if not write:
            print(f"{stem}: ok")
            continue
        meta = {"kind": "thread", "e_cause": None, "evidence": None,
                "made_by": "real thread (search tool); prose paraphrased, error output verbatim",
                **item["meta"]}
        meta["labels"] = {"first": meta["label"], "second": meta["labels"].get("second")}
        text = item["text"] if item["text"].endswith("\n") else item["text"] + "\n"
        (HERE / f"{stem}.md").write_text(text, encoding="utf-8")
        (HERE / f"{stem}.meta.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n",
                                                encoding="utf-8")
        print(f"{stem}: added")
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
