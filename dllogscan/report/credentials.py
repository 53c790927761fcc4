"""Credentials in log text, for ``--redact``: detect-secrets' detectors (Yelp/detect-secrets, a
plain dependency, imported only when redacting) plus the few token shapes it lacks.

Rules (``find``: the spans of ``text`` to hide):
- every regex detector detect-secrets ships (AWS key ids, GitHub, GitLab, Slack, Stripe, OpenAI,
  PyPI, npm, JWT, basic auth in URLs, ...): its pattern's longest group of 8+ characters, else
  the whole match, stretched to the end of the word (detect-secrets' JWT pattern stops before the
  signature);
- its keyword detector in the config-file form (``password=...``, ``api_key: ...``,
  ``WANDB_API_KEY=...``), for values of 4+ characters (an unquoted value is its first word) that
  are no placeholder, number or code (``NOT_A_VALUE_RE``: ``authkey=process.current_process().authkey``);
- its high-entropy detectors on quoted strings (base64 above 4.5 bits, hex above 3.0);
- ours: Hugging Face tokens (``hf_`` + 30 letters or digits), GitHub's fine-grained tokens
  (``github_pat_``), the credential after ``Authorization: Bearer|Token|Basic``, a cookie header's
  value, a lone 40-character hex string (an API key) unless a word just before it says it is a
  commit, hash or digest; and the value of a setting whose name ends in a credential word
  (``GITHUB_TOKEN=...``, ``--password hunter22``, ``--hf-token=...``, a URL's ``?token=`` or
  ``&sig=``, an ``X-Amz-Signature``), where that value is no placeholder (``<pad>``, ``$TOKEN``,
  ``***``) and no bare number (``max_token=512``). Where a rule names its ``secret`` group, only
  that group is hidden;
- a PEM private key's body: the base64 lines (and ``Proc-Type:``/``DEK-Info:`` fields) after a
  ``-----BEGIN ... PRIVATE KEY-----`` line, up to its END line (the last one however short), in one
  text, or in one line with its line ends escaped (``\\n``: a JSON service account file); a line of a log shown
  alone (evidence, context) is hidden as a body line where it is one of the numbered lines between
  such a header or END line and the other (``key_lines``), and a line that is nothing but 64 or 70
  base64 characters with upper and lower case letters and a digit (a PEM or OpenSSH key's full line)
  wherever it stands.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterator

MIN_GROUP = 8
MIN_KEYWORD_VALUE = 4
WORD_TAIL_RE = re.compile(r"[A-Za-z0-9_-]*")
#: a setting's name that ends in a credential word (``GITHUB_TOKEN``, ``db-password``, ``api_key``)
CREDENTIAL_NAME = (r"(?:[a-z0-9]+[_-])*(?:token|secret|password|passwd|pwd|api[_-]?key|apikey|access[_-]?key|"
                   r"secret[_-]?key|private[_-]?key|credentials?)")
#: its value: an option's (``--x value``, ``--x=value``), an assignment's or a mapping's
#: (``X=value``, ``"x": "value"``, ``x: value``)
SETTING_RE = re.compile(rf"(?i)(?<![\w-])(?:--?{CREDENTIAL_NAME}(?:\s*=\s*|\s+)|{CREDENTIAL_NAME}[\"']?\s*[=:]\s*)"
                        r"[\"']?(?P<secret>[^\s\"'&,;]{4,})")
OWN_RULES = (
    re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}"),
    re.compile(r"(?i)\bauthorization\b[\"']?\s*[:=]\s*[\"']?(?:bearer|token|basic)\s+([A-Za-z0-9._~+/=-]{8,})"),
    re.compile(r"(?i)\b(?:bearer)\s+([A-Za-z0-9._~+/-]{20,}=*)"),
    re.compile(r"(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{22,}"),
    re.compile(r"(?i)\b(?:set-)?cookie:\s*(?P<secret>\S[^\r\n]{3,})"),
    SETTING_RE,
    # a URL's query (``?token=...``, ``&sig=...``, ``X-Amz-Signature=...``)
    re.compile(r"(?i)[?&](?:[a-z0-9_-]*(?:token|signature|sig|key|secret|password|credential))="
               r"(?P<secret>[^&\s#\"'<]{4,})"),
    re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{40}(?![0-9A-Za-z])"),
)
#: a credential-named setting's value that is none: a placeholder (``<pad>``, ``$TOKEN``, ``***``,
#: ``[PAD]``), a word for nothing, a bare number (``max_token=512``), code (``tokenizer.eos_token``,
#: ``os.environ["HF_TOKEN"]``)
NOT_A_VALUE_RE = re.compile(r"(?i)[<$%*{\[(-].*|none|null|true|false|\d+|[a-z_]\w*(?:\.[a-z_]\w*)+|.*[(\[].*")
PEM_BEGIN_RE = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")
PEM_END_RE = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----")
#: a key's body line: its base64, or a field, alone or after a prefix a log put before it (one
#: that ends in ``:``, ``]``, ``|``, ``>`` or a time: ``[rank0]: ``, ``12:00:01 ``), so that a line
#: of prose after a header whose END is not shown (``epoch 3 done``) is none
PEM_PREFIX = r"(?:^|[:\]|>]|\d\d:\d\d(?:[.,]\d+)?)\s*"
PEM_BODY_RE = re.compile(PEM_PREFIX + r"(?P<secret>[A-Za-z0-9+/]{4,}={0,2}|(?:Proc-Type|DEK-Info):.*?)\s*$")
#: the body's last line, right before its END line, may be as short as one character and padding
PEM_LAST_RE = re.compile(PEM_PREFIX + r"(?P<secret>[A-Za-z0-9+/]{1,3}={0,2})\s*$")
#: a key in one line of text with its line ends escaped (a JSON service account file printed:
#: ``"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIE...\\n-----END PRIVATE KEY-----\\n"``): its body
PEM_ESCAPED_RE = re.compile(r"PRIVATE KEY-----(?:\\r)?\\n(?P<secret>[A-Za-z0-9+/=\\]+?)"
                            r"(?=(?:\\r)?\\n-----END|-----END|[^A-Za-z0-9+/=\\]|$)")
#: a key's full body line alone: 64 (PEM) or 70 (OpenSSH) base64 characters, mixed case and a digit
LONE_BODY_RE = re.compile(r"(?m)^\s*(?P<secret>(?=[^\s]*[A-Z])(?=[^\s]*[a-z])(?=[^\s]*\d)(?!/)"
                          r"(?:[A-Za-z0-9+/]{64}|[A-Za-z0-9+/]{70}))\s*$")
#: detect-secrets' JWT pattern: its leftmost search tries each ``eyJ`` of a run of its characters
#: to the run's end, quadratic on a run that holds many (48 KB of ``eyJ``: 1.8 s); ``_jwt_matches``
#: gives the same matches in one pass. The run's class is the pattern's own (``9-_`` is a range).
JWT_PATTERN = r"eyJ[A-Za-z0-9-_=]+\.[A-Za-z0-9-_=]+\.?[A-Za-z0-9-_.+/=]*?"
JWT_RUN_RE = re.compile(r"[A-Za-z0-9-_=]*")
NOT_A_KEY_RE = re.compile(r"(?i)(?:commit|sha1?|hash|digest|revision|rev|git[ _]version|checksum|object)\W{0,12}$")


@lru_cache(maxsize=1)
def _detectors():
    """detect-secrets' detectors: (regex denylists, keyword detector, entropy detectors)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
    from detect_secrets.plugins.ip_public import IPPublicDetector
    from detect_secrets.plugins.keyword import CONFIG_DENYLIST_REGEX_TO_GROUP, KeywordDetector

    patterns, entropy = [], []
    for cls in get_mapping_from_secret_type_to_class().values():
        if cls is IPPublicDetector:  # addresses are identifiers: our own <ip-N> rule
            continue
        if issubclass(cls, RegexBasedDetector):
            patterns += list(cls.denylist)
        elif issubclass(cls, HighEntropyStringsPlugin):
            entropy.append(cls())
    return (tuple((p, _needs(p)) for p in patterns), (KeywordDetector(), CONFIG_DENYLIST_REGEX_TO_GROUP),
            tuple(entropy))


