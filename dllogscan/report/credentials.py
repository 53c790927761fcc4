"""Credentials in log text, for ``--redact``: detect-secrets' detectors (Yelp/detect-secrets, a
plain dependency, imported only when redacting) plus the few token shapes it lacks.

Rules (``find``: the spans of ``text`` to hide):
- every regex detector detect-secrets ships (AWS key ids, GitHub, GitLab, Slack, Stripe, OpenAI,
  PyPI, npm, JWT, basic auth in URLs, ...): its pattern's longest group of 8+ characters, else
  the whole match, stretched to the end of the word (detect-secrets' JWT pattern stops before the
  signature);
- its keyword detector in the config-file form (``password=...``, ``api_key: ...``,
  ``WANDB_API_KEY=...``), for values of 4+ characters (an unquoted value is its first word);
- its high-entropy detectors on quoted strings (base64 above 4.5 bits, hex above 3.0);
- ours: Hugging Face tokens (``hf_`` + 30 letters or digits), GitHub's fine-grained tokens
  (``github_pat_``), the credential after ``Authorization: Bearer|Token|Basic``, a cookie header's
  value, a lone 40-character hex string (an API key) unless a word just before it says it is a
  commit, hash or digest; and the value of a setting whose name ends in a credential word
  (``GITHUB_TOKEN=...``, ``--password hunter22``, ``--hf-token=...``, a URL's ``?token=`` or
  ``&sig=``, an ``X-Amz-Signature``), where that value is no placeholder (``<pad>``, ``$TOKEN``,
  ``***``) and no bare number (``max_token=512``). Where a rule names its ``secret`` group, only
  that group is hidden.
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
    return tuple(patterns), (KeywordDetector(), CONFIG_DENYLIST_REGEX_TO_GROUP), tuple(entropy)


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
        if len(value) >= MIN_KEYWORD_VALUE:
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
    for regex in (*patterns, *OWN_RULES):
        for m in regex.finditer(text):
            if regex is OWN_RULES[-1] and NOT_A_KEY_RE.search(text, 0, m.start()):
                continue
            if regex is SETTING_RE and NOT_A_VALUE_RE.fullmatch(m["secret"]):
                continue
            spans.append(m.span("secret") if "secret" in regex.groupindex else _span(m, text))
    for value in set(_values(text)):
        spans += [(m.start(), m.end()) for m in re.finditer(rf"(?<![\w+/]){re.escape(value)}(?![\w+/])", text)]
    merged: list[tuple[int, int]] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged
