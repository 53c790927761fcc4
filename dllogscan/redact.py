"""``--redact``: replace hostnames, user names (home paths), IP addresses, job ids and e-mail
addresses by stable placeholders (``<host-1>``, ``<user-1>``, ``<ip-1>``, ``<job-1>``,
``<email-1>``) in a copy of the results, before any format renders them. One ``Redactor`` per
output, so the same value gets the same placeholder everywhere in it."""
from __future__ import annotations

import dataclasses
import ipaddress
import re
from typing import Any, Sequence

from .models import Diagnosis, Evidence, Fix, Hit, ScanResult

EMAIL_RE = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
HOME_RE = re.compile(r"(?P<pre>/home/|/Users/|/export/home/|[A-Za-z]:\\Users\\|~)(?P<user>[A-Za-z0-9_][A-Za-z0-9._-]{0,31})")
PROMPT_RE = re.compile(r"(?<![\w.@-])(?P<user>[a-z_][a-z0-9_-]{0,31})@(?P<host>[A-Za-z0-9][A-Za-z0-9-]{0,62})(?=:[~/])")
IPV4_RE = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.]*\d)")
IPV6_RE = re.compile(r"(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])")
JOB_RE = re.compile(r"(?i)(?P<pre>\b(?:slurm_job_id|slurm_jobid|job_?id|job id|jobid|stepid|job)\b\s*[=:#]?\s*)(?P<job>\d{2,})"
                    r"|(?P<pre2>\bslurm-)(?P<job2>\d{2,})(?=[._])")
HOST_CONTEXT_RE = re.compile(
    r"(?i)(?P<pre>\b(?:host(?:name)?|node(?:name|list)?|nodes|on node|ON)\b\s*[=:]?\s*)"
    r"(?P<host>(?=[A-Za-z0-9-]*[0-9])[A-Za-z][A-Za-z0-9-]{1,62}(?:\.[A-Za-z0-9-]+)*)")
SYSLOG_HOST_RE = re.compile(r"^(?P<pre>(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT[\d:.+-]+Z?) )"
                            r"(?P<host>[A-Za-z0-9][A-Za-z0-9.-]{0,62})(?= )", re.MULTILINE)
FQDN_RE = re.compile(r"\b(?:[A-Za-z0-9-]+\.)+(?:internal|local|lan|corp|cluster|intra|private|home|"
                     r"com|net|org|io|ai|dev|cloud|edu)\b")
PUBLIC_DOMAINS = ("github.com", "githubusercontent.com", "pytorch.org", "python.org", "pypi.org",
                  "stackoverflow.com", "huggingface.co", "nvidia.com", "docker.com", "kubernetes.io",
                  "gitlab.com", "readthedocs.io", "example.com", "google.com", "microsoft.com")
FACT_KINDS = {"node": "host", "host": "host", "hostname": "host", "nodelist": "host",
              "job_id": "job", "jobid": "job", "user": "user", "email": "email", "ip": "ip"}


