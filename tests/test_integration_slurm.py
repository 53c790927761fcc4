"""``dllogscan slurm`` and its epilog mode against recorded scontrol/sacct/journalctl/dmesg output
(tests/fixtures/cluster/, replayed by fake executables on PATH): the verdict, the facts, the
commands it ran, and what the epilog wrote (the stderr block, the AdminComment command line)."""
from __future__ import annotations

import json
import os
import time

import jsonschema
import pytest

from dllogscan.integrations.epilog import comment_text
from dllogscan.integrations.slurm_job import (JOB_ID_RE, Job, expand_hostlist, parse_sacct, parse_scontrol,
                                              SACCT_FIELDS, scontrol_keys)
from dllogscan.core.models import Diagnosis, ScanResult
from tests.cluster_fakes import EXAMPLES, JOB_UID, fakes
from tests.conftest import FIXTURES

SCHEMA = json.loads((FIXTURES / "diagnosis.schema.json").read_text())
OTHER_COMMENT = "JS1:H4sIAAAAAAAAA6tWKkktLlGyUlAqzs9NVdJRSs7PS8tMBwAf0UyaFgAAAA=="


def test_oom_job_joins_its_stderr_with_the_nodes_kernel_log(tmp_path):
    f = fakes(tmp_path, "slurm-oom-job", SLURMD_NODENAME="gpu07")
    proc = f.run("slurm", "4242", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, SCHEMA)
    top = doc["diagnoses"][0]
    assert (top["class"], top["subclass"], top["method"]) == ("B", "oom", "cross-file") and top["confidence"] >= 0.95
    assert top["evidence"][0] == {"line": 14, "text": "RuntimeError: DataLoader worker (pid(s) 26652) exited unexpectedly",
                                  "signature": "B.oom-suspected.exited-unexpectedly"}
    assert top["evidence"][1]["text"].startswith("[journalctl -k line 4]") and "pid=26652" in top["evidence"][1]["text"]
    assert top["facts"]["log"] == str(f.workdir / "slurm-4242.err")
    assert "sacct -j 4242 --format=JobID,MaxRSS,State" in top["fixes"][0]["commands"]  # {job_id} filled
    facts = doc["facts"]
    assert facts["job_id"] == "4242" and facts["node"] == "gpu07" and facts["slurm_state"] == "FAILED"
    assert facts["slurm_exit_code"] == "1:0" and facts["kernel_log"] == "journalctl -k" and facts["num_workers"] == "8"
    assert f.calls() == [["scontrol", "show", "job", "-o", "4242"],
                         ["journalctl", "-k", "--no-pager", "-o", "short-iso", "--since", "2026-11-30 12:59:02",
                          "--until", "2026-11-30 14:07:15"]]


def test_off_the_node_the_kernel_log_is_a_fact_and_the_verdict_stays_suspected(tmp_path):
    f = fakes(tmp_path, "slurm-oom-job", SLURMD_NODENAME="login01")
    proc = f.run("slurm", "4242", "-f", "json")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1 and doc["diagnoses"][0]["subclass"] == "oom-suspected"
    assert doc["facts"]["kernel_log"].startswith("not read: this host (login01) is not one of the job's nodes (gpu07)")
    assert [c[0] for c in f.calls()] == ["scontrol"]


