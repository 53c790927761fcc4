"""Shared vocabulary of every stage: the result types (``models``), the errors, safe printing of
untrusted text (``printable``, ``names``) and where files live (``paths``).

May import: nothing from dllogscan. Everything else may import it.
"""
