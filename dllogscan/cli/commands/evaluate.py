"""``dllogscan eval`` and ``dllogscan train``: cross-validated accuracy; the shipped model."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    @app.command("eval", short_help="Cross-validated precision, recall, F1, false alarms and calibration on "
                                    "the corpus.",
                 epilog="[bold]Example[/bold]\n\n  dllogscan eval             # corpus/ of this checkout, 5 folds\n"
                        "  dllogscan eval --misses   # list every item it got wrong\n"
                        "  dllogscan eval --folds 3  # fewer, larger folds")
    def eval_command(
        corpus: Optional[Path] = typer.Option(None, help="Corpus folder (default: corpus/ of the checkout)."),
        show_misses: bool = typer.Option(False, "--misses", help="List the items it got wrong."),
        folds: int = typer.Option(5, "--folds", min=2, max=20, help="Number of folds (threads by repository, written items by scenario)."),
        cross: bool = typer.Option(False, "--cross", hidden=True, help="Deprecated: every run cross-validates."),
    ) -> None:
        """Cross-validated per-class precision, recall and F1 (real threads grouped by repository,
        the headline; written reports and torch logs by scenario), false alarms on none, and a
        reliability table with the expected calibration error: signatures alone, classifier alone,
        combined. Exit 1 when a quality gate fails."""
        from ...evaluation.evaluate import evaluate, format_reliability, format_tables, gate_lines, gates, misses

        if cross:
            sys.stderr.write("dllogscan: --cross is deprecated: every eval run cross-validates\n")
        results = evaluate(corpus, k=folds)
        sys.stdout.write(format_tables(results) + "\n" + format_reliability(results) + "\n")
        sys.stdout.write("".join(line + "\n" for line in gate_lines(results)))
        failed = not all(ok for _, ok in gates(results).values())
        if show_misses:
            sys.stdout.write("".join(f"miss: {m}\n" for m in misses(results)))
        raise typer.Exit(1 if failed else 0)

    @app.command("train", epilog="[bold]Example[/bold]\n\n  dllogscan train   # rewrites dllogscan/data/classifier.json.gz")
    def train_command(
        corpus: Optional[Path] = typer.Option(None, help="Corpus folder (default: corpus/ of the checkout)."),
        out: Optional[Path] = typer.Option(None, help="Where to write the parameters (default: the shipped file)."),
    ) -> None:
        """Train the text classifier on the whole corpus and write its parameters (JSON, no pickle)."""
        from ...classify.model import SHIPPED
        from ...evaluation.train import train_and_export

        meta = train_and_export(corpus, out or SHIPPED)
        sys.stdout.write(f"trained on {meta['items']} items (corpus {meta['corpus_hash']}, "
                         f"scikit-learn {meta['sklearn']}) -> {out or SHIPPED}\n")
