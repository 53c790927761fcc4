"""``--redact``: replace credentials, hostnames, user names, IP addresses, job ids, e-mail
addresses, pod names and UUIDs by stable placeholders (``<secret-1>``, ``<host-1>``, ``<user-1>``,
``<ip-1>``, ``<job-1>``, ``<email-1>``, ``<pod-1>``, ``<uid-1>``) in a copy of the results, before
any format renders them. One ``Redactor`` per output, so the same value gets the same placeholder
everywhere in it. Word lists (public domains, home and run folders) are ``data/redact.toml``.

Credentials come first and come from detect-secrets (``credentials.py``). The identifiers are our
own rules, applied in this order: TensorBoard's host slots; e-mail; UUIDs and pod names
(``POD_RE``); ``user@host:`` prompts and ``git@host:`` remotes; users in home (the home folders of
``data/redact.toml``, ``~<u>``), ``/scratch/<u>``, ``/lustre/.../{home,users,scratch,work}/<u>``
and other file systems' ``/.../users/<u>`` (``/nfs/users/<u>``, ``/data/users/<u>``) paths and after
``user=`` / ``USER=`` / ``SLURM_JOB_USER=``; IPv4/IPv6 (not loopback); job ids after a job label
(``SLURM_JOB_ID=``, ``SLURM_ARRAY_JOB_ID=``, ``job 123``, ``slurm-123.out``); hosts in syslog
lines, after ``SLURMD_NODENAME=`` / ``SLURM_NODELIST=`` / ``hostname:`` (any name) or after a host
or node label (a name with a digit), and fully qualified names under common or country-code
domains, in a path or file name the text quotes read piece by piece as a source's name is
(``path``). A private key's body lines shown one by one are hidden where the result shows its
BEGIN or END line (``credentials.key_lines``). A value learnt from one place (a node fact, a
user) is replaced wherever it appears, but a number in a pid context (``pid 4242``) stays: a pid
equal to a job id is still a pid."""
from __future__ import annotations

import dataclasses
import ipaddress
import re
from functools import lru_cache
from typing import Any, Sequence

from ..core.models import Diagnosis, Evidence, Fix, Hit, ScanResult
from ..core.paths import DATA_DIR, data_document
from ..core.printable import escape

#: the longest name DNS allows, and the longest local part of an e-mail address (RFC 5321): a
#: host or an address is looked for only where fewer of its characters follow its start, so that
#: on a long run of them (``a.`` * 20 000) each start costs no more than a name (before, each
#: start scanned to the end of the run: quadratic)
NAME_MAX = 253
LOCAL_MAX = 64
NAME_START = rf"(?![A-Za-z0-9.-]{{{NAME_MAX + 1}}})"
EMAIL_RE = re.compile(rf"\b(?![A-Za-z0-9._%+-]{{{LOCAL_MAX + 1}}})[A-Za-z0-9._%+-]+@"
                      r"[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
#: a user's home: after a home folder (``data/redact.toml``'s ``home_folders``: ``HOMES``) at the
#: root or a few folders down, or one of its ``root_home_folders`` at the root; ``/Users/``,
#: ``/scratch/``, Windows' ``C:\\Users\\``, ``~`` where it starts a word and a name follows (not
#: ``~40 GB``, ``kubernetes.io~empty-dir``), and Lustre's ``{home,users,scratch,work}``
HOME_PATTERN = (r"(?P<pre>(?<![\w.-])/(?:ROOT_HOMES)/|/(?:HOMES)/|/Users/|/scratch/|[A-Za-z]:\\Users\\|"
                r"(?<![\w.~/-])~(?=[A-Za-z_])|"
                r"/lustre/(?:[^/\s]+/){0,4}?(?:HOMES|users?|scratch|work)/|"
                r"/(?:[A-Za-z0-9_.-]+/){1,4}?(?:HOMES|users?)/)(?P<user>[A-Za-z0-9_][A-Za-z0-9._-]{0,31})")
USER_LABEL_RE = re.compile(r"(?P<pre>(?<![A-Za-z0-9])(?:user(?:name)?|USER|LOGNAME|SLURM_JOB_USER)\s*[=:]\s*)"
                           r"(?P<user>[A-Za-z_][A-Za-z0-9._-]{0,31})\b")
PROMPT_RE = re.compile(r"(?<![\w.@-])(?P<user>[a-z_][a-z0-9_-]{0,31})@(?P<host>[A-Za-z0-9][A-Za-z0-9.-]{0,62})"
                       r"(?=:(?:[~/]|[A-Za-z0-9_][\w.-]*/))")
SHARED_USERS = ("git", "root")
IPV4_RE = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.]*\d)")
IPV6_RE = re.compile(r"(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])")
JOB_RE = re.compile(r"(?i)(?P<pre>(?<![A-Za-z0-9])(?:slurm_array_job_id|slurm_job_id|slurm_jobid|job_?id|job id|jobid|"
                    r"stepid|job)\b\s*[=:#]?\s*)(?P<job>\d{2,})"
                    r"|(?P<pre2>\bslurm-)(?P<job2>\d{2,})(?=[._])")
