"""The disk cache: populated on first compile, reused by a new process, robust to
corrupt entries and to two processes compiling at once; MYC_CACHE_DIR=off disables it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import myc
from myc.backends.cpu.runtime import clear_cache
from myc.support import diskcache

SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import myc

    def loss(x):
        return np.sum(np.tanh(x) * x + np.exp(-x * x))

    x = np.linspace(-2.0, 2.0, 5000).astype(np.float32)
    v, g = myc.value_and_grad(loss)(x)
    # (served by source key, a process neither parses nor imports the frontend)
    print(repr(float(v)), repr(float(g.sum())), "myc.frontend.lower" in sys.modules)
""")


def run_script(tmp_path: Path, cache: Path) -> tuple[str, subprocess.Popen]:
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    # this checkout's myc, not whichever one the interpreter has installed
    root = str(Path(myc.__file__).resolve().parent.parent)
    env = dict(os.environ, MYC_CACHE_DIR=str(cache), PYTHONPATH=root)
    return subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(p: subprocess.Popen) -> str:
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    return out.strip()


def entries(cache: Path) -> list[Path]:
    return sorted(cache.rglob("*.pkl"))


def test_a_new_process_reuses_the_cache(tmp_path):
    cache = tmp_path / "cache"
    first = finish(run_script(tmp_path, cache))
    files = entries(cache)
    # programs, kernels' machine code, native loops' (and small programs') machine code,
    # and how calls bind to the program's parameters (found by source key, no parse)
    assert {"program", "kernel", "binding"} <= {f.parent.name for f in files} <= {
        "program", "kernel", "loop", "binding"}
    stamps = {f: f.stat().st_mtime_ns for f in files}
    second = finish(run_script(tmp_path, cache))
    assert first.endswith("True") and second == first[:-len("True")] + "False"
    assert {f: f.stat().st_mtime_ns for f in entries(cache)} == stamps  # read, not rewritten


def test_two_processes_compiling_at_once(tmp_path):
    cache = tmp_path / "cache"
    procs = [run_script(tmp_path, cache) for _ in range(2)]
    outs = [finish(p) for p in procs]
    assert outs[0] == outs[1]
    assert not list(cache.rglob(".tmp-*"))


def _loss(x):
    return np.sum(np.sin(x) ** 2)


def test_corrupt_and_stale_entries_are_ignored_and_rebuilt(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("MYC_CACHE_DIR", str(cache))
    x = np.linspace(0.0, 1.0, 3000)
    expected = myc.value_and_grad(_loss)(x)
    files = entries(cache)
    assert files
    for i, f in enumerate(files):  # garbage, a truncated entry, a wrong header
        f.write_bytes([b"garbage", f.read_bytes()[:20], b"MYC1 old version\n"][i % 3])
    clear_cache()
    again = myc.value_and_grad(_loss)(x)
    np.testing.assert_allclose(again[0], expected[0])
    np.testing.assert_allclose(again[1], expected[1])
    assert all(diskcache.load(f.parent.name, "nothing") is None for f in entries(cache))


def test_a_flipped_byte_is_caught_not_run(tmp_path, monkeypatch):
    """An entry still unpickles with a byte of its machine code flipped; run, that code
    could crash the process.  The checksum makes it a miss."""
    monkeypatch.setenv("MYC_CACHE_DIR", str(tmp_path))
    code = bytes(range(256)) * 64
    diskcache.store("kernel", "k", ("sym", code))
    (path,) = entries(tmp_path)
    data = bytearray(path.read_bytes())
    at = data.index(code[1000:1032]) + 16
    data[at] ^= 0x40
    path.write_bytes(bytes(data))
    assert diskcache.load("kernel", "k") is None
    assert not path.exists()  # removed: the next compile writes a good one


def test_cache_off(tmp_path, monkeypatch):
    monkeypatch.setenv("MYC_CACHE_DIR", "off")
    assert diskcache.cache_dir() is None
    np.testing.assert_allclose(myc.jit(_loss)(np.ones(4)), _loss(np.ones(4)))


@pytest.mark.parametrize("value", [{"a": np.ones(3)}, ("kernel", b"\x00\x01")])
def test_store_and_load_round_trip(tmp_path, monkeypatch, value):
    monkeypatch.setenv("MYC_CACHE_DIR", str(tmp_path))
    diskcache.store("kind", "key", value)
    got = diskcache.load("kind", "key")
    assert repr(got) == repr(value)


def test_scipy_version_is_part_of_the_key():
    """A SciPy function called on static arguments runs at compile time and its result
    is a constant of the cached program: another SciPy must not reuse it."""
    scipy = pytest.importorskip("scipy")
    assert diskcache.scipy_version() == scipy.__version__
    assert f"scipy {scipy.__version__}" in diskcache._version()


def test_a_stored_kernel_reloads_with_its_key_and_plan(tmp_path, monkeypatch):
    # a program from the disk cache does not format, hash and plan its kernels again --
    # unless a setting its key covers changed since (then it is keyed afresh)
    import pickle

    from myc.backends.cpu import runtime
    from tests.cpu.helpers import unary_kernel

    monkeypatch.setenv("MYC_CACHE_DIR", str(tmp_path))
    kernel = unary_kernel("exp", "float64", 1000)
    stored = pickle.dumps(runtime.compile_kernel(kernel))
    x = np.linspace(-1.0, 1.0, 1000)
    clear_cache()
    real_key, real_plan = runtime.cache_key, runtime.make_plan

    def no(*a):
        raise AssertionError("recomputed")

    monkeypatch.setattr(runtime, "cache_key", no)
    monkeypatch.setattr(runtime, "make_plan", no)
    np.testing.assert_allclose(pickle.loads(stored)([x])[0], np.exp(x), rtol=1e-14)
    clear_cache()
    keyed = []
    monkeypatch.setattr(runtime, "cache_key", lambda k: keyed.append(k) or real_key(k))
    monkeypatch.setattr(runtime, "_key_settings", lambda: ("another codegen",))
    monkeypatch.setattr(runtime, "make_plan", real_plan)
    np.testing.assert_allclose(pickle.loads(stored)([x])[0], np.exp(x), rtol=1e-14)
    assert keyed == [kernel]
