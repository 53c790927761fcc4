"""Property-based tests (Hypothesis) over every stage that takes untrusted bytes: source sniffing
and decoding, document flattening, normalisation, redaction and every output format.

CI runs the ``ci`` profile: a fixed, derandomised example budget per test (a few seconds each).
The long run explores fresh examples: ``DLLOGSCAN_HYPOTHESIS=long python -m pytest
tests/hostile/test_properties.py`` (see ``tests/hostile/README.md``).
"""
from __future__ import annotations

import codecs
import csv
import io
import json
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dllogscan.pipeline import runner as pipeline
from dllogscan import report
from dllogscan.sources import streams as sources
from dllogscan.sources.documents import flatten_bytes
from dllogscan.core.models import Diagnosis, Evidence, Fix, ScanResult
from dllogscan.normalize.lines import clean, printable_line, views
from dllogscan.report.redact import Redactor, redact_results
from dllogscan.report.markdown import code
from dllogscan.report.table import COLUMNS, csv_value, rows
from dllogscan.normalize.encoding import Transcoded, text_encoding

settings.register_profile("ci", max_examples=100, derandomize=True, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("long", max_examples=4000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
PROFILE = os.environ.get("DLLOGSCAN_HYPOTHESIS", "ci")
RUN = settings.get_profile(PROFILE)
LIMIT = pytest.mark.timeout(120 if PROFILE == "ci" else 4 * 3600)

UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
BUS = "RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error."
#: log-like lines: real error texts, prefixes, controls, escapes, long runs
LOG_PIECES = st.sampled_from([
    BUS, "ERROR: Unexpected bus error encountered in worker.", "Killed process 363 (python) total-vm:1kB",
    "RuntimeError: received 0 items of ancdata", "[rank3]: ", "> ", "\x1b[31m", "\x1b]0;t\x07", "\r", "\\n",
    "\u009b", "\u202e", "\x00", "│ ", "{", "<pre>", "`", "=", "@", "\t", "Epoch 1: 10%|#", "é", "😀",
])
LOG_TEXT = st.lists(st.one_of(LOG_PIECES, st.text(max_size=40)), max_size=30).map("".join)
LOG_LINES = st.lists(LOG_TEXT, max_size=20).map("\n".join)


def scanned(data: bytes, name: str = "t"):
    return pipeline.run(sources.from_bytes(data, name), pipeline.get_scanner())


# -- sources: sniffing and decoding ----------------------------------------------------------------

@LIMIT
@RUN
@given(st.binary(max_size=4096))
def test_any_bytes_scan_without_raising(data):
    result = scanned(data)
    assert result.error is None or isinstance(result.error, str)
    assert not UNSAFE.search(result.error or "")


@LIMIT
@RUN
@given(LOG_LINES)
def test_utf16_and_utf32_read_like_utf8(text):
    plain = scanned(text.encode("utf-8", "surrogatepass"))
    for data in (codecs.BOM_UTF16_LE + text.encode("utf-16-le", "surrogatepass"), text.encode("utf-32", "surrogatepass")):
        other = scanned(data)
        if plain.error is None:
            assert other.lines == plain.lines
            assert [(d.cls, d.subclass) for d in other.diagnoses] == [(d.cls, d.subclass) for d in plain.diagnoses]


@LIMIT
@RUN
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=3000), st.integers(1, 5000))
def test_transcoding_any_text_in_any_reads(text, step):
    reader = Transcoded(io.BytesIO(codecs.BOM_UTF16_BE + text.encode("utf-16-be")), "utf-16")
    parts = []
    while piece := reader.read(step):
        parts.append(piece)
    assert b"".join(parts) == text.encode("utf-8")


@LIMIT
@RUN
@given(st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=2000))
def test_utf8_without_nul_is_never_taken_for_utf16(text):
    data = text.encode("utf-8")
    assert text_encoding(data) is None or data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))


# -- documents -------------------------------------------------------------------------------------

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=20)
EXPORT = st.fixed_dictionaries({"title": st.text(max_size=20)}, optional={
    "body": JSON, "description": JSON, "comments": st.lists(st.dictionaries(st.sampled_from(["body", "author", "user"]), JSON)),
    "notes": st.lists(JSON), "post_stream": st.fixed_dictionaries({"posts": st.lists(JSON)})})


@LIMIT
@RUN
@given(st.one_of(JSON, EXPORT))
def test_any_json_flattens_without_raising(doc):
    data = json.dumps(doc).encode()
    flat, kind = flatten_bytes(data)
    assert isinstance(flat, bytes) and (kind is None) == (flat == data)
    scanned(data)


@LIMIT
@RUN
@given(st.sampled_from([b"{", b"<", b"<html>", b'{"title": "x", "body": ']), st.binary(max_size=2000))
def test_any_document_like_bytes(prefix, rest):
    flatten_bytes(prefix + rest)
    scanned(prefix + rest)


# -- normalisation ---------------------------------------------------------------------------------

