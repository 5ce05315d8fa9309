"""The on-disk compile cache: authenticated, bounded, safe against corruption and
concurrent use.

Entries live under ``MYC_CACHE_DIR`` (default ``$XDG_CACHE_HOME/myc`` or
``~/.cache/myc``), one file per entry named by the hash of everything the entry depends
on (the caller's key already covers the program, the signature and the CPU; the myc,
llvmlite and NumPy versions are added here).  ``MYC_CACHE_DIR=off`` disables the cache.

An entry is a pickle holding machine code that is run as it is, so whoever can write an
entry can run code in every process that reads it.  Hence:

* every entry carries an HMAC-SHA256 of its name, header and body, keyed by a per-user
  secret kept *outside* the cache directory (:mod:`myc.support.cachekey`); the HMAC is
  checked (``hmac.compare_digest``) before anything is unpickled, so an entry written by
  anyone without the key -- forged, flipped, truncated -- is a miss, removed and rebuilt;
* a cache directory owned by another user, or writable by group or others, is refused
  with one warning and the cache is off for the process;
* only regular files are read, opened without following links and without blocking (a
  FIFO or a device in the directory is skipped, never waited on).

A file is written to a temporary name and renamed into place, so readers never see half
an entry and two processes writing the same entry both leave a complete one.  The
directory is kept under ``MYC_CACHE_MAX`` bytes (default ``500M``; suffixes K, M, G;
``0`` or ``none``: no bound) by removing the least recently used entries
(:mod:`myc.support.cacheprune`).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import importlib.util
import os
import pickle
import re
import stat
import tempfile
import warnings
from pathlib import Path
from typing import Any

import llvmlite
import numpy as np

from myc.timings import timed

_MAGIC = b"MYC3"
_MAC = 64  # hex characters of the entry's HMAC-SHA256
_KINDS_MODE = 0o700


def _mac(key: bytes, name: str, header: bytes, body: bytes) -> bytes:
    """The entry's authentication tag: it binds the body to this file's name (an entry
    copied under another key's name is refused) and to the versions in the header."""
    m = hmac.new(key, name.encode() + b"\0" + header + b"\0", hashlib.sha256)
    m.update(body)
    return m.hexdigest().encode()


def _configured() -> Path | None:
    d = os.environ.get("MYC_CACHE_DIR")
    if d == "off":
        return None
    if d:
        return Path(d)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "myc"


_refused: dict[str, str] = {}  # directory -> why it is not used (warned once)
_accepted: set[str] = set()


def cache_dir() -> Path | None:
    """The cache directory, or ``None`` when the cache is off (``MYC_CACHE_DIR=off``, or
    the directory or the key is unsafe: then a warning said why, once)."""
    d = _configured()
    if d is None:
        return None
    s = str(d)
    if s in _accepted:
        return d
    if s in _refused:
        return None
    why = _check_dir(d, create=True)
    if why is None:
        from myc.support.cachekey import cache_key

        try:
            cache_key()
        except OSError as exc:
            why = f"its key cannot be read or created ({exc})"
    if why is not None:
        from myc.support.caller import user_stacklevel

        _refused[s] = why
        warnings.warn(f"myc: the disk cache {s} is not used: {why}; compiling without it",
                      RuntimeWarning, stacklevel=user_stacklevel())
        return None
    _accepted.add(s)
    return d


def _check_dir(d: Path, create: bool) -> str | None:
    """Why ``d`` must not hold this user's cache, or ``None`` when it may."""
    try:
        if create and not os.path.lexists(d):
            d.mkdir(mode=_KINDS_MODE, parents=True, exist_ok=True)
        st = os.stat(d)
    except OSError as exc:
        return f"it cannot be created or read ({exc.strerror or exc})"
    return unsafe(st, "directory")


def unsafe(st: os.stat_result, what: str) -> str | None:
    """Why a file or directory with this status is not trusted: not ours, or writable by
    group or others (anyone else could then replace what it holds)."""
    if what == "directory" and not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    if st.st_uid != os.geteuid():
        return f"it is owned by another user (uid {st.st_uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"it is writable by group or others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


@functools.cache
def _version() -> str:
    """myc's version and a stamp of its source (entries from other code are stale),
    llvmlite's, NumPy's and SciPy's versions (NumPy and SciPy functions called on static
    arguments run at compile time, their results constants of the cached programs).

    The stamp hashes each source file's path, size and modification time (what
    Python's own bytecode cache trusts) rather than its bytes: a fresh process pays a
    directory walk, not a read of every file, on its first cache access.
    """
    from myc.support.version import __version__

    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for rel, size, mtime in sorted(_sources(str(root), "")):
        h.update(f"{rel}\0{size}\0{mtime}\n".encode())
    return (f"myc {__version__} {h.hexdigest()[:16]}; llvmlite {llvmlite.__version__}; "
            f"numpy {np.__version__}; scipy {scipy_version()}")


def scipy_version() -> str:
    """SciPy's version as its ``version.py`` states it, read without importing SciPy (an
    import costs most of a second; ``importlib.metadata`` half of one); ``none`` when
    SciPy is not installed."""
    spec = importlib.util.find_spec("scipy")
    if spec is None or not spec.submodule_search_locations:
        return "none"
    for d in spec.submodule_search_locations:
        try:
            text = (Path(d) / "version.py").read_text()
        except OSError:
            continue
        m = re.search(r"^version\s*=\s*[\"']([^\"']+)", text, re.M)
        if m:
            return m.group(1)
    return "unknown"


def _sources(top: str, rel: str) -> list[tuple[str, int, int]]:
    """``(relative path, size, mtime_ns)`` of every ``.py`` file under ``top``."""
    out = []
    with os.scandir(top) as it:
        for e in it:
            if e.is_dir(follow_symlinks=False):
                if e.name != "__pycache__":
                    out += _sources(e.path, f"{rel}{e.name}/")
            elif e.name.endswith(".py"):
                st = e.stat()
                out.append((rel + e.name, st.st_size, st.st_mtime_ns))
    return out


def _path(kind: str, key: str) -> Path | None:
    d = cache_dir()
    if d is None:
        return None
    digest = hashlib.sha256(f"{_version()}\n{kind}\n{key}".encode()).hexdigest()
    return d / kind / f"{digest}.pkl"


def _read_regular(path: Path) -> bytes | None:
    """The bytes of ``path`` if it is a regular file (no link followed, never blocking
    on a FIFO or a device), else ``None``."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | \
        getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None  # absent, a symbolic link (ELOOP), unreadable
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        chunks = []
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            chunks.append(b)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _discard(path: Path) -> None:
    """Remove a bad entry -- only a regular file or a link (never wait on a FIFO)."""
    try:
        st = os.lstat(path)
        if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
            path.unlink()
    except OSError:
        pass


@timed("disk cache")
def load(kind: str, key: str) -> Any:
    """The cached value, or ``None`` when absent, unreadable, forged, corrupt or stale."""
    path = _path(kind, key)
    if path is None:
        return None
    data = _read_regular(path)
    if data is None:
        return None
    from myc.support.cachekey import cache_key

    try:
        if not data.startswith(_MAGIC):
            raise ValueError("bad header")
        header, _, rest = data[len(_MAGIC):].partition(b"\n")
        if header.decode() != _version():
            raise ValueError("stale entry")
        tag, body = rest[:_MAC], rest[_MAC + 1:]
        # authenticate before unpickling: nothing from an unauthenticated file is run
        if not hmac.compare_digest(tag, _mac(cache_key(), path.name, header, body)):
            raise ValueError("entry not authenticated")
        value = pickle.loads(body)
    except Exception:  # noqa: BLE001 - any damage means: rebuild
        _discard(path)
        return None
    from myc.support.cacheprune import touch

    touch(path)
    return value


@timed("disk cache")
def store(kind: str, key: str, value: Any) -> None:
    """Write an entry atomically; failures (read-only disk, disk full...) are skipped:
    an entry we cannot write is simply not cached."""
    path = _path(kind, key)
    if path is None:
        return
    from myc.support.cachekey import cache_key

    try:
        d = path.parent
        if not os.path.lexists(d):
            d.mkdir(mode=_KINDS_MODE, parents=True, exist_ok=True)
        why = unsafe(os.lstat(d), "directory")
        if why is not None:
            return  # someone else's subdirectory: do not write into it
        body = pickle.dumps(value, protocol=4)
        header = _version().encode()
        payload = b"".join([_MAGIC, header, b"\n", _mac(cache_key(), path.name, header, body),
                            b"\n", body])
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(payload)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except Exception:  # noqa: BLE001 - an entry we cannot write is simply not cached
        return
    from myc.support.cacheprune import wrote

    wrote(path.parent.parent, len(payload))
