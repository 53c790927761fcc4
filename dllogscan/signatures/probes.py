"""A time budget for user signature patterns, and the hostile lines that test it at load.

The shipped patterns are timed on hostile input by the test suite. A pattern from a user's file
(``--signatures``) was never timed: ``shmfail (.*?,){15}P`` backtracks for minutes on one line of
commas. So a user pattern

- is tried at load on hostile lines built from its own examples (each example cut after its
  keyword and followed by thousands of one character it could almost match: ``shmfail ,,,,...``;
  the example's tail repeated without its last character); a pattern that runs past
  ``PROBE_BUDGET_S`` on one of them, or past ``PROBE_TOTAL_S`` on all, refuses the file with one
  line naming it;
- runs with ``SCAN_BUDGET_S`` per line while scanning (the ``regex`` module's ``timeout``): a
  line over it counts as no match, and after ``MAX_TIMEOUTS`` such lines the pattern is switched
  off for the rest of the process, so a hostile log costs at most ``MAX_TIMEOUTS`` budgets.

The budget is wall-clock time, so at load a probe line that runs out is tried once more before
the file is refused (a busy machine can pause the process for longer than the budget; a
backtracking pattern runs out again).
"""
from __future__ import annotations

import time
from typing import Any, Iterator

SCAN_BUDGET_S = 0.1
PROBE_BUDGET_S = 0.05
PROBE_TOTAL_S = 1.0
MAX_TIMEOUTS = 5
PROBE_LENGTH = 4096
EXTRA_CHARS = " ,;:.()[]{}<>/\\-_=|'\"\t0a"


class BudgetedPattern:
    """A compiled ``regex`` pattern whose ``search`` gives up after ``budget`` seconds."""

    def __init__(self, pattern: Any, budget: float = SCAN_BUDGET_S) -> None:
        self.pattern, self.budget, self.timeouts = pattern, budget, 0

    def search(self, text: str, *args: Any) -> Any:
        """The match, or None: also when the line ran past the budget or the pattern is off."""
        if self.timeouts >= MAX_TIMEOUTS:
            return None
        try:
            return self.pattern.search(text, *args, timeout=self.budget)
        except TimeoutError:
            self.timeouts += 1
            return None

    def __getattr__(self, name: str) -> Any:  # groupindex, pattern, flags ...
        return getattr(self.pattern, name)


def _search_twice(pattern: Any, text: str, budget: float) -> Any:
    """``pattern.search`` within ``budget``, tried a second time when the first runs out."""
    try:
        return pattern.search(text, timeout=budget)
    except TimeoutError:
        return pattern.search(text, timeout=budget)


def hostile_lines(examples: tuple[str, ...], keywords: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """``(what, line)``: near-misses built from the examples, each ``PROBE_LENGTH`` long."""
    for example in examples[:5]:
        for keyword in keywords:
            at = example.find(keyword)
            if at < 0:
                continue
            head, tail = example[: at + len(keyword)], example[at + len(keyword):]
            for ch in dict.fromkeys(tail + EXTRA_CHARS):
                yield f"{head!r} then {ch!r} x {PROBE_LENGTH}", head + ch * (PROBE_LENGTH - len(head))
            if len(tail) > 1:
                unit = tail[:-1]
                yield (f"{head!r} then {unit!r} repeated",
                       (head + unit * (PROBE_LENGTH // len(unit) + 1))[:PROBE_LENGTH])
        if len(example) > 1:
            unit = example[:-1] + " "
            yield f"{example[:-1]!r} repeated", (unit * (PROBE_LENGTH // len(unit) + 1))[:PROBE_LENGTH]


def probe(pattern: Any, examples: tuple[str, ...], keywords: tuple[str, ...]) -> str | None:
    """Why ``pattern`` is too slow for a scan (the hostile line it stalled on), or None."""
    spent = 0.0
    for what, line in hostile_lines(examples, keywords):
        start = time.perf_counter()
        try:
            _search_twice(pattern, line, PROBE_BUDGET_S)
        except TimeoutError:
            return (f"pattern runs past its {PROBE_BUDGET_S:g} s budget on a hostile line ({what}); "
                    "rewrite it without nested or repeated wildcards")
        spent += time.perf_counter() - start
        if spent > PROBE_TOTAL_S:
            return (f"pattern takes over {PROBE_TOTAL_S:g} s on the hostile probe lines (last: {what}); "
                    "rewrite it without nested or repeated wildcards")
    return None
