"""Reading a checkout's file as what it is when opened, not when it was looked at.

A checkout is the repository's to shape, and it can change while a sync reads it: a path
checked as a regular file inside the checkout can be a FIFO (opening it blocks forever) or a
symlink to /etc/passwd a moment later. So the file is opened first, without blocking, and
what was opened is checked: a regular file, and (where /proc tells) one inside the checkout.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


class NotReadable(ValueError):
    """The opened file is not one a sync may read; the message says why."""


def read_inside(root: Path, path: Path, limit: int, *, follow: bool = True) -> tuple[bytes, str | None]:
    """At most `limit` bytes of the regular file at `path`, and its real path relative to
    `root` (resolved; None where the system cannot tell). `follow=False` refuses a symlink outright.
    Raises NotReadable, or OSError when it cannot be opened."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        if not follow and error.errno == errno.ELOOP:
            raise NotReadable("a symlink") from None
        raise
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise NotReadable("not a regular file")
        real = _real_relative(root, descriptor)
        data = handle.read(limit)
    return data, real


def _real_relative(root: Path, descriptor: int) -> str | None:
    try:
        real = Path(os.readlink(f"/proc/self/fd/{descriptor}"))
    except OSError:  # no /proc: the checks made before opening stand alone
        return None
    if not real.is_relative_to(root):
        raise NotReadable("points outside the checkout")
    return real.relative_to(root).as_posix()