HOST_CONTEXT_RE = re.compile(
    r"(?i)(?P<pre>\b(?:host(?:name)?|node(?:name|list)?|nodes|on node|ON)\b\s*[=:]?\s*)"
    r"(?P<host>(?=[A-Za-z0-9-]*[0-9])[A-Za-z][A-Za-z0-9-]{1,62}(?:\.[A-Za-z0-9-]+)*)")
HOST_VALUE_RE = re.compile(r"(?P<pre>(?<![A-Za-z0-9])(?:SLURMD?_(?:NODENAME|NODELIST|JOB_NODELIST|STEP_NODELIST|"
                           r"SUBMIT_HOST|LAUNCH_NODE_IPADDR)|HOSTNAME|(?i:hostname|host))\s*[=:]\s*)"
                           r"(?P<host>[A-Za-z0-9][\w.\[\],-]{0,127}[\w\]])")
SYSLOG_HOST_RE = re.compile(r"^(?P<pre>(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT[\d:.+-]+Z?) )"
                            r"(?P<host>[A-Za-z0-9][A-Za-z0-9.-]{0,62})(?= )", re.MULTILINE)
#: a UUID: a Kubernetes pod's UID (``/var/lib/kubelet/pods/<uid>/``, ``pod=x_ns(<uid>)``), a GPU's
#: (``GPU-<uid>``), a run's; each names one thing of the site
UUID_RE = re.compile(r"(?i)(?<![0-9a-f])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9a-f-])")
#: the characters of a Kubernetes name's random suffix (its ``rand.String``: no vowels, no 0, 1, 3)
K8S_RANDOM = "[bcdfghjklmnpqrstvwxz2456789]"
#: a pod's name: after a pod label (``pod/x``, ``pod "x"``, ``pod=x``, ``pod_name: x``; one with a
#: digit or two ``-``, so ``pod was evicted``, ``pod re-created`` stay), in a kubelet log path
#: (``/var/log/pods/<namespace>_<pod>_<uid>/``), or anywhere in a Deployment's form, its
#: ReplicaSet's hash and a random suffix (``trainer-7c9d5b6f4-x2x9k``). A Job's pod
#: (``train-x7k2p``) is found only after a label: ``-`` and 5 such letters end words too.
POD_RE = re.compile(
    r"(?P<pre>(?<![\w-])(?:[Pp]ods?(?:/|:?\s+[\"']?|\s*=\s*[\"']?)|pod_?name\s*[=:]\s*[\"']?))"
    r"(?P<pod>(?=[a-z.-]*[0-9]|(?:[a-z0-9.]*-){2})[a-z][a-z0-9.-]{0,251}[a-z0-9])"
    r"|(?<=/pods/)(?P<ns>[a-z0-9][a-z0-9-]{0,62})_(?P<pod2>[a-z0-9][a-z0-9.-]{0,252})(?=_)"
    rf"|(?<![A-Za-z0-9-])(?P<pod3>[a-z0-9](?:[a-z0-9-]{{0,235}}[a-z0-9])?"
    rf"-{K8S_RANDOM}{{6,10}}-{K8S_RANDOM}{{5}})(?![A-Za-z0-9-])")
