"""Typed errors that the CLI turns into one stderr line and a documented exit code."""
from __future__ import annotations


class DllogscanError(Exception):
    """Base of every error dllogscan reports to the user in one line."""

    exit_code = 2


class SourceError(DllogscanError):
    """An input could not be opened or read (missing, unreadable, corrupt compression)."""


class SignatureError(DllogscanError):
    """The signature database is invalid; the message names the file and the entry."""


class UsageError(DllogscanError):
    """The command line asks for something that cannot be done."""
