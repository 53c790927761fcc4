"""Advise: the ranked fixes and the commands that confirm the cause, filled in with the facts
found (``fixes``), and the one next check when nothing is diagnosed (``next_check``).

May import: ``core``, ``signatures``.
"""
