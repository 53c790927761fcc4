"""The human report: rich panels on a terminal, plain text when piped."""
from __future__ import annotations

import io
from typing import TYPE_CHECKING, Sequence

from ..core.classes import style_of
from ..core.models import Diagnosis, ScanResult
from ..core.printable import strip_controls

if TYPE_CHECKING:
    from rich.text import Text


def _text(text: str, style: str = ""):
    """A rich Text (never markup) of ``text`` without control characters."""
    from rich.text import Text

    return Text(strip_controls(text), style=style)


def _hanging(label: str, text: "Text", label_style: str = "dim", text_style: str = "", width: int = 9):
    """``label`` in a fixed left column and ``text`` (a rich Text: a str would be read as markup)
    wrapping beside it (not under it)."""
    from rich.table import Table

    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=width, justify="right", style=label_style, no_wrap=True)
    grid.add_column(ratio=1, style=text_style)
    grid.add_row(label, text)
    return grid


def _diagnosis_renderables(d: Diagnosis, rank: int) -> list:
    from rich.padding import Padding
    from rich.panel import Panel
    from rich.text import Text

    style = style_of(d.cls)
    head = Text()
    head.append(f"{rank}. Class {d.cls}", style=f"bold {style}")
    if d.subclass:
        head.append(f" / {d.subclass}", style=style)
    head.append(f"  {d.confidence:.0%} sure", style="bold")
    if d.count > 1:
        head.append(f"  ({d.count} times)", style="dim")
    body: list = [_text(d.title, "bold")]
    if d.evidence:
        body.append(Text("\nEvidence", style="underline"))
        body += [_hanging(str(e.line), _text(e.text)) for e in d.evidence]
    for note in d.notes:
        body.append(_text(f"\n{note}", "italic"))
    if d.fixes:
        body.append(Text("\nWhat to do", style="underline"))
        for f in d.fixes:
            body.append(_hanging(f"{f.rank}.", Text.assemble((strip_controls(f.title), "bold"), f" — {strip_controls(f.why)}"), "bold", width=4))
            for c in f.commands:
                body.append(_hanging("$", _text(c), "green", "green", width=6))
            if f.code:
                body.append(_hanging("", _text(f.code.strip("\n")), text_style="cyan", width=6))
    from rich.console import Group
    return [Panel(Group(*body), title=head, title_align="left", border_style=style), Padding("", (0, 0))]


def print_results(results: Sequence[ScanResult], console=None) -> None:
    """Print to a rich console (colour on a terminal, plain when piped)."""
    from rich.console import Console
    from rich.text import Text

    console = console or Console(highlight=False)
    for r in results:
        console.print(Text.assemble(("dllogscan ", "bold"), (r.source, "bold cyan"),
                                    (f"  ({r.lines} lines)", "dim")))
        if r.error:
            unread = not r.lines and not r.diagnoses
            console.print(Text(f"  could not read it{'' if unread else ' fully'}: {r.error}", style="yellow"))
            if unread:
                continue
        if not r.diagnoses:
            console.print(Text("  No DataLoader worker failure diagnosed: see the notes below.", style="yellow")
                          if r.notes else Text("  No DataLoader worker failure found.", style="green"))
        for i, d in enumerate(r.diagnoses, start=1):
            for item in _diagnosis_renderables(d, i):
                console.print(item)
        for note in r.notes:  # a diagnosis set aside, whether or not another one stayed
            console.print(_hanging("note", _text(note)))


def to_text(results: Sequence[ScanResult], width: int = 100) -> str:
    from rich.console import Console

    buf = io.StringIO()
    print_results(results, Console(file=buf, width=width, color_system=None, highlight=False))
    return buf.getvalue()
