"""A batch's JSONL results read back line by line, each line checked before it is used.

Rules (the README's Batch section): a line that is no row of a batch (not UTF-8, not JSON,
nested past the decoder's depth, longer than ``MAX_ROW`` bytes, not an object, missing a field,
a field of the wrong kind: ``data/results_rows.toml``) is skipped and counted, the first one named;
a file where no line is a row is not a results file (``UsageError``, naming the first line's fault).
A last line without its newline that does not decode is the row a killed batch was writing: the
file is ``cut`` there. A UTF-8 byte-order mark is skipped; UTF-16 and UTF-32 (Windows
PowerShell 5.1's ``>``) are read as text."""
from __future__ import annotations

import io
import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator

from ..core.paths import DATA_DIR, data_document

DATA = DATA_DIR / "results_rows.toml"
#: the longest line read as a row (a batch's rows are a few KB; the corpus batch's longest is 4 KB)
MAX_ROW = 16 << 20
UTF8_BOM = b"\xef\xbb\xbf"
#: what a value of each kind must be, as a message says it
KIND_WORDS = {"text": "text", "text-or-null": "text or null", "value": "text, a number or null",
              "count": "a whole number (0 or more)", "confidence": "a number from 0 to 1",
              "texts": "a list of text", "facts": "an object of text, number, true/false or null values"}
ROW_SHAPE = 'a row must be a JSON object with "path", "status", "diagnoses" and "error"'


class BadLine(Exception):
    """A line that is no row; its text says why, in a user's words."""


@dataclass
class Rows:
    """The rows read (each JSON object as ``read_rows``' ``convert`` made it), how many lines were
    skipped and why the first was."""
    objects: list[Any] = field(default_factory=list)
    skipped: int = 0
    first_fault: str = ""
    cut: bool = False


@lru_cache(maxsize=2)
def load_shapes(path: Path = DATA) -> dict[str, tuple[tuple[str, ...], tuple[tuple[str, str, str | None], ...]]]:
    """The tables of ``results_rows.toml``: each kind of object's required fields, and its fields
    as (name, kind, the table of a ``list of`` kind's objects or None)."""
    shapes = {}
    for shape, table in data_document(path).items():
        fields = []
        for key, kind in table["fields"].items():
            inner = kind[len("list of "):] if kind.startswith("list of ") else None
            if inner is None and kind not in FITS:
                raise ValueError(f"{path}: [{shape}] {key}: unknown kind {kind!r}")
            fields.append((key, kind, inner))
        shapes[shape] = (tuple(table["required"]), tuple(fields))
    return shapes


def read_rows(path: Path, convert: Callable[[dict], Any]) -> Rows:
    """Every line of the JSONL file at ``path`` read as a row (kept as ``convert`` gives it, so no
    parsed object outlives its line) or skipped (see the module)."""
    rows = Rows()
    with open(path, "rb") as raw:
        for number, line, whole in _lines(_as_utf8(raw)):
            try:
                obj = _row(line)
            except BadLine as exc:
                if not whole:  # the row a killed batch was writing
                    rows.cut = True
                    break
                rows.skipped += 1
                rows.first_fault = rows.first_fault or f"line {number}{exc}"
                continue
            if obj is not None:
                rows.objects.append(convert(obj))
    return rows


def _as_utf8(raw: BinaryIO) -> BinaryIO:
    """``raw`` past a UTF-8 byte-order mark, or transcoded when it is UTF-16 or UTF-32."""
    from ..normalize.encoding import Transcoded, text_encoding

    head = raw.read(8192)
    encoding = text_encoding(head)
    raw.seek(len(UTF8_BOM) if head.startswith(UTF8_BOM) else 0)
    return io.BufferedReader(Transcoded(raw, encoding)) if encoding else raw  # type: ignore[return-value]


def _lines(stream: BinaryIO) -> Iterator[tuple[int, bytes | None, bool]]:
    """(number, line, ends with a newline) for each line; a line over ``MAX_ROW`` is read past in
    pieces and given as ``None``, so no line is ever held whole beyond that."""
    number = 0
    while True:
        line = stream.readline(MAX_ROW + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_ROW and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):
                line = stream.readline(1 << 20)
            yield number, None, line.endswith(b"\n")
        else:
            yield number, line, line.endswith(b"\n")


def _row(line: bytes | None) -> dict | None:
    """The row ``line`` holds, ``None`` for a blank line; ``BadLine`` (': why') for anything else."""
    if line is None:
        raise BadLine(f" is longer than {MAX_ROW >> 20} MiB: no batch writes such a row")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise BadLine(" is not UTF-8 text (binary data?)") from None
    if not text.strip():
        return None
    try:
        obj = json.loads(text)
    except RecursionError:
        raise BadLine(": JSON nested too deep") from None
    except ValueError:
        raise BadLine(" is not a JSON object") from None
    if not isinstance(obj, dict):
        raise BadLine(f": {ROW_SHAPE}, not {_what(obj)}")
    missing = [k for k in load_shapes()["row"][0] if k not in obj]
    if missing:
        raise BadLine(f": missing field{'s' if len(missing) > 1 else ''} {', '.join(missing[:4])}"
                      f"{', ...' if len(missing) > 4 else ''} (a scan's own output is not one)")
    _check(obj, "row", "")
    return obj


def _check(obj: dict, shape: str, where: str) -> None:
    """``BadLine`` naming the first field of ``obj`` (an object of kind ``shape``) that breaks its rule."""
    required, fields = load_shapes()[shape]
    for key in required:
        if key not in obj:
            raise BadLine(f': {where}no "{key}" field')
    for key, kind, inner in fields:
        if key not in obj:
            continue
        value = obj[key]
        if inner is None:
            if not FITS[kind](value):
                raise BadLine(f': {where}"{key}" must be {KIND_WORDS[kind]}, not {_what(value)}')
            continue
        if not isinstance(value, list):
            raise BadLine(f': {where}"{key}" must be a list of objects, not {_what(value)}')
        for i, item in enumerate(value, start=1):
            if not isinstance(item, dict):
                raise BadLine(f': {where}"{key}" must be a list of objects; item {i} is {_what(item)}')
            _check(item, inner, f"{where}{inner} {i}: ")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


#: whether a value is of each kind (``KIND_WORDS``); a NaN or infinite number fits none
FITS: dict[str, Callable[[Any], bool]] = {
    "text": lambda v: isinstance(v, str),
    "text-or-null": lambda v: v is None or isinstance(v, str),
    "value": lambda v: v is None or isinstance(v, str) or _number(v),
    "count": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
    "confidence": lambda v: _number(v) and 0 <= v <= 1,
    "texts": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    # a batch writes text; a number or a flag is still a fact a row may carry, not a reason to lose it
    "facts": lambda v: isinstance(v, dict) and all(x is None or isinstance(x, (str, bool)) or _number(x)
                                                   for x in v.values()),
}


def _what(value: Any) -> str:
    """``value`` in a few words: its JSON type, and the value itself when it is short."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"the number {value}" if math.isfinite(value) else json.dumps(value)  # NaN, Infinity
    if isinstance(value, str):
        return f"the text {json.dumps(value[:20])}{'...' if len(value) > 20 else ''}"
    return "a list" if isinstance(value, list) else "an object"
