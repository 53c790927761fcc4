"""The prefilter engines: same diagnoses on the whole corpus and on bench-like job logs; the
pure-Python one never misses a line that holds a keyword; Aho-Corasick reports exactly the
offsets of one find loop per anchor; the cached Hyperscan database; the typer-free quick path."""
from __future__ import annotations

import io
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from dllogscan.evaluation import corpus
from dllogscan.pipeline import runner as pipeline
from dllogscan.scan import limits as scan_mod, prefilter
from dllogscan.sources import streams as sources
from dllogscan.scan.scanner import Scanner

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.fixture(scope="module")
def shipped_db():
    return pipeline.get_scanner(engine="python").db


COMPILED = ["hyperscan", "ahocorasick"]


def _needs(engine: str) -> None:
    if not prefilter.available(engine):
        pytest.skip(f"{engine} is not installed")


@pytest.mark.parametrize("engine", COMPILED)
def test_engines_agree_on_the_whole_corpus(shipped_db, engine):
    _needs(engine)
    fast, slow = Scanner(shipped_db, engine=engine), Scanner(shipped_db, engine="python")
    assert fast.prefilter.name == engine
    items = corpus.load_items()
    assert items
    for item in items:
        a = pipeline.run(sources.from_path(item.path), fast, classifier="off").to_dict()
        b = pipeline.run(sources.from_path(item.path), slow, classifier="off").to_dict()
        assert a == b, item.path


@pytest.mark.parametrize("engine", COMPILED)
def test_engines_agree_on_bench_job_logs(shipped_db, engine):
    """Every generator of the batch bench (bench/joblogs.py), with and without a failure."""
    _needs(engine)
    sys.path.insert(0, str(BENCH))
    try:
        import joblogs
    finally:
        sys.path.remove(str(BENCH))
    fast, slow = Scanner(shipped_db, engine=engine), Scanner(shipped_db, engine="python")
    pools = {name: lines[:300] for name, lines in joblogs.pools().items()}
    rng = random.Random(5)
    for i in range(len(joblogs.GENERATORS) * len(joblogs.FAILURES) * 2):
        name = list(pools)[i % len(pools)]
        data = joblogs.job_log(i if i % 2 else i * 10, 30_000, name, pools[name], rng)
        a = pipeline.run(sources.Source("job.log", lambda: io.BytesIO(data)), fast).to_dict()
        b = pipeline.run(sources.Source("job.log", lambda: io.BytesIO(data)), slow).to_dict()
        assert a == b, (name, i)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("dense", [0, prefilter.DENSE_BYTES_PER_MATCH, 10**9], ids=["lines", "default", "window"])
def test_ahocorasick_reports_every_anchor_offset(shipped_db, monkeypatch, seed, dense):
    """Every offset, overlapping anchors included, whether the overlapping search runs on the
    lines of the leftmost matches (``lines``) or on the whole window (``window``)."""
    _needs("ahocorasick")
    monkeypatch.setattr(prefilter, "DENSE_BYTES_PER_MATCH", dense)
    rng = random.Random(seed)
    data, _ = _random_log(rng, shipped_db.keywords + ["oom-killoom-kill", "shm_sizeshm-size", "/dev/shm_size", "OOMKilled process", "_get_data_queue.get"])
    reference, engine = prefilter.FindPrefilter(shipped_db.keywords), prefilter.AhoCorasickPrefilter(shipped_db.keywords)
    for _ in range(5):
        start = rng.randrange(len(data))
        end = rng.randrange(start, len(data) + 1)
        assert engine.positions(data, start, end) == reference.positions(data, start, end)
    assert engine.positions(data, 0, len(data)) == reference.positions(data, 0, len(data))


def _random_log(rng: random.Random, keywords: list[str]) -> tuple[bytes, set[int]]:
    """Random lines, some with a keyword injected at a random offset; the line numbers that hold one."""
    alphabet = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ0123456789_:/|.%=<>[]\r\x1b"
    lines, marked = [], set()
    for n in range(1, rng.randint(50, 400)):
        text = "".join(rng.choice(alphabet) for _ in range(rng.choice((0, 5, 40, 300))))
        if rng.random() < 0.3:
            at = rng.randint(0, len(text))
            text = text[:at] + rng.choice(keywords) + text[at:]
        if any(k in text for k in keywords):
            marked.add(n)
        lines.append(text)
    return "\n".join(lines).encode("utf-8"), marked


@pytest.mark.parametrize("seed", range(12))
def test_python_prefilter_never_misses_a_keyword_line(shipped_db, monkeypatch, seed):
    rng = random.Random(seed)
    monkeypatch.setattr(scan_mod, "CHUNK", rng.choice((64, 97, 500, 4096)))
    monkeypatch.setattr(scan_mod, "LOOKAHEAD", 256)
    monkeypatch.setattr(scan_mod, "LOOKBEHIND", 128)
    keywords = shipped_db.keywords
    data, marked = _random_log(rng, keywords)
    engine = Scanner(shipped_db, engine="python")
    seen: set[int] = set()
    monkeypatch.setattr(engine, "_match_line", lambda d, s, e, line, out: seen.add(line))
    engine.scan(io.BytesIO(data))
    assert marked <= seen, sorted(marked - seen)[:10]


def test_anchors_cover_every_keyword(shipped_db):
    anchors = prefilter.anchors(shipped_db.keywords)
    assert all(any(a in k.encode() for a in anchors) for k in shipped_db.keywords)


