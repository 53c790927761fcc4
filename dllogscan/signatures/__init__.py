"""The signature database: the data model (``database``), the TOML schema (``schema``), the
literal probes each pattern is found by (``probes``) and the cache of a validated set (``cache``).
The signatures themselves are data, in the repository's ``signatures/*.toml``.

May import: ``core``.
"""
