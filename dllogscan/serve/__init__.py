"""``dllogscan serve``: a local triage page and its JSON API (needs the ``serve`` extra)."""
