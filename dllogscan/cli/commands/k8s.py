"""``dllogscan k8s POD``: a pod's previous and current logs with its status and spec (also
``kubectl dllogscan POD``, the ``kubectl-dllogscan`` plugin)."""
from __future__ import annotations

from typing import Optional

import typer

from ..options import (Classifier, ExitZero, Format, MinConfidence, OldEngine, Out, Prefilter, Redact, Signatures,
                       Timeout)

EPILOG = """[bold]Examples[/bold]

  dllogscan k8s trainer-0 -n ml           # logs --previous + logs + pod status and spec
  dllogscan k8s trainer-0 -n ml -c worker --context prod --format json
  kubectl dllogscan trainer-0 -n ml       # the same, as a kubectl plugin
"""


def register(app: typer.Typer) -> None:
    @app.command("k8s", epilog=EPILOG, short_help="Diagnose a Kubernetes pod: its logs, how its container last "
                                                   "ended, its memory limit and what backs /dev/shm.")
    def k8s(
        pod: str = typer.Argument(..., help="The pod's name."),
        namespace: Optional[str] = typer.Option(None, "--namespace", "-n", help="Its namespace (default: kubectl's)."),
        container: Optional[str] = typer.Option(None, "--container", "-c", help="The container (default: the pod's default, or the one that ended)."),
        context: Optional[str] = typer.Option(None, "--context", help="The kubeconfig context."),
        fmt: Format = None, out: Out = None, signatures: Signatures = [], min_confidence: MinConfidence = 0.5,  # noqa: B006
        prefilter: Prefilter = "auto", classifier: Classifier = "auto", redact: Redact = False,
        exit_zero: ExitZero = False, timeout: Timeout = 30.0, engine: OldEngine = None,
    ) -> None:
        """Diagnose a Kubernetes pod: its previous and current logs, joined with how the container
        last ended (OOMKilled, exit 137/135/139), its memory limit and what backs /dev/shm.

        Exit status as for scan: 0 nothing found, 1 diagnosed, 2 usage error, kubectl missing or
        refusing, no such pod or no logs at all, 3 nothing found but a log could not be read."""
        from ..output import fail
        from ...core.errors import DllogscanError
        from .. import options as cli_options
        from ...integrations.k8s import diagnose_pod

        fmt = cli_options.check_format(fmt, out)
        cfg = cli_options.config(signatures, cli_options.prefilter_of(prefilter, engine), min_confidence, classifier)
        try:
            _, result = diagnose_pod(pod, namespace, container, context, cfg, timeout)
        except DllogscanError as exc:
            raise fail(str(exc))
        raise cli_options.deliver(result, fmt, out, redact, exit_zero)
