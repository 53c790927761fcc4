"""``dllogscan k8s`` (and the ``kubectl-dllogscan`` plugin) against recorded ``kubectl`` output
(tests/fixtures/cluster/k8s-*, replayed by a fake kubectl on PATH): the verdict joined with the
pod's status and spec, the exact YAML fix for that pod, the kubectl calls, the errors."""
from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import jsonschema
import pytest

import dllogscan
from dllogscan.batch.worker import Config
from dllogscan.integrations.k8s import with_pod
from dllogscan.integrations.pod import parse_pod
from dllogscan.integrations.tools import ToolError, run_tool
from tests.cluster_fakes import CLUSTER, fakes
from tests.conftest import FIXTURES

SCHEMA = json.loads((FIXTURES / "diagnosis.schema.json").read_text())
ROOT = Path(__file__).parent.parent
SHM_YAML = """spec:
  containers:
    - name: trainer
      volumeMounts:
        - name: dshm
          mountPath: /dev/shm
  volumes:
    - name: dshm
      emptyDir:
        medium: Memory
        sizeLimit: 1Gi
"""


def test_oomkilled_plus_exited_unexpectedly_is_b_oom(tmp_path):
    f = fakes(tmp_path, "k8s-oomkilled")
    proc = f.run("k8s", "train-resnet-x7k2p", "-n", "ml", "--context", "prod", "-f", "json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, SCHEMA)
    top = doc["diagnoses"][0]
    assert (top["class"], top["subclass"]) == ("B", "oom") and top["confidence"] >= 0.9
    assert top["evidence"][0]["text"] == "RuntimeError: DataLoader worker (pid(s) 412) exited unexpectedly"
    assert top["evidence"][1]["text"] == ("[pod status line 1] pod ml/train-resnet-x7k2p container trainer: "
                                          "Last State: Terminated  Reason: OOMKilled  (exitCode 1)")
    assert top["facts"]["log"] == "kubectl logs --previous"
    facts = doc["facts"]
    assert facts["k8s_reason"] == "OOMKilled" and facts["memory_limit"] == "32Gi" and facts["k8s_owner"] == "Job/train-resnet"
    assert facts["shm_volume"] == "emptyDir medium=Memory sizeLimit=8Gi (volume dshm)"
    commands = [c for fix in top["fixes"] for c in fix["commands"]]
    assert "kubectl -n ml describe pod train-resnet-x7k2p | grep -A5 'Last State'" in commands  # the pod's own
    assert not any(c.startswith(("sacct", "docker")) for c in commands), commands  # not a Slurm job's
    base = ["kubectl", "--context", "prod", "-n", "ml"]
    assert f.calls() == [base + ["get", "pod", "train-resnet-x7k2p", "-o", "json"],
                         base + ["logs", "train-resnet-x7k2p", "-c", "trainer", "--previous"],
                         base + ["logs", "train-resnet-x7k2p", "-c", "trainer"]]


def test_bus_error_without_shm_volume_gets_the_yaml_for_this_pod(tmp_path):
    proc = fakes(tmp_path, "k8s-shm-pod").run("k8s", "trainer-7c9d5b6f4-x2x9k", "-n", "ml", "-f", "json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    top = doc["diagnoses"][0]
    assert (top["class"], top["subclass"]) == ("A", "bus-error")
    fix = top["fixes"][0]
    assert fix["title"] == "Mount a memory-backed emptyDir at /dev/shm in pod trainer-7c9d5b6f4-x2x9k (container trainer)"
    assert fix["code"] == SHM_YAML and "Deployment/trainer" in fix["why"] and "(16Gi)" in fix["why"]
    assert fix["commands"][1].startswith("kubectl -n ml patch deployment trainer --type strategic -p '{\"spec\":{\"template\"")
    assert [f["rank"] for f in top["fixes"]] == list(range(1, len(top["fixes"]) + 1))
    assert not any(f["title"].startswith("Kubernetes:") for f in top["fixes"])
    assert any("against /dev/shm of 64M" in n for n in top["notes"])
    assert doc["facts"]["shm_volume"] == "none (runtime default 64M)"
    assert "CrashLoopBackOff" in doc["facts"]["k8s_logs_current"]


def test_unauthorised_kubectl_is_one_line_and_exit_2(tmp_path):
    proc = fakes(tmp_path, "k8s-unauthorized").run("k8s", "trainer-0", "-n", "ml")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == ("Error: `kubectl -n ml get pod trainer-0 -o json` failed (exit 1): "
                           "error: You must be logged in to the server (Unauthorized)\n")


def test_missing_kubectl_and_unknown_container(tmp_path):
    proc = fakes(tmp_path / "a", "k8s-oomkilled", ()).run("k8s", "trainer-0")
    assert proc.returncode == 2
    assert proc.stderr == "Error: kubectl not found on PATH (needed for `kubectl get pod trainer-0 -o json`)\n"
    proc = fakes(tmp_path / "b", "k8s-oomkilled").run("k8s", "train-resnet-x7k2p", "-c", "nope")
    assert proc.returncode == 2
    assert proc.stderr == "Error: pod train-resnet-x7k2p has no container 'nope' (it has trainer)\n"


def test_kubectl_plugin_is_the_k8s_command(tmp_path):
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["kubectl-dllogscan"] == "dllogscan.cli.kubectl:main"
    f = fakes(tmp_path, "k8s-unauthorized")
    import subprocess
    proc = subprocess.run([sys.executable, "-c", "import sys; sys.argv = ['kubectl-dllogscan', 'trainer-0', '-n', 'ml']; "
                           "from dllogscan.cli.kubectl import main; main()"],
                          capture_output=True, text=True, env=f.env, timeout=120)
    assert proc.returncode == 2 and "Unauthorized" in proc.stderr
    assert f.calls() == [["kubectl", "-n", "ml", "get", "pod", "trainer-0", "-o", "json"]]


def test_pod_facts_container_choice_and_shm():
    doc = json.loads((CLUSTER / "k8s-oomkilled" / "kubectl.get.out").read_text())
    sidecar = {"name": "log-shipper", "image": "fluent-bit:3", "volumeMounts": []}
    doc["spec"]["containers"].insert(0, sidecar)
    pod = parse_pod(doc)
    assert pod.container == "trainer"  # the one that terminated, not the first
    assert pod.shm is not None and (pod.shm.medium, pod.shm.size_limit) == ("Memory", "8Gi")
    doc["metadata"]["annotations"] = {"kubectl.kubernetes.io/default-container": "log-shipper"}
    assert parse_pod(doc).container == "log-shipper" and parse_pod(doc).shm is None


def test_no_logs_at_all_is_exit_2(tmp_path):
    f = fakes(tmp_path, "k8s-shm-pod")
    (tmp_path / "replies" / "kubectl.logs-previous.out").unlink()
    proc = f.run("k8s", "trainer-7c9d5b6f4-x2x9k", "-n", "ml")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr  # stdout: the report says so, as scan's does
    assert proc.stderr.startswith("Error: no logs for ml/trainer-7c9d5b6f4-x2x9k container trainer: not available:")
    assert len(proc.stderr.splitlines()) == 1


def test_a_pod_whose_dev_shm_is_ample_gets_no_yaml_to_raise_it():
    doc = json.loads((CLUSTER / "k8s-oomkilled" / "kubectl.get.out").read_text())
    bus = ("RuntimeError: DataLoader worker (pid 412) is killed by signal: Bus error. It is possible that "
           "dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\n")
    [d] = dllogscan.scan(bus).diagnoses
    small = with_pod(d, parse_pod(doc), Config())  # sizeLimit 8Gi: the YAML raises it to twice that
    assert small.fixes[0].title == "Raise /dev/shm of pod train-resnet-x7k2p: volume dshm to sizeLimit 16Gi"
    doc["spec"]["volumes"] = [{"emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}, "name": "dshm"}]
    ample = with_pod(d, parse_pod(doc), Config())
    assert ample.facts["shm_size"] == "64Gi" and any(n.startswith("Ample /dev/shm: 64Gi here") for n in ample.notes)
    assert ample.fixes[0].title == "Measure /dev/shm where the workers ran, while they ran"
    assert not any("sizeLimit" in f.title for f in ample.fixes)
    doc["spec"]["volumes"] = [{"emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}, "name": "dshm"}]
    small_again = with_pod(ample, parse_pod(doc), Config())  # the pod's size, not the earlier one, decides
    assert "ample" not in small_again.title and not any("Ample" in n for n in small_again.notes)


def _pod_reply(tmp_path, doc) -> "subprocess.CompletedProcess":
    """``dllogscan k8s`` on the shm example, ``kubectl get pod`` printing ``doc`` instead."""
    f = fakes(tmp_path, "k8s-shm-pod")
    (tmp_path / "replies" / "kubectl.get.out").write_text(json.dumps(doc))
    return f.run("k8s", "trainer-7c9d5b6f4-x2x9k", "-n", "ml", "-f", "json")


def _example_pod() -> dict:
    return json.loads((ROOT / "examples" / "k8s-shm-pod" / "kubectl.get.out").read_text())


def test_a_pod_object_of_odd_shapes_is_one_line_or_a_verdict(tmp_path):
    """Before: each of these was an AttributeError or ValueError traceback (exit 1)."""
    nulls = {"kind": "Pod", "metadata": None, "spec": None, "status": None}
    odd = _example_pod()
    odd["status"]["containerStatuses"][0]["restartCount"] = "lots"
    odd["metadata"]["ownerReferences"] = [None]
    odd["spec"]["volumes"] = None
    odd["spec"]["containers"][0]["volumeMounts"] = [{"mountPath": "/dev/shm", "name": "gone"}, "x"]
    for i, (doc, error) in enumerate([([], "Error: kubectl did not print a pod object (got list)\n"),
                                      ("pod", "Error: kubectl did not print a pod object (got str)\n"),
                                      ({"kind": "List", "items": []},
                                       "Error: kubectl did not print a pod object (got List)\n"),
                                      (nulls, "Error: the pod has no containers\n"),
                                      ({"spec": {"containers": ["trainer"]}}, "Error: the pod has no containers\n")]):
        proc = _pod_reply(tmp_path / str(i), doc)
        assert (proc.returncode, proc.stderr) == (2, error)
    proc = _pod_reply(tmp_path / "odd", odd)
    assert proc.returncode == 1 and proc.stderr == ""
    facts = json.loads(proc.stdout)["facts"]
    assert facts["k8s_restarts"] == "0" and facts["shm_volume"] == "emptyDir medium=disk sizeLimit=none (volume gone)"


def test_names_from_the_cluster_are_escaped_and_quoted_in_every_format(tmp_path):
    """Before: a pod name with a terminal escape reached the CSV's fix and command cells raw, and
    a container name with a quote broke out of the patch command's quotes."""
    doc = _example_pod()
    doc["metadata"]["name"] = "evil\x1b]0;owned\x07pod"
    doc["spec"]["containers"][0]["name"] = "it's"
    doc["status"]["containerStatuses"][0]["name"] = "it's"
    f = fakes(tmp_path, "k8s-shm-pod")
    (tmp_path / "replies" / "kubectl.get.out").write_text(json.dumps(doc))
    csv_out = f.run("k8s", "x", "-n", "ml", "-f", "csv").stdout
    assert "\x1b" not in csv_out and "\x07" not in csv_out and "evil\\x1b]0;owned\\x07pod" in csv_out
    top = json.loads(f.run("k8s", "x", "-n", "ml", "-f", "json").stdout)["diagnoses"][0]
    exec_cmd, patch_cmd = top["fixes"][0]["commands"]
    assert shlex.split(exec_cmd)[4:7] == ["evil\\x1b]0;owned\\x07pod", "-c", "it's"]
    patch = json.loads(shlex.split(patch_cmd)[-1])
    assert patch["spec"]["template"]["spec"]["containers"][0]["name"] == "it's"


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"  # killed, not yet reaped by init
    except FileNotFoundError:
        return True


def test_a_tool_past_its_time_limit_ends_with_what_it_started(tmp_path):
    """Before: only the tool (a wrapper script) was killed; the ``sleep`` it started kept running."""
    tool, pid_file = tmp_path / "kubectl", tmp_path / "child.pid"
    tool.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > '{pid_file}'\nwait\n")
    tool.chmod(0o755)
    with pytest.raises(ToolError, match="did not answer within 2 s"):
        run_tool([str(tool), "logs"], timeout=2)
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 30
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if not _gone(pid):
        os.kill(pid, signal.SIGKILL)
        raise AssertionError("the tool's child outlived it")


def test_a_huge_pod_log_is_read_from_disk_not_held_in_memory(tmp_path):
    """Before: ``kubectl logs`` output was captured in memory and copied (a 200 MB log took ~3 times
    that); now it goes to a temporary file the scan streams. The failure at its very end still counts."""
    f = fakes(tmp_path, "k8s-shm-pod")
    fake = tmp_path / "bin" / "kubectl"
    real = fake.with_name("kubectl-recorded")
    fake.rename(real)
    bus = ("RuntimeError: DataLoader worker (pid 87) is killed by signal: Bus error. It is possible that "
           "dataloader's workers are out of shared memory. Please try to raise your shared memory limit.")
    yes, head = shutil.which("yes"), shutil.which("head")  # the fakes' PATH has only the fake tools
    fake.write_text(f"#!/bin/sh\ncase \"$*\" in *logs*--previous*)\n"
                    f"  {yes} 'epoch 1 step 100 loss 0.5' | {head} -c 200000000\n"
                    f"  echo \"{bus}\"\n  exit 0;;\nesac\nexec '{real}' \"$@\"\n")
    fake.chmod(0o755)
    probe = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
             "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); print(p.stdout)")
    proc = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m", "dllogscan", "k8s",
                           "trainer-7c9d5b6f4-x2x9k", "-n", "ml", "-f", "json"],
                          capture_output=True, text=True, env=f.env, timeout=300)
    head, _, body = proc.stdout.partition("\n")
    code, peak_kib = map(int, head.split())
    assert code == 1 and json.loads(body)["diagnoses"][0]["class"] == "A"
    assert peak_kib < 150 * 1024, f"peak RSS {peak_kib // 1024} MiB"


@pytest.mark.parametrize("name", ["--server=http://127.0.0.1:9", "-A", "Trainer-0", "pod name", "trainer-0\x1b[2J"])
def test_a_pod_argument_that_is_no_pod_name_is_a_usage_error_before_kubectl_runs(tmp_path, name):
    """Before: ``dllogscan k8s -- --server=URL`` ran ``kubectl get pod --server=URL -o json``: the
    name became a kubectl flag (a real kubectl would send its credentials there)."""
    f = fakes(tmp_path, "k8s-shm-pod")
    proc = f.run("k8s", "-n", "ml", "--", name)
    assert proc.returncode == 2 and proc.stdout == "" and f.calls() == []
    assert proc.stderr.startswith("Error: ") and "is not a pod name" in proc.stderr and "\x1b" not in proc.stderr
