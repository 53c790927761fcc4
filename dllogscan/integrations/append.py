"""Append to (or read) a file the job's user named, from an epilog that may run as root.

Rules:
- the job chose the path (``#SBATCH -e``) and owns the folder it lies in, so as root a plain
  ``open(path, "a")`` would follow a symbolic link the job left there (to ``/etc/profile.d``, a
  cron file) or open a device it named (``-e /dev/watchdog``);
- the folder is opened first and held, the name in it is looked at without following it, and only
  a regular file is opened (no link followed, no blocking on a FIFO), checked to be the same file;
- as root, the file must also belong to the job's user (``UserId=alice(1000)``, or sacct's user
  name looked up): root then writes only where the user could have written;
- the epilog as root reads the job's output files the same way (``open_checked``): it reads only
  a file the job's user owns, nothing a link points it at (``/etc/shadow``), no device.
"""
from __future__ import annotations

import os
import re
import stat

USER_ID_RE = re.compile(r"\((\d+)\)\s*$")
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)


def user_uid(user: str) -> int | None:
    """The uid of scontrol's ``alice(1000)`` or sacct's ``alice``; None when it cannot be told."""
    m = USER_ID_RE.search(user)
    if m:
        return int(m.group(1))
    try:
        import pwd

        return pwd.getpwnam(user.strip()).pw_uid if user.strip() else None
    except (ImportError, KeyError):
        return None


def _refusal(st: os.stat_result, owner: int | None) -> str | None:
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if os.geteuid() == 0 and st.st_uid != owner:
        whose = "the job's user is unknown" if owner is None else f"not the job's user (uid {owner})"
        return f"owned by uid {st.st_uid}, {whose}"
    return None


def open_checked(path: str, flags: int, owner: int | None) -> tuple[int | None, str | None]:
    """``(fd, None)``: the existing regular file ``path`` opened with ``flags``, its name not followed
    where it is a link, the file checked to be the one looked at (as root: one ``owner`` owns);
    else ``(None, why)``."""
    folder, name = os.path.split(path)
    try:
        dir_fd = os.open(folder or ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        return None, exc.strerror or str(exc)
    try:
        try:
            before = os.lstat(name, dir_fd=dir_fd)
        except OSError as exc:
            return None, exc.strerror or str(exc)
        why = "a symbolic link" if stat.S_ISLNK(before.st_mode) else _refusal(before, owner)
        if why:
            return None, why
        try:
            fd = os.open(name, flags | NOFOLLOW, dir_fd=dir_fd)
        except OSError as exc:
            return None, exc.strerror or str(exc)
        now = os.fstat(fd)
        why = "it was replaced while being opened" if (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino) \
            else _refusal(now, owner)
        if why:
            os.close(fd)
            return None, why
        return fd, None
    finally:
        os.close(dir_fd)


def append(path: str, text: str, owner: int | None) -> str | None:
    """Append ``text`` to the existing regular file ``path``; why not, or None once written."""
    fd, why = open_checked(path, os.O_WRONLY | os.O_APPEND, owner)
    if fd is None:
        return why
    with os.fdopen(fd, "a", encoding="utf-8") as fh:
        fh.write(text)
    return None
