"""The split scan of a large plain file equals the single-process scan: same result dict and the
same head, tail, prefix, line count and hits — failures placed right at worker boundaries, huge
lines across them, and more hits than the per-signature cap."""
from __future__ import annotations

import gzip
import random

import pytest

from dllogscan.scan import limits as scan_mod, parallel
from dllogscan.pipeline import runner as pipeline
from dllogscan.sources import streams as sources
from dllogscan.scan.scanner import Scanner

FAILURES = [
    "RuntimeError: DataLoader worker (pid 48211) is killed by signal: Bus error. It is possible that "
    "dataloader's workers are out of shared memory. Please try to raise your shared memory limit.",
    "RuntimeError: DataLoader worker (pid(s) 4971) exited unexpectedly",
    "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
    "RuntimeError: DataLoader timed out after 600 seconds",
]


@pytest.fixture(autouse=True)
def small_rounds(monkeypatch):
    """Rounds of 64 KB so a 1 MB file has 16 of them (and several workers)."""
    monkeypatch.setattr(scan_mod, "CHUNK", 64 << 10)
    monkeypatch.setattr(scan_mod, "LOOKAHEAD", 8 << 10)
    monkeypatch.setattr(scan_mod, "LOOKBEHIND", 4 << 10)
    monkeypatch.setattr(scan_mod, "MAX_LINE", 2 << 10)
    monkeypatch.setattr(scan_mod, "WINDOW", 512)
    monkeypatch.setattr(scan_mod, "KEEP_PREFIX", 100 << 10)
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)
    # threads other tests leave idle (a served app, a guard) would turn splitting off
    monkeypatch.setattr(parallel, "_single_threaded", lambda: True)


def _log(seed: int) -> bytes:
    """Progress lines, with failures and huge lines planted around every 64 KB boundary."""
    rng = random.Random(seed)
    chunk = scan_mod.CHUNK
    out = bytearray()
    step = 0
    marks = [k * chunk + d for k in range(1, 20) for d in (rng.randint(-9000, 9000),)]
    while len(out) < 20 * chunk:
        if marks and len(out) >= marks[0]:
            marks.pop(0)
            kind = rng.random()
            if kind < 0.3:  # a huge line (tqdm without newlines) with a failure somewhere inside
                bar = "".join(f"{i}%|####| {i}/100 [00:01<00:02]\r" for i in range(rng.randint(200, 900)))
                at = rng.randint(0, len(bar))
                out += (bar[:at] + rng.choice(FAILURES) + bar[at:] + "\n").encode()
            elif kind < 0.5:  # a config line with keywords but no failure, then a failure
                out += b"config: {'num_workers': 8, 'pin_memory': True, 'persistent_workers': True}\n"
                out += (rng.choice(FAILURES) + "\n").encode()
            else:
                out += (rng.choice(FAILURES) + "\n").encode()
            continue
        out += f"[rank{step % 4}]: step {step} | loss {rng.random():.4f} | tokens/s {rng.randint(30000, 45000)}\n".encode()
        if rng.random() < 0.02:
            out += b"\n"
        step += 1
    # the cap: one signature matched on more lines than MAX_HITS_PER_SIGNATURE
    return bytes(out)


def _outputs(path, engine: str, jobs: int, monkeypatch):
    monkeypatch.setenv(parallel.ENV, str(jobs))
    scanner = Scanner(pipeline.get_scanner(engine="python").db, engine=engine)
    result = pipeline.run(sources.from_path(path), scanner, classifier="off").to_dict()
    with sources.from_path(path).open() as raw:
        head = raw.read(100)
        out = scanner.scan(sources.PeekedStream(head, raw))
    return result, out


@pytest.mark.parametrize("seed,jobs", [(1, 2), (2, 3), (3, 5), (4, 16)])
def test_split_scan_equals_single_scan(tmp_path, monkeypatch, seed, jobs):
    path = tmp_path / "big.log"
    data = _log(seed)
    if seed == 4:  # trailing partial line, no final newline
        data += b"tail without newline: in DataLoader worker process 0"
    path.write_bytes(data)
    merged = []
    real_merge = parallel._merge
    monkeypatch.setattr(parallel, "_merge", lambda *a: merged.append(1) or real_merge(*a))
    one_result, one = _outputs(path, "python", 1, monkeypatch)
    assert not merged
    split_result, split = _outputs(path, "python", jobs, monkeypatch)
    assert merged, "the split scan did not run"
    assert split_result == one_result
    assert one_result["diagnoses"]
    for name in ("hits", "lines", "bytes_read", "head", "tail", "prefix", "read_error"):
        assert getattr(split, name) == getattr(one, name), name


