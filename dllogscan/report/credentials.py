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
- ours: Hugging Face tokens (``hf_`` + 30 letters or digits), the credential after
  ``Authorization: Bearer|Token|Basic``, and a lone 40-character hex string (an API key) unless a
  word just before it says it is a commit, hash or digest.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterator

MIN_GROUP = 8
MIN_KEYWORD_VALUE = 4
WORD_TAIL_RE = re.compile(r"[A-Za-z0-9_-]*")
OWN_RULES = (
    re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}"),
    re.compile(r"(?i)\bauthorization\b[\"']?\s*[:=]\s*[\"']?(?:bearer|token|basic)\s+([A-Za-z0-9._~+/=-]{8,})"),
    re.compile(r"(?i)\b(?:bearer)\s+([A-Za-z0-9._~+/-]{20,}=*)"),
    re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{40}(?![0-9A-Za-z])"),
)
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
            spans.append(_span(m, text))
    for value in set(_values(text)):
        spans += [(m.start(), m.end()) for m in re.finditer(rf"(?<![\w+/]){re.escape(value)}(?![\w+/])", text)]
    merged: list[tuple[int, int]] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged
