"""Does an environment report, or an issue template, move the verdict? Threads scored as written,
with PyTorch's `collect_env` output appended, and (--template) filed through a bug template.

    python bench/env_shift.py              # about 5 min: one model per fold, as `dllogscan eval`
    python bench/env_shift.py --template   # about 8 min: the three versions of each thread

PyTorch's bug template (and many projects' templates) asks for the output of
`python -m torch.utils.collect_env` under a "Versions" heading, so a report pasted whole carries
20 to 80 lines of versions, CUDA builds, GPU models and pip packages. corpus/threads keeps few of
them (the threads were made with the error output and the reporter's account; 29 of 3917 keep a
trimmed block), so the cross-validated figures say nothing of how the classifier reads a report
that has one: the block is full of CUDA words, which speak for class D to a bag of words.

The blocks appended are real `collect_env` output: those kept in corpus/threads (10 lines or more)
and this machine's own (`python -m torch.utils.collect_env`, CPU build, the full current format
with CPU flags and the pip list), read from `bench/env_shift/`. Each thread gets one block chosen by
its name, never one from its own repository, under the heading PyTorch's template gives it. Each
thread, as written and with the block, is scored by the model of the fold that holds it out (the
grouped folds of `dllogscan eval`). It prints one table row per system and version, then every
verdict the block changed.

With --template each thread is also rendered into one of five real bug templates
(`bench/env_shift/templates/`: PyTorch's, Ultralytics', MMDetection's and Hugging Face's issue forms
as GitHub renders them, and MMDetection's markdown error report with its instructions left in),
chosen by its name: the thread's title stays the issue's title, its body goes in the template's
description field and a block as above in its environment field.
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BLOCKS = ROOT / "bench" / "env_shift"
TEMPLATES = BLOCKS / "templates"
sys.path.insert(0, str(ROOT))

from dllogscan.evaluation.corpus import Item, folds_of, load_items  # noqa: E402
from dllogscan.evaluation.evaluate import CLASSES, FOLDS, Scores, predict  # noqa: E402
from style_shift import table  # noqa: E402 - the same table: per system and version of the text

SYSTEMS = ("classifier", "combined")
#: where a block starts in a thread of the corpus, and the least lines worth taking
START = re.compile(r"^(?:Collecting environment information|PyTorch version: )")
MIN_LINES = 10
HEADING = "### Versions"


def corpus_blocks(items: list[Item]) -> list[tuple[str, str]]:
    """(scenario, block) of each collect_env output kept in a thread, MIN_LINES or longer."""
    out = []
    for item in items:
        if item.kind != "thread":
            continue
        lines = item.path.read_text(encoding="utf-8", errors="replace").splitlines()
        for i, line in enumerate(lines):
            if START.match(line.strip()):
                end = next((j for j in range(i, len(lines)) if lines[j].startswith("```")), len(lines))
                if end - i >= MIN_LINES:
                    out.append((item.scenario, "\n".join(lines[i:end])))
                break
    return out


def shipped_blocks() -> list[tuple[str, str]]:
    """The blocks kept in ``bench/env_shift/`` (no repository of the corpus)."""
    return [("", p.read_text(encoding="utf-8")) for p in sorted(BLOCKS.glob("*.txt"))]


def shipped_templates() -> list[str]:
    """The rendered bug templates of ``bench/env_shift/templates/``, each with ``{body}`` and
    ``{versions}``."""
    return [p.read_text(encoding="utf-8") for p in sorted(TEMPLATES.glob("*.txt"))]


def _pick(item: Item, choices: list, salt: str = "") -> object:
    """One of ``choices``, chosen by the item's name."""
    return choices[int(hashlib.sha256((salt + item.path.name).encode()).hexdigest(), 16) % len(choices)]


def _block_for(item: Item, blocks: list[tuple[str, str]]) -> str:
    """A block for ``item``, fenced, never one from its own repository."""
    return "```\n" + str(_pick(item, [b for scenario, b in blocks if scenario != item.scenario])).strip() + "\n```"