def test_finished_job_comes_from_sacct_and_dmesg_is_cut_to_its_window(tmp_path):
    f = fakes(tmp_path, "slurm-timeout-sacct", ("scontrol", "sacct", "dmesg"), SLURMD_NODENAME="gpu08")
    proc = f.run("slurm", "4243", "-f", "json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    # the OOM kill of a python3 at 09:12, hours before the job, is outside the window: no B
    assert [(d["class"], d["subclass"]) for d in doc["diagnoses"]] == [("E", "hang")]
    facts = doc["facts"]
    assert facts["slurm_source"] == "sacct" and facts["slurm_state"] == "TIMEOUT" and facts["kernel_log"] == "dmesg -T"
    assert facts["slurm_stdout"] == str(f.workdir / "logs" / "vit-train-4243.out")  # %x-%j filled in
    assert [c[0] for c in f.calls()] == ["scontrol", "sacct", "dmesg"]


def test_no_slurm_tools_is_one_line_and_exit_2(tmp_path):
    proc = fakes(tmp_path, "slurm-gone", ()).run("slurm", "4244")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == "Error: neither scontrol nor sacct found on PATH: run this on a Slurm login or compute node\n"


def test_unknown_job_is_one_line_and_exit_2(tmp_path):
    proc = fakes(tmp_path, "slurm-gone", ("scontrol", "sacct")).run("slurm", "4244")
    assert proc.returncode == 2
    assert proc.stderr == ("Error: job 4244 not found by scontrol or sacct (`scontrol show job -o 4244` failed (exit 1): "
                           "slurm_load_jobs error: Invalid job id specified)\n")


def test_unreadable_logs_are_exit_2(tmp_path):
    f = fakes(tmp_path, "slurm-oom-job", SLURMD_NODENAME="gpu07")
    for p in f.workdir.iterdir():
        p.unlink()
    proc = f.run("slurm", "4242")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("Error: ") and "slurm-4242.out" in proc.stderr


def test_epilog_appends_the_verdict_and_sets_admin_comment(tmp_path):
    f = fakes(tmp_path, "slurm-oom-job", SLURMD_NODENAME="gpu07", SLURM_JOB_ID="4242")
    before = (f.workdir / "slurm-4242.err").read_text()
    proc = f.run("slurm", "--epilog")
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""
    block = (f.workdir / "slurm-4242.err").read_text()[len(before):]
    lines = block.splitlines()
    assert lines[1] == "==== dllogscan: DataLoader worker failure in job 4242 ===="
    assert lines[2] == "Class B / oom, 97% sure: Worker killed by the out-of-memory killer (cross-file evidence)"
    assert lines[3].endswith("slurm-4242.err line 14: RuntimeError: DataLoader worker (pid(s) 26652) exited unexpectedly")
    assert lines[4].startswith("  [journalctl -k line 4]") and "Whole report: dllogscan slurm 4242" in block
    assert (f.workdir / "slurm-4242.out").read_text() == (EXAMPLES / "slurm-oom-job/workdir/slurm-4242.out").read_text()
    assert f.calls()[-1] == ["scontrol", "update", "job=4242", f"AdminComment={OTHER_COMMENT} | dllogscan: B/oom 97% "
                             "Worker killed by the out-of-memory killer (cross-file evidence)"]


def test_epilog_reads_option_values_it_does_not_know_as_the_defaults(tmp_path):
    """Before: ``--classifier foo`` ran without the classifier and ``--min-confidence 5`` wrote no
    verdict, silently. The epilog never fails, so it says what it ignored and gives the verdict."""
    f = fakes(tmp_path, "slurm-oom-job", SLURMD_NODENAME="gpu07", SLURM_JOB_ID="4242")
    before = (f.workdir / "slurm-4242.err").read_text()
    proc = f.run("slurm", "--epilog", "--prefilter", "foo", "--classifier", "foo", "--min-confidence", "5")
    assert proc.returncode == 0 and proc.stdout == ""
    assert proc.stderr == ("dllogscan epilog: ignoring unknown --prefilter 'foo' / --classifier 'foo' / "
                           "--min-confidence 5.0; using the defaults for those\n")
    block = (f.workdir / "slurm-4242.err").read_text()[len(before):]
    assert "Class B / oom, 97% sure" in block


def test_epilog_never_fails_without_slurm_tools(tmp_path):
    proc = fakes(tmp_path, "slurm-gone", (), SLURM_JOB_ID="4244").run("slurm", "--epilog", "--write", "stderr")
    assert proc.returncode == 0 and proc.stdout == ""
    assert proc.stderr == ("dllogscan epilog: job 4244: neither scontrol nor sacct found on PATH: "
                           "run this on a Slurm login or compute node\n")


def test_epilog_gives_up_at_its_budget(tmp_path):
    f = fakes(tmp_path, "slurm-oom-job", SLURMD_NODENAME="gpu07", SLURM_JOB_ID="4242")
    (tmp_path / "replies" / "journalctl.sleep").write_text("20")
    before = (f.workdir / "slurm-4242.err").read_text()
    start = time.monotonic()
    proc = f.run("slurm", "--epilog", "--budget", "3")
    assert proc.returncode == 0 and time.monotonic() - start < 15
    assert proc.stderr == "dllogscan epilog: job 4242: gave up after the 3 s budget\n"
    assert (f.workdir / "slurm-4242.err").read_text() == before


def test_scontrol_line_parsing_and_patterns():
    line = (EXAMPLES / "slurm-oom-job" / "scontrol.show.out").read_text().replace("{workdir}", "/home/alice/run")
    job = Job("4242", parse_scontrol(line, "4242") or {}, "scontrol")
    assert job.get("AllocTRES") == "cpu=8,mem=32G,node=1,billing=8,gres/gpu=1" and job.get("CPUs/Task") == "8"
    assert job.output_paths() == ["/home/alice/run/slurm-4242.out", "/home/alice/run/slurm-4242.err"]
    fields = parse_sacct("4243_2|vit|bob|FAILED|1:0|gpu07|2026-11-30T12:00:01|Unknown|/w|out/%x-%A_%a.log|\n", SACCT_FIELDS)
    sacct_job = Job("4243_2", fields or {}, "sacct")
    assert sacct_job.output_paths() == ["/w/out/vit-4243_2.log"] and sacct_job.window()[1] is not None
    assert expand_hostlist("gpu[01-03,07],cpu1") == ["gpu01", "gpu02", "gpu03", "gpu07", "cpu1"]


def test_admin_comment_keeps_another_tools_part_and_replaces_its_own():
    result = ScanResult("slurm job 1", (Diagnosis("A", "bus-error", "Worker killed by SIGBUS", 0.99, ()),))
    assert comment_text(result) == "dllogscan: A/bus-error 99% Worker killed by SIGBUS"
    assert comment_text(result, "JS1:abc | dllogscan: B/oom 90% old") == "JS1:abc | dllogscan: A/bus-error 99% Worker killed by SIGBUS"


def test_epilog_writes_only_on_the_batch_host(tmp_path):
    f = fakes(tmp_path, "slurm-oom-job", SLURMD_NODENAME="gpu08", SLURM_JOB_ID="4242")
    before = (f.workdir / "slurm-4242.err").read_text()
    proc = f.run("slurm", "--epilog")
    assert proc.returncode == 0 and proc.stderr == ""
    assert (f.workdir / "slurm-4242.err").read_text() == before
    assert [c[:2] for c in f.calls()] == [["scontrol", "show"]]


def test_sacct_without_stdout_fields_falls_back_to_slurm_default(monkeypatch):
    """Slurm before 23.02 refuses the StdOut/StdErr fields: ask again without them."""
    from dllogscan.integrations import slurm_job
    from dllogscan.integrations.tools import ToolError

    asked = []

    def fake_run(argv, timeout):
        asked.append(argv)
        if argv[0] == "scontrol":
            raise ToolError("`scontrol show job -o 77` failed (exit 1): slurm_load_jobs error: Invalid job id specified")
        if "StdOut" in argv[-1]:
            raise ToolError(f"`{' '.join(argv)}` failed (exit 1): sacct: fatal: Invalid field requested: \"StdOut\"")
        return "77|train|alice|FAILED|1:0|gpu07|2026-11-30T12:00:01|2026-11-30T13:00:00|/home/alice/run\n"

    monkeypatch.setattr(slurm_job, "run_tool", fake_run)
    monkeypatch.setattr(slurm_job.shutil, "which", lambda name: "/usr/bin/" + name)
    job = slurm_job.find_job("77")
    assert job.source == "sacct" and job.get("JobState") == "FAILED"
    assert job.output_paths() == ["/home/alice/run/slurm-77.out"]
    assert [a[0] for a in asked] == ["scontrol", "sacct", "sacct"] and "StdOut" not in asked[-1][-1]


def _epilog_target(tmp_path, make) -> tuple:
    """The example job's epilog, its stderr file replaced by ``make(path)``; the log and the file."""
    f = fakes(tmp_path, "slurm-oom-job", SLURMD_NODENAME="gpu07", SLURM_JOB_ID="4242")
    err = f.workdir / "slurm-4242.err"
    (f.workdir / "kept.err").write_bytes(err.read_bytes())
    err.unlink()
    make(err)
    proc = f.run("slurm", "--epilog", "--write", "stderr", "--budget", "60")
    assert proc.returncode == 0 and proc.stdout == ""
    return proc.stderr, err


def test_root_epilog_does_not_append_through_a_link_the_job_left(tmp_path):
    """Before: the epilog (root) opened the job's stderr path with ``open(path, "a")`` and wrote the
    verdict block (log text in it) into whatever a symbolic link there pointed at."""
    victim = tmp_path / "profile.sh"
    victim.write_text("export A=1\n")
    log, err = _epilog_target(tmp_path, lambda p: p.symlink_to(victim))
    assert victim.read_text() == "export A=1\n"
    assert log == (f"dllogscan epilog: job 4242: not read: {err}: a symbolic link\n"  # nor read, as root
                   f"dllogscan epilog: job 4242: not appending to {err}: a symbolic link\n")


def test_epilog_does_not_block_on_a_fifo_named_as_the_stderr_file(tmp_path):
    """Before: opening a FIFO for writing waited for a reader, so the epilog sat out its budget."""
    fifo = tmp_path / "stderr.fifo"
    os.mkfifo(fifo)
    f = fakes(tmp_path, "slurm-oom-job", SLURMD_NODENAME="gpu07", SLURM_JOB_ID="4242", SLURM_JOB_STDERR=str(fifo))
    start = time.monotonic()
    proc = f.run("slurm", "--epilog", "--write", "stderr", "--budget", "60")
    assert proc.returncode == 0 and time.monotonic() - start < 50
    assert proc.stderr == f"dllogscan epilog: job 4242: not appending to {fifo}: not a regular file\n"


def test_a_fifo_named_as_the_jobs_output_is_not_read(tmp_path):
    """Before: ``dllogscan slurm`` opened a FIFO at the job's StdErr path and waited for a writer
    that had ended with the job, for ever."""
    f = fakes(tmp_path, "slurm-oom-job", SLURMD_NODENAME="gpu07")
    err = f.workdir / "slurm-4242.err"
    err.unlink()
    os.mkfifo(err)
    proc = f.run("slurm", "4242", "--format", "json", timeout=60)
    doc = json.loads(proc.stdout)
    assert doc["error"] == f"not read: {err} is not a regular file"
    assert proc.returncode == 1 and proc.stderr == f"Error: {doc['error']}\n"  # the .out file's verdict stands


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="the owner check applies to root")
def test_root_epilog_appends_only_to_a_file_of_the_jobs_user(tmp_path):
    def foreign(p):
        p.write_text("someone else's\n")
        os.chown(p, JOB_UID + 1, JOB_UID + 1)
    log, err = _epilog_target(tmp_path, foreign)
    assert err.read_text() == "someone else's\n"
    why = f"owned by uid {JOB_UID + 1}, not the job's user (uid {JOB_UID})"
    assert log == f"dllogscan epilog: job 4242: not read: {err}: {why}\ndllogscan epilog: job 4242: not appending to {err}: {why}\n"


