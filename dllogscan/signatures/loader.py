"""Load, validate and compile the signature database (``signatures/*.toml``) into a ``Database``.

A set of files validated once (every pattern compiled, every example run) is remembered by content
hash (``cache.py``). Field types are checked first (``schema.py``); patterns from user files run
with a time budget and are tried on hostile lines at load (``probes.py``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from . import cache as sigcache, probes as sigprobe, schema as sigschema
from ..core.errors import SignatureError
from ..core.paths import PACKAGE_DIR
from .database import (B_SUBCLASS_PREFIXES, BUILTIN_CONDITIONS, CLASSES, CONDITION_KEYS, FIX_KEYS, KNOWN_KEYS,
                       PLACEHOLDER_RE, ROLES, PLATFORMS, SETTING_FACTS, SITUATIONS, SOURCE_KINDS, SUBCLASS_RE, Condition, Database, FixEntry, Signature, compile_pattern)


def default_dir() -> Path:
    """The shipped database: inside the wheel, or the repository's ``signatures/``."""
    here = PACKAGE_DIR
    for candidate in (here / "_signatures", here.parent / "signatures"):
        if candidate.is_dir():
            return candidate
    raise SignatureError(f"signature database not found next to {here}")


def _fail(origin: str, sig_id: str, msg: str) -> SignatureError:
    return SignatureError(f"{origin}: signature {sig_id!r}: {msg}")


def _conditions(raw: Any, origin: str, sig_id: str, name: str) -> tuple[Condition, ...]:
    out = []
    for cond in raw or ():
        if not isinstance(cond, dict) or set(cond) - CONDITION_KEYS or not cond.get("ids"):
            raise _fail(origin, sig_id, f"{name} entries need ids (and only ids/within/same): {cond!r}")
        out.append(Condition(tuple(cond["ids"]), int(cond.get("within", 0)), cond.get("same")))
    return tuple(out)


def _plain_placeholders(template: str) -> bool:
    """Whether every brace in ``template`` belongs to a placeholder a fix's command could hold
    (``PLACEHOLDER_RE``: ``{name}`` or ``{name|default}``) named like a fact, so none is left
    unfilled as written."""
    names = [m.group(1) for m in PLACEHOLDER_RE.finditer(template)]
    rest = PLACEHOLDER_RE.sub("", template)
    return "{" not in rest and "}" not in rest and all(name.isidentifier() for name in names)


