"""The few GitHub REST calls the triage Action makes, with ``urllib`` and a ``GITHUB_TOKEN``.

Every failure is a ``GitHubError`` whose message is one line: the method, the path, the status
and GitHub's own ``message`` (plus what to change for a 403/404: the workflow's ``permissions``).
"""
from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from ..core.errors import DllogscanError

API_VERSION = "2022-11-28"
PER_PAGE, MAX_PAGES = 100, 10
PERMISSION_HINT = " (the workflow needs `permissions: issues: write`)"


class GitHubError(DllogscanError):
    """The API refused or could not be reached."""


class Api:
    """``base`` is ``GITHUB_API_URL`` (``https://api.github.com``, or a GitHub Enterprise one)."""

    def __init__(self, base: str, token: str, timeout: float = 30.0) -> None:
        self.base, self.token, self.timeout = base.rstrip("/"), token, timeout

    def request(self, method: str, path: str, body: Any = None) -> Any:
        """One call; the decoded JSON answer (None for an empty one)."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method, headers={
            "Authorization": f"Bearer {self.token}", "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION, "User-Agent": "dllogscan-triage",
            **({"Content-Type": "application/json"} if data is not None else {})})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310 - the API URL is configured
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            raise GitHubError(self._describe(method, path, exc)) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise GitHubError(f"cannot reach the GitHub API at {self.base}: {reason}") from None
        try:
            return json.loads(raw) if raw.strip() else None
        except ValueError:
            raise GitHubError(f"GitHub API {method} {path}: the answer is not JSON") from None

    def _describe(self, method: str, path: str, exc: urllib.error.HTTPError) -> str:
        try:
            message = json.loads(exc.read() or b"{}").get("message", "")
        except (ValueError, AttributeError, OSError):
            message = ""
        hint = PERMISSION_HINT if exc.code in (401, 403, 404) else ""
        return f"GitHub API {method} {path} answered {exc.code} {message or exc.reason}{hint}"

    def pages(self, path: str) -> list[Any]:
        """Every item of a paginated list (up to ``MAX_PAGES`` pages)."""
        out: list[Any] = []
        sep = "&" if "?" in path else "?"
        for page in range(1, MAX_PAGES + 1):
            items = self.request("GET", f"{path}{sep}per_page={PER_PAGE}&page={page}") or []
            out += items
            if len(items) < PER_PAGE:
                break
        return out

    @staticmethod
    def quote(text: str) -> str:
        return urllib.parse.quote(text, safe="")
