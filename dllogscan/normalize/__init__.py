"""Normalize: bytes to clean text lines. Encodings other than UTF-8 (``encoding``), and the
line clean-up every scan shares: control characters, timestamps and cluster prefixes (``lines``);
Unicode blanks and invisible characters folded in the raw bytes before the keyword search
(``blanks``).

May import: ``core``.
"""
