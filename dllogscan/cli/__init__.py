"""The command line, the top of the house. ``fast`` is the entry point: a plain
``dllogscan FILE`` runs there without typer; everything else goes to the typer app (``app``), which
registers ``commands/*``. ``output`` holds the exit codes and the writers every command shares,
``checks`` the option checks, ``options`` the shared option types and the deprecated spellings,
``explain`` the body of ``dllogscan explain``.

May import: anything in dllogscan. Nothing imports it (but ``__main__``).
"""
