"""Time the shipped classifier's predictions (``classify.light``) on corpus texts.

Every tenth thread of ``corpus/threads`` and every torch log of ``corpus/logs`` (the first 20 000
characters of each, as the evaluation reads them), predicted one at a time: cold (the model's
per-word or per-line cache emptied before each text, as a one-file run sees it) and warm (the same texts
again, as a batch worker that has predicted before sees them). Best of ``--repeat`` passes, in
milliseconds per prediction, with the mean number of nonzero features.

    python bench/classifier_bench.py
    cd <other checkout> && python /path/to/bench/classifier_bench.py --root .   # before / after

There is no grep to set beside it: this is one stage of a scan (``bench/batch_bench.py`` gives the
whole run against ``grep -F``).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def texts(root: Path) -> list[str]:
    files = sorted((root / "corpus" / "threads").glob("*.md"))[::10] + sorted((root / "corpus" / "logs").rglob("*.log"))
    return [f.read_text(encoding="utf-8", errors="replace")[:20000] for f in files]


def best_ms(run, n: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best / n * 1e3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the checkout whose dllogscan and shipped model are timed")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.root.resolve()))
    from dllogscan.classify import light, model

    m = light.load(model.SHIPPED)
    corpus = texts(args.root)

    def cold() -> None:
        for text in corpus:
            for cache in ("_word_columns", "_line_columns"):  # whichever the checkout's model keeps
                getattr(m, cache, {}).clear()
            m.predict([text])

    def warm() -> None:
        for text in corpus:
            m.predict([text])

    warm()
    features = sum(len(m.features(t)) for t in corpus) / len(corpus)
    print(f"{len(corpus)} texts, {sum(map(len, corpus)) // len(corpus)} characters and {features:.0f} features "
          f"on average; character block {model.VECTORIZERS['char']['analyzer']} "
          f"{tuple(model.VECTORIZERS['char']['ngram_range'])}")
    print(f"cold: {best_ms(cold, len(corpus), args.repeat):.2f} ms a prediction")
    print(f"warm: {best_ms(warm, len(corpus), args.repeat):.2f} ms a prediction")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