def test_a_huge_node_range_is_counted_out_only_to_the_cap():
    """Before: each range was made whole, then cut to 4096, so ``gpu[0-20000000]`` took ~10 s and
    1.5 GB here (a garbage NodeList of 10**12 nodes, for ever), and ranges together had no cap."""
    start = time.process_time()
    nodes = expand_hostlist("gpu[0-20000000]")
    assert time.process_time() - start < 3 and len(nodes) == 4096 and nodes[-1] == "gpu4095"
    assert len(expand_hostlist("a[0-9999],b[0-9999],c")) == 4096
    assert expand_hostlist("gpu[01-03,07],cpu1,x[5]") == ["gpu01", "gpu02", "gpu03", "gpu07", "cpu1", "x5"]


def test_a_job_argument_that_is_no_job_id_is_a_usage_error_before_scontrol_runs(tmp_path):
    """Before: ``dllogscan slurm -- --help`` ran ``scontrol show job -o --help`` and ``sacct -j --help``."""
    f = fakes(tmp_path, "slurm-oom-job")
    for job in ("--help", "4242 4243", "job42"):
        proc = f.run("slurm", "--", job)
        assert proc.returncode == 2 and proc.stdout == "" and "is not a Slurm job id" in proc.stderr
    assert f.calls() == []
    for job in ("4242", "4242_7", "4242+1"):
        assert JOB_ID_RE.fullmatch(job)


