"""CLI commands beyond ``scan``: one module each, with ``register(app)``.

``dllogscan.cli.app`` discovers every module here, so a new command needs no edit elsewhere.
Modules import only typer at import time; their work is imported inside the command.
"""