class Redactor:
    """Stable placeholders for one output: the same value always gets the same ``<kind-N>``."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, str], str] = {}
        self.known: dict[str, str] = {}

    def placeholder(self, kind: str, value: str) -> str:
        key = (kind, value)
        if key not in self.seen:
            n = sum(1 for k, _ in self.seen if k == kind) + 1
            self.seen[key] = f"<{kind}-{n}>"
            if len(value) >= 3:
                self.known[value] = self.seen[key]
        return self.seen[key]

    def learn(self, facts: dict[str, str]) -> None:
        """Facts that name a host or a job (``node``, ``job_id``) are redacted wherever they appear."""
        for key, value in facts.items():
            kind = FACT_KINDS.get(key)
            if kind and value:
                for part in str(value).split(","):
                    if part.strip():
                        self.placeholder(kind, part.strip())

    def text(self, s: str | None) -> str | None:
        if not s:
            return s
        s = EMAIL_RE.sub(lambda m: self.placeholder("email", m.group()), s)
        s = PROMPT_RE.sub(lambda m: f"{self.placeholder('user', m['user'])}@{self.placeholder('host', m['host'])}", s)
        s = HOME_RE.sub(lambda m: m["pre"] + self.placeholder("user", m["user"]), s)
        s = IPV4_RE.sub(lambda m: self._ip(m.group()), s)
        s = IPV6_RE.sub(lambda m: self._ip(m.group()), s)
        s = JOB_RE.sub(self._job, s)
        s = SYSLOG_HOST_RE.sub(lambda m: m["pre"] + self.placeholder("host", m["host"]), s)
        s = HOST_CONTEXT_RE.sub(lambda m: m["pre"] + self.placeholder("host", m["host"]), s)
        s = FQDN_RE.sub(self._fqdn, s)
        for value, ph in sorted(self.known.items(), key=lambda kv: -len(kv[0])):
            if value in s:
                s = re.sub(rf"(?<![\w<-]){re.escape(value)}(?![\w>-])", ph, s)
        return s

    def _ip(self, value: str) -> str:
        try:
            ip = ipaddress.ip_address(value)
        except ValueError:
            return value
        if ip.is_loopback or ip.is_unspecified or (ip.version == 6 and len(value) < 6):
            return value
        return self.placeholder("ip", value)

    def _job(self, m: re.Match) -> str:
        if m["job"]:
            return m["pre"] + self.placeholder("job", m["job"])
        return m["pre2"] + self.placeholder("job", m["job2"])

    def _fqdn(self, m: re.Match) -> str:
        value = m.group()
        if value.lower().endswith(PUBLIC_DOMAINS) or "<" in value:
            return value
        return self.placeholder("host", value)

    def facts(self, facts: dict[str, str]) -> dict[str, str]:
        return {k: self.text(str(v)) or "" for k, v in facts.items()}

    def fix(self, f: Fix) -> Fix:
        return dataclasses.replace(f, title=self.text(f.title) or "", why=self.text(f.why) or "",
                                   commands=tuple(self.text(c) or "" for c in f.commands),
                                   code=self.text(f.code))

    def diagnosis(self, d: Diagnosis) -> Diagnosis:
        return dataclasses.replace(
            d, title=self.text(d.title) or "", facts=self.facts(d.facts),
            evidence=tuple(Evidence(e.line, self.text(e.text) or "", e.signature) for e in d.evidence),
            fixes=tuple(self.fix(f) for f in d.fixes), notes=tuple(self.text(n) or "" for n in d.notes))

    def hit(self, h: Hit) -> Hit:
        lines = lambda pairs: tuple((n, self.text(t) or "") for n, t in pairs)  # noqa: E731
        return dataclasses.replace(h, text=self.text(h.text) or "", facts=self.facts(h.facts),
                                   after=lines(h.after), before=lines(h.before))

    def result(self, r: ScanResult) -> ScanResult:
        self.learn(r.facts)
        for d in r.diagnoses:
            self.learn(d.facts)
        return dataclasses.replace(
            r, source=self.text(r.source) or r.source, error=self.text(r.error),
            member=self.text(r.member), facts=self.facts(r.facts),
            diagnoses=tuple(self.diagnosis(d) for d in r.diagnoses), hits=tuple(self.hit(h) for h in r.hits))


def redact_results(results: Sequence[ScanResult]) -> list[ScanResult]:
    """Redacted copies of ``results``, one placeholder numbering shared by all of them."""
    redactor = Redactor()
    return [redactor.result(r) for r in results]


def redact_value(value: Any, redactor: Redactor) -> Any:
    """Redact every string inside a JSON-like value (for texts outside a ScanResult)."""
    if isinstance(value, str):
        return redactor.text(value)
    if isinstance(value, dict):
        return {k: redact_value(v, redactor) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v, redactor) for v in value]
    return value
