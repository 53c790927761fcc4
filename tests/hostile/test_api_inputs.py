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
@pytest.mark.parametrize("item, what", [(5, "an int"), (None, "None"), ([BUS], "a list"), (1.5, "a float"),
                                        ((line for line in [BUS]), "a generator")])
def test_the_guessing_form_names_what_it_takes_instead_of_raising(item, what):
    """Before: ``cannot scan a int``, ``cannot scan a NoneType``."""
    result = dllogscan.scan(item)
    assert not result.diagnoses and result.error.startswith(f"cannot scan {what}: give a path, ")
    assert result.error.endswith("or a file object")


@pytest.mark.timeout(30)
def test_a_text_file_object_is_read_as_a_stream_and_left_open(tmp_path):
    """Before: ``cannot scan a TextIOWrapper``; ``scan(open("job.log"))`` is what people write."""
    log = tmp_path / "job.log"
    log.write_bytes(BUS * 3)
    with open(log, encoding="utf-8") as fh:
        result = dllogscan.scan(fh)
        assert not fh.closed
    assert result.error is None and result.source == str(log) and result.diagnoses[0].cls == "A"
    stream = io.StringIO("caf\u00e9 \udcff " * 5000 + BUS.decode())  # more bytes than characters
    result = dllogscan.scan(stream, max_bytes=1 << 20)
    assert result.error is None and result.diagnoses[0].cls == "A" and result.bytes_read > 5000 * 7


@pytest.mark.timeout(30)
def test_a_text_file_object_in_the_wrong_encoding_is_a_result_with_an_error(tmp_path):
    log = tmp_path / "job.log"
    log.write_bytes(b"\xff\xfe\x80 " * 100 + BUS)
    with open(log, encoding="utf-8") as fh:
        result = dllogscan.scan(fh)
    assert not result.diagnoses and "open the file in binary mode" in result.error


@pytest.mark.timeout(30)
@pytest.mark.parametrize("call", [dllogscan.scan, dllogscan.scan_text])
@pytest.mark.parametrize("option, value, message", [
    ("name", 5, "name: give the source's name as str, not int"),
    ("signatures", 5, "signatures: give a signature file's path (str, os.PathLike) or an iterable of them, not int"),
    ("signatures", None, "or an iterable of them, not NoneType"),
    ("signatures", b"x.toml", "or an iterable of them, not bytes"),
    ("signatures", [5], "not an iterable holding int"),
])
def test_an_option_of_the_wrong_type_is_a_type_error(call, option, value, message):
    """Before: Python's own ``'int' object is not iterable`` and ``expected string or bytes-like
    object, got 'int'`` from deep inside."""
    with pytest.raises(TypeError) as err:
        call(BUS, **{option: value})
    assert message in str(err.value)


@pytest.mark.timeout(30)
def test_one_signature_file_may_be_given_alone(tmp_path):
    """Before: ``signatures="mine.toml"`` was read as one file per character (``m: signature
    file not found``)."""
    with pytest.raises(dllogscan.core.errors.SignatureError, match="^mine.toml: signature file not found"):
        dllogscan.scan(BUS, signatures="mine.toml")
    with pytest.raises(dllogscan.core.errors.SignatureError, match="^mine.toml: signature file not found"):
        dllogscan.scan(BUS, signatures=pathlib.Path("mine.toml"))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("paths, message", [
    (5, "not int"), (None, "not NoneType"), (bytearray(b"x"), "not bytearray"), (memoryview(b"x"), "not memoryview"),
    (io.BytesIO(BUS), "not BytesIO (to diagnose one file object, use dllogscan.scan)"),
    ([5], "not an iterable holding int"), ([None], "not an iterable holding NoneType"),
    ((p for p in [1.5]), "not an iterable holding float"),
])
def test_scan_many_rejects_what_holds_no_paths(paths, message):
    """Before: ``5`` was Python's "'int' object is not iterable", ``[5]`` a file named ``5``."""
    with pytest.raises(TypeError) as err:
        dllogscan.scan_many(paths, jobs=1)
    assert str(err.value).startswith("scan_many takes a path (str, bytes, os.PathLike) or an iterable of paths, ")
    assert str(err.value).endswith(message)


@pytest.mark.timeout(60)
def test_scan_many_takes_a_path_as_bytes_and_a_generator(tmp_path):
    """Before: ``b"logs"`` was read as one path per byte (``108: cannot read``)."""
    log = tmp_path / "job.log"
    log.write_bytes(BUS)
    for paths in (bytes(log), [bytes(log)], (p for p in [log]), log):
        df = dllogscan.scan_many(paths, jobs=1)
        assert list(df["source"]) == [str(log)] and list(df["class"]) == ["A"]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("option, value, error, message", [
    ("out", 5, TypeError, "out: give a file name (str, os.PathLike) or None, not int"),
    ("jobs", "2", ValueError, "jobs='2': give a number of processes"),
    ("jobs", -1, ValueError, "jobs=-1: give a number of processes"),
    ("limits", 5, TypeError, "limits: give a dllogscan.batch.Limits or None, not int"),
    ("engine", "spark", ValueError, "engine='spark': choose one of local, dask"),
    ("signatures", 5, TypeError, "signatures: give a signature file's path"),
])
def test_scan_many_options_of_the_wrong_kind(tmp_path, option, value, error, message):
    """Before: ``'<' not supported between instances of 'int' and 'str'`` (jobs), pathlib's own
    text (out), ``UsageError`` (engine), ``limits=5`` taken until an archive needed it."""
    (tmp_path / "job.log").write_bytes(BUS)
    with pytest.raises(error) as err:
        dllogscan.scan_many(str(tmp_path), **{"jobs": 1, option: value})
    assert str(err.value).startswith(message)


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
