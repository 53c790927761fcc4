"""A plain hang, and a worker death whose failure line names no cause, take the likely cause their
text names (dllogscan/data/hang_causes.toml, exit_causes.toml)."""
from __future__ import annotations

import json

import pytest

import dllogscan
from dllogscan.core.errors import SignatureError
from dllogscan.core.models import Diagnosis, Evidence
from dllogscan.core.paths import DATA_DIR
from dllogscan.correlate.likely_causes import CUE_FILES, LIKELY, all_cues, load_cues, name_cause
from dllogscan.signatures.loader import load_database

DATA = load_cues(DATA_DIR / "hang_causes.toml")
EXITS = load_cues(DATA_DIR / "exit_causes.toml")
ENTRIES = [(cues, cause) for cues in all_cues() for cause in cues.causes]
SUBCLASSES = {(s.cls, s.subclass) for s in load_database().signatures}
FIX_KEYS = {f.key for f in load_database().fixes}
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


@pytest.mark.parametrize("cues,cause", ENTRIES, ids=[f"{c.cls}-{e.subclass}" for c, e in ENTRIES])
def test_each_entry_names_its_examples_and_not_its_counter_examples(cues, cause):
    assert (cues.cls, cause.subclass) in SUBCLASSES and f"{cues.cls}.{cause.subclass}" in FIX_KEYS
    for text in cause.examples:
        assert cause.named_by(text), text
    for text in cause.counter_examples:
        assert not cause.named_by(text), text


def test_each_cue_file_renames_a_subclass_that_names_no_cause():
    assert len(all_cues()) == len(CUE_FILES)
    assert {(c.cls, c.plain) for c in all_cues()} == {("E", "hang"), ("B", "oom-suspected")}
    assert all((c.cls, c.plain) in SUBCLASSES for c in all_cues())


