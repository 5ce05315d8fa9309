"""Fault injection on the disk cache: whatever is found in the cache directory, a call
gives the right answer, nothing from an unauthenticated entry is run, nothing hangs.

Faults: truncated entries, flipped bytes (header, tag, body), forged entries (a valid
pickle whose ``__reduce__`` would create a marker file, with a wrong, missing or foreign
HMAC), FIFOs, devices and symbolic links in place of entries, a read-only and a full
file system, a world- or group-writable directory, one owned by another user, an unsafe
key file, and processes compiling the same function at once (creating the key at once).
"""

from __future__ import annotations

import contextlib
import errno
import os
import pickle
import stat
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import myc
from myc.backends.cpu import machine_code
from myc.backends.cpu.runtime import clear_cache
from myc.support import cachekey, diskcache


def loss(x):
    return np.sum(np.tanh(x) * x + np.exp(-x * x))


X = np.linspace(-2.0, 2.0, 3000)
EXPECTED = loss(X)

SCRIPT = textwrap.dedent("""
    import numpy as np
    import myc

    def loss(x):
        return np.sum(np.tanh(x) * x + np.exp(-x * x))

    x = np.linspace(-2.0, 2.0, 3000)
    v, g = myc.value_and_grad(loss)(x)
    print(repr(float(v)), repr(float(g.sum())))
""")


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """A fresh cache directory and key file for this test (and its subprocesses)."""
    d = tmp_path / "cache"
    monkeypatch.setenv("MYC_CACHE_DIR", str(d))
    monkeypatch.setenv("MYC_CACHE_KEY_FILE", str(tmp_path / "config" / "cache-key"))
    _forget_in_memory()
    return d


def _forget_in_memory() -> None:
    """Drop what this process holds in memory, so that the next call reads the disk."""
    clear_cache()
    machine_code.CODE.clear()


def entries(d: Path) -> list[Path]:
    return sorted(d.rglob("*.pkl"))


def compile_fresh() -> float:
    _forget_in_memory()
    return float(myc.jit(loss)(X))


def run_script(tmp_path: Path, env: dict | None = None, timeout: float = 120) -> str:
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    p = subprocess.run([sys.executable, str(script)], env=child_env(**(env or {})),
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def child_env(**extra: str) -> dict:
    """The environment of a child process: this checkout's ``myc`` first on its path."""
    root = str(Path(myc.__file__).resolve().parent.parent)
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=path, **extra)


class Marker:
    """Unpickling this creates ``path``: the proof that an entry's code was run."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def forged_payload(path: Path, body: bytes, tag: bytes | None) -> bytes:
    """An entry with this process's valid header and the given tag (``None``: none)."""
    header = diskcache._version().encode()
    parts = [diskcache._MAGIC, header, b"\n"]
    if tag is not None:
        parts += [tag, b"\n"]
    return b"".join(parts + [body])


def authentic(f: Path) -> bool:
    """Is ``f`` a whole entry with a valid tag (under this test's key)?"""
    data = f.read_bytes()
    header, _, rest = data[len(diskcache._MAGIC):].partition(b"\n")
    tag, body = rest[:diskcache._MAC], rest[diskcache._MAC + 1:]
    return data.startswith(diskcache._MAGIC) and tag == diskcache._mac(
        cachekey.cache_key(), f.name, header, body)


# -- damaged entries ---------------------------------------------------------------------

