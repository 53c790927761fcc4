"""What the Python API is given beyond a str: a bad path value comes back as a result with
``error`` set (as the docstrings promise), bytes-like objects are bytes, a binary file object is
read as a stream, and ``scan_file`` rejects what is not a path (an int would be a descriptor)."""
from __future__ import annotations

import gzip
import io
import os
import pathlib

import pytest

import dllogscan

BUS = b"RuntimeError: DataLoader worker (pid 1) is killed by signal: Bus error.\n"


@pytest.mark.timeout(30)
@pytest.mark.parametrize("call", [lambda: dllogscan.scan_file("a\0b.log"), lambda: dllogscan.scan(pathlib.Path("a\0b")),
                                  lambda: dllogscan.scan_file(pathlib.Path("a\0b.log"))])
def test_a_path_with_a_nul_byte_is_a_result_with_an_error(call):
    result = call()
    assert not result.diagnoses and "embedded null byte" in result.error and "\0" not in result.error


@pytest.mark.timeout(30)
@pytest.mark.parametrize("wrap", [bytearray, memoryview, bytes])
def test_bytes_like_objects_are_bytes(wrap):
    for call in (dllogscan.scan, dllogscan.scan_text):
        result = call(wrap(BUS))
        assert result.error is None and result.source == "text" and result.diagnoses[0].cls == "A"


@pytest.mark.timeout(30)
def test_a_binary_file_object_is_read_as_a_stream_and_left_open(tmp_path):
    stream = io.BytesIO(gzip.compress(BUS * 3))
    result = dllogscan.scan(stream)
    assert result.error is None and result.source == "stream" and result.diagnoses[0].cls == "A"
    assert not stream.closed
    log = tmp_path / "job.log"
    log.write_bytes(BUS)
    with open(log, "rb") as fh:
        assert dllogscan.scan(fh).source == str(log)
    with open(log, "rb") as fh:
        assert dllogscan.scan(fh, name="upload").source == "upload"


@pytest.mark.timeout(30)
def test_a_stream_is_bounded_by_max_bytes():
    result = dllogscan.scan(io.BytesIO(b"step 1 loss 0.5\n" * 10_000), max_bytes=1000)
    assert "cut at 1000 bytes" in result.error and result.bytes_read <= 1000


@pytest.mark.timeout(30)
@pytest.mark.parametrize("item, kind", [(io.StringIO(BUS.decode()), "StringIO"), (5, "int"), (None, "NoneType"),
                                         ([BUS], "list")])
def test_the_guessing_form_names_what_it_takes_instead_of_raising(item, kind):
    result = dllogscan.scan(item)
    assert not result.diagnoses and result.error.startswith(f"cannot scan a {kind}:")
    assert "path" in result.error and "binary file object" in result.error


@pytest.mark.timeout(30)
@pytest.mark.parametrize("item", [5, 5.0, None, io.BytesIO(BUS)])
def test_scan_file_rejects_what_is_not_a_path(item):
    with pytest.raises(TypeError, match="scan_file takes a path"):
        dllogscan.scan_file(item)


@pytest.mark.timeout(30)
def test_scan_file_never_reads_a_descriptor(tmp_path):
    log = tmp_path / "job.log"
    log.write_bytes(BUS)
    fd = os.open(log, os.O_RDONLY)
    try:
        with pytest.raises(TypeError):
            dllogscan.scan_file(fd)
        assert os.lseek(fd, 0, os.SEEK_CUR) == 0  # nothing was read from it
    finally:
        os.close(fd)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("item", [5, None, pathlib.Path("x.log")])
def test_scan_text_rejects_what_is_not_text(item):
    with pytest.raises(TypeError, match="scan_text takes"):
        dllogscan.scan_text(item)


@pytest.mark.parametrize("call", [dllogscan.scan, dllogscan.scan_text])
@pytest.mark.parametrize("option, value", [("engine", "foo"), ("classifier", "foo"), ("min_confidence", 5),
                                           ("min_confidence", float("nan")), ("min_confidence", -0.1)])
def test_an_option_no_call_can_mean_is_a_value_error(call, option, value):
    """Before: ``engine="foo"`` and ``classifier="foo"`` scanned as if defaults or "off" were
    given, and ``min_confidence=5`` returned no diagnosis, all silently."""
    with pytest.raises(ValueError, match=f"^{option}="):
        call(BUS, **{option: value})


@pytest.mark.parametrize("max_bytes", [0, -5])
def test_max_bytes_must_be_positive(tmp_path, max_bytes):
    path = tmp_path / "job.log"
    path.write_bytes(BUS)
    with pytest.raises(ValueError, match="^max_bytes="):
        dllogscan.scan_file(path, max_bytes=max_bytes)


@pytest.mark.parametrize("engine", ["auto", "python"])
@pytest.mark.parametrize("classifier", ["auto", "weak", "on", "off"])
def test_every_documented_option_value_is_taken(engine, classifier):
    assert dllogscan.scan(BUS, engine=engine, classifier=classifier, min_confidence=1.0).error is None


@pytest.mark.parametrize("option, value", [("prefilter", "foo"), ("classifier", "foo"), ("min_confidence", 2)])
def test_scan_many_refuses_an_option_no_call_can_mean(tmp_path, option, value):
    """Before: ``classifier="foo"`` ran the batch as "off" and ``min_confidence=2`` gave no class."""
    (tmp_path / "job.log").write_bytes(BUS)
    with pytest.raises(ValueError, match=f"^{option}="):
        dllogscan.scan_many(str(tmp_path), jobs=1, **{option: value})
