"""The streaming scanner: line numbers, chunk boundaries, long lines, messy bytes, compression."""
from __future__ import annotations

import bz2
import gzip
import io
import lzma

import pytest

from dllogscan.pipeline import runner as pipeline
from dllogscan.scan import limits as scan_mod
from dllogscan.sources import streams as sources
from tests.conftest import progress_lines

BUS = "RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error. It is possible\n"


def run_text(scanner, text, name="t"):
    data = text.encode("utf-8") if isinstance(text, str) else text
    return pipeline.run(sources.from_bytes(data, name), scanner, classifier="off")


def test_failure_deep_inside_long_log(mini_scanner):
    log = progress_lines(60000) + BUS + progress_lines(10, 60000)
    result = run_text(mini_scanner, log)
    assert result.lines == 60011
    [d] = result.diagnoses
    assert (d.cls, d.subclass) == ("A", "bus-error")
    assert d.evidence[0].line == 60001
    assert d.facts["pid"] == "363"


def test_a_window_of_a_longer_file_keeps_the_file_line_numbers(mini_scanner):
    """``watch`` diagnoses the last lines of a file: numbered from the window's first line on."""
    window = (progress_lines(20, 5000) + BUS).encode()
    result = pipeline.run(sources.from_flat(window, "t", first_line=5001), mini_scanner, classifier="off")
    assert result.lines == 5021 and result.diagnoses[0].evidence[0].line == 5021


@pytest.mark.parametrize("chunk", [64, 97, 1000, 4096])
def test_chunk_boundaries_do_not_move_or_lose_hits(mini_scanner, monkeypatch, chunk):
    monkeypatch.setattr(scan_mod, "CHUNK", chunk)
    monkeypatch.setattr(scan_mod, "LOOKAHEAD", 256)
    monkeypatch.setattr(scan_mod, "LOOKBEHIND", 128)
    log = "".join(progress_lines(7, i * 7) + BUS.replace("363", str(100 + i)) for i in range(40))
    out = mini_scanner.scan(io.BytesIO(log.encode()))
    hits = [h for h in out.hits if h.signature.startswith("A.")]
    assert [h.line for h in hits] == [8 * (i + 1) for i in range(40)]
    assert [h.facts["pid"] for h in hits] == [str(100 + i) for i in range(40)]


def test_one_huge_line_is_matched_in_a_window_with_bounded_memory(mini_scanner):
    import tracemalloc

    filler = b"x" * (100 << 20)
    data = b"start\n" + filler[: 50 << 20] + BUS.encode().rstrip(b"\n") + filler[: 50 << 20] + b"\nend\n"
    stream = io.BytesIO(data)
    tracemalloc.start()
    out = mini_scanner.scan(stream)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert [h.line for h in out.hits] == [2]
    assert out.lines == 3
    assert peak < 40 << 20, f"peak {peak >> 20} MiB"
    assert len(out.hits[0].text) < 1000


@pytest.mark.parametrize("at", ["end", "middle"])
def test_a_failure_late_in_a_line_longer_than_its_view_is_found(mini_scanner, at):
    """A line of 4 to 16 KB (output whose newlines were lost in a paste, joined by spaces) was
    matched by its first ``MAX_VIEW_CHARS`` characters alone: a failure past them was nothing found.
    It is matched in a window around the keyword, as a longer line is."""
    bars = " ".join(f"Epoch 0: {i}%|####| {i}/100 [00:{i:02d}<00:10, 3.21it/s, loss=0.{i}]" for i in range(150))
    assert 4000 < len(bars) < scan_mod.MAX_LINE
    line = bars + " " + BUS.rstrip() if at == "end" else bars[:6000] + " " + BUS.rstrip() + " " + bars[6000:]
    result = run_text(mini_scanner, "start training\n" + line + "\nend\n")
    assert [(d.cls, d.subclass) for d in result.diagnoses] == [("A", "bus-error")]
    assert result.diagnoses[0].evidence[0].line == 2 and result.diagnoses[0].facts["pid"] == "363"


def test_messy_bytes_are_text(mini_scanner):
    messy = (b"\x1b[31mEpoch 1: 10%|#|\x1b[0m\r Epoch 1: 11%|#|\r" + BUS.encode().replace(b"\n", b"\r\n")
             + b"bad utf8 \xff\xfe here\x00\x00 and NUL\n")
    result = run_text(mini_scanner, progress_lines(3).encode() + messy)
    [d] = result.diagnoses
    assert d.evidence[0].line == 4
    assert d.evidence[0].text.startswith("RuntimeError: DataLoader worker (pid 363)")
    assert "\x1b" not in d.evidence[0].text and "\r" not in d.evidence[0].text


