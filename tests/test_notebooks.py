"""A Jupyter notebook (.ipynb, as Jupyter, Colab and Kaggle save it) is read as its cells and what
they printed, not as raw JSON: evidence quotes the traceback's own lines, without JSON escapes or
colours."""
from __future__ import annotations

import json

import pytest

import dllogscan
from dllogscan.normalize.lines import ANSI_RE
from dllogscan.sources.documents import flatten_bytes
from dllogscan.sources.shapes import is_notebook
from tests.conftest import FIXTURES

DOCS = FIXTURES / "documents"


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(ANSI_RE.sub("", text).splitlines(), start=1) if needle in line)


def test_colab_bus_error_cites_the_traceback_lines_and_reads_the_config_cell():
    path = DOCS / "colab-bus-error.ipynb"
    text = flatten_bytes(path.read_bytes())[0].decode()
    r = dllogscan.scan(path)
    assert r.document == "notebook" and r.to_dict()["document"] == "notebook"
    top = r.diagnoses[0]
    assert (top.cls, top.subclass) == ("A", "bus-error")
    cited = {e.line: e.text for e in top.evidence}
    assert cited[line_of(text, "Unexpected bus error")].startswith("ERROR: Unexpected bus error encountered")
    assert cited[line_of(text, "RuntimeError: DataLoader worker (pid(s) 5120)")] == (
        "RuntimeError: DataLoader worker (pid(s) 5120) exited unexpectedly")
    assert not any("\\u001b" in t or "\x1b" in t or t.startswith('"') for t in cited.values())
    assert r.facts["num_workers"] == "8" and r.facts["shm_size"] == "64M"  # a code cell and a shell output
    order = [text.index(s) for s in ("Fine-tuning a ResNet", "--- cell 2 ---", "--- output 2 ---", "shm  ",
                                     "--- cell 3 ---", "num_workers=8", "--- cell 4 ---", "--- output 4 ---",
                                     "Unexpected bus error", "Traceback (most recent call last)")]
    assert order == sorted(order)


def test_interrupted_jupyter_hang_is_e_with_the_interrupt_cited():
    path = DOCS / "jupyter-interrupted-hang.ipynb"
    text = flatten_bytes(path.read_bytes())[0].decode()
    r = dllogscan.scan(path)
    top = r.diagnoses[0]
    assert (r.document, top.cls) == ("notebook", "E")
    lines = {e.line for e in top.evidence}
    assert line_of(text, "KeyboardInterrupt:") in lines and line_of(text, "self._data_queue.get") in lines


def test_nbformat_3_worksheets_input_and_pyerr():
    doc = {"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [{"cells": [
        {"cell_type": "code", "input": ["loader = DataLoader(ds, num_workers=4)\n"], "outputs": [
            {"output_type": "pyerr", "ename": "RuntimeError", "evalue": "x", "traceback": [
                "RuntimeError: DataLoader worker (pid 77) is killed by signal: Killed. "]}]}]}]}
    flat, kind = flatten_bytes(json.dumps(doc).encode())
    assert kind == "notebook"
    assert flat.decode().splitlines() == [
        "--- cell 1 ---", "loader = DataLoader(ds, num_workers=4)", "",
        "--- output 1 ---", "RuntimeError: DataLoader worker (pid 77) is killed by signal: Killed."]


def test_an_error_output_without_a_traceback_is_its_name_and_value():
    doc = {"nbformat": 4, "cells": [{"cell_type": "code", "source": "next(iter(loader))", "outputs": [
        {"output_type": "error", "ename": "OSError", "evalue": "[Errno 24] Too many open files"},
        {"output_type": "execute_result", "data": {"text/plain": ["'done'"]}}]}]}
    text = flatten_bytes(json.dumps(doc).encode())[0].decode()
    assert "OSError: [Errno 24] Too many open files\n'done'" in text


@pytest.mark.parametrize("doc", [
    {"nbformat": "4", "cells": []},  # a version that is not a number
    {"cells": [{"source": "x"}]},  # no nbformat: some other JSON with cells
    {"nbformat": True, "cells": []},
    {"nbformat": 4, "cells": "not a list"},
])
def test_what_is_not_a_notebook_is_not_read_as_one(doc):
    assert not is_notebook(doc)
    assert flatten_bytes(json.dumps(doc).encode())[1] is None


def test_odd_cell_and_output_types_never_crash():
    doc = {"nbformat": 4, "cells": [5, None, "text", {"cell_type": "code", "source": 7, "outputs": "x"},
                                    {"source": ["a", 3, None], "outputs": [1, {"output_type": "stream", "text": 9},
                                                                           {"output_type": "error", "traceback": [None, 2]},
                                                                           {"output_type": "display_data", "data": 4}]}]}
    flat, kind = flatten_bytes(json.dumps(doc).encode())
    assert kind == "notebook"
    assert flat.decode().split("\n--- ") == ["--- cell 1 ---\n7\n", "cell 2 ---\na3\n", "output 2 ---\n9\n\n2\n"]


def test_the_cell_headers_are_the_tools_own_lines_never_cited():
    from dllogscan.core.sections import HEADER

    assert HEADER.fullmatch("--- cell 12 ---") and HEADER.fullmatch("--- output 3 ---")
    r = dllogscan.scan(DOCS / "jupyter-interrupted-hang.ipynb", classifier="on")
    assert not any(HEADER.fullmatch(e.text) for d in r.diagnoses for e in d.evidence)


def test_ipython_frame_layouts_are_read_as_frames():
    """IPython 8 prints ``File PATH:LINE, in Class.method(args)``, IPython 7 ``PATH in func(args)``:
    the loader's wait and multiprocessing's poll count as frames in either (signatures alone)."""
    path = DOCS / "jupyter-interrupted-hang.ipynb"
    text = flatten_bytes(path.read_bytes())[0].decode()
    [top] = dllogscan.scan(path, classifier="off").diagnoses
    cited = {e.line: e.signature for e in top.evidence}
    assert cited[line_of(text, "dataloader.py:1133, in _MultiProcessingDataLoaderIter._try_get_data")] == (
        "E.hang.loader-wait-frame")
    assert cited[line_of(text, "connection.py:257, in _ConnectionBase.poll")] == "E.hang.mp-wait-frame"
    ipython7 = ("KeyboardInterrupt                         Traceback (most recent call last)\n"
                "~/lib/python3.8/site-packages/torch/utils/data/dataloader.py in _try_get_data(self, timeout)\n"
                "~/lib/python3.8/multiprocessing/connection.py in _poll(self, timeout)\n"
                "KeyboardInterrupt: \n")
    [old] = dllogscan.scan_text(ipython7, classifier="off").diagnoses
    assert old.cls == "E" and {e.signature for e in old.evidence} >= {"E.hang.loader-wait-frame", "E.hang.mp-wait-frame"}


def test_the_markdown_reply_says_how_a_notebook_was_read():
    from dllogscan.report.markdown import to_markdown

    md = to_markdown([dllogscan.scan(DOCS / "colab-bus-error.ipynb")])
    assert "_Read as a notebook: line numbers refer to its text flattened in order (cells, each with what it printed)._" in md
