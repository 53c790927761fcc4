"""The issue-triage GitHub Action's entry point: ``python -m dllogscan.integrations.github_action``
(run by the composite action in ``action.yml`` at the repository root).

Rules:
- it reads ``GITHUB_EVENT_NAME`` and the payload at ``GITHUB_EVENT_PATH``; only ``issues``
  ``opened`` and ``issue_comment`` ``created`` on an issue (not a pull request) are read, and a
  comment carrying its own marker or written by a bot is ignored;
- the thread (title, body, the comments other than its own) goes through the same flattening as
  ``dllogscan paste`` and the normal scan; the reply is the ``--format md`` reply with ``--redact``;
- at ``min-confidence`` or above it posts one comment beginning with a hidden marker
  (``<!-- dllogscan-triage -->``), or edits a bot's comment that already begins with it (never a
  person's), and sets one label
  ``<label-prefix><class>-<kind>`` (``dataloader: A-shm``), removing its older labels of that prefix;
- below the threshold it stays silent, or with ``next-check: true`` posts (or edits) the one
  cheapest next check when there is one;
- settings come from ``DLLOGSCAN_MIN_CONFIDENCE`` (0.8), ``DLLOGSCAN_NEXT_CHECK`` (false),
  ``DLLOGSCAN_LABEL_PREFIX`` (``dataloader: ``); the API from ``GITHUB_API_URL`` and ``GITHUB_TOKEN``;
- exit 0 when it replied or chose silence; 2 with one ``Error:`` line when the setup is missing or
  the API refuses (a 403: the workflow lacks ``permissions: issues: write``). Outputs (``class``,
  ``subclass``, ``confidence``, ``label``, ``comment-url``) go to ``GITHUB_OUTPUT`` when set.
"""
from __future__ import annotations

import json
import math
import os
import re
import sys
from dataclasses import dataclass
from typing import Any, Mapping

from ..core import classes
from ..core.errors import DllogscanError, UsageError
from ..core.models import ScanResult
from .github_api import Api, GitHubError

MARKER = "<!-- dllogscan-triage -->"
MAX_BODY = 60_000  # characters of the whole comment (GitHub takes 65,536)
CUT_NOTE = "\n_(cut: run `dllogscan paste -f md` on the thread for the rest)_\n"
#: a code fence line as ``report.markdown.fence`` writes it: a quote or indent, backticks, a language
FENCE_RE = re.compile(r"([> ]*)(`{3,})(.*)")
EVENTS = {"issues": "opened", "issue_comment": "created"}


@dataclass(frozen=True)
class Settings:
    min_confidence: float = 0.8
    next_check: bool = False
    label_prefix: str = "dataloader: "


def settings(env: Mapping[str, str]) -> Settings:
    try:
        threshold = float(env.get("DLLOGSCAN_MIN_CONFIDENCE") or 0.8)
    except ValueError:
        threshold = math.nan
    if not 0.0 <= threshold <= 1.0:  # nan too: a threshold nothing reaches would keep the action silent
        raise UsageError("DLLOGSCAN_MIN_CONFIDENCE (min-confidence) must be a number from 0 to 1, not "
                         f"{env['DLLOGSCAN_MIN_CONFIDENCE']!r}")
    flag = (env.get("DLLOGSCAN_NEXT_CHECK") or "false").strip().lower() in ("1", "true", "yes", "on")
    prefix = env.get("DLLOGSCAN_LABEL_PREFIX")
    return Settings(threshold, flag, "dataloader: " if prefix is None else prefix)


def label_for(result: ScanResult, prefix: str) -> str:
    """``dataloader: A-shm``, ``dataloader: B-oom``, ``dataloader: B-getitem``, ..."""
    d = result.diagnoses[0]
    kind = classes.issue_kind(d.cls) or (d.subclass or "").split("-")[0] or "other"
    return f"{prefix}{d.cls}-{kind}"


def _skip_reason(event: str, payload: dict[str, Any]) -> str | None:
    if EVENTS.get(event) != payload.get("action"):
        return f"event {event}/{payload.get('action')} is not read (issues/opened, issue_comment/created)"
    issue = payload.get("issue") or {}
    if "pull_request" in issue:
        return "a pull request, not an issue"
    comment = payload.get("comment") or {}
    if MARKER in (comment.get("body") or "") or (comment.get("user") or {}).get("type") == "Bot":
        return "the comment is dllogscan's own or a bot's"
    return None


def is_ours(comment: dict[str, Any]) -> bool:
    """Our reply: a bot's comment (``GITHUB_TOKEN`` writes as ``github-actions[bot]``) that begins
    with the marker. A person's comment that holds the marker (quoting our reply's source, or
    crafted to) is theirs: never edited, and read with the thread."""
    return (comment.get("user") or {}).get("type") == "Bot" and (comment.get("body") or "").startswith(MARKER)


def thread(issue: dict[str, Any], comments: list[dict[str, Any]]) -> bytes:
    """The issue in ``gh issue view --json title,body,comments`` shape, without our own comment."""
    doc = {"title": issue.get("title") or "", "body": issue.get("body") or "",
           "author": (issue.get("user") or {}).get("login", ""),
           "comments": [{"author": (c.get("user") or {}).get("login", ""), "body": c.get("body") or ""}
                        for c in comments if not is_ours(c)]}
    return json.dumps(doc).encode("utf-8")