#: the domains of a site's own network: a name under one is a host even as a run's name
SITE_DOMAINS = ("internal", "local", "lan", "corp", "cluster", "intra", "private", "home")
COMMON_DOMAINS = rf"(?:{'|'.join(SITE_DOMAINS)}|com|net|org|io|ai|dev|cloud|edu)"
#: the machine's name where TensorBoard puts it: in an event file's name
#: (``events.out.tfevents.<time>.<host>.<pid>.<n>``) and in a default run's folder
#: (``runs/<Mon><DD>_<HH>-<MM>-<SS>_<host><comment>``)
TENSORBOARD_RE = re.compile(r"(?P<pre>\bevents\.out\.tfevents\.\d+\.)"
                            r"(?P<host>[A-Za-z0-9][A-Za-z0-9.-]{0,252}?)(?=\.\d+\.\d+)"
                            r"|(?P<pre2>(?<![A-Za-z0-9])[A-Z][a-z]{2}\d\d_\d\d-\d\d-\d\d_)"
                            r"(?P<host2>[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)")
#: how far back a run folder (``run_folders``) is looked for before a piece of a path
RUN_FOLDER_SPAN = 40
#: what ends the name of a code or settings file, after which a name under a common domain is a
#: file's (``settings.local.py``, ``config.local.yaml``, ``app.home.toml``), no host's; a log's or
#: an output's (``.log``, ``.txt``, ``.json``: ``FILE_SUFFIX_RE``) may follow a host's name
CODE_SUFFIX = r"\.(?:py|pyc|ipynb|ya?ml|toml|cfg|ini|conf|env|sh|js|ts|sql|xml|html?|lock)\b"
FQDN_RE = re.compile(rf"\b{NAME_START}(?:[A-Za-z0-9-]+\.)+{COMMON_DOMAINS}\b(?!{CODE_SUFFIX})|"
                     rf"\b{NAME_START}(?:[A-Za-z0-9-]+\.){{2,}}(?P<cc>[a-z]{{2}})\b(?![.\w/-])")
#: a host at the start of a piece of a file name, followed by ``-`` (``gpu1.uni-x.de-stderr``): its
#: first label has a digit, so that a dotted word before a hyphen (``train.tok.en-de``) is no host
DASHED_HOST_RE = re.compile(rf"{NAME_START}(?=[A-Za-z0-9-]*\d)(?:(?:[A-Za-z0-9-]+\.)+{COMMON_DOMAINS}|"
                            rf"(?:[A-Za-z0-9-]+\.){{2,}}(?P<cc>[a-z]{{2}}))(?=-[A-Za-z0-9])")
NOT_COUNTRY = {"py", "sh", "so", "gz", "xz", "js", "md", "rs", "go", "pl", "rb", "cc", "cu", "hh", "ts", "pt", "th",
               "h5", "db", "el", "mk", "in", "ko", "o", "a", "ps", "cs", "fs", "vs", "ok", "id", "fa"}
