"""JSON per ``shared/contract``: one object for one source, a list of objects as JSONL."""
from __future__ import annotations

import json
from typing import Sequence

from ..core.models import ScanResult


def to_json(results: Sequence[ScanResult]) -> str:
    """One source: its object. Several: a JSON array of them."""
    if len(results) == 1:
        return json.dumps(results[0].to_dict(), indent=2, ensure_ascii=False)
    return json.dumps([r.to_dict() for r in results], indent=2, ensure_ascii=False)


def to_jsonl(results: Sequence[ScanResult]) -> str:
    return "".join(json.dumps(r.to_dict(), ensure_ascii=False) + "\n" for r in results)
