"""Every regular expression in dllogscan's own data files (scope, prose, concepts, hang causes,
...) stays fast on hostile lines, as the signature patterns do (tests/test_signature_data.py).
Session 26 found a package-listing pattern with nested repeats that took 17 s on one 100 KB line."""
from __future__ import annotations

import time
import tomllib

import pytest
import regex

from dllogscan.core.paths import DATA_DIR
from dllogscan.signatures.probes import EXTRA_CHARS, PROBE_LENGTH

N = PROBE_LENGTH
#: one character it could almost match, many times; version-like runs; repeated words the data's
#: patterns are built from
HOSTILE = ([ch * N for ch in EXTRA_CHARS]
           + ["a " * (N // 2), "a 1" + ".1" * (N // 2) + " x y z w v", "1." * (N // 2) + "x", "\\b" * (N // 2),
              'File "a.py", line 1, in f\n' * 150]
           + [(word + " ") * (N // (len(word) + 1)) for word in
              ("worker", "no error", "deadlock", "tokenizer", "cuda", "to(device", "never", "epoch", "pool(",
               "[pip3]", "gunicorn", "dataloader", "blocks", "stall")]
           # long lines: a quadratic pattern is quick on 4 KB (the listing pattern: 0.04 s) and not
           # on 64 KB (over 2 s)
           + ["a 1" + ".1" * 32_768 + " x y z w v", "a " * 32_768 + "x", "-" * 65_536 + " 1"])
BUDGET_S = 0.5  # all hostile lines together, per pattern


#: fields that are provenance text, never compiled (a ``source`` names the code that prints a line)
TEXT_KEYS = {"source"}
#: data files that hold no regular expressions: thread_pages.toml's strings are CSS-like selectors,
#: read by sources/thread_page.py's own grammar (``[data-testid=markdown-body]`` is no character class)
NO_PATTERNS = {"thread_pages.toml"}


def data_patterns() -> list[tuple[str, str]]:
    """(where, text) of every string in the data files but examples and provenance: literal text
    compiles too."""
    out: list[tuple[str, str]] = []

    def walk(obj, where: str) -> None:
        if isinstance(obj, dict):
            for key, value in obj.items():
                if "example" not in key and key not in TEXT_KEYS:
                    walk(value, f"{where}.{key}")
        elif isinstance(obj, list):
            for i, value in enumerate(obj):
                walk(value, f"{where}[{i}]")
        elif isinstance(obj, str):
            out.append((where, obj))

    for path in sorted(DATA_DIR.glob("*.toml")):
        if path.name in NO_PATTERNS:
            continue
        with path.open("rb") as fh:
            walk(tomllib.load(fh), path.name)
    return out


PATTERNS = [(where, text) for where, text in data_patterns() if any(c in text for c in "\\[(|*+?")]


def test_the_data_files_hold_patterns():
    names = {where.split(".toml", 1)[0] + ".toml" for where, _ in PATTERNS}
    assert {"scope.toml", "prose.toml", "concepts.toml", "hang_causes.toml", "exit_causes.toml"} <= names


@pytest.mark.timeout(120)
@pytest.mark.parametrize("where,text", PATTERNS, ids=[w for w, _ in PATTERNS])
def test_every_data_pattern_is_fast_on_hostile_lines(where, text):
    try:
        pattern = regex.compile(text, regex.IGNORECASE)
    except regex.error:
        pytest.skip("not a pattern (text that only looks like one)")
    for attempt in range(2):  # a busy machine can pause the process; a backtracking pattern is slow twice
        start = time.perf_counter()
        for line in HOSTILE:
            pattern.search(line, timeout=BUDGET_S * 4)
        elapsed = time.perf_counter() - start
        if elapsed < BUDGET_S:
            return
    pytest.fail(f"{where}: {elapsed:.2f} s on the hostile lines (budget {BUDGET_S} s)")