#: a piece of a file name or path between separators (``/``, ``\\``, ``_``, an archive's ``!/``), and
#: the file suffixes at its end (``.log``, ``.out.1``, ``.gz``): what is left may be a host name alone
PATH_PIECE_RE = re.compile(r"(?<![^/\\_!])[A-Za-z0-9][A-Za-z0-9.-]*")
#: a word of a text that may be a path or a file name (``"/data/gpu1.uni-x.de/x.py"``,
#: ``gpu1.uni-x.de-stderr.txt``): one with a ``/`` or ``\\``, or a file suffix, is read piece by
#: piece for hosts as a source's name is
PATH_WORD_RE = re.compile(r"[\w.~+%/\\-]+")
#: its pieces: as a name's, but one after ``_`` is part of a word there (``x_only.home``)
TEXT_PIECE_RE = re.compile(r"(?<![^/\\])[A-Za-z0-9][A-Za-z0-9.-]*")
#: one of them: ``suffix_start`` peels them off the end one by one (a search for the chain to the
#: end, tried from each ``.``, was quadratic on ``1.`` * 6 000)
FILE_SUFFIX_RE = re.compile(r"(?i)\.(?:log|txt|out|err|stdout|stderr|json|jsonl|csv|gz|bz2|xz|zst|tar|tgz|zip|\d+)")
MIN_LEARNT_NUMBER = 4  # a learnt job id this short is replaced only where a job label names it
PID_BEFORE_RE = re.compile(r"(?i)(?:\bpids?|pid\(s\)|\bprocess|\btask|\btid)\W{0,3}$")
#: the word lists (public domains, local host names, ...): ``data/redact.toml``
WORDS = DATA_DIR / "redact.toml"
FACT_KINDS = {"node": "host", "host": "host", "hostname": "host", "nodelist": "host",
              "job_id": "job", "jobid": "job", "pod": "pod", "user": "user", "email": "email", "ip": "ip"}
#: facts that name another source (a batch's cross-file proof): redacted as a path, and where its
#: evidence or notes quote that source, as the path
PATH_FACTS = ("kernel_source",)
#: a batch's fields read off names and first lines (``batch/layouts.py``) and their placeholders; a
#: namespace's is not looked for in the text (``default`` is also a word), only in names
NAME_KINDS = {"node": "host", "job": "job", "pod": "pod", "namespace": "namespace"}
NOT_LEARNT = ("namespace",)
#: the batch fields that are names but no identifier of their own (a container names the program):
#: the text rules only, as the rest of a name
TEXT_FIELDS = ("container",)
WORD_RE = re.compile(r"[A-Za-z0-9]+")
MAX_TEXTS = 4096  # texts kept redacted, and with their rules applied (a batch's fix titles and commands recur)
#: where a value read off a name may sit inside one piece of a name (``dmesg-node02.log``)
NAME_TOKEN_RE = re.compile(r"[A-Za-z0-9]+|[^A-Za-z0-9]")


@lru_cache(maxsize=1)
def words() -> dict[str, frozenset[str]]:
    """``data/redact.toml``'s lists, in lower case."""
    return {k: frozenset(str(w).lower() for w in v) for k, v in data_document(WORDS).items()}


@lru_cache(maxsize=1)
def home_re() -> re.Pattern[str]:
    """``HOME_PATTERN`` with the home folders of ``data/redact.toml``."""
    def either(key: str) -> str:
        return "|".join(re.escape(w) for w in sorted(words()[key], key=len, reverse=True))

    pattern = HOME_PATTERN.replace("ROOT_HOMES", either("root_home_folders"))
    return re.compile(pattern.replace("HOMES", either("home_folders")))


def is_public(host: str) -> bool:
    """Whether ``host`` is, or is under (a whole label), a domain of ``public_domains``."""
    labels = host.lower().rstrip(".").split(".")
    public = words()["public_domains"]
    return any(".".join(labels[i:]) in public for i in range(len(labels)))