def with_block(item: Item, blocks: list[tuple[str, str]], folder: Path) -> Item:
    """``item`` with one block appended (chosen by its name, from another repository), written
    to ``folder`` under the same name."""
    text = item.path.read_text(encoding="utf-8", errors="replace").rstrip("\n")
    path = folder / item.path.name
    path.write_text(f"{text}\n\n{HEADING}\n\n{_block_for(item, blocks)}\n", encoding="utf-8")
    return dataclasses.replace(item, path=path)


def in_template(item: Item, blocks: list[tuple[str, str]], templates: list[str], folder: Path) -> Item:
    """``item`` filed through one of ``templates`` (chosen by its name): its first line, the
    title, stays first; the rest goes at ``{body}``, a block at ``{versions}``."""
    title, _, body = item.path.read_text(encoding="utf-8", errors="replace").strip("\n").partition("\n")
    template = str(_pick(item, templates, "template:"))
    filled = template.replace("{versions}", _block_for(item, blocks)).replace("{body}", body.strip("\n"))
    path = folder / item.path.name
    path.write_text(f"{title}\n\n{filled}", encoding="utf-8")
    return dataclasses.replace(item, path=path)


def score(items: list[Item], fold_of: list[int], blocks: list[tuple[str, str]], folder: Path,
          templates: list[str] | None = None) -> tuple[dict[str, dict[str, Scores]], list[str]]:
    """{system: {"written" | "with versions" | "in a template": Scores}} (the last with
    ``templates``) and a line per verdict the block or the template changed."""
    from dllogscan.evaluation.train import train_items

    versions = ("with versions", "in a template") if templates else ("with versions",)
    results = {s: {v: Scores() for v in ("written", *versions)} for s in SYSTEMS}
    changed = []
    for fold in sorted(set(fold_of)):
        test = [i for i, f in zip(items, fold_of) if f == fold and not i.ambiguous and i.kind == "thread"]
        if not test:
            continue
        model = train_items([i for i, f in zip(items, fold_of) if f != fold])
        for item in test:
            truth = item.label if item.label in CLASSES else "none"
            others = {"with versions": with_block(item, blocks, folder / "versions")}
            if templates:
                others["in a template"] = in_template(item, blocks, templates, folder / "template")
            for system in SYSTEMS:
                got, conf = predict(item, system, model)
                results[system]["written"].add(truth, got, str(item.path), conf)
                for version, other in others.items():
                    got2, conf2 = predict(other, system, model)
                    results[system][version].add(truth, got2, str(other.path), conf2)
                    if got != got2:
                        mark = "+" if got2 == truth else "-" if got == truth else "~"
                        changed.append(f"{mark} {system}, {version}: {item.path.stem} (truth {truth}): {got} -> {got2}")
    return results, changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--salt", default="", help="another draw of the folds (as `dllogscan eval --salt`)")
    parser.add_argument("--template", action="store_true", help="also file each thread through a bug template")
    args = parser.parse_args(argv)
    items = load_items()
    blocks = corpus_blocks(items) + shipped_blocks()
    if len({s for s, _ in blocks}) < 2:
        print(f"Error: fewer than two sources of collect_env blocks (corpus/threads, {BLOCKS})", file=sys.stderr)
        return 1
    fold_of = folds_of(items, FOLDS, args.salt)
    t0 = time.time()
    templates = shipped_templates() if args.template else None
    with tempfile.TemporaryDirectory(prefix="env_shift-") as tmp:
        for sub in ("versions", "template"):
            (Path(tmp) / sub).mkdir()
        results, changed = score(items, fold_of, blocks, Path(tmp), templates)
    print("\n".join(table(results)))
    print(f"\nVerdicts the block or template changed ({len(changed)}; + right now, - wrong now, ~ wrong both ways):")
    print("\n".join(f"- {line}" for line in changed) or "- none")
    print(f"\n{len(blocks)} blocks, {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