@pytest.mark.parametrize("out, err", [
    ("/scratch/my runs/slurm-123.out", "/scratch/my runs/slurm-123.err"),
    ("/scratch/exp lr=0.1/slurm-123.out", "/scratch/exp lr=0.1 Seed=3/slurm-123.err"),
])
def test_scontrol_values_with_spaces_keep_them(out, err):
    """Before: a path holding a space followed by ``word=`` (a folder named ``exp lr=0.1``) was cut
    there, the rest taken for a field of its own, and the job's log was looked for in ``/scratch/exp``."""
    line = (f"JobId=123 JobName=my run UserId=alice(1000) JobState=FAILED WorkDir=/scratch/exp lr=0.1 "
            f"Command=/scratch/train.sh epochs=3 StdErr={err} StdIn=/dev/null StdOut={out} TresPerNode=gres/gpu:1 "
            "NewKey2031=x")
    fields = parse_scontrol(line, "123") or {}
    assert fields["StdErr"] == err and fields["StdOut"] == out and fields["JobName"] == "my run"
    assert fields["WorkDir"] == "/scratch/exp lr=0.1" and fields["Command"] == "/scratch/train.sh epochs=3"
    assert fields["TresPerNode"] == "gres/gpu:1" and fields["NewKey2031"] == "x"  # a key it does not know
    assert Job("123", fields, "scontrol").output_paths() == [out, err]
    known, free = scontrol_keys()
    assert free <= known and "StdErr" in free