class Redactor:
    """Stable placeholders for one output: the same value always gets the same ``<kind-N>``."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, str], str] = {}
        self.counts: dict[str, int] = {}
        self.known: dict[str, tuple[str, int]] = {}  # a learnt value: its placeholder, its turn
        #: the known values by a word of theirs, so that a text is searched only for the values
        #: whose words it has (a batch learns thousands of hosts and jobs)
        self.by_word: dict[str, list[str]] = {}
        self.memo: dict[str, str] = {}
        self.ruled: dict[str, str] = {}  # texts after the rules, before the known values
        self.names: dict[str, str] = {}  # values read off names, looked for in the pieces of paths
        self.name_tokens = 0  # the most tokens (``NAME_TOKEN_RE``) one of them has
        self.key_lines: set[int] = set()  # the numbers of the result's lines that are a private key's body

    def placeholder(self, kind: str, value: str) -> str:
        key = (kind, value)
        if key not in self.seen:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            self.seen[key] = f"<{kind}-{self.counts[kind]}>"
            if kind not in NOT_LEARNT:
                self._learn(value, self.seen[key])
        return self.seen[key]

    def host(self, value: str) -> str:
        """A host's placeholder; a name for the machine itself (``localhost``: ``local_hosts``) stays."""
        return value if value.lower() in words()["local_hosts"] else self.placeholder("host", value)

    def _learn(self, value: str, ph: str) -> None:
        """Replace ``value`` by ``ph`` wherever texts hold it from now on."""
        if len(value) < 3:
            return
        if value not in self.known:
            words = WORD_RE.findall(value)
            self.by_word.setdefault(max(words, key=len) if words else "", []).append(value)
        self.known[value] = (ph, self.known.get(value, ("", len(self.known)))[1])
        self.memo.clear()  # texts redacted before this value was known

    def learn(self, facts: dict[str, str]) -> None:
        """Facts that name a host, a job or a pod (``node``, ``job_id``, ``pod``) are redacted wherever they appear."""
        for key, value in facts.items():
            kind = FACT_KINDS.get(key)
            if kind and value:
                for part in str(value).split(","):
                    part = part.strip()
                    if part and not part.startswith("<") and kind == "host":
                        self.host(part)
                    elif part and not part.startswith("<"):
                        self.placeholder(kind, part)

    def fields(self, fields: dict[str, Any]) -> dict[str, Any]:
        """A batch's fields read off a source's name and first lines (``NAME_KINDS``) as
        placeholders, learnt before the source's own name and text are redacted, so those hide
        them too; a container through the text rules; ranks, tasks and times as they are. A value
        with a control or an undecodable byte is learnt as a name shows it too (``escape``)."""
        out = dict(fields)
        for key, value in fields.items():
            kind = NAME_KINDS.get(key)
            if kind and isinstance(value, str) and value and not value.startswith("<"):
                out[key] = ph = self.placeholder(kind, value)
                self._name(value, ph)
                shown = escape(value)
                if shown != value and self.seen.setdefault((kind, shown), ph) == ph:
                    self._name(shown, ph)
                    if kind not in NOT_LEARNT:
                        self._learn(shown, ph)
        for key in TEXT_FIELDS:
            if isinstance(fields.get(key), str):
                out[key] = self.text(fields[key])
        return out

    def text(self, s: str | None) -> str | None:
        if not s:
            return s
        if s not in self.memo:
            if s not in self.ruled:
                if len(self.ruled) >= MAX_TEXTS:
                    self.ruled.clear()
                self.ruled[s] = self._rules(s)
            if len(self.memo) >= MAX_TEXTS:  # a batch of 100 000 rows: each row's evidence is another text
                self.memo.clear()
            self.memo[s] = self._learnt(self.ruled[s])
        return self.memo[s]

    def _rules(self, s: str) -> str:
        """``s`` with credentials and the identifiers the rules find replaced; the same for the
        same text once its values have placeholders, so kept, unlike what the values learnt
        since change (``_learnt``)."""
        s = self._secrets(s)
        s = TENSORBOARD_RE.sub(self._tensorboard, s)
        s = EMAIL_RE.sub(lambda m: self.placeholder("email", m.group()), s)
        s = UUID_RE.sub(lambda m: self.placeholder("uid", m.group()), s)
        s = POD_RE.sub(self._pod, s)
        s = PROMPT_RE.sub(self._prompt, s)
        s = home_re().sub(lambda m: m["pre"] + self.placeholder("user", m["user"]), s)
        s = USER_LABEL_RE.sub(lambda m: m["pre"] + self.placeholder("user", m["user"]), s)
        s = IPV4_RE.sub(lambda m: self._ip(m.group()), s)
        s = IPV6_RE.sub(lambda m: self._ip(m.group()), s)
        s = JOB_RE.sub(self._job, s)
        s = HOST_VALUE_RE.sub(self._host_value, s)
        s = SYSLOG_HOST_RE.sub(lambda m: m["pre"] + self.host(m["host"]), s)
        s = HOST_CONTEXT_RE.sub(lambda m: m["pre"] + self.host(m["host"]), s)
        s = PATH_WORD_RE.sub(self._path_word, s) if "." in s else s
        return FQDN_RE.sub(self._fqdn, s)

    def _path_word(self, m: re.Match) -> str:
        """A path or file name in a text with each piece that is a host replaced (``_host_piece``)."""
        word = m.group()
        if "." not in word or not ("/" in word or "\\" in word or suffix_start(word) < len(word)):
            return word
        return TEXT_PIECE_RE.sub(lambda p: self._host_piece(p.group(), _in_run(word, p.start())) or p.group(), word)

    def _learnt(self, s: str) -> str:
        """``s`` with every value learnt so far (a node fact, a user) replaced, the longest first.
        A value stands alone in the text, so each of its words is a whole word there."""
        words = set(WORD_RE.findall(s))
        found = [v for w in words | {""} for v in self.by_word.get(w, ()) if v in s]
        for value in sorted(found, key=lambda v: (-len(v), self.known[v][1])):
            s = _put(s, value, self.known[value][0])
        return s

    def path(self, s: str | None) -> str | None:
        """A file name or path redacted as text is, each piece of it between separators that is
        a host name standing alone first (``gpu07.example.org_rank0.log``,
        ``/logs/n12.cs.ox.ac.uk/job.log``): in a name a host is followed by ``_``, ``.log`` or
        ``/`` where in text it is followed by a space, and the text rules passed over it or took
        only its first labels."""
        if not s:
            return s
        return self.text(PATH_PIECE_RE.sub(self._path_piece, TENSORBOARD_RE.sub(self._tensorboard, s)))

    def _path_piece(self, m: re.Match) -> str:
        piece = m.group()
        hidden = self._host_piece(piece, _in_run(m.string, m.start()))
        if hidden is not None:
            return hidden
        name = piece[:suffix_start(piece)]
        return self._named(name) + piece[len(name):] if self.names else piece

    def _host_piece(self, piece: str, run: bool = False) -> str | None:
        """``piece`` of a name with its host replaced, where, its file suffixes aside, it is a host
        name alone (``n12.cs.ox.ac.uk``) or one before ``-`` (``gpu1.uni-x.de-stderr.txt``); else
        None. A ``run``'s name (``runs/bert.base.lr.3e-5.de``) is a host only under a site's domain."""
        name = piece[:suffix_start(piece)]
        host = (FQDN_RE.fullmatch(name) or DASHED_HOST_RE.match(name)) if "." in name else None
        if not host or (run and not _site_host(host.group())):
            return None
        return self._fqdn(host) + piece[host.end():]

    def _name(self, value: str, ph: str) -> None:
        """Look for ``value`` (read off a name) in the pieces of paths as ``ph``."""
        self.names[value] = ph
        self.name_tokens = max(self.name_tokens, len(NAME_TOKEN_RE.findall(value)))

    def _named(self, name: str) -> str:
        """``name`` with each run of its words that is a value read off a name (a node, a pod:
        ``fields``) replaced by its placeholder, the longest run first (``dmesg-node02``). A run
        is no longer than the longest value (``name_tokens``): linear in ``name``'s tokens."""
        tokens, out, i = NAME_TOKEN_RE.findall(name), [], 0
        while i < len(tokens):
            for j in range(min(len(tokens), i + self.name_tokens), i, -1):
                ph = self.names.get("".join(tokens[i:j]))
                if ph and tokens[i][0].isalnum() and tokens[j - 1][0].isalnum():
                    out.append(ph)
                    i = j
                    break
            else:
                out.append(tokens[i])
                i += 1
        return "".join(out)

    def _body(self, n: int, s: str) -> str:
        """Line ``n`` of the log with its private key body hidden, where it is one (``key_lines``):
        shown alone, a body line is base64 that no rule tells from other text."""
        if n not in self.key_lines:
            return s
        from .credentials import hide_body

        span = hide_body(s)
        return s[:span[0]] + self.placeholder("secret", s[span[0]:span[1]]) + s[span[1]:] if span else s

    def lines(self, pairs: Sequence[tuple[int, str]]) -> list[str]:
        """Numbered lines of a log shown one by one (the page's context), redacted, the body of a
        private key whose BEGIN or END line is among them included."""
        from .credentials import key_lines

        self.key_lines = key_lines(dict(pairs))
        return [self.text(self._body(n, t)) or "" for n, t in pairs]

    def _secrets(self, s: str) -> str:
        from .credentials import find

        spans = find(s)
        for start, end in reversed(spans):
            s = s[:start] + self.placeholder("secret", s[start:end]) + s[end:]
        return s

    def _prompt(self, m: re.Match) -> str:
        user = m["user"] if m["user"] in SHARED_USERS else self.placeholder("user", m["user"])
        return f"{user}@{self.host(m['host'])}"

    def _tensorboard(self, m: re.Match) -> str:
        return m["pre"] + self.host(m["host"]) if m["host"] else m["pre2"] + self.host(m["host2"])

    def _pod(self, m: re.Match) -> str:
        if m["pod"]:
            return m["pre"] + self.placeholder("pod", m["pod"])
        if m["pod2"]:
            return f"{self.placeholder('namespace', m['ns'])}_{self.placeholder('pod', m['pod2'])}"
        return self.placeholder("pod", m["pod3"])

    def _host_value(self, m: re.Match) -> str:
        if m["host"].startswith("<"):
            return m.group()
        return m["pre"] + self.host(m["host"])

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
        if ("<" in value or (m["cc"] or "") in NOT_COUNTRY or is_public(value)
                or value.lower() in words()["home_folders"] | words()["root_home_folders"]
                or (_in_run(m.string, m.start()) and not _site_host(value))):
            return value
        return self.placeholder("host", value)

    def facts(self, facts: dict[str, str]) -> dict[str, str]:
        """Redacted facts; a number under any key but a job's (a pid, a worker count) stays."""
        return {k: str(v) if str(v).isdigit() and FACT_KINDS.get(k) != "job" else self.text(str(v)) or ""
                for k, v in facts.items()}

    def fix(self, f: Fix) -> Fix:
        return dataclasses.replace(f, title=self.text(f.title) or "", why=self.text(f.why) or "",
                                   commands=tuple(self.text(c) or "" for c in f.commands),
                                   code=self.text(f.code))

    def diagnosis(self, d: Diagnosis) -> Diagnosis:
        sources = {raw: self.path(raw) or raw for key in PATH_FACTS if (raw := d.facts.get(key))}

        def text(s: str) -> str:  # a source it quotes, as its name is redacted, then the text rules
            for raw, shown in sources.items():
                s = s.replace(raw, shown)
            return self.text(s) or ""

        return dataclasses.replace(
            d, title=self.text(d.title) or "", facts={**self.facts(d.facts), **{k: sources[d.facts[k]] for k in PATH_FACTS
                                                                                if d.facts.get(k)}},
            evidence=tuple(Evidence(e.line, text(self._body(e.line, e.text)), e.signature) for e in d.evidence),
            fixes=tuple(self.fix(f) for f in d.fixes), notes=tuple(text(n) for n in d.notes))

    def hit(self, h: Hit) -> Hit:
        lines = lambda pairs: tuple((n, self.text(self._body(n, t)) or "") for n, t in pairs)  # noqa: E731
        return dataclasses.replace(h, text=self.text(self._body(h.line, h.text)) or "", facts=self.facts(h.facts),
                                   after=lines(h.after), before=lines(h.before))

    def result(self, r: ScanResult) -> ScanResult:
        from .credentials import key_lines

        numbered = {n: t for h in r.hits for n, t in (*h.before, (h.line, h.text), *h.after)}
        numbered.update((e.line, e.text) for d in r.diagnoses for e in d.evidence)
        self.key_lines = key_lines(numbered)
        self.learn(r.facts)
        for d in r.diagnoses:
            self.learn(d.facts)
        source, member = self.path(r.source) or r.source, self.path(r.member)
        error = r.error
        for raw, shown in ((r.source, source), (r.member, member)):  # an error names its source first
            if error and raw and shown:
                error = error.replace(raw, shown)
        return dataclasses.replace(
            r, source=source, error=self.text(error), member=member, facts=self.facts(r.facts),
            notes=tuple(self.text(n) or "" for n in r.notes),
            diagnoses=tuple(self.diagnosis(d) for d in r.diagnoses), hits=tuple(self.hit(h) for h in r.hits))


