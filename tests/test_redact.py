"""--redact: every kind of identifier replaced by a stable placeholder, in every output format."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dllogscan.pipeline import runner as pipeline
from dllogscan import report
from dllogscan.sources import streams as sources
from dllogscan.report.redact import Redactor, redact_results
from dllogscan.report.issue_body import to_issue_body

SECRETS = {
    "host": ["gpu-a100-07", "srv12.cluster.internal", "trainer-node12", "gpu-node-17"],
    "user": ["alice", "bob"],
    "ip": ["10.0.3.17", "fe80::1ff:fe23:4567:890a"],
    "job": ["991234"],
    "email": ["alice.smith@corp.example.net"],
}
LOG = """\
Mar  3 12:00:01 gpu-node-17 kernel: [ 1234.5] Out of memory: Killed process 1234 (python) total-vm:1kB
alice@gpu-a100-07:~/proj$ python train.py  # owner alice.smith@corp.example.net
MASTER_ADDR=10.0.3.17 hostname=trainer-node12 via fe80::1ff:fe23:4567:890a srv12.cluster.internal
  File "/home/alice/proj/data.py", line 41, in __getitem__ (copied from /Users/bob/x.py)
RuntimeError: DataLoader worker (pid 1234) is killed by signal: Killed. log slurm-991234.out job 991234 ON gpu-a100-07
slurmstepd: error: *** JOB 991234 ON gpu-a100-07 CANCELLED AT 2026-11-30T06:00:00 DUE TO TIME LIMIT ***
"""


CONTEXTS = [
    ("host", "gpu-a100-07", "*** JOB 12 ON gpu-a100-07 CANCELLED"),
    ("host", "trainer-node12", "hostname=trainer-node12 rank=0"),
    ("host", "gpu-node-17", "Mar  3 12:00:01 gpu-node-17 kernel: Out of memory"),
    ("host", "srv12.cluster.internal", "connect to srv12.cluster.internal failed"),
    ("host", "gpu-7", "bob@gpu-7:~/proj$ ls"),
    ("user", "alice", 'File "/home/alice/proj/data.py", line 41'),
    ("user", "bob", "/Users/bob/Downloads/job.log"),
    ("user", "carol", "C:\\Users\\carol\\train.py"),
    ("ip", "10.0.3.17", "MASTER_ADDR=10.0.3.17:29500"),
    ("ip", "fe80::1ff:fe23:4567:890a", "via fe80::1ff:fe23:4567:890a dev eth0"),
    ("ip", "2001:db8::8a2e:370:7334", "[2001:db8::8a2e:370:7334]:29500"),
    ("job", "991234", "slurmstepd: error: *** JOB 991234 ON node07"),
    ("job", "4242", "SLURM_JOB_ID=4242"),
    ("job", "777", "log in slurm-777.out"),
    ("email", "alice.smith@corp.example.net", "owner: alice.smith@corp.example.net"),
]


@pytest.mark.parametrize("kind, value, line", CONTEXTS)
def test_each_identifier_kind(kind, value, line):
    out = Redactor().text(line)
    assert value not in out and f"<{kind}-1>" in out


def test_same_value_same_placeholder_and_harmless_text_kept():
    r = Redactor()
    out = r.text("/home/alice/a /home/alice/b /home/carol/c 10.0.0.1 10.0.0.1 10.0.0.2")
    assert out == "/home/<user-1>/a /home/<user-1>/b /home/<user-2>/c <ip-1> <ip-1> <ip-2>"
    keep = ("torch 2.2.0 at 12:34:56, c10::Error, x[::2], pid 363, https://github.com/pytorch/pytorch/issues/1, "
            "see docs.python.org, dataloader.py line 1120 ::1")
    assert r.text(keep) == keep


def _result():
    return pipeline.run(sources.from_text(LOG, "/home/alice/logs/slurm-991234.out"),
                        pipeline.get_scanner())


@pytest.mark.parametrize("fmt", [*report.TEXT_FORMATS, "issue"])
def test_every_format_is_clean(fmt):
    result = _result()
    assert result.diagnoses, "the log must be diagnosed for this test to mean anything"
    raw = to_issue_body([result]) if fmt == "issue" else report.render([result], fmt)
    assert "alice" in raw or "991234" in raw  # the unredacted output does leak
    red = redact_results([result])
    out = to_issue_body(red) if fmt == "issue" else report.render(red, fmt)
    for values in SECRETS.values():
        for value in values:
            assert value not in out, (fmt, value)
    assert "<job-1>" in out


def test_json_and_hits_carry_no_identifier():
    red = redact_results([_result()])[0]
    blob = json.dumps(red.to_dict()) + repr(red.hits)
    for values in SECRETS.values():
        for value in values:
            assert value not in blob
    assert red.source == "/home/<user-1>/logs/slurm-<job-1>.out"


def test_cli_redact_on_scan_paste_and_report(tmp_path):
    log = tmp_path / "job.log"
    log.write_text(LOG)
    for args, stdin in ((["scan", str(log), "-f", "json"], None), (["paste", "-f", "md"], LOG.encode()),
                        (["report", str(log)], None), (["scan", str(log), "-f", "github"], None)):
        proc = subprocess.run([sys.executable, "-m", "dllogscan", *args, "--redact"],
                              input=stdin, capture_output=True, timeout=120)
        assert proc.returncode == 1, proc.stderr
        for values in SECRETS.values():
            for value in values:
                assert value.encode() not in proc.stdout, (args, value)


NAMED = [  # a host in a file name or folder: followed by '.log', '_', '/' where in text a space follows it
    ("/logs/gpu1.hpc.uni-mainz.de.log", "gpu1.hpc.uni-mainz.de", "/logs/<host-1>.log"),
    ("/logs/n12.cs.ox.ac.uk/job.log", "n12.cs.ox.ac.uk", "/logs/<host-1>/job.log"),
    ("/logs/gpu07.example.org_rank0.log", "gpu07.example.org", "/logs/<host-1>_rank0.log"),
    ("node-3.cluster.internal_rank1.err.1", "node-3.cluster.internal", "<host-1>_rank1.err.1"),
    ("pods.tar.gz!/a100-04.cluster.local/train.log", "a100-04.cluster.local", "pods.tar.gz!/<host-1>/train.log"),
    ("/logs/gpu07.example.org.log", "gpu07.example.org", "/logs/<host-1>.log"),
    ("/logs/gpu1.uni-x.de-stderr.txt", "gpu1.uni-x.de", "/logs/<host-1>-stderr.txt"),  # before '-' (session 63)
    ("n12.cs.ox.ac.uk-rank0.log.gz", "n12.cs.ox.ac.uk", "<host-1>-rank0.log.gz"),
]


@pytest.mark.parametrize("path, host, shown", NAMED)
def test_a_host_in_a_file_name_is_redacted_as_in_the_text(path, host, shown):
    r = Redactor()
    assert r.path(path) == shown
    assert r.text(f"connect to {host} failed") == "connect to <host-1> failed"


def test_file_names_without_a_host_are_kept():
    r = Redactor()
    for path in ("/data/train.v2.log", "torch.nn.functional.py", "/work/model.ckpt.pt", "logs/version_3/metrics.csv",
                 "kern.log.1", "dmesg-gpu07.log.2.gz", "wmt14/train.tok.en-de.txt", "ds.v2.it-IT.json"):
        assert r.path(path) == path


@pytest.mark.parametrize("fmt", ["json", "md", "text", "csv", "github"])
def test_cli_redacts_a_host_in_the_file_name_and_in_its_error_line(tmp_path, fmt):
    """Before, ``source`` and the error line kept ``gpu1.hpc.uni-mainz.de`` (and a host before
    ``_`` or ``/``) in every format but the terminal's, though the same name in the text was hidden."""
    folder = tmp_path / "n12.cs.ox.ac.uk"
    folder.mkdir()
    log = folder / "gpu1.hpc.uni-mainz.de_rank0.log"
    log.write_text(LOG)
    missing = tmp_path / "gpu07.example.de.log"
    proc = subprocess.run([sys.executable, "-m", "dllogscan", "scan", str(log), str(missing), "-f", fmt, "--redact"],
                          capture_output=True, timeout=120)
    out = proc.stdout + proc.stderr
    for host in (b"n12.cs.ox.ac.uk", b"gpu1.hpc.uni-mainz.de", b"gpu07.example.de"):
        assert host not in out, (fmt, host)
    assert b"Traceback" not in out and b"<host-" in out