def parse_signature(raw: dict[str, Any], origin: str, compile_now: bool = True,
                    user: bool = False) -> Signature:
    """Validate one raw TOML table and build a Signature; ``compile_now`` also compiles its
    pattern (a bad one is refused here), else it compiles on first use. ``user``: from a user's
    file, so its pattern runs with a time budget."""
    sig_id = str(raw.get("id", "<no id>"))
    unknown = set(raw) - KNOWN_KEYS
    if unknown:
        raise _fail(origin, sig_id, f"unknown keys {sorted(unknown)}")
    problem = sigschema.check_signature(raw)
    if problem:
        raise _fail(origin, sig_id, problem)
    for key in ("id", "class", "title", "role", "keywords", "pattern"):
        if not raw.get(key):
            raise _fail(origin, sig_id, f"missing or empty {key!r}")
    cls, role, sub = raw["class"], raw["role"], raw.get("subclass") or None
    if cls not in CLASSES:
        raise _fail(origin, sig_id, f"class {cls!r} not one of {CLASSES}")
    if role not in ROLES:
        raise _fail(origin, sig_id, f"role {role!r} not one of {ROLES}")
    if sub is not None and not SUBCLASS_RE.match(sub):
        raise _fail(origin, sig_id, f"subclass {sub!r} must be lower-case and hyphenated")
    if cls == "B" and sub and not sub.startswith(B_SUBCLASS_PREFIXES):
        raise _fail(origin, sig_id, f"class B subclass {sub!r} must start with oom, getitem or crash")
    kinds = tuple(raw.get("kinds", ()))
    if set(kinds) - set(SOURCE_KINDS):
        raise _fail(origin, sig_id, f"kinds {kinds} outside {SOURCE_KINDS}")
    keywords = tuple(raw["keywords"])
    if any(not isinstance(k, str) or not k or "\n" in k for k in keywords):
        raise _fail(origin, sig_id, "keywords must be non-empty one-line strings")
    compiled = None
    if compile_now:
        import regex  # noqa: PLC0415

        try:
            compiled = compile_pattern(raw["pattern"], raw.get("flags", ""))
        except regex.error as exc:
            raise _fail(origin, sig_id, f"pattern does not compile: {exc}") from None
    alone = raw.get("alone", True)
    if isinstance(alone, dict):
        import re  # noqa: PLC0415 - plain patterns over fact values; keeps `regex` off start-up

        try:
            alone = {k: re.compile(v) for k, v in alone.items()}
        except (re.error, TypeError) as exc:
            raise _fail(origin, sig_id, f"alone: bad fact pattern: {exc}") from None
    elif not isinstance(alone, bool):
        raise _fail(origin, sig_id, "alone must be true, false or a table of fact patterns")
    weight = float(raw.get("weight", 0.9))
    if not 0.0 <= weight <= 1.0:
        raise _fail(origin, sig_id, f"weight {weight} outside [0, 1]")
    canonical = raw.get("canonical", False)
    if not isinstance(canonical, bool) or (canonical and (role != "failure" or weight < 0.5)):
        raise _fail(origin, sig_id, "canonical must be true or false, and true only for a failure of weight >= 0.5")
    once = raw.get("once", False)
    if not isinstance(once, bool) or (once and role != "fact"):
        raise _fail(origin, sig_id, "once must be true or false, and true only for a fact")
    lead = raw.get("lead", "")
    if lead and not _plain_placeholders(lead):
        raise _fail(origin, sig_id, "lead may hold only {name} or {name|default} placeholders (a fact's name, or line)")
    variant_of = raw.get("variant_of")
    if variant_of is not None and (not isinstance(variant_of, str) or variant_of == sig_id):
        raise _fail(origin, sig_id, "variant_of must name another entry's id")
    sig = Signature(
        id=sig_id, cls=cls, subclass=sub, title=raw["title"], role=role, keywords=keywords,
        pattern=raw["pattern"], flags=raw.get("flags", ""), weight=weight,
        priority=int(raw.get("priority", 50)), kinds=kinds, since=str(raw.get("since", "")),
        until=str(raw.get("until", "")), source=raw.get("source", ""),
        examples=tuple(raw.get("examples", ())), counter_examples=tuple(raw.get("counter_examples", ())),
        refines=raw.get("refines"), link=raw.get("link"),
        linked_weight=float(raw["linked_weight"]) if "linked_weight" in raw else None,
        absorbs=tuple(raw.get("absorbs", ())), absorb_within=int(raw.get("absorb_within", 120)),
        requires=_conditions(raw.get("requires"), origin, sig_id, "requires"),
        excludes=_conditions(raw.get("excludes"), origin, sig_id, "excludes"),
        capture_after=int(raw.get("capture_after", 0)), alone=alone, canonical=canonical,
        variant_of=variant_of, origin=origin,
        user=user, lead=lead, once=once,
    )
    if compiled is not None:
        # what cached_property would store
        sig.__dict__["compiled"] = sigprobe.BudgetedPattern(compiled) if user else compiled
    return sig


def parse_fix(raw: dict[str, Any], origin: str) -> FixEntry:
    """Validate one ``[[fix]]`` table."""
    key = str(raw.get("key", "<no key>"))
    unknown = set(raw) - FIX_KEYS
    if unknown:
        raise SignatureError(f"{origin}: fix {key!r}: unknown keys {sorted(unknown)}")
    problem = sigschema.check_fix(raw)
    if problem:
        raise SignatureError(f"{origin}: fix {key!r}: {problem}")
    for name in ("key", "title", "why"):
        if not raw.get(name):
            raise SignatureError(f"{origin}: fix {key!r}: missing or empty {name!r}")
    when = raw.get("when")
    if when is not None and when not in SITUATIONS:
        raise SignatureError(f"{origin}: fix {key!r}: when {when!r} is none of {', '.join(sorted(SITUATIONS))}")
    platform = raw.get("platform")
    if platform is not None and platform not in PLATFORMS:
        raise SignatureError(f"{origin}: fix {key!r}: platform {platform!r} is none of {', '.join(sorted(PLATFORMS))}")
    already = tuple((fact, tuple(v.lower() for v in ([values] if isinstance(values, str) else values)))
                    for fact, values in sorted((raw.get("already") or {}).items()))
    if unnamed := [fact for fact, _ in already if fact not in SETTING_FACTS]:
        raise SignatureError(f"{origin}: fix {key!r}: already names {', '.join(unnamed)}, which is no loader setting ({', '.join(sorted(SETTING_FACTS))})")
    return FixEntry(key=key, rank=int(raw.get("rank", 99)), title=raw["title"], why=raw["why"],
                    commands=tuple(raw.get("commands", ())), code=raw.get("code"), when=when, platform=platform,
                    already=already)


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise SignatureError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _parse_toml(path: Path, data: bytes) -> dict[str, Any]:
    import tomllib  # noqa: PLC0415 - a start with a validated cache entry never parses TOML

    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SignatureError(f"{path}: invalid TOML: {exc}") from None


