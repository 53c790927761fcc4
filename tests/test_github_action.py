"""The issue-triage Action's entry point on recorded event payloads, against a local API that
records what it was asked to write: the comment body, the label, the edit of its own comment."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dllogscan.integrations.github_action import MARKER
from tests.github_server import Recorder

PAYLOADS = Path(__file__).parent / "fixtures" / "github"
ROOT = Path(__file__).parent.parent
EXAMPLE = ROOT / "examples" / "github" / "issue-opened.json"
ISSUES = "/repos/acme/vision/issues"


def routes(**extra):
    base = {
        ("POST", f"{ISSUES}/17/comments"): (201, {"id": 9500, "html_url": "https://github.com/acme/vision/issues/17#issuecomment-9500"}),
        ("POST", f"{ISSUES}/17/labels"): (200, [{"name": "dataloader: A-shm"}]),
        ("GET", f"{ISSUES}/21/comments"): (200, json.loads((PAYLOADS / "issue-21-comments.json").read_text())),
        ("PATCH", "/repos/acme/vision/issues/comments/9001"): (200, {"id": 9001, "html_url": "https://github.com/acme/vision/issues/21#issuecomment-9001"}),
        ("DELETE", f"{ISSUES}/21/labels/dataloader%3A%20E-hang"): (200, []),
        ("POST", f"{ISSUES}/21/labels"): (200, [{"name": "dataloader: B-oom"}]),
        ("POST", f"{ISSUES}/30/comments"): (201, {"id": 9600, "html_url": "https://github.com/acme/vision/issues/30#issuecomment-9600"}),
    }
    base.update(extra)
    return base


def run_action(api: Recorder, payload: str, event: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "DLLOGSCAN_"))}
    full.update(GITHUB_EVENT_NAME=event, GITHUB_EVENT_PATH=str(PAYLOADS / payload), GITHUB_API_URL=api.url,
                GITHUB_TOKEN="ghs_test_token", GITHUB_REPOSITORY="acme/vision", GITHUB_OUTPUT=str(tmp_path / "out"),
                PYTHONPATH=str(ROOT))
    full.update(env)
    return subprocess.run([sys.executable, "-m", "dllogscan.integrations.github_action"], capture_output=True,
                          text=True, env=full, timeout=120)


def test_opened_issue_gets_one_redacted_reply_and_a_label(tmp_path):
    with Recorder(routes()) as api:
        proc = run_action(api, str(EXAMPLE), "issues", tmp_path)
    assert proc.returncode == 0, proc.stderr
    writes = api.writes()
    assert [(c["method"], c["path"]) for c in writes] == [("POST", f"{ISSUES}/17/comments"), ("POST", f"{ISSUES}/17/labels")]
    body = writes[0]["body"]["body"]
    assert body.startswith(MARKER) and "**Verdict:** class A / bus-error" in body
    assert "RuntimeError: DataLoader worker (pid 16842) is killed by signal: Bus error" in body
    assert "alice" not in body and "gpu07.cluster.internal" not in body and "884213" not in body  # --redact
    assert writes[1]["body"] == {"labels": ["dataloader: A-shm"]}
    assert all(c["auth"] == "Bearer ghs_test_token" for c in api.calls)
    assert "class=A" in (tmp_path / "out").read_text() and "posted https://github.com/acme/vision/issues/17" in proc.stdout


def test_later_comment_edits_the_same_reply_and_swaps_the_label(tmp_path):
    with Recorder(routes()) as api:
        proc = run_action(api, "issue_comment-created-oom.json", "issue_comment", tmp_path)
    assert proc.returncode == 0, proc.stderr
    writes = [(c["method"], c["path"]) for c in api.writes()]
    assert writes == [("PATCH", "/repos/acme/vision/issues/comments/9001"),
                      ("DELETE", f"{ISSUES}/21/labels/dataloader%3A%20E-hang"), ("POST", f"{ISSUES}/21/labels")]
    body = api.writes()[0]["body"]["body"]
    assert body.count(MARKER) == 1 and "class B / oom" in body and "Killed process 26652" in body
    assert "py-spy" not in body  # its own earlier reply is not read as part of the thread
    assert api.writes()[2]["body"] == {"labels": ["dataloader: B-oom"]}
    assert "updated" in proc.stdout


def test_a_persons_comment_holding_the_marker_is_never_edited(tmp_path):
    """Only a bot's comment that begins with the marker is the reply: a person's comment that holds
    it (quoting the reply's source, or crafted to) is neither edited nor left out of the thread."""
    theirs = {"id": 8999, "user": {"login": "mallory", "type": "User"},
              "body": f"{MARKER}\nmy comment: Killed process 26652 (pt_data_worker)"}
    comments = json.loads((PAYLOADS / "issue-21-comments.json").read_text())
    with Recorder(routes() | {("GET", f"{ISSUES}/21/comments"): (200, [theirs, *comments])}) as api:
        proc = run_action(api, "issue_comment-created-oom.json", "issue_comment", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert api.writes()[0]["path"] == "/repos/acme/vision/issues/comments/9001"


#: a threshold above the confidence of the classifier's prose verdict on the "unsure" issue (about
#: 90 %: calibrated, such verdicts were right about that often)
UNSURE = {"DLLOGSCAN_MIN_CONFIDENCE": "0.95"}


def test_below_the_threshold_it_stays_silent(tmp_path):
    with Recorder(routes()) as api:
        proc = run_action(api, "issues-opened-unsure.json", "issues", tmp_path, **UNSURE)
    assert proc.returncode == 0, proc.stderr
    assert api.writes() == [] and re.search(r"silent: best guess E at \d+% \(threshold 95%\)", proc.stdout)


def test_below_the_threshold_it_posts_the_next_check_when_asked(tmp_path):
    with Recorder(routes()) as api:
        proc = run_action(api, "issues-opened-unsure.json", "issues", tmp_path, DLLOGSCAN_NEXT_CHECK="true", **UNSURE)
    assert proc.returncode == 0, proc.stderr
    [write] = api.writes()
    assert write["path"] == f"{ISSUES}/30/comments"
    assert write["body"]["body"].startswith(MARKER) and "py-spy dump --pid" in write["body"]["body"]


def test_pull_request_comments_are_not_read(tmp_path):
    with Recorder(routes()) as api:
        proc = run_action(api, "issue_comment-created-pull-request.json", "issue_comment", tmp_path)
    assert proc.returncode == 0 and api.calls == [] and "pull request" in proc.stdout


def test_api_refusal_is_one_line_and_exit_2(tmp_path):
    refused = (403, {"message": "Resource not accessible by integration",
                     "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment"})
    with Recorder(routes() | {("POST", f"{ISSUES}/17/comments"): refused}) as api:
        proc = run_action(api, str(EXAMPLE), "issues", tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"Error: GitHub API POST {ISSUES}/17/comments answered 403 Resource not accessible by integration "
        "(the workflow needs `permissions: issues: write`)"]
    assert [c["path"] for c in api.writes()] == [f"{ISSUES}/17/comments"]  # no label after a refused comment


@pytest.mark.parametrize("missing", ["GITHUB_TOKEN", "GITHUB_EVENT_PATH"])
def test_missing_setup_is_one_line_and_exit_2(tmp_path, missing):
    with Recorder(routes()) as api:
        proc = run_action(api, str(EXAMPLE), "issues", tmp_path, **{missing: ""})
    assert proc.returncode == 2 and proc.stderr.startswith(f"Error: {missing} is not set") and "Traceback" not in proc.stderr


@pytest.mark.parametrize("env, payload, said", [
    ({"DLLOGSCAN_MIN_CONFIDENCE": "5"}, None, "must be a number from 0 to 1, not '5'"),
    ({"DLLOGSCAN_MIN_CONFIDENCE": "nan"}, None, "must be a number from 0 to 1, not 'nan'"),
    ({"DLLOGSCAN_MIN_CONFIDENCE": "high"}, None, "must be a number from 0 to 1, not 'high'"),
    ({}, "[1, 2]", "not a GitHub issue event"),
    ({}, '{"action": "opened", "issue": "17"}', "not a GitHub issue event"),
])
def test_bad_settings_and_payloads_are_one_line_and_exit_2(tmp_path, env, payload, said):
    """Before: a threshold of 5 or nan kept the action silent forever, and a payload that was no
    object (or an issue that was no object) was a traceback."""
    if payload is not None:
        (tmp_path / "event.json").write_text(payload)
        env = {**env, "GITHUB_EVENT_PATH": str(tmp_path / "event.json")}
    with Recorder(routes()) as api:
        proc = run_action(api, str(EXAMPLE), "issues", tmp_path, **env)
    assert proc.returncode == 2 and api.calls == [] and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("Error: ") and said in proc.stderr and len(proc.stderr.splitlines()) == 1


def test_action_yml_runs_the_entry_point_with_its_inputs():
    yaml = pytest.importorskip("yaml")
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    step = action["runs"]["steps"][-1]
    assert "-m dllogscan.integrations.github_action" in step["run"]
    assert set(step["env"]) == {"GITHUB_TOKEN", "DLLOGSCAN_MIN_CONFIDENCE", "DLLOGSCAN_NEXT_CHECK", "DLLOGSCAN_LABEL_PREFIX"}
    assert set(action["inputs"]) >= {"token", "min-confidence", "next-check", "label-prefix"}
    workflow = yaml.safe_load((ROOT / "examples" / "github" / "dllogscan-triage.yml").read_text())
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as True
    assert triggers == {"issues": {"types": ["opened"]}, "issue_comment": {"types": ["created"]}}
    assert workflow["permissions"] == {"issues": "write"}


def test_the_readme_shows_the_comment_it_posts(tmp_path):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = readme.split("The comment begins:", 1)[1].split("```markdown\n", 1)[1].split("```", 1)[0]
    with Recorder(routes()) as api:
        proc = run_action(api, str(EXAMPLE), "issues", tmp_path)
    assert proc.stdout.strip() in readme
    assert api.writes()[0]["body"]["body"].startswith(shown)


@pytest.mark.parametrize("lines", [900, 901, 902, 903, 5000])
def test_a_cut_reply_closes_the_fence_it_falls_in_and_stays_under_the_limit(lines):
    """Before: the body was cut at MAX_BODY characters wherever that fell, often inside the quoted
    evidence's ``` block, whose fence then swallowed the note (and the total was over MAX_BODY)."""
    from dllogscan.core.models import Diagnosis, Evidence, ScanResult
    from dllogscan.integrations.github_action import MAX_BODY, Settings, reply

    evidence = tuple(Evidence(i, f"RuntimeError: DataLoader worker (pid {i}) is killed by signal") for i in range(lines))
    result = ScanResult("issue #1", (Diagnosis("B", "killed", "Worker killed", 0.99, evidence),))
    body, _ = reply(result, Settings())
    assert "_(cut: run `dllogscan paste -f md`" in body.splitlines()[-1]
    fences = [ln for ln in body.splitlines() if re.fullmatch(r"[> ]*```\w*", ln)]
    assert len(body) <= MAX_BODY and len(fences) % 2 == 0 and fences[-1] == "> ```"
