"""``batch`` over hostile trees: a tree deeper than Python's recursion limit (RecursionError and
0 rows before), and globs whose ``**`` met symlinks back up the tree (each file 41 times with one
loop; never ending with two)."""
from __future__ import annotations

import glob
import itertools
import json
import os
import subprocess
import sys
import time

import pytest

from dllogscan.batch.walk import _glob, expand

BUS = "RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error.\n"


def _remove_deep(root) -> None:
    """Remove a deep tree with a stack of our own (shutil.rmtree and os.walk recurse once per
    level on Python 3.11, so pytest's tmp_path clean-up would fail past the recursion limit)."""
    stack = [str(root)]
    while stack:
        subdirs = []
        with os.scandir(stack[-1]) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    subdirs.append(entry.path)
                else:
                    os.unlink(entry.path)
        if subdirs:
            stack += subdirs
        else:
            os.rmdir(stack.pop())


def _deep_tree(root, levels: int) -> str:
    path = str(root)
    (root / "top.log").write_text("hello\n")
    for _ in range(levels):
        path = os.path.join(path, "d")
        os.mkdir(path)
    with open(os.path.join(path, "job.log"), "w") as fh:
        fh.write(BUS)
    return path


def test_tree_deeper_than_the_recursion_limit(tmp_path):
    root = tmp_path / "deep"
    root.mkdir()
    try:
        _check_deep_tree(root, _deep_tree(root, 1500))
    finally:
        _remove_deep(root)


def _check_deep_tree(root, deepest: str) -> None:
    assert 1500 > sys.getrecursionlimit() // 2
    start = time.perf_counter()
    found = list(expand([str(root)]))
    assert time.perf_counter() - start < 2
    assert sorted(p for p, _ in found) == sorted([str(root / "top.log"), os.path.join(deepest, "job.log")])
    proc = subprocess.run([sys.executable, "-m", "dllogscan", "batch", str(root), "--format", "jsonl", "--jobs", "1"],
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr and proc.returncode == 1, proc.stderr[-500:]
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(rows) == 2 and {r["diagnoses"][0]["class"] for r in rows if r["diagnoses"]} == {"A"}


@pytest.fixture
def looped(tmp_path):
    """a/x.log, a/b/y.log, a/b/up -> .. (one loop), a/b/c/z.log, a/b/c/back -> ../.. (two)."""
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    for rel in ("a/x.log", "a/b/y.log", "a/b/c/z.log"):
        (tmp_path / rel).write_text("hello\n")
    os.symlink("..", tmp_path / "a" / "b" / "up")
    os.symlink("../..", tmp_path / "a" / "b" / "c" / "back")
    return tmp_path


@pytest.mark.timeout(60)
def test_glob_star_star_does_not_follow_symlinked_directories(looped):
    start = time.perf_counter()
    found = [p for p, _ in expand([str(looped / "a" / "**" / "*.log")])]
    assert time.perf_counter() - start < 2
    want = [str(looped / rel) for rel in ("a/x.log", "a/b/y.log", "a/b/c/z.log")]
    assert sorted(found) == sorted(want) and len(found) == len(set(found))


@pytest.mark.timeout(60)
def test_batch_glob_with_two_loops_ends_with_one_row_per_file(looped):
    proc = subprocess.run([sys.executable, "-m", "dllogscan", "batch", str(looped / "a" / "**" / "*.log"),
                           "--format", "jsonl", "--jobs", "1"], capture_output=True, text=True, timeout=50)
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 3


def test_trailing_star_star_walks_each_file_once(looped):
    found = [p for p, _ in expand([str(looped / "a" / "**")])]
    assert len(found) == len(set(found))
    assert str(looped / "a" / "b" / "c" / "z.log") in found


@pytest.mark.parametrize("pattern", ["*/*.log", "**/*.log", "a/*", "a/?.log", "a/[xy].log", "a/**/z.log",
                                     ".*", "a/.*", "nope/*.log", "*"])
def test_glob_names_what_glob_names_without_links(tmp_path, pattern, monkeypatch):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / ".hidden").mkdir()
    for rel in ("top.log", "a/x.log", "a/y.txt", "a/b/z.log", "a/.h.log", "a/.hidden/q.log", ".dot.log"):
        (tmp_path / rel).write_text("x\n")
    monkeypatch.chdir(tmp_path)
    assert sorted(_glob(pattern)) == sorted(glob.glob(pattern, recursive=True))
    absolute = str(tmp_path / pattern)
    assert sorted(_glob(absolute)) == sorted(glob.glob(absolute, recursive=True))


