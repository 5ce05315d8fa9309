"""The on-disk compile cache: safe against corruption and concurrent use.

Entries live under ``MYC_CACHE_DIR`` (default ``$XDG_CACHE_HOME/myc`` or
``~/.cache/myc``), one file per entry named by the hash of everything the entry depends
on (the caller's key already covers the program, the signature and the CPU; the myc,
llvmlite and NumPy versions are added here).  A file is written to a temporary name
and renamed into place, so readers never see half an entry and two processes writing
the same entry both leave a complete one.  An entry that cannot be read or unpickled,
whose header does not match or whose checksum does not, is ignored (and removed) and
the caller rebuilds it.
``MYC_CACHE_DIR=off`` disables the cache.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any

import llvmlite
import numpy as np

from myc.timings import timed

_MAGIC = b"MYC2"
_DIGEST = 32  # hex characters of the body's checksum


def _digest(body: bytes) -> bytes:
    """The body's checksum: an entry holds machine code that is run as it is, so a
    flipped byte must make the entry be rebuilt, not crash the process."""
    return hashlib.blake2b(body, digest_size=_DIGEST // 2).hexdigest().encode()


def cache_dir() -> Path | None:
    d = os.environ.get("MYC_CACHE_DIR")
    if d == "off":
        return None
    if d:
        return Path(d)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "myc"


@functools.cache
def _version() -> str:
    """myc's version and a stamp of its source (entries from other code are stale),
    llvmlite's and NumPy's versions.

    The stamp hashes each source file's path, size and modification time (what
    Python's own bytecode cache trusts) rather than its bytes: a fresh process pays a
    directory walk, not a read of every file, on its first cache access.
    """
    from myc import __version__

    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for rel, size, mtime in sorted(_sources(str(root), "")):
        h.update(f"{rel}\0{size}\0{mtime}\n".encode())
    return (f"myc {__version__} {h.hexdigest()[:16]}; llvmlite {llvmlite.__version__}; "
            f"numpy {np.__version__}")


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


@timed("disk cache")
def load(kind: str, key: str) -> Any:
    """The cached value, or ``None`` when absent, unreadable, corrupt or stale."""
    path = _path(kind, key)
    if path is None:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        if not data.startswith(_MAGIC):
            raise ValueError("bad header")
        header, _, rest = data[len(_MAGIC):].partition(b"\n")
        if header.decode() != _version():
            raise ValueError("stale entry")
        digest, body = rest[:_DIGEST], rest[_DIGEST + 1:]
        if digest != _digest(body):
            raise ValueError("damaged entry")
        return pickle.loads(body)
    except Exception:  # noqa: BLE001 - any damage means: rebuild
        try:
            path.unlink()
        except OSError:
            pass
        return None


@timed("disk cache")
def store(kind: str, key: str, value: Any) -> None:
    """Write an entry atomically; failures (read-only disk, ...) are silently skipped."""
    path = _path(kind, key)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        body = pickle.dumps(value, protocol=4)
        payload = _MAGIC + _version().encode() + b"\n" + _digest(body) + b"\n" + body
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
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
