"""The README's markdown reply for the shipped example is what dllogscan prints today."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_readme_reply_matches_the_example():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("### The reply for the shipped example", 1)[1].split(":\n\n", 1)[1]
    shown = "\n".join(line[4:] for line in block.splitlines() if line.startswith("    ") or not line)
    proc = subprocess.run([sys.executable, "-m", "dllogscan", "examples/docker-shm-bus-error.log",
                           "--format", "md", "--redact"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert shown.strip() == proc.stdout.strip()