def test_error_glued_to_progress_bar_and_rank_prefix(mini_scanner):
    glued = "[rank3]: Epoch 0:  45%|####5     | 450/1000 [00:10<00:12]" + BUS
    result = run_text(mini_scanner, progress_lines(5) + glued)
    [d] = result.diagnoses
    assert d.cls == "A" and d.facts.get("rank") == "3"


def test_escaped_newlines_in_one_line_repr(mini_scanner):
    line = ("ERROR trainer: RuntimeError('Caught KeyError in DataLoader worker process 2.\\n"
            "Original Traceback (most recent call last):\\n  File \"ds.py\", line 3\\nKeyError: 7')\n")
    result = run_text(mini_scanner, progress_lines(5) + line)
    [d] = result.diagnoses
    assert (d.cls, d.subclass) == ("B", "getitem") and d.facts["worker_id"] == "2"


@pytest.mark.parametrize("title", ["# ", "## ", "### ", "> ## "])
def test_issue_title_as_a_markdown_heading(mini_scanner, title):
    """A report pasted with its title as a heading: the canonical text in the title is found."""
    result = run_text(mini_scanner, title + BUS + "The reporter runs 8 workers in docker.\n")
    [d] = result.diagnoses
    assert d.cls == "A" and d.evidence[0].line == 1


def test_hash_lines_that_are_not_headings_stay_as_they_are():
    from dllogscan.normalize import lines

    assert lines.clean("#include <torch/extension.h>") == "#include <torch/extension.h>"
    assert lines.clean("#!/bin/bash") == "#!/bin/bash"
    assert lines.clean("# step 10 loss 0.5") == "step 10 loss 0.5"
    assert not lines.plain_lines(b"step 1\n# a heading\n")  # the fast path knows a heading is not plain


def test_message_wrapped_across_two_lines(mini_scanner):
    wrapped = "RuntimeError: DataLoader worker (pid 77) is\nkilled by signal: Bus error. It is possible\n"
    result = run_text(mini_scanner, progress_lines(5) + wrapped)
    [d] = result.diagnoses
    assert d.cls == "A" and d.evidence[0].line == 7 and d.facts["pid"] == "77"


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress])
def test_compressed_inputs(tmp_path, mini_scanner, compress):
    path = tmp_path / "job.log.z"
    path.write_bytes(compress((progress_lines(2000) + BUS).encode()))
    result = pipeline.run(sources.from_path(path), mini_scanner)
    assert result.error is None and result.diagnoses[0].evidence[0].line == 2001


