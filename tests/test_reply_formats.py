"""--format md (a ready reply with the next check), --format github, and the issue body."""
from __future__ import annotations

import dataclasses

from dllogscan.pipeline import runner as pipeline
from dllogscan.sources import streams as sources
from dllogscan.core.models import Diagnosis, Evidence, ScanResult
from dllogscan.advise.next_check import load_checks, next_check
from dllogscan.report.github import MAX_ERRORS, MAX_MESSAGE, command, escape_property, to_github
from dllogscan.report.issue_body import duplicate_key, to_issue_body
from dllogscan.report.markdown import to_markdown

GETITEM = "KeyError: Caught KeyError in DataLoader worker process 0.\n"


def scan(text: str, name: str = "job.log") -> ScanResult:
    return pipeline.run(sources.from_text(text, name), pipeline.get_scanner())


def diag(cls: str, sub: str | None, conf: float) -> Diagnosis:
    return Diagnosis(cls, sub, "t", conf, (Evidence(3, "x"),))


def test_sure_reply_has_verdict_quoted_evidence_fixes_and_no_next_check():
    r = scan("a\nb\n" + GETITEM)
    d = r.diagnoses[0]
    assert d.confidence >= 0.8 and len(r.diagnoses) == 1
    md = to_markdown([r])
    assert "**Verdict:** class B / getitem" in md and f"**{d.confidence:.0%}**" in md
    assert "> ```text\n> 3: KeyError: Caught KeyError in DataLoader worker process 0.\n> ```" in md
    assert d.fixes and all(f"{f.rank}. **{f.title}**" in md for f in d.fixes)
    assert "num_workers=0" in md
    assert "Not sure yet" not in md


def test_unsure_reply_names_one_next_command():
    r = ScanResult("job.log", (diag("A", "bus-error", 0.7), diag("B", "oom-suspected", 0.6)))
    md = to_markdown([r])
    assert "confidence **70%**" in md
    section = md.split("### Not sure yet: run this next", 1)[1]
    assert section.count("```sh") == 1 and "df -h /dev/shm" in section


def test_next_check_table_picks_the_discriminating_check():
    assert load_checks(), "the shipped table must load"
    assert next_check([diag("A", "bus-error", 0.97)]) is None
    assert next_check([diag("A", "bus-error", 0.7), diag("B", "oom", 0.6)]).command == "df -h /dev/shm"
    assert "num_workers=0" in next_check([diag("B", "getitem", 0.6)]).command
    assert next_check([diag("B", "oom-suspected", 0.6)]).command.startswith("dmesg")
    assert next_check([]) is None


def test_markdown_says_when_lines_refer_to_a_document():
    r = dataclasses.replace(scan(GETITEM), document="github-issue")
    assert "Read as a github-issue" in to_markdown([r])


def test_github_annotation_escaping_and_file_line():
    out = to_github([scan("x\n" + GETITEM, "logs/job,1:a.log")])
    assert out.startswith("::error file=logs/job%2C1%3Aa.log,line=2,title=dllogscan%3A DataLoader class B/getitem::")
    assert "%0Aline 2: KeyError" in out and out.count("\n") == 1
    assert command("error", "50% done\r\nnext") == "::error::50%25 done%0D%0Anext"
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"


def test_github_limits_and_no_file_for_stdin():
    many = ScanResult("-", tuple(diag("B", "getitem", 0.9) for _ in range(13)))
    lines = to_github([many]).splitlines()
    assert sum(line.startswith("::error") for line in lines) == MAX_ERRORS
    assert lines[-1].startswith("::notice::") and "3 more" in lines[-1]
    assert "file=" not in lines[0]
    long = ScanResult("job.log", (Diagnosis("B", "getitem", "t" * 10000, 0.9, (Evidence(1, "x"),)),))
    message = to_github([long]).split("::", 2)[2]
    assert len(message.strip()) <= MAX_MESSAGE + 10
    assert to_github([ScanResult("job.log")]).startswith("::notice::dllogscan: no DataLoader")
    lead = to_github([ScanResult("job.log", notes=("Line 3: the pin-memory thread died: 100% stuck", "b"))])
    assert lead == ("::notice::dllogscan: no DataLoader worker failure diagnosed in job.log; note: "
                    "Line 3: the pin-memory thread died: 100%25 stuck / b\n")


def test_duplicate_key_is_stable_across_pids_and_paths():
    a = scan("/home/a/x\n" + GETITEM)
    b = scan("other\nlines\n/srv/b\n" + GETITEM.replace("process 0", "process 3"))
    assert duplicate_key(a.diagnoses[0]) == duplicate_key(b.diagnoses[0]) == "dllogscan:B/getitem:KeyError:B.getitem.caught"
    body = to_issue_body([a])
    for part in ("dllogscan:B/getitem:KeyError:B.getitem.caught", "| python |", "| torch |",
                 "`B.getitem.caught`", "2: KeyError: Caught KeyError"):
        assert part in body


def test_duplicate_key_is_the_same_for_a_whole_log_and_its_last_line():
    """The shipped example and its last line pasted alone are one failure. Before, their keys
    differed twice: the signal's case (the worker handler's "bus error", the RuntimeError's "Bus
    error") and the signature, the first in the text's order (``A.bus-error.shm-hint`` on line 4
    of the log, ``A.bus-error.killed-by-signal`` in the paste)."""
    from pathlib import Path

    log = (Path(__file__).parent.parent / "examples" / "docker-shm-bus-error.log").read_text()
    last = log.splitlines()[-1] + "\n"
    assert last.startswith("RuntimeError: DataLoader worker (pid 16842) is killed by signal: Bus error.")
    keys = {duplicate_key(scan(text).diagnoses[0]) for text in (log, last)}
    assert keys == {"dllogscan:A/bus-error:buserror:A.bus-error.killed-by-signal"}
