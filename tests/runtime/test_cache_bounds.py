"""Bounded caches: ints that decide nothing are run-time scalars, a function keeps at
most MYC_MAX_SPECIALIZATIONS programs and warns once when it keeps recompiling, the disk
cache stays under MYC_CACHE_MAX, and fresh wrappers with the cache off do not grow the
process."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import myc
from myc.support import cacheprune, diskcache
from myc.support.lru import LRU
from tests.backends import BACKENDS


def step_fn(w, x, step):
    lr = 0.1 * 0.99 ** step
    return w - lr * np.tanh(w * x) + step * 1e-3


def head_sum(x, n):
    return np.sum(x[:n]) * n


def squared(x, n):
    return x * (n * n)  # int arithmetic: int64 would overflow where Python's int does not


def branch(x, n):
    if n > 2:
        return x * 2.0
    return x + n


def indexed(x, i):
    return x[i] * 2.0


def loop(x, n):
    for _ in range(n):
        x = x * 0.5
    return x


W = np.linspace(-1.0, 1.0, 64)
X = np.linspace(0.0, 2.0, 64)


def _quiet(f, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(*args)


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b != "interp"])
def test_a_step_counter_is_a_run_time_scalar(backend):
    f = myc.jit(step_fn, backend=backend)
    for s in range(40):
        np.testing.assert_allclose(f(W, X, s), step_fn(W, X, s),
                                   rtol=1e-13 if backend == "cpu" else 1e-6)
    sf = f._executable
    assert sf.ints.runtime == {(2, int)}
    assert len(sf.cache) == 2  # the first value's program, and the run-time one


@pytest.mark.parametrize("fn, values", [
    (head_sum, range(1, 6)), (squared, [2, 3, 3_000_000_000]), (branch, range(5)),
    (indexed, range(5)), (loop, range(5))])
def test_an_int_that_decides_something_stays_by_value(fn, values):
    f = myc.jit(fn)
    for n in values:
        np.testing.assert_array_equal(_quiet(f, X, n), fn(X, n))
    sf = f._executable
    assert sf.ints.runtime == frozenset() and sf.ints.static == {(1, int)}
    assert len(sf.cache) == len(values)


def test_run_time_ints_in_kernels_gradients_and_outputs():
    def scaled(x, n):
        return np.tanh(x) * n + n * 0.5, x * float(n)

    def loss(w, n):
        return np.sum(np.tanh(w) * n * 0.1)

    f = myc.jit(scaled)
    g = myc.value_and_grad(loss)
    x32 = X.astype(np.float32)
    for n in [0, 1, 5, -3, 10**12]:
        for got, want in zip(f(x32, n), scaled(x32, n), strict=True):
            assert got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=1e-6)
        v, d = g(X, n)
        np.testing.assert_allclose(v, loss(X, n), rtol=1e-12)
        np.testing.assert_allclose(d, (1 - np.tanh(X) ** 2) * n * 0.1, rtol=1e-12)
    assert f._executable.ints.runtime == {(1, int)}
    assert len(f._executable.cache) == 2


def test_run_time_ints_keep_python_and_numpy_types():
    def g(n, y):
        return n * 0.5 + y

    f = myc.jit(g)
    for n in [0, 1, 2, np.int64(3), np.int64(-4), -(2**62)]:
        got, want = f(n, 1.5), g(n, 1.5)
        assert got == want and type(got) is type(want)


def step_in_tuple(w, hp):
    (step, decay), lr = hp  # ints inside (nested) tuples, with a float beside them
    return w - lr * decay ** step * np.tanh(w) + step * 1e-3


def step_loss(w, hp):
    return np.sum(step_in_tuple(w, hp))


def head_in_tuple(x, hp):
    n, scale = hp
    return np.sum(x[:n]) * scale  # the int decides a shape


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b != "interp"])
def test_an_int_inside_a_tuple_is_a_run_time_scalar(backend):
    """Ints are counted by their place among the call's leaves (tuples flattened), so
    one inside a tuple follows the rule of one on its own (issue 16 item 9's note)."""
    f = myc.jit(step_in_tuple, backend=backend)
    g = myc.grad(myc.jit(step_loss, backend=backend))
    for s in [0, 1, 2, 7, -3, 10**12]:
        hp = ((s, 0.97), 0.1)
        np.testing.assert_allclose(f(W, hp), step_in_tuple(W, hp),
                                   rtol=1e-13 if backend == "cpu" else 1e-6)
        want = 1 - 0.1 * 0.97 ** s * (1 - np.tanh(W) ** 2)
        np.testing.assert_allclose(g(W, hp), want, rtol=1e-12 if backend == "cpu" else 1e-6)
    sf = f._executable
    assert sf.ints.runtime == {(1, int)}  # leaf 1: w is leaf 0
    assert len(sf.cache) == 2  # the first value's program, and the run-time one
    assert f.stats().evaluator_calls == 0 and g.stats().evaluator_calls == 0


def test_an_int_inside_a_tuple_that_decides_a_shape_stays_by_value():
    f = myc.jit(head_in_tuple)
    for n in range(1, 5):
        assert _quiet(f, X, (n, 0.5)) == head_in_tuple(X, (n, 0.5))
    sf = f._executable
    assert sf.ints.runtime == frozenset() and sf.ints.static == {(1, int)}
    assert len(sf.cache) == 4


def test_a_run_time_int_is_keyed_by_its_place_among_the_leaves():
    """Another tuple structure is another signature: the int at the same leaf index is
    tried again there, and a run-time program never serves a call of another shape."""
    def g(x, hp):
        return x * hp[0] * 0.5 if len(hp) == 2 else x * hp[0] * hp[2]

    f = myc.jit(g)
    for n in range(4):
        np.testing.assert_array_equal(f(X, (n, 1.0)), g(X, (n, 1.0)))
        np.testing.assert_array_equal(f(X, (n, 1.0, 3.0)), g(X, (n, 1.0, 3.0)))
    assert f._executable.ints.runtime == {(1, int)}
    assert len(f._executable.cache) == 4  # each structure: its first value, then run-time


def test_bools_are_never_run_time_scalars():
    def g(x, flag):
        return x * flag + 1.0

    f = myc.jit(g)
    for b in (True, False, True):
        np.testing.assert_array_equal(f(X, b), g(X, b))
    assert f._executable.ints.runtime == frozenset()


def test_run_time_programs_are_found_on_disk_by_a_new_process(tmp_path):
    script = tmp_path / "steps.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import myc

        def step_fn(w, x, step):
            return w - 0.1 * 0.99 ** step * np.tanh(w * x)

        f = myc.jit(step_fn)
        w = np.ones(8)
        print(sum(float(f(w, w, s).sum()) for s in range(6)))
    """))
    root = str(Path(myc.__file__).resolve().parent.parent)
    env = dict(os.environ, MYC_CACHE_DIR=str(tmp_path / "c"), PYTHONPATH=root)
    outs = [subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                           text=True, timeout=120) for _ in range(2)]
    assert all(o.returncode == 0 for o in outs), outs[0].stderr
    assert outs[0].stdout == outs[1].stdout
    assert len(list((tmp_path / "c" / "program").glob("*.pkl"))) <= 4  # not one per step


def test_the_per_function_cache_is_bounded(monkeypatch):
    monkeypatch.setenv("MYC_MAX_SPECIALIZATIONS", "3")
    f = myc.jit(head_sum)
    for n in range(1, 8):
        np.testing.assert_allclose(_quiet(f, X, n), head_sum(X, n))
    sf = f._executable
    assert len(sf.cache) == 3 and sf.cache.evicted == 4
    np.testing.assert_allclose(_quiet(f, X, 1), head_sum(X, 1))  # evicted: compiled again


def test_recompiling_warns_once_naming_the_argument():
    f = myc.jit(head_sum)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 20):
            f(X, n)
    msgs = [str(w.message) for w in caught if "compiled for" in str(w.message)]
    assert len(msgs) == 1
    assert "head_sum" in msgs[0] and "argument 'n' took" in msgs[0]
    assert "argument 'x'" not in msgs[0]


def test_shapes_that_keep_changing_are_named_too():
    f = myc.jit(lambda x: np.sum(x * 2.0))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 10):
            f(np.ones(n))
    (msg,) = [str(w.message) for w in caught if "compiled for" in str(w.message)]
    assert "argument 'x' took 8 shapes or dtypes" in msg


def test_lru_bounds_count_and_bytes():
    c = LRU(maxsize=2)
    c["a"], c["b"] = 1, 2
    c.get("a")
    c["c"] = 3
    assert list(c) == ["a", "c"] and c.evicted == 1
    b = LRU(maxbytes=10)
    b["x"], b["y"], b["z"] = b"123456", b"1234", b"12"
    assert list(b) == ["y", "z"] and b.nbytes == 6
    b.pop("y")
    assert b.nbytes == 2


# -- the disk cache's size -----------------------------------------------------------------

@pytest.mark.parametrize("text, value", [("500M", 500 * 2**20), ("2g", 2 * 2**30),
                                         ("64K", 65536), ("1048576", 2**20), ("0", None),
                                         ("none", None), ("junk", cacheprune.DEFAULT_MAX),
                                         ("", cacheprune.DEFAULT_MAX)])
def test_cache_max_parses(monkeypatch, text, value):
    monkeypatch.setenv("MYC_CACHE_MAX", text)
    assert cacheprune.max_bytes() == value


def test_the_disk_cache_is_pruned_least_recently_used_first(tmp_path, monkeypatch):
    monkeypatch.setenv("MYC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("MYC_CACHE_MAX", "64K")
    blob = os.urandom(9000)
    for i in range(4):
        diskcache.store("kernel", f"k{i}", blob)
    old = time.time() - 1000
    for i in range(4):  # k0 was used last, k1..k3 long ago
        os.utime(diskcache._path("kernel", f"k{i}"), (old + i, old + i))
    assert diskcache.load("kernel", "k0") == blob  # a use: k0 is the most recent now
    for i in range(4, 7):  # 7 entries of 9 KB: over 7/8 of 64 KB, pruned to 3/4 of that
        diskcache.store("kernel", f"k{i}", blob)
    assert diskcache._path("kernel", "k0").exists()
    assert not diskcache._path("kernel", "k1").exists()  # least recently used: first
    for i in range(7, 40):
        diskcache.store("kernel", f"k{i}", blob)
        assert sum(f.stat().st_size for f in tmp_path.rglob("*.pkl")) <= 64 * 1024
    assert diskcache.load("kernel", "k39") == blob


def test_stale_temporary_files_are_removed(tmp_path):
    (tmp_path / "kernel").mkdir()
    stale = tmp_path / "kernel" / ".tmp-dead"
    stale.write_bytes(b"x")
    os.utime(stale, (0, 0))
    fresh = tmp_path / "kernel" / ".tmp-writing"
    fresh.write_bytes(b"x")
    cacheprune.prune(tmp_path, 10**9)
    assert not stale.exists() and fresh.exists()


# -- memory with the cache off -------------------------------------------------------------

LEAK = textwrap.dedent("""
    import gc, sys
    import numpy as np
    import myc

    def f(x, y):
        return np.sum(x * y + 1.0)

    def rss():
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * 4096

    x = np.ones(8)
    for _ in range(50):
        myc.jit(f)(x, 2.0)
    gc.collect()
    before = rss()
    n = int(sys.argv[1])
    for _ in range(n):
        myc.jit(f)(x, 2.0)
    gc.collect()
    print((rss() - before) / n)
""")


def _growth_per_wrapper(tmp_path: Path, n: int) -> float:
    script = tmp_path / "leak.py"
    script.write_text(LEAK)
    root = str(Path(myc.__file__).resolve().parent.parent)
    p = subprocess.run([sys.executable, str(script), str(n)], capture_output=True, text=True,
                       env=dict(os.environ, MYC_CACHE_DIR="off", PYTHONPATH=root),
                       timeout=600)
    assert p.returncode == 0, p.stderr
    return float(p.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_fresh_wrappers_with_the_cache_off_do_not_grow_memory(tmp_path):
    # each fresh wrapper ran LLVM's O3 pipeline again: about 60 KB that LLVM never frees
    assert _growth_per_wrapper(tmp_path, 200) < 8 * 1024


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_two_thousand_fresh_wrappers(tmp_path):
    assert _growth_per_wrapper(tmp_path, 2000) < 2 * 1024


def test_fresh_wrappers_leave_no_python_objects(monkeypatch):
    from myc.runtime.specialize import SpecializedFunction

    monkeypatch.setenv("MYC_CACHE_DIR", "off")
    for _ in range(20):
        myc.jit(step_fn)(W, X, 3)
    gc.collect()
    assert not [o for o in gc.get_objects() if isinstance(o, SpecializedFunction)
                and getattr(o.source, "_described", None) is not None
                and getattr(o.source._described, "__myc_function__", None) is step_fn]
