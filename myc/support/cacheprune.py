"""Keeping the disk cache under ``MYC_CACHE_MAX`` bytes, least recently used first.

A process that writes entries checks the directory's size on its first write and then
each time it has written an eighth of the bound; over seven eighths, it removes entries by
last use (the access time, which a read sets explicitly, whatever the mount's atime
policy; the modification time when later) until the cache is at two thirds of the
bound, so that pruning is rare.  Entries of other myc versions are never read, so they
age out first.  Temporary files left by a killed writer are removed after an hour.
Several processes may prune at once: a file already gone is simply skipped.
"""

from __future__ import annotations

import os
import re
import stat
import threading
import time
from pathlib import Path

DEFAULT_MAX = 500 * 2**20
_STALE_TMP_S = 3600.0
_UNITS = {"": 1, "B": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}

_written: dict[str, int] = {}  # cache directory -> bytes written since its last check
_lock = threading.Lock()


def max_bytes() -> int | None:
    """``MYC_CACHE_MAX`` in bytes (``"500M"``, ``"2G"``, ``"1048576"``); ``None``: no
    bound (``0``, ``none``, ``off``).  A value that does not parse is the default."""
    v = os.environ.get("MYC_CACHE_MAX", "").strip().upper()
    if not v:
        return DEFAULT_MAX
    if v in ("0", "NONE", "OFF", "UNLIMITED"):
        return None
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]?)I?B?", v)
    if m is None:
        return DEFAULT_MAX
    return int(float(m.group(1)) * _UNITS[m.group(2)])


def touch(path: Path) -> None:
    """Record a use of ``path`` (its access time; the modification time stays)."""
    try:
        st = os.lstat(path)
        os.utime(path, ns=(time.time_ns(), st.st_mtime_ns), follow_symlinks=False)
    except OSError:
        pass


def wrote(root: Path, nbytes: int) -> None:
    """``nbytes`` were just written under ``root``: prune when it is time to."""
    limit = max_bytes()
    if limit is None:
        return
    key = str(root)
    with _lock:
        first = key not in _written
        _written[key] = _written.get(key, 0) + nbytes
        due = first or _written[key] >= limit // 8
        if due:
            _written[key] = 0
    if due:  # (at 7/8: up to 1/8 more is written before the next check)
        prune(root, limit - limit // 8)


def prune(root: Path, limit: int) -> int:
    """Remove least recently used entries under ``root`` until they take at most three
    quarters of ``limit`` bytes (nothing when under ``limit``); the bytes removed."""
    now = time.time()
    files: list[tuple[float, int, str]] = []
    total = 0
    try:
        kinds = list(os.scandir(root))
    except OSError:
        return 0
    for kind in kinds:
        if not kind.is_dir(follow_symlinks=False):
            continue
        try:
            with os.scandir(kind.path) as it:
                for e in it:
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if not stat.S_ISREG(st.st_mode):
                        continue
                    if e.name.startswith(".tmp-"):
                        if now - st.st_mtime > _STALE_TMP_S:
                            _remove(e.path)
                        continue
                    if e.name.endswith(".pkl"):
                        files.append((max(st.st_atime, st.st_mtime), st.st_size, e.path))
                        total += st.st_size
        except OSError:
            continue
    if total <= limit:
        return 0
    removed = 0
    target = limit * 3 // 4
    for _, size, path in sorted(files):
        if total <= target:
            break
        if _remove(path):
            total -= size
            removed += size
    return removed


def _remove(path: str) -> bool:
    try:
        os.unlink(path)
        return True
    except OSError:
        return False
