"""``dllogscan eval`` and ``dllogscan train``: accuracy on the held-out split; the shipped model."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    @app.command("eval", epilog="[bold]Example[/bold]\n\n  dllogscan eval            # corpus/ of this checkout\n"
                                "  dllogscan eval --misses  # list every held-out item it got wrong\n"
                                "  dllogscan eval --cross   # 3-fold cross-validation by scenario")
    def eval_command(
        corpus: Optional[Path] = typer.Option(None, help="Corpus folder (default: corpus/ of the checkout)."),
        show_misses: bool = typer.Option(False, "--misses", help="List the held-out items it got wrong."),
        cross: bool = typer.Option(False, "--cross", help="Cross-validate: 3 folds by scenario, every item tested once."),
    ) -> None:
        """Per-class precision, recall and F1 on the held-out split (split by scenario):
        signatures alone, classifier alone, combined. Exit 1 when a quality gate fails."""
        from ..evaluation import THRESHOLDS, evaluate, format_tables, gates, misses

        results = evaluate(corpus, folds=(0, 1, 2) if cross else (0,))
        sys.stdout.write(format_tables(results) + "\n")
        failed = False
        for name, (value, ok) in gates(results).items():
            sys.stdout.write(f"{name}: {value:.3f} {'ok' if ok else 'FAILED'} (threshold {THRESHOLDS[name]})\n")
            failed |= not ok
        if show_misses:
            sys.stdout.write("".join(f"miss: {m}\n" for m in misses(results)))
        raise typer.Exit(1 if failed else 0)

    @app.command("train", epilog="[bold]Example[/bold]\n\n  dllogscan train   # rewrites dllogscan/data/classifier.json.gz")
    def train_command(
        corpus: Optional[Path] = typer.Option(None, help="Corpus folder (default: corpus/ of the checkout)."),
        out: Optional[Path] = typer.Option(None, help="Where to write the parameters (default: the shipped file)."),
    ) -> None:
        """Train the text classifier on the whole corpus and write its parameters (JSON, no pickle)."""
        from ..classify.model import SHIPPED
        from ..classify.train import train_and_export

        meta = train_and_export(corpus, out or SHIPPED)
        sys.stdout.write(f"trained on {meta['items']} items (corpus {meta['corpus_hash']}, "
                         f"scikit-learn {meta['sklearn']}) -> {out or SHIPPED}\n")
