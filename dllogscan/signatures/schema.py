"""The types of a signature file's fields, checked before anything is built from them.

TOML gives every value a type, but not the one the loader needs: ``priority = "high"``,
``pattern = 5``, ``keywords = "Bus error"`` (which a loop would read character by character) or
``signature = "abc"`` must be refused with one line that names the file, the entry and the field,
never a traceback. ``check_file`` checks the top level, ``check_signature`` and ``check_fix`` one
table each; each returns the problem as text, or None when the table is well typed.
"""
from __future__ import annotations

from typing import Any

#: field -> kind: ``text`` a string, ``texts`` a list of strings, ``int`` an integer, ``number``
#: an integer or a float (never a boolean: TOML's ``true`` is not a weight)
SIGNATURE_FIELDS = {
    "id": "text", "class": "text", "subclass": "text", "title": "text", "role": "text",
    "keywords": "texts", "pattern": "text", "weight": "number", "priority": "int", "kinds": "texts",
    "since": "text", "until": "text", "source": "text", "examples": "texts",
    "counter_examples": "texts", "refines": "text", "link": "text", "linked_weight": "number",
    "absorbs": "texts", "absorb_within": "int", "requires": "conditions", "excludes": "conditions",
    "capture_after": "int", "flags": "text", "notes": "text", "alone": "alone",
    "lead": "text",
}
FIX_FIELDS = {"key": "text", "rank": "int", "title": "text", "why": "text", "commands": "texts",
              "code": "text", "notes": "text", "when": "text",
              "platform": "text", "already": "settings"}
CONDITION_FIELDS = {"ids": "texts", "within": "int", "same": "text"}
KIND_NAMES = {"text": "a string", "texts": "a list of strings", "int": "an integer",
              "number": "a number", "conditions": "a list of tables",
              "alone": "true, false or a table of fact patterns",
              "settings": "a table of facts, each a string or a list of strings"}


def _is(kind: str, value: Any) -> bool:
    if kind == "text":
        return isinstance(value, str)
    if kind == "texts":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "conditions":
        return isinstance(value, list) and all(isinstance(v, dict) for v in value)
    if kind == "alone":
        return isinstance(value, bool) or (
            isinstance(value, dict) and all(isinstance(v, str) for v in value.values()))
    if kind == "settings":
        return isinstance(value, dict) and bool(value) and all(
            isinstance(v, str) or (isinstance(v, list) and v and all(isinstance(x, str) for x in v))
            for v in value.values())
    raise ValueError(kind)


def _check_fields(raw: dict[str, Any], fields: dict[str, str]) -> str | None:
    for name, value in raw.items():
        kind = fields.get(name)
        if kind is not None and not _is(kind, value):
            return f"{name} must be {KIND_NAMES[kind]}, not {type(value).__name__} {_short(value)}"
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_file(data: dict[str, Any]) -> str | None:
    """The top level: ``signature`` and ``fix`` must be arrays of tables (``[[signature]]``)."""
    for table in ("signature", "fix"):
        value = data.get(table, [])
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            return f"{table} must be an array of tables ([[{table}]]), not {type(value).__name__} {_short(value)}"
    return None


def check_signature(raw: dict[str, Any]) -> str | None:
    """One ``[[signature]]`` table: every known field of its type, conditions included, and at
    least one example (the loader runs them; an entry nobody showed matching is not loaded)."""
    problem = _check_fields(raw, SIGNATURE_FIELDS)
    if problem:
        return problem
    for name in ("requires", "excludes"):
        for cond in raw.get(name, ()):
            problem = _check_fields(cond, CONDITION_FIELDS)
            if problem:
                return f"{name}: {problem}"
    if not raw.get("examples"):
        return "needs at least one example (a line its pattern must match)"
    return None


def check_fix(raw: dict[str, Any]) -> str | None:
    """One ``[[fix]]`` table."""
    return _check_fields(raw, FIX_FIELDS)