def test_cap_per_signature_holds_over_workers(tmp_path, monkeypatch):
    monkeypatch.setattr(scan_mod, "MAX_HITS_PER_SIGNATURE", 7)
    line = (FAILURES[1] + "\n").encode()
    filler = b"".join(b"step %d loss 0.1\n" % i for i in range(3000))
    path = tmp_path / "many.log"
    path.write_bytes((filler + line * 5) * 12)
    _, one = _outputs(path, "python", 1, monkeypatch)
    _, split = _outputs(path, "python", 4, monkeypatch)
    assert split.hits == one.hits and len({h.line for h in one.hits}) == 7


def test_only_plain_regular_files_are_split(tmp_path, monkeypatch):
    data = _log(5)
    threads = [False]
    monkeypatch.setattr(parallel, "_single_threaded", lambda: not threads[0])
    gz = tmp_path / "big.log.gz"
    gz.write_bytes(gzip.compress(data))
    scanner = Scanner(pipeline.get_scanner(engine="python").db, engine="python")
    # (a PeekedStream closes its inner stream when collected: one per opened stream)
    with sources.from_path(gz).open() as stream:
        assert parallel.try_parallel(scanner, sources.PeekedStream(b"", stream), n_jobs=2) is None
    plain = tmp_path / "big.log"
    plain.write_bytes(data)
    with sources.from_path(plain, limit=1000).open() as stream:  # --max-bytes short of the end
        assert parallel.try_parallel(scanner, sources.PeekedStream(b"", stream), n_jobs=2) is None
    with sources.from_path(plain).open() as stream:
        assert parallel.try_parallel(scanner, sources.PeekedStream(b"", stream), n_jobs=1) is None
    with sources.from_path(plain).open() as stream:
        peeked = sources.PeekedStream(b"", stream)
        assert parallel.try_parallel(scanner, peeked, n_jobs=2) is not None
        threads[0] = True  # other threads running: no fork
        assert parallel.try_parallel(scanner, peeked, n_jobs=2) is None
        threads[0] = False
        stream.read(10)  # something read past the head: no longer a fresh file
        assert parallel.try_parallel(scanner, peeked, n_jobs=2) is None


def test_a_fact_read_once_keeps_the_first_value_over_workers(tmp_path, monkeypatch):
    """Each worker reads the Windows drive once in its own part; the merge keeps the first part's,
    as the single pass does."""
    filler = b"".join(b"step %d loss 0.1\n" % i for i in range(3000))
    frame = b'  File "%s:\\work\\train.py", line 40, in <module>\n'
    path = tmp_path / "drives.log"
    path.write_bytes(b"".join(filler + frame % drive for drive in (b"C", b"D", b"E", b"F") * 3)
                     + (FAILURES[1] + "\n").encode())
    one_result, one = _outputs(path, "python", 1, monkeypatch)
    split_result, split = _outputs(path, "python", 4, monkeypatch)
    assert split.hits == one.hits
    assert [h.facts["windows"] for h in one.hits if h.signature == "fact.windows"] == ["C"]
    assert split_result == one_result and one_result["facts"]["windows"] == "C"


@pytest.mark.parametrize("seed,jobs", [(6, 3), (7, 5)])
def test_split_scan_equals_single_scan_with_unicode_blanks(tmp_path, monkeypatch, seed, jobs):
    """Blanks and invisible characters in every kind of line, the huge ones (longer than MAX_LINE:
    left as they are) and those cut by a worker's boundary included: each part folds its lines
    as the single pass does."""
    data = (_log(seed).replace(b"killed by signal", "killed by\u00a0signal".encode())
            .replace(b"exited unexpectedly", "exited\u200b unexpectedly".encode())
            .replace(b" | loss ", " |\u3000loss\u00a0".encode()).replace(b"[00:01", "[00:\u202f01".encode()))
    path = tmp_path / "pasted.log"
    path.write_bytes(data)
    one_result, one = _outputs(path, "python", 1, monkeypatch)
    split_result, split = _outputs(path, "python", jobs, monkeypatch)
    assert split_result == one_result
    assert {"A", "E"} <= {d["class"] for d in one_result["diagnoses"]}
    assert one.folded
    for name in ("hits", "lines", "bytes_read", "head", "tail", "prefix", "read_error", "folded"):
        assert getattr(split, name) == getattr(one, name), name


def test_split_scan_equals_single_scan_on_a_line_of_repeated_failures(tmp_path, monkeypatch):
    """A line of one failure repeated across several workers' rounds: each round matches as many
    of its windows (``limits.LINE_WINDOWS``) whichever process reads it."""
    line = ("DataLoader worker exited unexpectedly " * 40000).encode()
    path = tmp_path / "spam.log"
    path.write_bytes(_log(8)[: 5 * scan_mod.CHUNK] + line + b"\n" + _log(9)[: 3 * scan_mod.CHUNK])
    one_result, one = _outputs(path, "python", 1, monkeypatch)
    split_result, split = _outputs(path, "python", 4, monkeypatch)
    assert split_result == one_result
    assert split.hits == one.hits