def diagnose(data: bytes, number: int) -> ScanResult:
    """The paste path (documents flattened), then ``--redact``."""
    from ..report.redact import redact_results
    from ..triage import diagnose_bytes

    return redact_results([diagnose_bytes(data, name=f"issue #{number}")])[0]


def open_fence(text: str) -> str | None:
    """The line that closes the code block still open at the end of ``text``; None when none is."""
    closing = None
    for line in text.splitlines():
        m = FENCE_RE.fullmatch(line)
        if m and closing is None:
            closing = m.group(1) + m.group(2)
        elif m and closing is not None and line.rstrip().startswith(closing) and not m.group(3).strip():
            closing = None
    return closing


def cut(body: str, limit: int) -> str:
    """``body`` in at most ``limit`` characters: cut at a line's end, a code block it falls in
    closed (an open fence would swallow the rest of the comment), ``CUT_NOTE`` after."""
    if len(body) <= limit:
        return body
    kept = body[:limit]
    while True:
        kept = kept[:kept.rfind("\n") + 1]
        closing = open_fence(kept)
        out = kept + (f"{closing}\n" if closing else "") + CUT_NOTE
        if len(out) <= limit or not kept:
            return out
        kept = kept[:-1]


def reply(result: ScanResult, cfg: Settings) -> tuple[str | None, str | None]:
    """``(comment body, label)``; ``(None, None)`` for silence."""
    from ..report import render

    top = result.diagnoses[0] if result.diagnoses else None
    if top is not None and top.confidence >= cfg.min_confidence:
        body = cut(render([result], "md"), MAX_BODY - len(MARKER) - 1)
        return f"{MARKER}\n{body}", label_for(result, cfg.label_prefix)
    if top is not None and cfg.next_check:
        from ..advise.next_check import next_check

        check = next_check(result.diagnoses, sure=cfg.min_confidence)  # not sure enough to post
        if check:
            return (f"{MARKER}\n### dllogscan: not sure yet — please run this and paste the output\n\n"
                    f"```sh\n{check.command}\n```\n\n{check.why}\n"), None
    return None, None


def _output(env: Mapping[str, str], values: dict[str, str]) -> None:
    path = env.get("GITHUB_OUTPUT")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.writelines(f"{k}={v}\n" for k, v in values.items())


def _required(env: Mapping[str, str], name: str) -> str:
    value = env.get(name)
    if not value:
        raise UsageError(f"{name} is not set (run this inside a GitHub Actions workflow)")
    return value


def run(env: Mapping[str, str]) -> str:
    """Triage the event; return one line saying what was done."""
    cfg = settings(env)
    event, token = _required(env, "GITHUB_EVENT_NAME"), _required(env, "GITHUB_TOKEN")
    try:
        with open(_required(env, "GITHUB_EVENT_PATH"), encoding="utf-8") as fh:
            payload = json.load(fh)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the event payload: {exc}") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("issue", {}), dict):
        raise UsageError("the event payload is not a GitHub issue event (a JSON object with an 'issue' object)")
    why = _skip_reason(event, payload)
    if why:
        return f"nothing to do: {why}"
    issue = payload["issue"]
    repo = env.get("GITHUB_REPOSITORY") or payload["repository"]["full_name"]
    number = int(issue["number"])
    api = Api(env.get("GITHUB_API_URL") or "https://api.github.com", token)
    base = f"/repos/{repo}/issues/{number}"
    comments = api.pages(f"{base}/comments") if event == "issue_comment" or issue.get("comments") else []
    result = diagnose(thread(issue, comments), number)
    body, label = reply(result, cfg)
    if body is None:
        top = result.diagnoses[0] if result.diagnoses else None
        return f"silent: {f'best guess {top.cls} at {top.confidence:.0%}' if top else 'nothing found'} (threshold {cfg.min_confidence:.0%})"
    ours = next((c for c in comments if is_ours(c)), None)
    if ours:
        posted = api.request("PATCH", f"/repos/{repo}/issues/comments/{ours['id']}", {"body": body})
    else:
        posted = api.request("POST", f"{base}/comments", {"body": body})
    if label:
        stale = [n for n in (lb.get("name", "") for lb in issue.get("labels") or [])
                 if cfg.label_prefix and n.startswith(cfg.label_prefix) and n != label]
        for name in stale:
            api.request("DELETE", f"{base}/labels/{Api.quote(name)}")
        api.request("POST", f"{base}/labels", {"labels": [label]})
    top = result.diagnoses[0]
    url = (posted or {}).get("html_url", "")
    _output(env, {"class": top.cls, "subclass": top.subclass or "", "confidence": f"{top.confidence:.3f}",
                  "label": label or "", "comment-url": url})
    return f"{'updated' if ours else 'posted'} {url or 'the comment'}" + (f", label {label!r}" if label else "")


def main() -> None:
    try:
        line = run(os.environ)
    except (GitHubError, DllogscanError) as exc:
        sys.stderr.write(f"Error: {exc}\n")
        sys.exit(2)
    except KeyError as exc:
        sys.stderr.write(f"Error: the event payload has no {exc} field\n")
        sys.exit(2)
    sys.stdout.write(f"dllogscan triage: {line}\n")


if __name__ == "__main__":
    main()
