"""Normalize: bytes to clean text lines. Encodings other than UTF-8 (``encoding``), and the
line clean-up every scan shares: control characters, timestamps and cluster prefixes (``lines``).

May import: ``core``.
"""
