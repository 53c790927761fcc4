"""The README's Slurm, Kubernetes and GitHub Action sections show what dllogscan prints today on
the shipped examples (examples/slurm-oom-job, examples/k8s-shm-pod, examples/github), replayed
by the same fake tools and local API as the integration tests."""
from __future__ import annotations

from pathlib import Path

from tests.cluster_fakes import fakes

ROOT = Path(__file__).resolve().parent.parent
SHOWN_WORKDIR = "/home/alice/run"


def _console_block(readme: str, command: str) -> str:
    """The output shown after ``$ command`` up to the ``$ echo $?`` line."""
    after = readme.split(f"```console\n$ {command}\n", 1)[1]
    return after.split("\n$ echo $?", 1)[0]


def _clean(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines()).rstrip()


def slurm_transcript(tmp_path: Path) -> str:
    proc = fakes(tmp_path, "slurm-oom-job", SLURMD_NODENAME="gpu07", COLUMNS="100").run("slurm", "4242")
    assert proc.returncode == 1, proc.stderr
    return _clean(proc.stdout)


def k8s_transcript(tmp_path: Path) -> str:
    proc = fakes(tmp_path, "k8s-shm-pod", COLUMNS="100").run("k8s", "trainer-7c9d5b6f4-x2x9k", "-n", "ml")
    assert proc.returncode == 1, proc.stderr
    return _clean(proc.stdout)


def epilog_block(tmp_path: Path) -> str:
    f = fakes(tmp_path, "slurm-oom-job", SLURMD_NODENAME="gpu07", SLURM_JOB_ID="4242")
    before = (f.workdir / "slurm-4242.err").read_text()
    assert f.run("slurm", "--epilog").returncode == 0
    block = (f.workdir / "slurm-4242.err").read_text()[len(before):]
    tail = before.rstrip("\n").splitlines()[-1]
    return _clean(tail + "\n" + block.replace(str(f.workdir), SHOWN_WORKDIR))


def test_readme_slurm_transcript(tmp_path):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert _clean(_console_block(readme, "dllogscan slurm 4242")) == slurm_transcript(tmp_path)


def test_readme_k8s_transcript(tmp_path):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert _clean(_console_block(readme, "dllogscan k8s trainer-7c9d5b6f4-x2x9k -n ml")) == k8s_transcript(tmp_path)


def test_readme_epilog_block(tmp_path):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = readme.split("What the example job's stderr file ends with after the epilog", 1)[1].split("```\n", 2)[1]
    assert _clean(shown) == epilog_block(tmp_path)


def test_readme_workflow_is_the_shipped_one():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = readme.split("`.github/workflows/dllogscan-triage.yml`", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    assert shown == (ROOT / "examples" / "github" / "dllogscan-triage.yml").read_text()