def test_scontrol_fields_of_slurm_23_02_end_a_value_and_extra_is_written_by_the_user():
    """Slurm 23.02's job fields (``Switches``, ``FailedNode``, ...) end the value before them; the
    user's own ``--extra`` string goes on over a capitalised word of its own."""
    line = ("JobId=7 JobName=a b Extra=team=vision Seed=3 Switches=1@00:00:00 FailedNode=gpu1 "
            "StdErr=/s/x y.err StdOut=/s/x y.out")
    fields = parse_scontrol(line, "7") or {}
    assert fields["Extra"] == "team=vision Seed=3" and fields["Switches"] == "1@00:00:00"
    assert fields["FailedNode"] == "gpu1" and fields["StdErr"] == "/s/x y.err"


SECRET = "RuntimeError: DataLoader worker (pid 31337) is killed by signal: Bus error. root-only-secret\n"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="the owner check applies to root")
@pytest.mark.parametrize("kind", ["link", "foreign"])
def test_root_epilog_reads_only_the_jobs_users_own_output_files(tmp_path, kind):
    """Before: the epilog (root) read whatever the job named as its stdout, a link to a root-only
    file or another user's file included, and quoted its DataLoader lines back into the job's
    stderr file."""
    f = fakes(tmp_path, "slurm-oom-job", SLURMD_NODENAME="gpu07", SLURM_JOB_ID="4242")
    out, err = f.workdir / "slurm-4242.out", f.workdir / "slurm-4242.err"
    secret = tmp_path / "secret.log"
    secret.write_text(SECRET)
    os.chmod(secret, 0o600)
    out.unlink()
    if kind == "link":
        out.symlink_to(secret)
    else:
        out.write_text(SECRET)
        os.chown(out, JOB_UID + 1, JOB_UID + 1)
    proc = f.run("slurm", "--epilog", "--write", "stderr", "--budget", "60")
    assert proc.returncode == 0 and proc.stdout == ""
    assert "31337" not in err.read_text() and "==== dllogscan:" in err.read_text()  # its own stderr still read
    why = "a symbolic link" if kind == "link" else f"owned by uid {JOB_UID + 1}, not the job's user (uid {JOB_UID})"
    assert proc.stderr == f"dllogscan epilog: job 4242: not read: {out}: {why}\n"
