"""Scan: find signature hits in a stream, in rounds, without loading the whole input. The engine
(``scanner``), the literal prefilters (``prefilter``: Hyperscan, Aho-Corasick, or ``probe`` in pure
Python; ``anchors``), the per-line screens and memo (``screen``, ``linememo``) and the split of a
large file over processes (``parallel``).

May import: ``core``, ``sources``, ``normalize``, ``signatures``.
"""