@LIMIT
@RUN
@given(st.one_of(st.binary(max_size=2000), LOG_TEXT.map(lambda t: t.encode("utf-8", "surrogatepass"))))
def test_views_are_clean_text(raw):
    texts, _ = views(raw)
    shown = [printable_line(line) for line in raw.decode("utf-8", "replace").splitlines()]
    for text in texts + [clean(raw)] + shown:
        assert not UNSAFE.search(text.replace("\t", "")) and "\x1b" not in text


# -- redaction -------------------------------------------------------------------------------------

ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
SECRET = st.one_of(
    st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", min_size=16, max_size=16).map(lambda s: "AKIA" + s),
    st.text(ALNUM, min_size=36, max_size=36).map(lambda s: "ghp_" + s),
    st.text(ALNUM, min_size=34, max_size=34).map(lambda s: "hf_" + s),
    st.text("0123456789abcdef", min_size=40, max_size=40).filter(lambda s: len(set(s)) > 4),
    st.tuples(*[st.text(ALNUM + "_-", min_size=10, max_size=30)] * 3).map(lambda t: "eyJ" + ".eyJ".join(t[:2]) + "." + t[2]),
)
CONTEXT = st.sampled_from(["token {}", "Authorization: Bearer {}", "HF_TOKEN={}", "key: {}", "see {} here", "{}"])
FILLER = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=30)


@LIMIT
@RUN
@given(FILLER, CONTEXT, SECRET, FILLER)
def test_redaction_hides_credentials(before, context, secret, after):
    line = f"{before} {context.format(secret)} {after}"
    assert secret not in Redactor().text(line)


def _result(texts: list[str], name: str, error: str | None) -> ScanResult:
    evidence = tuple(Evidence(i + 1, t) for i, t in enumerate(texts or [""]))
    fix = Fix(1, "Raise /dev/shm", "why", commands=tuple(f"echo {t}" for t in texts[:2]))
    diag = Diagnosis("A", "bus-error", "Worker killed by SIGBUS", 0.9, evidence, ("A.x",),
                     facts={"path": texts[0] if texts else "", "pid": "363"}, fixes=(fix,))
    return ScanResult(source=name, diagnoses=(diag,), error=error, lines=len(texts))


@LIMIT
@RUN
@given(st.lists(FILLER, min_size=1, max_size=4), SECRET, st.sampled_from(report.TEXT_FORMATS))
def test_nothing_redacted_reappears_in_any_format(fillers, secret, fmt):
    texts = [f"{f} token {secret}" for f in fillers]
    [redacted] = redact_results([_result(texts, f"job-{secret}.log", f"cut after token {secret}")])
    assert secret not in report.render([redacted], fmt)


# -- output formats: what is written parses back ---------------------------------------------------

ANY_TEXT = st.text(max_size=60)


@LIMIT
@RUN
@given(st.lists(ANY_TEXT, max_size=4), ANY_TEXT, st.none() | ANY_TEXT)
def test_formats_round_trip(texts, name, error):
    result = _result(texts, name, error)
    assert json.loads(report.render([result], "json")) == json.loads(json.dumps(result.to_dict()))
    assert [json.loads(line) for line in report.render([result], "jsonl").split("\n")[:-1]] == [result.to_dict()]
    table = list(csv.reader(io.StringIO(report.render([result], "csv"), newline="")))
    assert table[0] == COLUMNS
    for written, row in zip(table[1:], rows([result]), strict=True):
        for column, cell in zip(COLUMNS, written):
            value = row[column]
            assert csv_value(cell) == ("" if value is None else str(value).replace("\r\n", "\n").replace("\r", "\n"))
            assert not (len(cell) > 1 and cell[0] in "=+-@\t\r\n")
    github = report.render([result], "github")
    assert all(line.startswith("::") for line in github.split("\n")[:-1]) and github.endswith("\n")
    assert not UNSAFE.search(report.render([result], "text").replace("\n", ""))
    report.render([result], "md")


@LIMIT
@RUN
@given(ANY_TEXT)
def test_code_span_round_trip(text):
    span = code(text)
    ticks = re.match(r"`+", span).group()
    inner = span[len(ticks):-len(ticks)]
    assert ticks * 1 not in inner.replace(ticks + "`", "")  # no run of the delimiter's length inside
    if inner.startswith(" ") and inner.endswith(" ") and inner.strip():
        inner = inner[1:-1]
    assert inner == " ".join(text.splitlines())


@LIMIT
@settings(RUN, max_examples=max(RUN.max_examples // 4, 10))
@given(st.lists(ANY_TEXT, max_size=3), ANY_TEXT, st.none() | ANY_TEXT)
def test_parquet_round_trip(tmp_path_factory, texts, name, error):
    pd = pytest.importorskip("pandas")
    from dllogscan.report.table import to_parquet

    result = _result(texts, name, error)
    path = tmp_path_factory.mktemp("pq") / "r.parquet"
    to_parquet([result], str(path))
    back = pd.read_parquet(path).astype(object).where(lambda df: df.notna(), None).to_dict("records")
    assert [{k: v for k, v in row.items() if isinstance(v, str)} for row in back] == \
        [{k: v for k, v in row.items() if isinstance(v, str)} for row in rows([result])]
