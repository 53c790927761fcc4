"""``dllogscan serve``: a local triage page and its JSON API (needs the ``serve`` extra).

A way in. May import: the stages, ``pipeline`` and ``triage``; not ``cli``.
"""