def test_a_scan_that_needs_no_naming_reads_no_cue_file():
    import subprocess
    import sys

    code = ("import dllogscan; from dllogscan.correlate import likely_causes as m; "
            "dllogscan.scan('RuntimeError: received 0 items of ancdata\\n', name='x.log', classifier='off'); "
            "print(m.load_cues.cache_info().currsize)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "0"


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


def test_a_hang_whose_text_names_a_library_with_its_own_threads_is_a_lock_copied_by_fork():
    mention = "df = pl.read_parquet('train.parquet')  # polars, read in __getitem__\n"
    d = dllogscan.scan(mention + PROGRESS + INTERRUPTED, name="job.log", classifier="off").diagnoses[0]
    assert (d.cls, d.subclass) == ("E", "fork-lock" + LIKELY)
    assert any("line 1 names a library that runs its own threads" in n for n in d.notes)
    assert any(f.title.startswith("Start the workers with spawn") for f in d.fixes)
    polars = [(1, mention.strip())]
    spawned = name_cause(plain_hang(), polars, started=("spawn", "Windows has no fork"))
    assert spawned.subclass == "hang"  # spawned workers copy no thread's lock


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
    top = 'class = "E"\nplain = "hang"\nunconfirmed = "u"\n'
    bad = tmp_path / "hang_causes.toml"
    bad.write_text(top + '[[cause]]\nsubclass = "fork-threads"\npattern = "cv2"\n', encoding="utf-8")
    with pytest.raises(SignatureError, match="hang_causes.toml: cause #1 needs"):
        load_cues(bad)
    bad.write_text(top + '[[cause]]\nsubclass = "x"\npattern = "(("\nnames = ""\ntitle = ""\nexamples = []\n'
                   'counter_examples = []\n', encoding="utf-8")
    with pytest.raises(SignatureError, match="bad pattern"):
        load_cues(bad)
    bad.write_text('[[cause]]\n', encoding="utf-8")
    with pytest.raises(SignatureError, match="needs class, plain, unconfirmed"):
        load_cues(bad)
    bad.write_text('class = "B"\nplain = "oom-suspected"\nunconfirmed = "u"\n', encoding="utf-8")
    with pytest.raises(SignatureError, match="CUE_FILES says E / hang"):
        load_cues(bad)


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


EXITED = "RuntimeError: DataLoader worker (pid(s) 1234) exited unexpectedly\n"


def unexplained_exit() -> Diagnosis:
    return Diagnosis(cls="B", subclass="oom-suspected", title="t", confidence=0.9, evidence=(Evidence(3, EXITED),))


def fix_titles(d) -> list[str]:
    return [f.title for f in d.fixes]


@pytest.mark.parametrize("told,cause,first_fix", [
    ("After an hour the machine's RAM fills up and the job dies.\n", "oom", "Confirm the OOM kill"),
    ("MemoryError\n", "oom", "Confirm the OOM kill"),
    ("The worker segfaults in the image decoder.\n", "crash", "Reproduce with num_workers=0 and faulthandler"),
    ("Fatal Python error: Aborted\n", "crash", "Reproduce with num_workers=0 and faulthandler"),
])
def test_a_bare_exited_unexpectedly_takes_the_cause_its_text_names(told, cause, first_fix):
    result = dllogscan.scan(told + EXITED, name="job.log", classifier="off")
    d = result.diagnoses[0]
    assert (d.cls, d.subclass) == ("B", cause + LIKELY)
    assert [e.line for e in d.evidence] == [2, 1]  # the failure line, then the line that names the cause
    assert fix_titles(d)[0].startswith(first_fix)
    assert any(n.startswith(f"cause {cause} likely: line 1 names") and "dmesg" in n for n in d.notes)
    assert json.loads(json.dumps(result.to_dict()))["diagnoses"][0]["subclass"] == cause + "-likely"


def test_a_bare_exited_unexpectedly_whose_text_names_no_cause_keeps_the_check_order():
    for told in ("", "Training on 8 workers stops after an hour.\n",
                 "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"):
        d = dllogscan.scan(told + EXITED, name="job.log", classifier="off").diagnoses[0]
        assert (d.cls, d.subclass) == ("B", "oom-suspected"), told
        assert fix_titles(d)[0].startswith("Check the OOM killer first")


def test_a_crash_named_beside_memory_words_is_named_a_crash():
    lines = [(1, "RAM usage keeps growing"), (2, "Segmentation fault (core dumped)"), (3, EXITED)]
    assert name_cause(unexplained_exit(), lines).subclass == "crash" + LIKELY  # first entry in the file


def test_only_an_unexplained_worker_death_is_renamed():
    lines = [(1, "The worker segfaults."), (2, EXITED)]
    for d in (Diagnosis(cls="B", subclass="getitem", title="t", confidence=0.9, evidence=()),
              Diagnosis(cls="B", subclass="oom", title="t", confidence=0.9, evidence=()),
              Diagnosis(cls="A", subclass="oom-suspected", title="t", confidence=0.9, evidence=())):
        assert name_cause(d, lines) == d


def test_a_cause_named_only_as_likely_is_scored_as_named():
    from dllogscan.evaluation.evaluate import cause_of

    assert [cause_of("B", s) for s in ("oom-likely", "crash-likely", "oom-suspected")] == ["oom", "crash", "unknown"]


def test_a_line_that_asks_or_advises_names_no_cause():
    for text in EXITS.hedged_examples:
        assert EXITS.names_nothing(text), text
    for text in EXITS.hedged_counter_examples:
        assert not EXITS.names_nothing(text), text
    advice = "A maintainer: please check `dmesg` for the OOM killer.\nIs it a segfault?\n"
    d = dllogscan.scan(advice + EXITED, name="job.log", classifier="off").diagnoses[0]
    assert (d.cls, d.subclass) == ("B", "oom-suspected")


def test_no_hazard_of_forking_is_named_where_the_workers_spawn():
    """Windows has no fork: a hang whose text names OpenCV is left plain there, and a cause that
    needs no fork (a stall at each epoch's start) is still named."""
    cv2 = [(1, "img = cv2.imread(path)")]
    assert name_cause(plain_hang(), cv2).subclass == "fork-threads" + LIKELY
    windows = ("spawn", "Windows has no fork")
    left = name_cause(plain_hang(), cv2, started=windows)
    assert (left.subclass, left.evidence) == ("hang", plain_hang().evidence)
    assert left.notes[-1] == ("cause fork-threads not named: line 1 names OpenCV or a BLAS / OpenMP thread pool, a "
                              "hazard of forking, but the workers started with spawn (Windows has no fork)")
    both = cv2 + [(2, "it pauses for a minute at the start of each epoch")]
    named = name_cause(plain_hang(), both, started=windows)
    assert named.subclass == "slow-start" + LIKELY and not any("not named" in n for n in named.notes)
    hang = load_cues(DATA_DIR / "hang_causes.toml")
    assert {c.subclass for c in hang.causes if c.fork_only} == {"tokenizers-fork", "fork-handle", "fork-threads",
                                                                "fork-lock"}


def opencv_hang(folder: str = "/x") -> str:
    """A hang told in prose whose text names OpenCV, ending in a Ctrl-C in the loader's wait."""
    return ("Training freezes at the first batch with num_workers=4, no error, GPU at 0 %.\n"
            "The dataset reads and augments every image with OpenCV.\n"
            f'  File "{folder}/torch/utils/data/dataloader.py", line 1133, in _try_get_data\n'
            "    data = self._data_queue.get(timeout=timeout)\n"
            "KeyboardInterrupt\n")


def test_a_windows_text_gets_no_fork_hazard_end_to_end():
    text = opencv_hang()
    linux = dllogscan.scan(text, classifier="off").diagnoses[0]
    assert (linux.cls, linux.subclass) == ("E", "fork-threads" + LIKELY)
    windows = dllogscan.scan("OS: Microsoft Windows 10 Pro\n" + text, classifier="off").diagnoses[0]
    assert (windows.cls, windows.subclass) == ("E", "hang") and windows.facts["windows"] == "Windows"


def test_fork_only_is_true_or_false(tmp_path):
    bad = tmp_path / "hang_causes.toml"
    bad.write_text('class = "E"\nplain = "hang"\nunconfirmed = "u"\n[[cause]]\nsubclass = "fork-lock"\n'
                   'pattern = "lock"\nnames = "n"\ntitle = "t"\nexamples = []\ncounter_examples = []\n'
                   'fork_only = "yes"\n')
    with pytest.raises(SignatureError, match="fork_only is true or false"):
        load_cues(bad)


def test_python_3_14_names_no_fork_hazard_unless_the_text_sets_fork():
    text = opencv_hang("/usr/lib/python3.14/site-packages")
    d = dllogscan.scan(text, classifier="off").diagnoses[0]
    assert (d.cls, d.subclass, d.facts["python"]) == ("E", "hang", "3.14")
    assert any(n.startswith("cause fork-threads not named: line 2 names OpenCV") and "forkserver (Python 3.14's "
               "default on Linux, and the text sets no start method)" in n for n in d.notes), d.notes
    forked = dllogscan.scan(text + "mp.set_start_method('fork')\n", classifier="off").diagnoses[0]
    assert forked.subclass == "fork-threads" + LIKELY