def test_fields_read_off_names_hide_them_in_names_and_text():
    """``batch --redact``: a node, pod, namespace and job read off a name are placeholders, and
    the same values are hidden where a path or the text holds them (``dmesg-node02.log``: a name
    with ``-`` before it, which the text rules leave)."""
    r = Redactor()
    fields = r.fields({"node": "node02", "pod": "trainer-0", "namespace": "default", "container": "main",
                       "job": "4242", "rank": "3", "first_time": "2026-11-30T06:00:00+05:30"})
    assert fields == {"node": "<host-1>", "pod": "<pod-1>", "namespace": "<namespace-1>", "container": "main",
                      "job": "<job-1>", "rank": "3", "first_time": "2026-11-30T06:00:00+05:30"}
    assert r.path("/k/dmesg-node02.log.1") == "/k/dmesg-<host-1>.log.1"
    assert r.path("p/default_trainer-0_1a2b/main/0.log") == "p/<namespace-1>_<pod-1>_1a2b/main/0.log"
    assert r.path("/logs/node023.log") == "/logs/node023.log"  # a longer name is another name
    assert r.text("node02 ran job 4242 with the default start method") == "<host-1> ran job <job-1> with the default start method"
    assert r.fields({"node": "node02"}) == {"node": "<host-1>"}  # one value, one placeholder


