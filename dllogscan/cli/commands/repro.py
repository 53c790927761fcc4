"""``dllogscan repro``: the reproduction ladder num_workers 0 -> 1 -> N."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..options import LEAST_HANG

#: the most workers a rung starts: more than any machine's cores, fewer than a typo's 99999 processes
MAX_WORKERS = 1024


def register(app: typer.Typer) -> None:
    @app.command(epilog="""[bold]Examples[/bold]

  dllogscan repro mydata:make_dataset
  dllogscan repro mydata:make_loader
  dllogscan repro mydata:make_dataset --workers 0,1,8 --batches 20 --timeout 2m
  dllogscan repro mydata:make_dataset --worker-init mydata:seed_worker --pin-memory
  dllogscan repro mydata:make_dataset --spawn --collate mydata:collate --format json

A factory returning your DataLoader runs it as you configured it: each rung
rebuilds it with all its settings (worker_init_fn, sampler, pin_memory,
prefetch_factor, ...) but num_workers; num_workers=0 leaves out what torch
takes only with workers (prefetch_factor, persistent_workers, timeout,
multiprocessing_context). --batch-size, --collate, --worker-init, --spawn and
--pin-memory, given, override the loader's own setting.
""")
    def repro(
        factory: str = typer.Argument(..., help="module:factory returning your Dataset, or your DataLoader "
                                                "(importable from here)."),
        workers: str = typer.Option("0,1,4", help="Rungs: num_workers values, comma-separated."),
        batches: int = typer.Option(8, min=1, help="Batches to load per rung."),
        batch_size: Optional[int] = typer.Option(None, min=1, help="DataLoader batch_size [default: 2; a "
                                                 "factory's DataLoader keeps its own]."),
        timeout: str = typer.Option("60s", metavar="DURATION", help="How long before a rung counts as a hang: "
                                                                     "90s, 10m, 2h (a plain number is seconds)."),
        spawn: bool = typer.Option(False, help="multiprocessing_context='spawn' instead of fork (or the loader's)."),
        collate: Optional[str] = typer.Option(None, help="module:fn to use as collate_fn (overrides the loader's)."),
        worker_init: Optional[str] = typer.Option(None, help="module:fn to use as worker_init_fn (overrides the "
                                                             "loader's); it runs after repro's own start-up hook."),
        pin_memory: bool = typer.Option(False, "--pin-memory", help="pin_memory=True. Without CUDA torch does not "
                                                                    "pin: repro says it was not tested."),
        nofile: Optional[int] = typer.Option(None, min=16, help="Lower ulimit -n in each rung to this."),
        sharing_strategy: Optional[str] = typer.Option(None, help="file_descriptor | file_system"),
        fmt: str = typer.Option("text", "--format", "-f", help="text | json"),
        signatures: List[Path] = typer.Option([], "--signatures", "-s", help="Extra signature file or folder."),
    ) -> None:
        """Run your dataset (or DataLoader) at num_workers 0, 1, N in fresh processes and say where the bug is."""
        import json
        import sys

        from ..checks import check_live_options
        from ..output import fail
        from ...core.errors import DllogscanError
        from ...live import require_torch

        try:
            seconds = check_live_options(fmt, timeout, LEAST_HANG)
        except DllogscanError as exc:
            raise fail(str(exc))
        try:
            rungs_n = tuple(int(w) for w in workers.split(","))
        except ValueError:
            raise fail(f"--workers {workers!r}: expected numbers such as 0,1,4")
        if any(n < 0 for n in rungs_n):
            raise fail("--workers: num_workers cannot be negative")
        if max(rungs_n) > MAX_WORKERS:
            raise fail(f"--workers: {max(rungs_n)} workers in one rung; at most {MAX_WORKERS} (each is a process "
                       "that torch forks at once)")
        if sharing_strategy not in (None, "file_descriptor", "file_system"):
            raise fail(f"--sharing-strategy {sharing_strategy!r}: choose file_descriptor or file_system")
        if ":" not in factory:
            raise fail(f"{factory!r}: expected module:factory, e.g. mydata:make_dataset")
        for option, given, example in (("--collate", collate, "collate"),
                                       ("--worker-init", worker_init, "seed_worker")):
            if given is not None and ":" not in given:
                raise fail(f"{option} {given!r}: expected module:fn, e.g. mydata:{example}")
        try:
            require_torch("repro")
            from ...pipeline import runner as pipeline
            from ...live import conclude, repro as ladder

            scanner = pipeline.get_scanner([str(s) for s in signatures])
        except DllogscanError as exc:
            raise fail(str(exc))
        settings = ladder.Settings(factory=factory, workers=rungs_n, batches=batches, batch_size=batch_size,
                                   timeout=seconds, spawn=spawn, collate=collate, worker_init=worker_init,
                                   pin_memory=pin_memory, nofile=nofile, sharing_strategy=sharing_strategy)
        try:
            rungs = ladder.ladder(settings, scanner)
        except DllogscanError as exc:  # a function cannot be imported, an option not applied: a usage error
            raise fail(str(exc))
        verdict = conclude.conclude(rungs)
        if fmt == "json":
            sys.stdout.write(json.dumps({"factory": factory, "loader": ladder.loader_of(rungs),
                                         "rungs": [r.to_dict() for r in rungs], "conclusion": verdict},
                                        indent=2) + "\n")
        else:
            sys.stdout.write(conclude.render(rungs, verdict))
        raise typer.Exit(0 if verdict["verdict"] == "no-failure" else 1)
