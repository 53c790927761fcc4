"""``dllogscan doctor``: the facts that decide classes A-E here, and a loader's risks."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..options import LEAST_HANG

def register(app: typer.Typer) -> None:
    @app.command(epilog="""[bold]Examples[/bold]

  dllogscan doctor
  dllogscan doctor --num-workers 8 --prefetch-factor 2 --batch-bytes 512M
  dllogscan doctor --num-workers 8 --sample mydata:make_dataset --batch-size 64 --format json
  dllogscan doctor --sample mydata:make_loader     # a DataLoader: its num_workers, prefetch_factor, batches
  dllogscan doctor --sample mydata:make_dataset --timeout 5m    # a slow first batch

--sample loads the batch in a fresh interpreter; one that takes longer than
--timeout (counted from its import of torch) is cut and reported as a class E
finding, with the line it was stuck at and its likely cause.
""")
    def doctor(
        num_workers: Optional[int] = typer.Option(None, min=0, help="The loader's num_workers."),
        prefetch_factor: Optional[int] = typer.Option(None, min=1, help="The loader's prefetch_factor (default 2)."),
        batch_bytes: Optional[str] = typer.Option(None, help="Bytes in one batch: 512M, 2G, 1048576."),
        sample: Optional[str] = typer.Option(
            None, help="module:factory returning your Dataset or DataLoader; one batch is measured (a DataLoader's "
                       "num_workers and prefetch_factor are read too, where not given)."),
        batch_size: Optional[int] = typer.Option(
            None, min=1, help="Batch size for --sample (default: the DataLoader's own, else 1)."),
        tensors: Optional[int] = typer.Option(None, min=1, help="Tensors per batch (descriptor demand)."),
        timeout: str = typer.Option("60s", metavar="DURATION", help="How long --sample may take before it counts "
                                                                     "as a hang: 90s, 10m (a plain number is seconds)."),
        fmt: str = typer.Option("text", "--format", "-f", help="text | json"),
        signatures: List[Path] = typer.Option([], "--signatures", "-s", help="Extra signature file or folder."),
    ) -> None:
        """Check /dev/shm, ulimit -n, memory, runtime and torch against a loader's demand."""
        import json
        import sys

        from ...advise.fixes import parse_size
        from ..checks import check_live_options
        from ..output import fail
        from ...core.errors import DllogscanError
        from ...live import require_torch

        try:
            seconds = check_live_options(fmt, timeout, LEAST_HANG)
        except DllogscanError as exc:
            raise fail(str(exc))
        if batch_bytes and sample:
            raise fail("give --batch-bytes or --sample, not both")
        try:
            require_torch("doctor")
            from ...pipeline import runner as pipeline
            from ...live import doctor as doc
            from ...live import facts as machine

            scanner = pipeline.get_scanner([str(s) for s in signatures])
        except DllogscanError as exc:
            raise fail(str(exc))
        loader = {"num_workers": num_workers, "prefetch_factor": prefetch_factor, "tensors": tensors}
        if batch_bytes:
            loader["batch_bytes"] = parse_size(batch_bytes)
            if loader["batch_bytes"] is None:
                raise fail(f"--batch-bytes {batch_bytes!r}: expected a size such as 512M or 2G")
        sampled: dict = {}
        if sample:
            from ...live.sample import measure

            sampled = measure(sample, batch_size, seconds)  # type: ignore[arg-type]
            if "error" in sampled:  # the user's code raised or exited: one line
                raise fail(f"--sample {sample}: {sampled['error']}".splitlines()[0])
        if "measured" in sampled:
            measured = sampled["measured"]
            loader["batch_bytes"] = measured["bytes"]
            loader["tensors"] = tensors or measured["tensors"]
            for name in ("num_workers", "prefetch_factor"):  # the sampled DataLoader's, where not given
                if loader[name] is None and measured.get(name) is not None:
                    loader[name] = measured[name]
        found = machine.gather()
        risks = doc.assess(found, loader, scanner)
        if "hang" in sampled:
            risks.insert(0, doc.hang_risk(sample or "", sampled["hang"], sampled.get("cause")))
        if fmt == "json":
            sys.stdout.write(json.dumps({"facts": found, "loader": loader,
                                         "risks": [r.to_dict() for r in risks]}, indent=2) + "\n")
        else:
            sys.stdout.write(doc.render(found, loader, risks))
        raise typer.Exit(1 if risks else 0)
