"""A plain hang takes the likely sub-cause its text names (dllogscan/data/hang_causes.toml)."""
from __future__ import annotations

import json

import pytest

import dllogscan
from dllogscan.core.errors import SignatureError
from dllogscan.core.models import Diagnosis, Evidence
from dllogscan.correlate import hang_causes
from dllogscan.correlate.hang_causes import LIKELY, load_causes, name_cause
from dllogscan.signatures.loader import load_database

DATA = load_causes()
CAUSES = DATA.causes
E_SUBCLASSES = {s.subclass for s in load_database().signatures if s.cls == "E"}
SITE = "/opt/conda/lib/python3.10/site-packages"
PROGRESS = "".join(f"epoch 1 step {i}/500 loss=0.{i:03d}\n" for i in range(40))
#: an interrupt in the loader's wait: class E / hang from the signatures alone
INTERRUPTED = f'''^CTraceback (most recent call last):
  File "train.py", line 88, in <module>
    for step, batch in enumerate(loader):
  File "{SITE}/torch/utils/data/dataloader.py", line 1294, in _get_data
    success, data = self._try_get_data()
  File "{SITE}/torch/utils/data/dataloader.py", line 1132, in _try_get_data
    data = self._data_queue.get(timeout=timeout)
KeyboardInterrupt
'''


def plain_hang() -> Diagnosis:
    return Diagnosis(cls="E", subclass="hang", title="t", confidence=0.9, evidence=(Evidence(1, "stuck"),))


@pytest.mark.parametrize("cause", CAUSES, ids=[c.subclass for c in CAUSES])
def test_each_entry_matches_its_examples_and_not_its_counter_examples(cause):
    assert cause.subclass in E_SUBCLASSES and (f"E.{cause.subclass}") in {f.key for f in load_database().fixes}
    for text in cause.examples:
        assert cause.pattern.search(text), text
    for text in cause.counter_examples:
        assert not cause.pattern.search(text), text


def test_a_plain_hang_whose_text_names_a_library_gets_its_likely_sub_cause_and_fixes():
    mention = "import cv2  # the dataset decodes with OpenCV\n"
    result = dllogscan.scan(mention + PROGRESS + INTERRUPTED, name="job.log", classifier="off")
    d = result.diagnoses[0]
    assert (d.cls, d.subclass) == ("E", "fork-threads" + LIKELY)
    assert d.evidence[-1].line == 1 and "cv2" in d.evidence[-1].text  # the naming line is cited
    assert d.evidence[0].line > 1  # after the hang's own evidence
    assert any("line 1 names OpenCV" in n for n in d.notes)
    assert "cv2.setNumThreads(0)" in " ".join((f.code or "") + " ".join(f.commands) for f in d.fixes)
    assert json.loads(json.dumps(result.to_dict()))["diagnoses"][0]["subclass"] == "fork-threads-likely"


def test_a_plain_hang_whose_text_names_nothing_stays_a_plain_hang():
    d = dllogscan.scan(PROGRESS + INTERRUPTED, name="job.log", classifier="off").diagnoses[0]
    assert (d.cls, d.subclass) == ("E", "hang") and not any("likely" in n for n in d.notes)


def test_a_package_listing_names_no_cause():
    for text in DATA.listing_examples:
        assert DATA.listing.search(text), text
    for text in DATA.listing_counter_examples:
        assert not DATA.listing.search(text), text
    env = "Versions:\ntokenizers 0.13.3\nopencv-python          4.8.0.76\n[pip3] h5py==3.9.0\n"
    d = dllogscan.scan(env + PROGRESS + INTERRUPTED, name="job.log", classifier="off").diagnoses[0]
    assert (d.cls, d.subclass) == ("E", "hang")


def test_a_sub_cause_a_frame_shows_is_kept():
    frame = (f'  File "{SITE}/h5py/_hl/dataset.py", line 758, in __getitem__\n'
             "    return self._read(args)\n")
    worker = (f"Process Process-1:\nTraceback (most recent call last):\n"
              f'  File "{SITE}/torch/utils/data/_utils/worker.py", line 308, in _worker_loop\n'
              f"    data = fetcher.fetch(index)\n{frame}KeyboardInterrupt\n")
    text = "from transformers import AutoTokenizer\n" + PROGRESS + worker + INTERRUPTED
    d = dllogscan.scan(text, name="job.log", classifier="off").diagnoses[0]
    assert (d.cls, d.subclass) == ("E", "fork-handle")  # the frame's, not the tokenizer line's guess


def test_the_first_entry_that_matches_wins_and_only_plain_hangs_are_renamed():
    lines = [(1, "img = cv2.imread(p)"), (2, "tok = AutoTokenizer.from_pretrained(name)")]
    assert name_cause(plain_hang(), lines).subclass == "tokenizers-fork" + LIKELY  # first in the file
    for d in (Diagnosis(cls="E", subclass="timeout", title="t", confidence=0.9, evidence=()),
              Diagnosis(cls="B", subclass="getitem", title="t", confidence=0.9, evidence=())):
        assert name_cause(d, lines) == d


def test_a_malformed_entry_names_the_file(tmp_path):
    bad = tmp_path / "hang_causes.toml"
    bad.write_text('listing = "^x$"\n[[cause]]\nsubclass = "fork-threads"\npattern = "cv2"\n', encoding="utf-8")
    with pytest.raises(SignatureError, match="hang_causes.toml: cause #1 needs exactly"):
        hang_causes.load_causes(bad)
    bad.write_text('listing = "^x$"\n[[cause]]\nsubclass = "x"\npattern = "(("\nnames = ""\ntitle = ""\nexamples = []\n'
                   'counter_examples = []\n', encoding="utf-8")
    with pytest.raises(SignatureError, match="bad pattern"):
        hang_causes.load_causes(bad)
    bad.write_text('[[cause]]\n', encoding="utf-8")
    with pytest.raises(SignatureError, match="needs a listing pattern"):
        hang_causes.load_causes(bad)


def test_a_hostile_line_is_read_in_bounded_time():
    """A 100 KB line of version-like dots took 17 s with the first listing pattern (nested open
    repeats); the bounded one, and the length cap, keep it at milliseconds."""
    import time

    line = "a 1" + ".1" * 50_000 + " x y z w v cv2"
    hang = Diagnosis(cls="E", subclass="hang", title="t", confidence=0.9, evidence=())
    start = time.perf_counter()
    named = name_cause(hang, [(1, line), (2, line[:299])])
    assert time.perf_counter() - start < 1.0
    assert named.subclass == "fork-threads" + LIKELY and len(named.evidence[-1].text) <= 600