def test_truncated_gzip_keeps_what_was_read(tmp_path, mini_scanner):
    blob = gzip.compress((BUS + progress_lines(200000)).encode())
    path = tmp_path / "cut.log.gz"
    path.write_bytes(blob[: len(blob) // 2])
    result = pipeline.run(sources.from_path(path), mini_scanner)
    assert "truncated" in result.error
    assert result.diagnoses and result.diagnoses[0].cls == "A"


def test_empty_binary_and_missing(tmp_path, mini_scanner):
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    r = pipeline.run(sources.from_path(empty), mini_scanner)
    assert (r.error, r.diagnoses, r.lines) == (None, (), 0)
    binary = tmp_path / "model.bin"
    binary.write_bytes(bytes(range(256)) * 64)
    r = pipeline.run(sources.from_path(binary), mini_scanner)
    assert "looks binary" in r.error and not r.diagnoses
    elf = tmp_path / "a.out"
    elf.write_bytes(b"\x7fELF" + b"\x00" * 100)
    assert "ELF" in pipeline.run(sources.from_path(elf), mini_scanner).error
    with pytest.raises(sources.SourceError, match="no such file"):
        sources.from_path(tmp_path / "absent.log")


def test_stray_nul_bytes_in_a_real_log_are_scanned(mini_scanner):
    log = progress_lines(50).encode() + b"\x00" * 40 + b"\n" + BUS.encode()
    assert run_text(mini_scanner, log).diagnoses[0].cls == "A"


def test_limit_cuts_and_says_so(mini_scanner):
    data = (progress_lines(10000) + BUS).encode()
    source = sources.Source(name="-", opener=lambda: sources.LimitedReader(io.BytesIO(data), 1000, "-"), limit=1000)
    r = pipeline.run(source, mini_scanner)
    assert "cut at 1000 bytes" in r.error and not r.diagnoses


def test_hit_flood_is_capped(mini_scanner):
    log = BUS * 5000
    out = mini_scanner.scan(io.BytesIO(log.encode()))
    assert len(out.hits) == scan_mod.MAX_HITS_PER_SIGNATURE
    assert [h.line for h in out.hits] == list(range(1, scan_mod.MAX_HITS_PER_SIGNATURE + 1))  # the first ones
    # counted to the cap at least; past it the lines that hold only its keywords may go unread
    assert scan_mod.MAX_HITS_PER_SIGNATURE <= out.counts["A.bus-error.killed-by-signal"] <= 5000


def test_compression_bomb_is_stopped(tmp_path, mini_scanner):
    import zlib

    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = b"\n" * (1 << 20)
    blob = b"".join(comp.compress(zeros) for _ in range(400)) + comp.flush()
    path = tmp_path / "bomb.log.gz"
    path.write_bytes(blob)
    result = pipeline.run(sources.from_path(path), mini_scanner)
    assert "compression bomb" in result.error


def test_a_bomb_under_a_second_compression_is_stopped(tmp_path, mini_scanner):
    """The outer layer inflates about 1:1 (its payload is deflate output); the inner one, the
    bomb, is measured against the bytes read from the file."""
    import zlib

    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    blob = b"".join(comp.compress(b"\n" * (1 << 20)) for _ in range(400)) + comp.flush()
    path = tmp_path / "bomb.log.gz.gz"
    path.write_bytes(gzip.compress(blob))
    result = pipeline.run(sources.from_path(path), mini_scanner)
    assert "compression bomb" in result.error


@pytest.mark.parametrize("layers", [("gz", "gz"), ("bz2", "xz", "gz"), ("xz", "gz")])
def test_a_log_compressed_again_is_read_through_every_layer(tmp_path, mini_scanner, layers):
    pack = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}
    data = b"".join(b"epoch 1 step %d loss=0.1\n" % i for i in range(500)) + BUS.encode()
    for kind in layers:
        data = pack[kind](data)
    path = tmp_path / ("train.log." + ".".join(layers))
    path.write_bytes(data)
    result = pipeline.run(sources.from_path(path), mini_scanner)
    assert result.error is None and result.lines == 501
    assert result.diagnoses[0].cls == "A"


def test_compressed_too_many_times_is_named_and_a_cut_second_layer_keeps_its_lines(tmp_path, mini_scanner):
    import random

    deep = BUS.encode()
    for _ in range(sources.COMPRESSION_LAYERS + 1):
        deep = gzip.compress(deep)
    (tmp_path / "deep.gz").write_bytes(deep)
    result = pipeline.run(sources.from_path(tmp_path / "deep.gz"), mini_scanner)
    assert result.error.endswith(f"compressed more than {sources.COMPRESSION_LAYERS} times, not a text log; not scanned")
    rng = random.Random(7)
    body = b"".join(b"step %d loss=%f\n" % (i, rng.random()) for i in range(100000)) + BUS.encode()
    twice = gzip.compress(gzip.compress(body))
    (tmp_path / "cut.log.gz.gz").write_bytes(twice[: len(twice) // 2])
    result = pipeline.run(sources.from_path(tmp_path / "cut.log.gz.gz"), mini_scanner)
    assert "truncated compressed stream" in result.error and 10000 < result.lines < 100000


def test_the_head_is_cleaned_only_when_asked_for_and_as_before():
    """The first lines are kept raw and cleaned on first use (only the classifier reads them);
    a start that cleans to nothing still gives way to the next round's lines."""
    sc = pipeline.get_scanner(engine="python")
    out = sc.scan(io.BytesIO(b"\x1b[0m\n\nhello\n  world \n"))
    assert out._head is None and out.head == [(3, "hello"), (4, "world")]
    blank_start = b"\n" * 40000 + b"".join(b"step %d loss=0.1\n" % i for i in range(300000))
    out = sc.scan(io.BytesIO(blank_start))
    assert len(out.head) == 10 and out.head[0] == (1, "step 187512 loss=0.1")