def _needs(pattern: re.Pattern) -> str:
    """The longest run of plain characters in ``pattern``'s outer sequence, which every match
    holds ('' under IGNORECASE): a detector is run only on a text that has it. npm's
    (``//.+/:_authToken=``) tried ``.+`` from each ``//``: 2.5 s on 24 KB of ``//``."""
    try:  # the stdlib's own parser (sre_parse), private: a Python without it runs every detector
        from re import _parser  # type: ignore[attr-defined]

        parsed = list(_parser.parse(pattern.pattern, pattern.flags))
    except (ImportError, AttributeError, TypeError, re.error):
        return ""
    if pattern.flags & re.IGNORECASE:
        return ""
    best, run = "", ""
    for op, arg in parsed:
        run = run + chr(arg) if op is _parser.LITERAL else ""
        best = max(best, run, key=len)
    return best


def _span(m: re.Match, text: str) -> tuple[int, int]:
    """The part of a detector's match that is the credential, to the end of its word."""
    start, end = m.span()
    groups = [i for i in range(1, (m.re.groups or 0) + 1) if m.group(i) and len(m.group(i)) >= MIN_GROUP]
    if groups:
        start, end = m.span(max(groups, key=lambda i: len(m.group(i))))
    return start, WORD_TAIL_RE.match(text, end).end()  # type: ignore[union-attr]


