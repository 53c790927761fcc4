"""Scan: find signature hits in a stream, in rounds, without loading the whole input. The
streaming rounds (``scanner``), one line's matching (``matcher``), what a scan produces and the
line helpers (``output``), the sizes and caps (``limits``), the literal prefilters (``prefilter``:
Hyperscan, Aho-Corasick, or ``probe`` in pure Python, all searching the ``anchors``), the per-line
screens and memo (``screen``, ``linememo``), the test of keyword positions that lead nowhere
(``deadlines``) and the split of a large file over processes (``parallel``).

May import: ``core``, ``sources``, ``normalize``, ``signatures``.
"""