@pytest.mark.parametrize("args", [
    ["logs", "logs/a.log"], ["logs/a.log", "logs"], ["logs", "logs"], ["logs", "./logs/"], ["logs/sub", "logs"],
    ["logs", "latest"], ["logs", "latest/sub/b.log"], ["logs/*.log", "logs"], ["logs/**/*.log", "logs"],
])
def test_arguments_that_overlap_give_one_row_per_file(tmp_path, monkeypatch, args):
    """Before: ``batch logs/ logs/a.log`` gave a.log two rows (and summary counted its failure
    twice); ``logs latest`` (a link to logs) every file twice."""
    (tmp_path / "logs" / "sub").mkdir(parents=True)
    (tmp_path / "logs" / "a.log").write_text(BUS)
    (tmp_path / "logs" / "sub" / "b.log").write_text(BUS)
    (tmp_path / "latest").symlink_to(tmp_path / "logs", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    files = sorted(os.path.realpath(path) for path, _ in expand(args))
    assert files == [str(tmp_path / "logs" / "a.log"), str(tmp_path / "logs" / "sub" / "b.log")]


def test_a_file_named_twice_is_one_row_and_a_missing_one_keeps_its_row(tmp_path, monkeypatch):
    (tmp_path / "logs").mkdir()
    (tmp_path / "a.log").write_text(BUS)
    monkeypatch.chdir(tmp_path)
    assert [p for p, _ in expand(["a.log", "./a.log", "a.log"])] == ["a.log"]
    assert [p for p, _ in expand(["logs", "logs/missing.log"])] == ["logs/missing.log"]
    assert [p for p, _ in expand(["logs", "elsewhere/*.log"])] == []


#: arguments over the ``overlapping`` tree: folders, files, globs of each kind, one missing path
OVERLAPPING = ["a", "a/b", "a/*", "a/*.log", "a/**", "a/**/*.log", "**/*.log", "*/*/*.log", "a/?.log", "a/.*",
               "a/b/*", "a/b/c", "a/**/*", "{root}/a/**/z.log", "a/b/z.log", "./a/x.log", "a/d.log/q.log", "a/f.lnk",
               "a/missing.log"]


@pytest.fixture(scope="module")
def overlapping(tmp_path_factory):
    """top.log, a/{x.log,y.txt,.h.log}, a/b/z.log, a/b/c/w.log, a/d.log/q.log (a folder named like
    a log), a/.hidden/k.log, a/f.lnk -> x.log, a/up -> .. (a link to a folder)."""
    root = tmp_path_factory.mktemp("overlapping")
    for rel in ("top.log", "a/x.log", "a/y.txt", "a/.h.log", "a/b/z.log", "a/b/c/w.log", "a/d.log/q.log",
                "a/.hidden/k.log"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(BUS)
    os.symlink("x.log", root / "a" / "f.lnk")
    os.symlink("../..", root / "a" / "b" / "c" / "back")
    return root


def _where(path: str) -> str:
    """A row's source: its folder resolved, its own name kept (a link is a source of its own)."""
    return os.path.join(os.path.realpath(os.path.dirname(path) or "."), os.path.basename(path))


def _rows(args: list[str], root) -> list[str]:
    return [_where(path) for path, _ in expand([arg.format(root=root) for arg in args])]


#: every pair of arguments, either order, and where a folder named decides how links are compared,
#: three in every order (before, a link to a file named beside its target was one row or two as a
#: folder was named or not)
ARGUMENTS = [[first, second] for first in OVERLAPPING for second in OVERLAPPING] + [
    list(three) for trio in (("a/b", "a/f.lnk", "a/*"), ("a/b/c", "./a/x.log", "a/f.lnk"), ("a", "a/**", "a/b/*"))
    for three in itertools.permutations(trio)]


@pytest.mark.parametrize("args", ARGUMENTS, ids=" ".join)
def test_overlapping_arguments_give_each_source_one_row(overlapping, monkeypatch, args):
    """The sources of every argument, each once. Before: two globs that matched one file (``'a/*'
    'a/*.log'``), a glob and a file it matched, a glob and a folder it matched (``'a/*' a/b``,
    either order), a folder and a link in it that a glob matched, and ``'a/**/*'`` alone gave it
    two rows."""
    monkeypatch.chdir(overlapping)
    rows = _rows(args, overlapping)
    assert len(rows) == len(set(rows)), sorted(p for p in rows if rows.count(p) > 1)
    assert set(rows) == set().union(*(_rows([arg], overlapping) for arg in args))


def test_a_glob_alone_reads_what_is_under_a_folder_it_matched_once(overlapping, monkeypatch):
    monkeypatch.chdir(overlapping)
    assert [p for p, _ in expand(["a/**/*.log"])].count(os.path.join("a", "d.log", "q.log")) == 1
    assert sorted(p for p, _ in expand(["**/*"])) == sorted(set(p for p, _ in expand(["**/*"])))


@pytest.mark.parametrize("args, want", [
    (["a/x.log", "a/*.log"], ["a/x.log", "a/d.log/q.log"]),
    (["a/*.log", "a/x.log"], ["a/d.log/q.log", "a/x.log"]),
    (["a/b/*", "a/*"], ["a/b/c/back", "a/b/c/w.log", "a/b/z.log", "a/d.log/q.log", "a/f.lnk", "a/x.log",
                        "a/y.txt"]),
    (["a/b/z.log", "a/b/c/*", "a/b"], ["a/b/c/back", "a/b/c/w.log", "a/b/z.log"]),
])
def test_the_first_argument_that_reads_a_source_gives_its_row(overlapping, monkeypatch, args, want):
    """The order of the rows is the arguments' own (a folder named still reads all under it)."""
    monkeypatch.chdir(overlapping)
    assert [p for p, _ in expand(args)] == [w.replace("/", os.sep) for w in want]


def test_overlaps_hold_no_match_and_a_few_directories(overlapping, monkeypatch):
    """What a glob knows of directories is bounded: with room for two, still one row each."""
    from dllogscan.batch import globs, walk

    monkeypatch.chdir(overlapping)
    want = {first: _rows([first, "**/*", "a/**/*.log", first], overlapping) for first in ("a/*", "*/*/*.log")}
    monkeypatch.setattr(globs, "CACHED_DIRS", 1)
    monkeypatch.setattr(walk, "CACHED_DIRS", 1)
    assert {first: _rows([first, "**/*", "a/**/*.log", first], overlapping) for first in want} == want


def test_batch_of_overlapping_globs_counts_a_failure_once(tmp_path):
    """Before: two rows of one log, and summary counted two sources with a failure."""
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "docker.log").write_text(BUS)
    out = tmp_path / "r.jsonl"
    args = [str(tmp_path / "g" / "*.log"), str(tmp_path / "g" / "d*.log"), str(tmp_path / "g" / "docker.log")]
    proc = subprocess.run([sys.executable, "-m", "dllogscan", "batch", *args, "--out", str(out), "--jobs", "1"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-500:]
    assert [json.loads(line)["path"] for line in out.read_text().splitlines()] == [args[2]]
    summary = subprocess.run([sys.executable, "-m", "dllogscan", "summary", str(out), "--format", "csv"],
                             capture_output=True, text=True, timeout=120).stdout
    assert "scanned,1\nwith a failure,1\n" in summary
