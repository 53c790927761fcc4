"""``--redact`` on long dotted, dashed and ``@`` runs costs near-linear CPU time. Before, the
e-mail and host patterns scanned from each start to the end of the run and the file suffix
search from each ``.``: ``Redactor().text`` took 1.3 s on 12 KB of ``a.``, 7.3 s on 24 KB, and
``Redactor().path`` 12 s on 12 KB of ``1.``; detect-secrets' npm pattern (``//.+/:_authToken=``)
tried ``.+`` from each ``//``: 2.3 s on 24 KB of ``//``."""
from __future__ import annotations

import gc
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dllogscan.report import credentials
from dllogscan.report.credentials import find
from dllogscan.report.redact import Redactor, suffix_start

#: a unit repeated to the size, and what ends the run (none, a common domain, a country code)
UNITS = {"tfevents": "events.out.tfevents.1.a-", "a-dot": "a.", "a-dash": "a-", "x-at": "x@", "mixed": "a1.b-c.",
         "dots": ".", "dashes": "-", "digit-dot": "1.", "a-digit-dot": "a.1.", "digit-dash": "a1-", "at-dot": "x@a.",
         "long-labels": "a-" * 31 + "a.", "path": "/a.", "slashes": "//", "path-slashes": "/a/",
         "jwt-heads": "eyJ", "jwt-parts": "eyJa.b"}
TAILS = {"open": "", "com": ".com", "cc": ".de"}
SIZES = (6_000, 24_000)
#: CPU seconds for the larger size (a linear pass over 24 KB takes well under 0.1 s), and how much
#: more than 4 times the smaller size's time it may take (quadratic: 16 times)
BUDGET_S = 1.0
GROWTH = 8


def cpu_seconds(text: str) -> float:
    """CPU time of ``text`` and ``path`` (a fresh Redactor each) after a collection; the better of
    two runs where the first is not quick (a collection or another process's burst is charged once)."""
    best = float("inf")
    for _ in range(2):
        gc.collect()
        start = time.process_time()
        Redactor().text(text), Redactor().path(text)
        best = min(best, time.process_time() - start)
        if best < BUDGET_S / 4:
            break
    return best


@pytest.mark.timeout(600)
@pytest.mark.parametrize("tail", TAILS)
@pytest.mark.parametrize("shape", UNITS)
def test_long_runs_are_redacted_in_near_linear_time(shape, tail):
    unit, tail = UNITS[shape], TAILS[tail]
    small, big = (cpu_seconds(unit * (n // len(unit)) + tail) for n in SIZES)
    assert big < BUDGET_S, f"{unit[:24]!r}+{tail!r}: {big:.2f} s on {SIZES[1]} characters"
    assert big < GROWTH * small + 0.1, f"{unit[:24]!r}+{tail!r}: {small:.3f} s, then {big:.3f} s"


def test_what_a_long_run_ends_in_is_still_redacted():
    """The bound is a DNS name's length: a host or e-mail after a long run of other words stays hidden."""
    text = "x " * 5000 + "mail alice@corp.example.net from gpu1.cluster.local, " + "a-" * 5000
    shown = Redactor().text(text)
    assert "alice" not in shown and "gpu1" not in shown
    assert "mail <email-1> from <host-1>, " in shown


@pytest.mark.parametrize("name, start", [("x.out.1.gz", 1), ("gpu1.example.org_rank0.log", 22), ("a.b", 3),
                                         ("job.LOG", 3), (".1.2", 0), ("x.1a.log", 4), ("1." * 3000, 6000)])
def test_file_suffixes_are_found_from_the_end(name, start):
    assert suffix_start(name) == start


def test_a_detector_skipped_for_want_of_its_words_still_finds_its_credential():
    """npm's detector runs only on a text with ``/:_authToken=`` (``credentials._needs``)."""
    token = "npm_" + "a1B2c3D4e5" * 4
    line = f"//registry.npmjs.org/:_authToken={token}"
    assert [line[a:b] for a, b in find(line)] == [token]
    assert find("//" * 12_000) == []


def test_a_python_without_the_private_regex_parser_runs_every_detector(monkeypatch):
    """``_needs`` reads patterns with ``re._parser``, a private module: where it is missing, each
    detector runs on every text (slower on hostile runs, the same credentials found)."""
    import re
    import sys

    from dllogscan.report import credentials

    monkeypatch.delattr(re, "_parser", raising=False)
    monkeypatch.setitem(sys.modules, "re._parser", None)
    assert credentials._needs(re.compile("//.+/:_authToken=")) == ""
    assert credentials._needs(re.compile("(?i)abc")) == ""


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="eyJa9=_.-+/ :", max_size=80))
def test_the_jwt_pattern_finds_what_its_own_search_finds(text):
    """``_jwt_matches`` in one pass gives the matches of detect-secrets' JWT pattern's own
    ``finditer`` (which took 1.8 s on 48 KB of ``eyJ``), on texts made of its pieces."""
    (jwt,) = [p for p, _ in credentials._detectors()[0] if p.pattern == credentials.JWT_PATTERN]
    assert [m.span() for m in credentials._jwt_matches(jwt, text)] == [m.span() for m in jwt.finditer(text)]


def test_a_long_run_of_jwt_heads_is_redacted_in_linear_time():
    """96 KB of ``eyJ``: 3.0 s of CPU before (each ``eyJ`` searched to the run's end), 0.1 s now."""
    text = "eyJ" * 32_000
    assert cpu_seconds(text) < BUDGET_S
    assert find(text) == [] and find("x eyJhbGciOi.eyJzdWIi.c2lnbmF0dXJl y") == [(2, 34)]
