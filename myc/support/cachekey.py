"""The per-user secret that authenticates disk-cache entries.

It lives outside the cache directory -- ``MYC_CACHE_KEY_FILE``, else
``$XDG_CONFIG_HOME/myc/cache-key``, else ``~/.config/myc/cache-key`` -- so that write
access to a cache directory (a shared one, a team's) is not enough to forge an entry.
It is 32 random bytes, created once with mode 0600 and published atomically (written to
a private temporary file, then hard-linked to its name: two processes creating it at
once agree on one key).  A key file that is not a regular file, is owned by another
user, or is readable or writable by group or others is refused (``OSError``); the cache
is then off.
"""

from __future__ import annotations

import os
import stat
import tempfile
import threading
from pathlib import Path

_KEY_BYTES = 32
_keys: dict[str, bytes] = {}
_lock = threading.Lock()


def key_path() -> Path:
    p = os.environ.get("MYC_CACHE_KEY_FILE")
    if p:
        return Path(p)
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "myc" / "cache-key"


def cache_key() -> bytes:
    """The secret, read (or created) once per process and key file."""
    path = key_path()
    s = str(path)
    k = _keys.get(s)
    if k is None:
        with _lock:
            k = _keys.get(s)
            if k is None:
                k = _keys[s] = _read_or_create(path)
    return k


def _read_or_create(path: Path) -> bytes:
    for _ in range(3):
        k = _read(path)
        if k is not None:
            return k
        _create(path)
    raise OSError(f"cannot create the cache key {path}")


def _read(path: Path) -> bytes | None:
    """The key, ``None`` when absent; ``OSError`` when present but unsafe."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | \
        getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"the cache key {path} is not a regular file")
        if st.st_uid != os.geteuid():
            raise OSError(f"the cache key {path} is owned by another user")
        if st.st_mode & 0o077:
            raise OSError(f"the cache key {path} is accessible to group or others "
                          f"(mode {stat.S_IMODE(st.st_mode):o}; it must be 600)")
        k = os.read(fd, 4 * _KEY_BYTES)
    finally:
        os.close(fd)
    if len(k) < _KEY_BYTES:
        raise OSError(f"the cache key {path} is too short ({len(k)} bytes)")
    return k


def _create(path: Path) -> None:
    d = path.parent
    d.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".cache-key-")  # mode 0600
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, os.urandom(_KEY_BYTES))  # (what ``secrets`` reads)
        os.fsync(fd)
        os.close(fd)
        fd = -1
        try:
            os.link(tmp, path)  # atomic, and never replaces a key another process made
        except FileExistsError:
            pass
        except OSError:  # no hard links here: exclusive creation, then the bytes
            _create_exclusive(path, tmp)
    finally:
        if fd >= 0:
            os.close(fd)
        os.unlink(tmp)


def _create_exclusive(path: Path, tmp: str) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    try:
        with open(tmp, "rb") as f:
            os.write(fd, f.read())
        os.fsync(fd)
    finally:
        os.close(fd)