def _in_run(s: str, at: int) -> bool:
    """Whether what starts at ``at`` in ``s`` is a folder or file right under a run folder
    (``runs/``: ``data/redact.toml``'s ``run_folders``)."""
    before = s[max(0, at - RUN_FOLDER_SPAN):at]
    if not before.endswith(("/", "\\")):
        return False
    folder = re.split(r"[/\\\s\"'=:]", before[:-1])[-1]
    return folder.lower() in words()["run_folders"]


def suffix_start(name: str) -> int:
    """Where the file suffixes at the end of ``name`` start (``.out.1.gz``: ``FILE_SUFFIX_RE``), or
    its length where none: each is a ``.`` and what follows it up to the next, from the last back."""
    start = len(name)
    while (dot := name.rfind(".", 0, start)) >= 0 and FILE_SUFFIX_RE.fullmatch(name, dot, start):
        start = dot
    return start


def _site_host(name: str) -> bool:
    """Whether ``name`` is under a domain of a site's own network (``SITE_DOMAINS``)."""
    return name.rsplit(".", 1)[-1].lower() in SITE_DOMAINS


def _put(s: str, value: str, ph: str) -> str:
    """``s`` with a learnt ``value`` replaced by ``ph`` where it stands alone (not inside a word,
    a hyphenated name or a placeholder), except a number in a pid context (``pid 4242``). A search
    for the string, not a pattern per value: a batch learns thousands of values."""
    out, last, at = [], 0, s.find(value)
    number = value.isdigit()
    while at >= 0:
        end = at + len(value)
        if (not _joins(s[at - 1:at], "<") and not _joins(s[end:end + 1], ">")
                and not (number and (len(value) < MIN_LEARNT_NUMBER or PID_BEFORE_RE.search(s, 0, at)))):
            out += [s[last:at], ph]
            last = end
        at = s.find(value, end if last == end else at + 1)
    return "".join(out) + s[last:] if out else s


def _joins(c: str, bracket: str) -> bool:
    """Whether the character next to a value makes it part of something longer (as ``\\w``, ``-``
    or the placeholder's own bracket would)."""
    return bool(c) and (c.isalnum() or c in ("_", "-", bracket))


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