def _values(text: str) -> Iterator[str]:
    """Credential values the keyword and entropy detectors name (not positions)."""
    _, (keyword, groups), entropy = _detectors()
    for value in keyword.analyze_string(text, denylist_regex_to_group=groups):
        if f'"{value}"' not in text and f"'{value}'" not in text:  # unquoted: the value is one word
            value = (value.split() or [""])[0].rstrip(",;")
        if len(value) >= MIN_KEYWORD_VALUE and not NOT_A_VALUE_RE.fullmatch(value):
            yield value
    for plugin in entropy:
        for value in plugin.analyze_string(text):
            if plugin.calculate_shannon_entropy(value) > plugin.entropy_limit:
                yield value


def find(text: str) -> list[tuple[int, int]]:
    """The spans of ``text`` that hold credentials, sorted, not overlapping."""
    if len(text) < MIN_KEYWORD_VALUE:
        return []
    patterns, _, _ = _detectors()
    spans: list[tuple[int, int]] = []
    for regex in (*(p for p, needs in patterns if needs in text), *OWN_RULES):
        for m in (_jwt_matches(regex, text) if regex.pattern == JWT_PATTERN else regex.finditer(text)):
            if regex is OWN_RULES[-1] and NOT_A_KEY_RE.search(text, 0, m.start()):
                continue
            if regex is SETTING_RE and NOT_A_VALUE_RE.fullmatch(m["secret"]):
                continue
            spans.append(m.span("secret") if "secret" in regex.groupindex else _span(m, text))
    spans += _pem_spans(text)
    for value in set(_values(text)):
        spans += [(m.start(), m.end()) for m in re.finditer(rf"(?<![\w+/]){re.escape(value)}(?![\w+/])", text)]
    merged: list[tuple[int, int]] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _jwt_matches(regex: re.Pattern, text: str) -> Iterator[re.Match]:
    """``regex.finditer(text)`` for the JWT pattern, in linear time. A match needs a ``.`` right
    after the run of the class's characters that follows its ``eyJ`` (``.`` is not in the class), so
    where a start fails, every later ``eyJ`` inside the same run fails for the same reason: the
    search goes on from the run's end."""
    pos = 0
    while (start := text.find("eyJ", pos)) >= 0:
        m = regex.match(text, start)
        if m is not None:
            yield m
            pos = m.end()
        else:
            pos = max(start + 1, JWT_RUN_RE.match(text, start).end())


def _pem_spans(text: str) -> list[tuple[int, int]]:
    """The body lines of each PEM private key block in ``text``, and lone full key lines."""
    spans = [m.span("secret") for m in LONE_BODY_RE.finditer(text)] if len(text) >= 64 else []
    if "PRIVATE KEY-----" not in text:
        return spans
    spans += [m.span("secret") for m in PEM_ESCAPED_RE.finditer(text)]
    for begin in PEM_BEGIN_RE.finditer(text):
        at = text.find("\n", begin.end())
        at = at + 1 if at >= 0 else -1
        while at >= 0:
            line, after = _line_at(text, at)
            if PEM_END_RE.search(line):
                break
            body = PEM_BODY_RE.search(line)
            if body is None and after >= 0 and PEM_END_RE.search(_line_at(text, after)[0]):
                body = PEM_LAST_RE.search(line)
            if body is None and line.strip():
                break
            if body is not None:
                spans.append((at + body.start("secret"), at + body.end("secret")))
            at = after
    return spans


def _line_at(text: str, at: int) -> tuple[str, int]:
    """The line of ``text`` that starts at ``at``, and where the next one starts (-1: none)."""
    end = text.find("\n", at)
    return (text[at:end], end + 1) if end >= 0 else (text[at:], -1)


def key_lines(lines: dict[int, str]) -> set[int]:
    """The numbers of ``lines`` (a log's lines shown one by one) that are a private key's body:
    those next to a BEGIN line after it, or to an END line before it, up to the other end (the
    one right before an END line however short: a body's last line)."""
    found: set[int] = set()
    if not any("PRIVATE KEY-----" in line for line in lines.values()):
        return found
    for n, line in lines.items():
        for step, edge in ((1, PEM_BEGIN_RE), (-1, PEM_END_RE)):
            if edge.search(line):
                k = n + step
                while k in lines and not (PEM_BEGIN_RE.search(lines[k]) or PEM_END_RE.search(lines[k])):
                    last = PEM_END_RE.search(lines.get(k + 1, "")) and PEM_LAST_RE.search(lines[k])
                    if not (PEM_BODY_RE.search(lines[k]) or last) and lines[k].strip():
                        break
                    found.add(k)
                    k += step
    return found


def hide_body(line: str) -> tuple[int, int] | None:
    """The span of a key's body line to hide (after any prefix a log put before it)."""
    m = PEM_BODY_RE.search(line) or PEM_LAST_RE.search(line)
    return m.span("secret") if m else None