def test_a_source_another_source_cites_is_redacted_as_a_path():
    """A cross-file proof cites its kernel log by name in the evidence, the notes and a fact."""
    from dllogscan.core.models import Diagnosis, Evidence

    r = Redactor()
    r.fields({"node": "node02"})
    label = "/logs/kernel/dmesg-node02.log"
    d = Diagnosis("B", "oom", "t", 0.9, evidence=(Evidence(1, f"[{label} line 1] Killed process 9", "s"),),
                  facts={"kernel_source": label}, notes=(f"{label} shows the OOM kill on node node02",))
    out = r.diagnosis(d)
    assert out.facts["kernel_source"] == "/logs/kernel/dmesg-<host-1>.log"
    assert out.evidence[0].text == "[/logs/kernel/dmesg-<host-1>.log line 1] Killed process 9"
    assert out.notes == ("/logs/kernel/dmesg-<host-1>.log shows the OOM kill on node <host-1>",)


@pytest.mark.parametrize("line, shown", [
    # public registries and indexes (data/redact.toml's public_domains) stay, private hosts go
    ("Pulling image docker.elastic.co/elasticsearch/elasticsearch:8.11.0",
     "Pulling image docker.elastic.co/elasticsearch/elasticsearch:8.11.0"),
    ("image nvcr.io/nvidia/pytorch:24.01-py3 from gcr.io/x/y, quay.io/a/b, ghcr.io/c/d, public.ecr.aws/e/f",
     "image nvcr.io/nvidia/pytorch:24.01-py3 from gcr.io/x/y, quay.io/a/b, ghcr.io/c/d, public.ecr.aws/e/f"),
    ("Pulling image harbor.mycompany.io/ml/train:1.2", "Pulling image <host-1>/ml/train:1.2"),
    ("image: 1234.dkr.ecr.us-east-1.amazonaws.com/vision-train:3.4", "image: <host-1>/vision-train:3.4"),
    # under a public domain by a whole label only
    ("clone from mygithub.com/x and docs.github.com/y", "clone from <host-1>/x and docs.github.com/y"),
    ("pull registry.notdocker.io/x", "pull <host-1>/x"),
    # the machine's own name is no site's host
    ("host      : localhost", "host      : localhost"),
    ("Mar  3 12:00:01 localhost kernel: Out of memory", "Mar  3 12:00:01 localhost kernel: Out of memory"),
])
def test_public_domains_and_localhost_stay_private_hosts_go(line, shown):
    """Before, docker.elastic.co, nvcr.io, gcr.io, quay.io and ghcr.io were hidden as hosts,
    mygithub.com was kept (a suffix match without a label boundary) and ``host : localhost``
    became ``<host-1>``."""
    assert Redactor().text(line) == shown


def test_a_learnt_localhost_is_not_replaced_everywhere():
    r = Redactor()
    r.learn({"node": "localhost", "hostname": "gpu07"})
    assert r.text("connect to localhost on gpu07") == "connect to localhost on <host-1>"