def test_over_the_packed_limit_the_anchors_are_searched_in_groups():
    """More anchors than the packed searcher takes are split into even groups, none over the
    limit, each anchor in one group; the Aho-Corasick engine still reports every offset of
    each anchor, overlapping ones across groups included."""
    from dllogscan.scan.anchors import PACKED_LIMIT, packed_groups

    keywords = [f"kw{chr(97 + i // 26)}{chr(97 + i % 26)}xyz{i}" for i in range(150)]
    keywords += ["num_workers", "persistent_workers", "workers_per_gpu", "dataloader workers"]
    found = prefilter.anchors(keywords)
    assert len(found) == 154 and b"workers" not in found
    groups = packed_groups(found)
    assert [len(g) for g in groups] == [52, 51, 51]
    assert sorted(a for g in groups for a in g) == sorted(found)
    assert packed_groups(found[:PACKED_LIMIT]) == [found[:PACKED_LIMIT]] and packed_groups([]) == []
    _needs("ahocorasick")
    rng = random.Random(7)
    data, _ = _random_log(rng, keywords + ["kwaaxyz0kwabxyz1", "num_workers_per_gpu"])
    reference, engine = prefilter.FindPrefilter(keywords), prefilter.AhoCorasickPrefilter(keywords)
    assert len(engine._leftmost) == 3
    for start, end in [(0, len(data))] + [sorted(rng.sample(range(len(data)), 2)) for _ in range(20)]:
        assert engine.positions(data, start, end) == reference.positions(data, start, end)


def test_a_dense_window_is_known_as_such_after_one_group(shipped_db):
    """A window whose first packed group already finds more than one match per
    ``DENSE_BYTES_PER_MATCH`` bytes is searched whole with the overlapping search: the other
    groups' leftmost searches (each a Python tuple per match) and their sort are not run."""
    _needs("ahocorasick")
    from dllogscan.scan.anchors import packed_groups

    engine = prefilter.AhoCorasickPrefilter(shipped_db.keywords)
    assert len(engine._leftmost) > 1
    asked: list[int] = []

    class Counting:
        def __init__(self, index, searcher):
            self.index, self.searcher = index, searcher

        def find_matches_as_indexes(self, window):
            asked.append(self.index)
            return self.searcher.find_matches_as_indexes(window)

    engine._leftmost = [Counting(i, s) for i, s in enumerate(engine._leftmost)]
    data = b"step 1 " + packed_groups(engine.anchors)[0][0] + b" done\n"
    data *= 5000
    reference = prefilter.FindPrefilter(shipped_db.keywords)
    assert engine.positions(data, 0, len(data)) == reference.positions(data, 0, len(data))
    assert asked == [0]


def test_a_line_with_only_a_word_of_a_keyword_is_not_woken(shipped_db):
    """No anchor stands for a family of keywords: a line with ``workers`` alone is not found,
    the lines with real keywords are."""
    assert b"workers" not in prefilter.anchors(shipped_db.keywords)
    text = (b"the workers are fine\nconfig: num_workers=8, persistent_workers=True\n"
            b"RuntimeError: DataLoader worker (pid(s) 7) exited unexpectedly\n")
    for engine in ("python", *(e for e in COMPILED if prefilter.available(e))):
        found = prefilter.make_prefilter(shipped_db.keywords, engine).positions(text, 0, len(text))
        assert found and min(found) > text.index(b"\n"), engine
    out = pipeline.get_scanner().scan(io.BytesIO(text))
    assert sorted({h.line for h in out.hits}) == [2, 3]
    assert {h.facts.get("num_workers") for h in out.hits if h.line == 2} >= {"8"}


def test_anchors_are_the_same_list_whatever_the_hash_seed():
    """The anchors key the Hyperscan cache: the same keywords give the same list in every run."""
    code = ("from dllogscan.pipeline.runner import get_scanner; from dllogscan.scan.anchors import anchors; "
            "print(anchors(get_scanner().db.keywords))")
    runs = {subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": seed},
                           capture_output=True, text=True, check=True).stdout for seed in ("1", "2", "3")}
    assert len(runs) == 1


def test_hyperscan_database_is_cached(tmp_path, monkeypatch, shipped_db):
    pytest.importorskip("hyperscan")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = prefilter.HyperscanPrefilter(shipped_db.keywords)
    [cached] = (tmp_path / "dllogscan").glob("hs-*.db")
    cached_bytes = cached.read_bytes()
    second = prefilter.HyperscanPrefilter(shipped_db.keywords)
    data = b"x\nRuntimeError: DataLoader worker (pid 1) is killed by signal: Bus error.\n"
    assert first.positions(data, 0, len(data)) == second.positions(data, 0, len(data)) != []
    cached.write_bytes(b"garbage")  # a broken cache entry is recompiled, not an error
    assert prefilter.HyperscanPrefilter(shipped_db.keywords).positions(data, 0, len(data))
    assert cached.read_bytes() == cached_bytes


def test_plain_scan_does_not_import_typer(tmp_path):
    log = tmp_path / "job.log"
    log.write_text("epoch 1\nRuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error.\n")
    code = ("import sys; from dllogscan.cli.fast import main\n"
            "try:\n    main([sys.argv[1], '--format', 'json'])\n"
            "except SystemExit as e:\n    print(e.code, sorted(m for m in ('typer', 'rich', 'pydantic') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code, str(log)], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip().endswith("1 []"), proc.stdout + proc.stderr
