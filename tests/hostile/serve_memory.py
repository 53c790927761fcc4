"""Peak RSS the triage app adds for one 20 MiB JSON body (run alone: a fresh process, so the
high-water mark is this request's): of '€\\n' in its text, or with ``padding`` its text short and
another key holding 20 MiB of ``{},`` (or, with ``strings``, of ``"a",``). Prints {"status", "body_mb", "extra_mb"}."""
from __future__ import annotations

import json
import sys

from fastapi.testclient import TestClient

from dllogscan.serve.app import create_app

client = TestClient(create_app(), base_url="http://127.0.0.1:8765")
client.post("/api/diagnose", json={"text": "warm up\n"})
if sys.argv[1:] == ["padding"]:  # built in one piece: a list of its parts would raise the mark first
    body = b'{"text": "x", "pad": [' + b"{}," * (20 * 1024 * 1024 // 3 - 10) + b"{}]}"
elif sys.argv[1:] == ["strings"]:
    body = b'{"text": "x", "pad": [' + b'"a",' * (20 * 1024 * 1024 // 4 - 10) + b'"a"]}'
else:
    body = json.dumps({"text": "€\n" * (20 * 1024 * 1024 // 5 - 10)}, ensure_ascii=False).encode()
def hwm_mb() -> int:
    """This process's own peak RSS (ru_maxrss would carry a forking parent's size over exec)."""
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")) >> 10


before = hwm_mb()
status = client.post("/api/diagnose", content=body, headers={"Content-Type": "application/json"}).status_code
after = hwm_mb()
print(json.dumps({"status": status, "body_mb": len(body) >> 20, "extra_mb": after - before}))