@pytest.mark.parametrize("line, shown", [
    ("/home.local/alice/train.py", "/home.local/<user-1>/train.py"),
    ("/scratch.local/alice/ckpt", "/scratch.local/<user-1>/ckpt"),
    ("/.home/alice/x.py and /nfs/.home/bob/y.py", "/.home/<user-1>/x.py and /nfs/.home/<user-2>/y.py"),
    ("/homes/alice/x /localhome/bob/y", "/homes/<user-1>/x /localhome/<user-2>/y"),
    ("/home/alice/.local/lib/python3.11/site-packages/torch/x.py",
     "/home/<user-1>/.local/lib/python3.11/site-packages/torch/x.py"),
    ("cd ~alice/proj; ls ~bob", "cd ~<user-1>/proj; ls ~<user-2>"),
    # '~' as 'about', or inside a word, is no home
    ("grows ~4.5 GB, ~40 tensors, after ~2k steps, ~24h, 1~2분", "grows ~4.5 GB, ~40 tensors, after ~2k steps, ~24h, 1~2분"),
    ("/var/lib/kubelet/pods/x/volumes/kubernetes.io~empty-dir/dshm",
     "/var/lib/kubelet/pods/x/volumes/kubernetes.io~empty-dir/dshm"),
])
def test_home_folders_and_tilde(line, shown):
    """Before, /home.local/alice became /<host-1>/alice (the user kept, the folder hidden), the
    users of /.home, /homes and /localhome stayed, and '~40 tensors' became '~<user-1> tensors'."""
    assert Redactor().text(line) == shown


@pytest.mark.parametrize("line, shown", [
    ("/var/lib/kubelet/pods/3f2b9c1e-8a4d-4e2f-9b7c-1d2e3f4a5b6c/volumes/kubernetes.io~empty-dir/dshm",
     "/var/lib/kubelet/pods/<uid-1>/volumes/kubernetes.io~empty-dir/dshm"),
    ("restarting failed container=trainer pod=trainer-7c9d5b6f4-x2x9k_ml(c0a8e4d2-7d55-4d8b-a0f4-2f5a3d9e6b11)",
     "restarting failed container=trainer pod=<pod-1>_ml(<uid-1>)"),
    ("/var/log/pods/ml-team_train-resnet-x7k2p_c0a8e4d2-7d55-4d8b-a0f4-2f5a3d9e6b11/trainer/0.log",
     "/var/log/pods/<namespace-1>_<pod-1>_<uid-1>/trainer/0.log"),
    ('Pod "trainer-7c9f8d6b5-x2kzq" OOMKilled; Warning Evicted pod/train-job-worker-0',
     'Pod "<pod-1>" OOMKilled; Warning Evicted pod/<pod-2>'),
    ("$ kubectl describe pod rec-train-7c9d8b6f5-x2mhq -n ml", "$ kubectl describe pod <pod-1> -n ml"),
    ("NAME READY STATUS\nrec-train-7c9d8b6f5-x2mhq 0/1 OOMKilled", "NAME READY STATUS\n<pod-1> 0/1 OOMKilled"),
    ("job pod train-resnet-x7k2p failed", "job pod <pod-1> failed"),
    ("CUDA device GPU-5b0f7f1e-0c8e-4a7e-9b7a-3f1f6f0b8e21", "CUDA device GPU-<uid-1>"),
    # no pod name: prose after 'pod', a file, a count
    ("the pod was evicted; pod sandbox changed; pod re-created; see pod.yaml; pods 2-3; Pods: 4/4",
     "the pod was evicted; pod sandbox changed; pod re-created; see pod.yaml; pods 2-3; Pods: 4/4"),
])
def test_pod_names_and_uids(line, shown):
    """Before, every line here came out unchanged: a pod's UID, and its name, were kept."""
    assert Redactor().text(line) == shown


def test_a_pod_name_found_in_the_text_is_hidden_wherever_it_appears():
    r = Redactor()
    assert r.text('Pod "trainer-7c9f8d6b5-x2kzq" OOMKilled') == 'Pod "<pod-1>" OOMKilled'
    assert r.text("trainer-7c9f8d6b5-x2kzq restarted") == "<pod-1> restarted"