def check_examples(sig: Signature) -> None:
    """Each example matches and holds a keyword; no counter-example matches; a user's pattern
    also stays within its time budget on hostile lines built from the examples."""
    pattern = getattr(sig.compiled, "pattern", sig.compiled) if sig.user else sig.compiled
    timeout = sigprobe.PROBE_BUDGET_S if sig.user else None
    for ex in sig.examples:
        if not any(k in ex for k in sig.keywords):
            raise _fail(sig.origin, sig.id, f"example holds none of the keywords: {ex!r}")
        if not _search(sig, pattern, ex, timeout):
            raise _fail(sig.origin, sig.id, f"example does not match: {ex!r}")
    for ex in sig.counter_examples:
        if _search(sig, pattern, ex, timeout):
            raise _fail(sig.origin, sig.id, f"counter-example matches: {ex!r}")
    if sig.user:
        problem = sigprobe.probe(pattern, sig.examples, sig.keywords)
        if problem:
            raise _fail(sig.origin, sig.id, problem)


def _search(sig: Signature, pattern: Any, text: str, timeout: float | None) -> Any:
    try:
        return pattern.search(text, timeout=timeout)
    except TimeoutError:
        raise _fail(sig.origin, sig.id, f"pattern runs past its {timeout:g} s budget on the line {text[:80]!r}") from None


def load_database(extra: Iterable[str | Path] = (), base: Path | None = None,
                  include_default: bool = True) -> Database:
    """Load the shipped database plus user files; refuse it whole if any entry is bad."""
    paths: list[Path] = []
    if include_default:
        paths += sorted((base or default_dir()).glob("*.toml"))
    shipped = len(paths)
    for item in extra:
        p = Path(item)
        if not p.exists():
            raise SignatureError(f"{p}: signature file not found")
        paths += sorted(p.glob("*.toml")) if p.is_dir() else [p]
    contents = [_read_bytes(path) for path in paths]
    cache_key = sigcache.key([(str(path), data) for path, data in zip(paths, contents)])
    parsed = sigcache.load(cache_key)
    validated = parsed is not None and len(parsed) == len(paths)
    if not validated:
        parsed = [_parse_toml(path, data) for path, data in zip(paths, contents)]
    sigs: list[Signature] = []
    fixes: list[FixEntry] = []
    seen: dict[str, str] = {}
    for index, (path, data) in enumerate(zip(paths, parsed)):
        unknown = set(data) - {"signature", "fix"}
        if unknown:
            raise SignatureError(f"{path}: unknown top-level tables {sorted(unknown)}")
        problem = sigschema.check_file(data)
        if problem:
            raise SignatureError(f"{path}: {problem}")
        for raw in data.get("signature", []):
            sig = parse_signature(raw, str(path.name), compile_now=not validated, user=index >= shipped)
            if sig.id in seen:
                raise _fail(path.name, sig.id, f"duplicate id (also in {seen[sig.id]})")
            seen[sig.id] = path.name
            if not validated:
                check_examples(sig)
            sigs.append(sig)
        fixes += [parse_fix(raw, path.name) for raw in data.get("fix", [])]
    by_id = {sig.id: sig for sig in sigs}
    for sig in sigs:
        for cond in sig.requires + sig.excludes:
            for ref in cond.ids:
                if not ref.endswith("*") and ref not in BUILTIN_CONDITIONS and ref not in seen:
                    raise _fail(sig.origin, sig.id, f"condition names unknown signature {ref!r}")
        if sig.variant_of is not None:
            varied = by_id.get(sig.variant_of)
            if varied is None or varied.cls != sig.cls or varied.variant_of is not None:
                raise _fail(sig.origin, sig.id, f"variant_of names no entry of class {sig.cls} to vary: {sig.variant_of!r}")
    if not validated:
        sigcache.store(cache_key, parsed)
    return Database(signatures=sigs, fixes=fixes)