def test_truncated_entries_are_rebuilt(cache):
    np.testing.assert_allclose(compile_fresh(), EXPECTED)
    files = entries(cache)
    assert files
    for f in files:
        data = f.read_bytes()
        f.write_bytes(data[: len(data) // 2])
    np.testing.assert_allclose(compile_fresh(), EXPECTED)
    for f in entries(cache):  # every entry written again, whole
        assert diskcache._read_regular(f).startswith(diskcache._MAGIC)
    assert all(f.stat().st_size > 0 for f in entries(cache))


@pytest.mark.parametrize("where", ["header", "tag", "body", "last"])
def test_a_flipped_byte_is_a_miss(cache, where):
    diskcache.store("kernel", "k", ("sym", bytes(range(256)) * 16))
    (path,) = entries(cache)
    data = bytearray(path.read_bytes())
    at = {"header": 6, "tag": len(diskcache._MAGIC) + data.index(b"\n") + 3,
          "body": len(data) // 2, "last": len(data) - 1}[where]
    data[at] ^= 0x01
    path.write_bytes(bytes(data))
    assert diskcache.load("kernel", "k") is None
    assert not path.exists()


def test_every_damaged_program_entry_still_gives_the_right_answer(cache):
    np.testing.assert_allclose(compile_fresh(), EXPECTED)
    for f in entries(cache):
        data = bytearray(f.read_bytes())
        data[len(data) * 3 // 4] ^= 0x80
        f.write_bytes(bytes(data))
    np.testing.assert_allclose(compile_fresh(), EXPECTED)


# -- forged entries ----------------------------------------------------------------------

def test_the_marker_works_when_the_entry_is_authentic(cache, tmp_path):
    """The control: the same pickle, stored by myc itself, does run on load -- so the
    forged-entry tests below would see the marker if the check were missing."""
    marker = tmp_path / "ran"
    diskcache.store("program", "control", Marker(str(marker)))
    diskcache.load("program", "control")
    assert marker.exists()


@pytest.mark.parametrize("tag", ["wrong", "missing", "other key", "empty"])
def test_a_forged_entry_is_never_unpickled(cache, tmp_path, tag):
    marker = tmp_path / "ran"
    body = pickle.dumps(Marker(str(marker)), protocol=4)
    path = diskcache._path("program", "victim")
    path.parent.mkdir(parents=True, exist_ok=True)
    tags = {"wrong": b"0" * diskcache._MAC, "missing": None, "empty": b"",
            "other key": diskcache._mac(os.urandom(32), path.name,
                                        diskcache._version().encode(), body)}
    path.write_bytes(forged_payload(path, body, tags[tag]))
    assert diskcache.load("program", "victim") is None
    assert not marker.exists()
    assert not path.exists()  # removed: the next compile writes an authentic one


def test_an_authentic_entry_copied_under_another_name_is_refused(cache, tmp_path):
    diskcache.store("program", "a", ("value", 1))
    src = diskcache._path("program", "a")
    dst = diskcache._path("program", "b")
    dst.write_bytes(src.read_bytes())
    assert diskcache.load("program", "b") is None
    assert diskcache.load("program", "a") == ("value", 1)


def test_forging_every_entry_of_a_real_program_runs_nothing(cache, tmp_path):
    np.testing.assert_allclose(compile_fresh(), EXPECTED)
    marker = tmp_path / "ran"
    body = pickle.dumps(Marker(str(marker)), protocol=4)
    for f in entries(cache):
        f.write_bytes(forged_payload(f, body, b"f" * diskcache._MAC))
    np.testing.assert_allclose(compile_fresh(), EXPECTED)
    assert not marker.exists()


def test_a_new_key_makes_every_entry_a_miss(cache, tmp_path, monkeypatch):
    compile_fresh()
    before = {f.name for f in entries(cache)}
    monkeypatch.setenv("MYC_CACHE_KEY_FILE", str(tmp_path / "other" / "cache-key"))
    assert all(diskcache.load(f.parent.name, "x") is None for f in entries(cache))
    np.testing.assert_allclose(compile_fresh(), EXPECTED)
    assert {f.name for f in entries(cache)} == before  # rewritten under the new key


def test_the_key_file_is_private_and_outside_the_cache(cache, tmp_path):
    compile_fresh()
    key = Path(os.environ["MYC_CACHE_KEY_FILE"])
    st = key.stat()
    assert stat.S_IMODE(st.st_mode) == 0o600 and st.st_size >= 32
    assert cache not in key.parents
    assert not list(key.parent.glob(".cache-key-*"))  # the temporary file is gone


@pytest.mark.parametrize("fault", ["mode", "owner", "fifo"])
def test_an_unsafe_key_file_turns_the_cache_off(tmp_path, monkeypatch, fault):
    key = tmp_path / "cfg" / "cache-key"
    key.parent.mkdir()
    if fault == "fifo":
        os.mkfifo(key, 0o600)
    else:
        key.write_bytes(os.urandom(32))
        key.chmod(0o644 if fault == "mode" else 0o600)
        if fault == "owner":
            os.chown(key, 65534, 65534)
    monkeypatch.setenv("MYC_CACHE_KEY_FILE", str(key))
    monkeypatch.setenv("MYC_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.warns(RuntimeWarning, match="not used.*key"):
        assert diskcache.cache_dir() is None
    np.testing.assert_allclose(compile_fresh(), EXPECTED)
    assert not entries(tmp_path / "cache")


# -- non-regular files -------------------------------------------------------------------

FIFO_SCRIPT = textwrap.dedent("""
    import os, stat, sys
    from pathlib import Path
    import numpy as np
    import myc
    from myc.support import diskcache

    def loss(x):
        return np.sum(np.tanh(x) * x + np.exp(-x * x))

    x = np.linspace(-2.0, 2.0, 3000)
    ref = float(myc.jit(loss)(x))                   # fills the cache
    for i, f in enumerate(sorted(Path(sys.argv[1]).rglob("*.pkl"))):
        f.unlink()
        kind = sys.argv[2] if i % 2 == 0 else "fifo"
        if kind == "fifo":
            os.mkfifo(f)
        elif kind == "device":
            os.mknod(f, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero
        else:  # a symbolic link to a FIFO
            os.mkfifo(str(f) + ".fifo")
            os.symlink(str(f) + ".fifo", f)
    (Path(sys.argv[1]) / "kernel" / "stray").mkdir(exist_ok=True)
    os.mkfifo(Path(sys.argv[1]) / "kernel" / "x.pkl.fifo-stray")
    from myc.backends.cpu import machine_code
    from myc.backends.cpu.runtime import clear_cache
    clear_cache(); machine_code.CODE.clear()
    again = float(myc.jit(loss)(x))                 # reads the FIFOs' names: must not hang
    assert again == ref, (again, ref)
    from myc.support.cacheprune import prune
    prune(Path(sys.argv[1]), 1)                     # pruning walks them too
    print("ok")
""")


@pytest.mark.parametrize("kind", ["fifo", "device", "symlink"])
def test_non_regular_files_are_skipped_without_blocking(cache, tmp_path, kind):
    script = tmp_path / "fifo.py"
    script.write_text(FIFO_SCRIPT)
    p = subprocess.run([sys.executable, str(script), str(cache), kind], env=child_env(),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "ok"


# -- file systems that refuse writes -----------------------------------------------------

@contextlib.contextmanager
def tmpfs(at: Path, size: str, readonly: bool = False):
    """A tiny tmpfs mounted at ``at`` (skips where mounting is not permitted)."""
    at.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs",
                        str(at)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        if readonly:
            yield lambda: subprocess.run(["mount", "-o", "remount,ro", str(at)], check=True)
        else:
            yield None
    finally:
        subprocess.run(["umount", "-l", str(at)], capture_output=True)


def _fail_writes(monkeypatch, err: int) -> None:
    def refuse(*a, **k):
        raise OSError(err, os.strerror(err))

    monkeypatch.setattr(diskcache.tempfile, "mkstemp", refuse)


@pytest.mark.parametrize("err", [errno.ENOSPC, errno.EROFS, errno.EACCES])
def test_writes_that_fail_leave_a_working_function(cache, monkeypatch, err):
    assert diskcache.cache_dir() == cache  # the key exists: only entries fail
    _fail_writes(monkeypatch, err)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a failed write is silent: the entry is not cached
        np.testing.assert_allclose(compile_fresh(), EXPECTED)
    assert not entries(cache)


def test_a_key_that_cannot_be_created_turns_the_cache_off(cache, monkeypatch):
    _fail_writes(monkeypatch, errno.EROFS)
    with pytest.warns(RuntimeWarning, match="key cannot be read or created"):
        np.testing.assert_allclose(compile_fresh(), EXPECTED)
    assert not entries(cache)


def test_a_disk_that_fills_up_during_a_write(cache, monkeypatch):
    real = os.fdopen

    class Full:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write(self, data):
            self.f.write(data[: len(data) // 3])
            raise OSError(errno.ENOSPC, "No space left on device")

    assert diskcache.cache_dir() == cache
    monkeypatch.setattr(diskcache.os, "fdopen", lambda fd, mode: Full(real(fd, mode)))
    np.testing.assert_allclose(compile_fresh(), EXPECTED)
    assert not entries(cache)
    assert not list(cache.rglob(".tmp-*"))  # no partial file left behind


def test_a_full_tmpfs(tmp_path, monkeypatch):
    mnt = tmp_path / "full"
    with tmpfs(mnt, "96k"):
        monkeypatch.setenv("MYC_CACHE_DIR", str(mnt / "cache"))
        monkeypatch.setenv("MYC_CACHE_KEY_FILE", str(tmp_path / "cfg" / "cache-key"))
        (mnt / "filler").write_bytes(b"\0" * (96 * 1024 - 20 * 1024))  # 20 KB left
        np.testing.assert_allclose(compile_fresh(), EXPECTED)
        assert not list(mnt.rglob(".tmp-*"))
        assert all(authentic(f) for f in entries(mnt))  # whatever was written is whole
        assert run_script(tmp_path)  # another process with the full cache works


def test_a_read_only_tmpfs(tmp_path, monkeypatch):
    mnt = tmp_path / "ro"
    with tmpfs(mnt, "4m", readonly=True) as make_readonly:
        monkeypatch.setenv("MYC_CACHE_DIR", str(mnt / "cache"))
        monkeypatch.setenv("MYC_CACHE_KEY_FILE", str(tmp_path / "cfg" / "cache-key"))
        first = run_script(tmp_path)  # fills the cache
        stamps = {f: f.stat().st_mtime_ns for f in entries(mnt)}
        assert stamps
        make_readonly()
        assert run_script(tmp_path) == first  # served from the read-only cache
        assert {f: f.stat().st_mtime_ns for f in entries(mnt)} == stamps


# -- unsafe directories ------------------------------------------------------------------

@pytest.mark.parametrize("fault", ["world-writable", "group-writable", "other owner"])
def test_an_unsafe_cache_directory_is_refused_with_one_warning(tmp_path, monkeypatch, fault):
    d = tmp_path / "shared"
    d.mkdir()
    if fault == "other owner":
        os.chown(d, 65534, 65534)  # nobody
    else:
        d.chmod(0o777 if fault == "world-writable" else 0o770)
    monkeypatch.setenv("MYC_CACHE_DIR", str(d))
    monkeypatch.setenv("MYC_CACHE_KEY_FILE", str(tmp_path / "cfg" / "cache-key"))
    _forget_in_memory()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            np.testing.assert_allclose(float(myc.jit(loss)(X)), EXPECTED)
    msgs = [str(w.message) for w in caught if "disk cache" in str(w.message)]
    assert len(msgs) == 1, msgs
    assert ("another user" if fault == "other owner" else "writable by group or others") \
        in msgs[0]
    assert not list(d.rglob("*"))  # nothing read, nothing written


def test_an_unsafe_directory_in_a_subprocess_warns_and_works(tmp_path):
    d = tmp_path / "shared"
    d.mkdir(mode=0o777)
    d.chmod(0o777)
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    p = subprocess.run([sys.executable, str(script)], env=child_env(MYC_CACHE_DIR=str(d)),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("is not used") == 1, p.stderr
    assert not list(d.rglob("*"))


def test_a_subdirectory_owned_by_another_user_is_not_written(cache):
    compile_fresh()
    (cache / "evil").mkdir()
    os.chown(cache / "evil", 65534, 65534)
    diskcache.store("evil", "k", 1)
    assert not list((cache / "evil").iterdir())


# -- concurrency -------------------------------------------------------------------------

def test_processes_compiling_at_once_with_no_key_yet(cache, tmp_path):
    key = Path(os.environ["MYC_CACHE_KEY_FILE"])
    assert not key.exists()
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    procs = [subprocess.Popen([sys.executable, str(script)], env=child_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
        assert "not used" not in err, err
        outs.append(out.strip())
    assert len(set(outs)) == 1
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert not list(cache.rglob(".tmp-*"))
    stamps = {f: f.stat().st_mtime_ns for f in entries(cache)}
    assert run_script(tmp_path) == outs[0]  # every entry verifies under the one key
    assert {f: f.stat().st_mtime_ns for f in entries(cache)} == stamps


def test_key_creation_race_in_threads(tmp_path, monkeypatch):
    """Many creators at once agree on one key (hard link publication)."""
    import threading

    path = tmp_path / "k" / "cache-key"
    keys: list[bytes] = []

    def make():
        keys.append(cachekey._read_or_create(path))

    threads = [threading.Thread(target=make) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(keys)) == 1 and len(keys[0]) == 32
