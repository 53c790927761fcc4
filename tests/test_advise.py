"""Fixes filled with facts; the shared-memory demand estimate."""
from __future__ import annotations

import dllogscan
from dllogscan.advise.fixes import batch_bytes_from_shape, fill, parse_size, shm_demand

SHM_LOG = """config: DataLoader(num_workers=8, prefetch_factor=2, batch_size=64, pin_memory=True)
Filesystem      Size  Used Avail Use% Mounted on
shm              64M   64M     0 100% /dev/shm
batch images: torch.Size([64, 3, 224, 224])
Epoch 0:  12%|#         | 120/1000 [00:30<03:40,  4.00it/s, loss=0.412]
RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.
"""


def test_fill_uses_facts_defaults_and_visible_gaps():
    assert fill("lsof -p {pid} | wc -l", {"pid": "42"}) == "lsof -p 42 | wc -l"
    assert fill("--shm-size={shm_suggest|8g}", {}) == "--shm-size=8g"
    assert fill("--shm-size={shm_suggest|8g}", {"shm_suggest": "2g"}) == "--shm-size=2g"
    assert fill("kill {pid}", {}) == "kill <pid>"
    assert fill("awk '{print $1}'", {}) == "awk '{print $1}'"


def test_sizes_and_shapes():
    assert parse_size("64M") == 64 << 20 and parse_size("8g") == 8 << 30 and parse_size("1.5GiB") == 3 << 29
    assert batch_bytes_from_shape("64, 3, 224, 224") == 64 * 3 * 224 * 224 * 4
    demand = shm_demand({"num_workers": "8", "batch_shape": "64, 3, 224, 224", "shm_size": "64M"})
    assert demand["shm_demand"] == "588.0 MiB" and demand["shm_suggest"] == "1g" and demand["shm_ratio"] == "9.2"


def test_log_facts_reach_the_fixes():
    [d] = dllogscan.scan(SHM_LOG).diagnoses
    assert d.cls == "A"
    assert d.facts["num_workers"] == "8" and d.facts["shm_size"] == "64M"
    assert any("588.0 MiB" in n and "64M" in n for n in d.notes)
    commands = [c for f in d.fixes for c in f.commands]
    assert any("--shm-size=1g" in c for c in commands)
