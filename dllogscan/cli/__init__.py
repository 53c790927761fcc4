"""The command line, the top of the house. ``fast`` is the entry point: a plain
``dllogscan FILE`` or ``dllogscan batch PATH`` runs there without typer (the batch's body is
``batch_run``, shared with the typer command); everything else goes to the typer app (``app``),
which registers ``commands/*``. ``output`` holds the exit codes and the writers every command
shares, ``checks`` the option checks and the deprecation line, ``options`` the shared option types,
``explain`` the body of ``dllogscan explain``, ``kubectl`` the kubectl plugin's entry.

May import: anything in dllogscan. Nothing imports it (but ``__main__``).
"""