@pytest.mark.parametrize("name, shown", [
    # TensorBoard's event file and default run folder: the machine's name, and only it, hidden
    ("events.out.tfevents.1701980836.gpu07.cluster.local.12345.0", "events.out.tfevents.1701980836.<host-1>.12345.0"),
    ("runs/Dec07_20-47-16_gpu-node-17/events.out.tfevents.1701980836.gpu-node-17.4242.0",
     "runs/Dec07_20-47-16_<host-1>/events.out.tfevents.1701980836.<host-1>.4242.0"),
    ("runs/resnet50_lr0.1/events.out.tfevents.1701980836.trainbox.4242.0.v2",
     "runs/resnet50_lr0.1/events.out.tfevents.1701980836.<host-1>.4242.0.v2"),
    ("lightning_logs/version_0/events.out.tfevents.1701980836.localhost.77.0",
     "lightning_logs/version_0/events.out.tfevents.1701980836.localhost.77.0"),
    # a run's name made of settings is no host; one under a site's own domain is
    ("runs/bert.base.lr.3e-5.de/", "runs/bert.base.lr.3e-5.de/"),
    ("lightning_logs/bert-base.lr1e-4.wd0.01.de", "lightning_logs/bert-base.lr1e-4.wd0.01.de"),
    ("runs/resnet.cifar10.ai/events", "runs/resnet.cifar10.ai/events"),
    ("runs/gpu07.cluster.local_rank0.log", "runs/<host-1>_rank0.log"),
    ("/logs/bert.base.lr.3e-5.de/x", "/logs/<host-1>/x"),  # not under a run folder: as before
])
def test_tensorboard_names(name, shown):
    """Before, an event file's name lost its time with its host (``<host-1>.12345.0``), the host of
    a default run folder or of an event file under a short name stayed, and a run named for its
    settings ending in a country code or ``.ai`` became ``<host-1>``."""
    assert Redactor().text(f"wrote {name}") == f"wrote {shown}"
    assert Redactor().path(name) == shown


@pytest.mark.timeout(60)
def test_a_long_name_is_searched_for_learnt_values_in_linear_time():
    """Before, each run of a name's tokens was joined and looked up, longest first: cubic in the
    tokens (1 000 tokens: 11.8 s CPU, 2 000: 85 s); now no run is longer than the longest value."""
    import time

    r = Redactor()
    r.fields({"node": "node02", "pod": "trainer-0-abc"})
    name = "-".join(f"x{i}" for i in range(1000)) + "-node02-trainer-0-abc.log"
    start = time.process_time()
    out = r.path(f"/logs/{name}")
    assert time.process_time() - start < 1.0
    assert out.endswith("-x999-<host-1>-<pod-1>.log")


@pytest.mark.timeout(60)
def test_the_tensorboard_and_pod_patterns_stay_linear_on_hostile_text():
    """The host in an event file's name is looked for up to a DNS name's length: unbounded, 120 KB
    of ``events.out.tfevents.1.a-`` took 5.1 s CPU (each start scanned to the end)."""
    import time

    from dllogscan.report.redact import POD_RE, TENSORBOARD_RE

    for text in ("events.out.tfevents.1.a-" * 5000, "Dec07_20-47-16_a-" * 7000, "a-" * 60000 + "-bcdfgh-bcdfg"):
        start = time.process_time()
        TENSORBOARD_RE.findall(text), POD_RE.findall(text)
        assert time.process_time() - start < 1.0, text[:30]


@pytest.mark.parametrize("line, shown", [
    ('File "/app/settings.local.py", line 3', 'File "/app/settings.local.py", line 3'),
    ("load config.local.yaml and ~/.config/app.home.toml", "load config.local.yaml and ~/.config/app.home.toml"),
    ("source env.local.sh; python -m train.local.py", "source env.local.sh; python -m train.local.py"),
    ("ssh alices-mbp.local; tail gpu07.cluster.local.log", "ssh <host-2>; tail <host-1>.log"),  # hosts stay hosts
])
def test_a_code_or_settings_file_under_local_is_no_host(line, shown):
    """Before, settings.local.py became <host-1>.py: a name under .local or .home read as a host
    though a code or settings file's suffix follows it."""
    assert Redactor().text(line) == shown
