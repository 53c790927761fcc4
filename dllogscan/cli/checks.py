"""Checks of option values shared by the commands (and the plain scan path): a value that would
silently report nothing (``--min-confidence nan`` or ``5``), mean nothing (``--max-bytes -5``,
``--jobs -3``) or is not one of an option's words (``--prefilter foo``) is a usage error, one
``Error:`` line and exit 2. And the old spellings of renamed options: read them, say so on stderr
(no typer here: the plain scan uses this module too)."""
from __future__ import annotations

import math
import re
import sys
from typing import Sequence

from ..core.errors import UsageError
from ..pipeline.runner import CLASSIFIERS  # noqa: F401 - the commands' --classifier words
from ..scan.prefilter import ENGINES as PREFILTERS  # noqa: F401 - the commands' --prefilter words


def check_choice(option: str, value: str, choices: Sequence[str]) -> str:
    """``value`` when it is one of ``choices``; UsageError naming them otherwise."""
    if value not in choices:
        raise UsageError(f"unknown {option} {value!r}; choose one of {', '.join(choices)}")
    return value


def check_at_least_one(option: str, value: int | None) -> int | None:
    """``value`` when it is unset or at least 1 (a count: --jobs, --top); UsageError otherwise."""
    if value is not None and value < 1:
        raise UsageError(f"{option} must be at least 1 (got {value})")
    return value


def check_min_confidence(value: float) -> float:
    """``value`` when it is a probability in [0, 1]; UsageError otherwise (nan, 5, -1)."""
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise UsageError(f"--min-confidence must be between 0 and 1 (got {value})")
    return value


def check_max_bytes(value: int | None) -> int | None:
    """``value`` when it is unset or a positive number of bytes; UsageError otherwise."""
    if value is not None and value < 1:
        raise UsageError(f"--max-bytes must be a positive number of bytes (got {value})")
    return value


def check_port(value: int) -> int:
    """``value`` when it is a port a server can be asked to listen on; UsageError otherwise."""
    if not 1 <= value <= 65535:
        raise UsageError(f"--port must be between 1 and 65535 (got {value})")
    return value


def check_scan_options(min_confidence: float, max_bytes: int | None) -> None:
    """Both checks, for the commands that take both options."""
    check_min_confidence(min_confidence)
    check_max_bytes(max_bytes)


#: What each old spelling says instead (accepted, hidden, for one release). ``--engine`` names
#: where ``batch`` runs (local | dask) and nothing else; the matcher is ``--prefilter`` everywhere.
INSTEAD = {
    "--engine": "use --prefilter (--engine now names where batch runs)",
    "--no-no-default-signatures": "leave it out: the shipped signatures are the default",
}


def deprecated(old: str) -> None:
    """The one line on stderr that says an old spelling was used, and what to write instead."""
    sys.stderr.write(f"dllogscan: {old} is deprecated and goes in the next release; {INSTEAD[old]}\n")


def renamed(old: str, new: str, old_value, new_value, default):
    """The value of option ``new``, given either as ``new`` or by its old spelling ``old``
    (``old_value`` is None when the old spelling was not used). Both, with different values, is
    a usage error."""
    if old_value is None:
        return new_value
    deprecated(old)
    if new_value != default and new_value != old_value:
        raise UsageError(f"give {new} only (got {old} {old_value} and {new} {new_value})")
    return old_value


#: a duration: a number and a unit (``90s``, ``30m``, ``2h``, ``1.5d``, ``500ms``); no unit: seconds
DURATION_RE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|sec|m|min|h|d)?\s*", re.IGNORECASE)
DURATION_UNITS = {"ms": 0.001, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


def check_duration(option: str, value: str | None, least: float = 0.0) -> float | None:
    """``value`` in seconds (None stays None); UsageError for what is no duration, none at all
    or less than ``least`` seconds."""
    if value is None:
        return None
    m = DURATION_RE.fullmatch(value)
    seconds = float(m.group(1)) * DURATION_UNITS[(m.group(2) or "s").lower()] if m else 0.0
    if not m or seconds <= 0 or seconds < least:
        floor = f" of at least {least:g}s" if least else ""
        raise UsageError(f"{option} takes a duration{floor} such as 90s, 30m or 2h (got {value!r})")
    return seconds


def check_live_options(fmt: str, timeout: str, least: float) -> float:
    """The options ``doctor`` and ``repro`` share: ``--format`` (text | json) and ``--timeout``
    (a duration of at least ``least`` seconds), the latter in seconds; UsageError otherwise."""
    if fmt not in ("text", "json"):
        raise UsageError(f"unknown format {fmt!r}; choose text or json")
    return check_duration("--timeout", timeout, least)  # type: ignore[return-value]
