"""myc's one pool of worker threads (``threads.py``): started once for the process and
shared by every jit wrapper, kernel and GEMM; right under concurrent callers, nested
calls, a failing chunk, Ctrl-C and fork; chunks see the caller's MXCSR."""

from __future__ import annotations

import ctypes
import os
import sys
import threading

import llvmlite.binding as llvm
import numpy as np
import pytest

import myc
from myc.backends.cpu import compile_kernel, threads
from myc.backends.cpu.jit import JitModule
from tests.cpu.helpers import unary_kernel
from tests.cpu.test_native_program import _native_of

linux = pytest.mark.skipif(sys.platform != "linux", reason="/proc/self/task, fork: Linux")

_CHUNK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


def _tasks() -> set[str]:
    return set(os.listdir("/proc/self/task"))


def _table(n: int, width: int = 10):
    bufs = (ctypes.c_void_p * n)()
    bounds = (ctypes.c_int64 * (2 * n))(*[x for c in range(n) for x in (c * width,
                                                                          (c + 1) * width)])
    return bufs, bounds


def _mlp_step(w1, w2, x):
    h = np.tanh(x @ w1)
    return np.sum(h @ w2), np.exp(x * 0.5 + 1.0)


def _programs():
    """Fresh wrappers of different programs: native ones with chunked kernels and row-
    blocked products, and kernels called from Python."""
    def scaled(x, a):
        return np.tanh(x * a) + a

    def norm(x):
        return np.sum(x * x)

    rng = np.random.default_rng(0)
    x = rng.standard_normal(300_000)
    w1 = rng.standard_normal((96, 128))
    w2 = rng.standard_normal((128, 32))
    xm = rng.standard_normal((500, 96))
    return [
        (lambda: myc.jit(scaled)(x, 1.5), lambda: np.tanh(x * 1.5) + 1.5),
        (lambda: myc.jit(norm)(x), lambda: np.sum(x * x)),
        (lambda: myc.jit(_mlp_step)(w1, w2, xm), lambda: _mlp_step(w1, w2, xm)),
        (lambda: myc.grad(norm)(x), lambda: 2 * x),
    ]


def _same(got, want):
    if isinstance(want, tuple):
        for g, w in zip(got, want, strict=True):
            _same(g, w)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


@linux
def test_threads_start_once_for_every_wrapper_and_kernel(monkeypatch):
    monkeypatch.setenv("MYC_NUM_THREADS", "3")
    for call, want in _programs():  # compiled, and the pool's workers started
        _same(call(), want())
    assert threads.workers_started() >= 2
    tasks = _tasks()
    assert len(tasks) > threads.workers_started()  # they live on between calls
    started = threads.workers_started()
    kernel = compile_kernel(unary_kernel("exp", "float64", 1 << 18))
    v = np.linspace(-3, 3, 1 << 18)
    for _ in range(5):  # new wrappers, new programs (cached), kernels from Python
        for call, want in _programs():
            _same(call(), want())
        np.testing.assert_allclose(kernel([v])[0], np.exp(v), rtol=1e-14)
    assert threads.workers_started() == started  # none more
    assert _tasks() == tasks  # the very same threads: none started, none gone


def test_concurrent_callers_get_their_own_answers(monkeypatch):
    monkeypatch.setenv("MYC_NUM_THREADS", "2")
    rng = np.random.default_rng(1)
    w1 = rng.standard_normal((96, 128))
    w2 = rng.standard_normal((128, 32))
    f = myc.jit(_mlp_step)
    kernel = compile_kernel(unary_kernel("exp", "float64", 1 << 18))
    inputs = [rng.standard_normal((500, 96)) for _ in range(4)]
    vs = [rng.standard_normal(1 << 18) for _ in range(4)]
    f(w1, w2, inputs[0])  # compiled once, before the threads race
    errors: list[BaseException] = []

    def user(k: int) -> None:
        try:
            for _ in range(15):
                _same(f(w1, w2, inputs[k]), _mlp_step(w1, w2, inputs[k]))
                np.testing.assert_allclose(kernel([vs[k]])[0], np.exp(vs[k]), rtol=1e-14)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    users = [threading.Thread(target=user, args=(k,)) for k in range(4)]
    for t in users:
        t.start()
    for t in users:
        t.join(120)
    assert not any(t.is_alive() for t in users)
    assert errors == []


def test_every_chunk_runs_once_and_a_nested_call_runs_inline():
    seen: list[tuple[int, int]] = []
    inner_bufs, inner_bounds = _table(4, 1)
    inner_seen: list[int] = []
    inner = _CHUNK(lambda bufs, b, e: inner_seen.append(b))

    def outer(bufs, b, e):
        seen.append((b, e))
        if b == 0:  # a chunk calling the pool: it is taken, so this runs right here
            threads.run(ctypes.cast(inner, ctypes.c_void_p).value, inner_bufs,
                        inner_bounds, 4, 3)

    fn = _CHUNK(outer)
    bufs, bounds = _table(9)
    for _ in range(50):
        seen.clear()
        inner_seen.clear()
        threads.run(ctypes.cast(fn, ctypes.c_void_p).value, bufs, bounds, 9, 3)
        assert sorted(seen) == [(c * 10, c * 10 + 10) for c in range(9)]
        assert sorted(inner_seen) == [0, 1, 2, 3]


def test_a_failing_chunk_leaves_the_pool_usable(monkeypatch):
    """A chunk cannot raise through machine code (here a Python callback's exception is
    reported as unraisable); the call still returns once every other chunk ran, and the
    next call uses the pool as before."""
    reported: list[BaseException] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: reported.append(u.exc_value))
    seen: list[int] = []

    def chunk(bufs, b, e):
        if b == 30 and not reported:
            raise RuntimeError("chunk 3 fails")
        seen.append(b)

    fn = _CHUNK(chunk)
    bufs, bounds = _table(8)
    threads.run(ctypes.cast(fn, ctypes.c_void_p).value, bufs, bounds, 8, 3)
    assert [type(e) for e in reported] == [RuntimeError]
    assert sorted(seen) == [c * 10 for c in range(8) if c != 3]
    seen.clear()
    threads.run(ctypes.cast(fn, ctypes.c_void_p).value, bufs, bounds, 8, 3)
    assert sorted(seen) == [c * 10 for c in range(8)]
    big = compile_kernel(unary_kernel("exp", "float64", 1 << 18))
    v = np.linspace(0, 1, 1 << 18)
    np.testing.assert_allclose(big([v])[0], np.exp(v), rtol=1e-14)


_MXCSR_IR = """
define void @seen(ptr %bufs, i64 %b, i64 %e) {
entry:
  %slot = getelementptr i32, ptr %bufs, i64 %b
  call void @llvm.x86.sse.stmxcsr(ptr %slot)
  %busy = alloca i64
  br label %spin
spin:                                   ; ~1 ms: long enough for the workers to join
  %i = phi i64 [0, %entry], [%j, %spin]
  store volatile i64 %i, ptr %busy
  %j = add i64 %i, 1
  %more = icmp slt i64 %j, 1000000
  br i1 %more, label %spin, label %done
done:
  ret void
}
define void @set(i32 %v) {
  %p = alloca i32
  store i32 %v, ptr %p
  call void @llvm.x86.sse.ldmxcsr(ptr %p)
  ret void
}
define i32 @get() {
  %p = alloca i32
  call void @llvm.x86.sse.stmxcsr(ptr %p)
  %v = load i32, ptr %p
  ret i32 %v
}
declare void @llvm.x86.sse.stmxcsr(ptr)
declare void @llvm.x86.sse.ldmxcsr(ptr)
"""


@pytest.mark.skipif(not llvm.get_default_triple().startswith("x86_64"), reason="MXCSR: x86")
def test_chunks_run_with_the_callers_mxcsr_whatever_it_is():
    jit = JitModule(_MXCSR_IR)
    get = ctypes.CFUNCTYPE(ctypes.c_uint32)(jit.address("get"))
    set_ = ctypes.CFUNCTYPE(None, ctypes.c_uint32)(jit.address("set"))
    n = 16
    slots = (ctypes.c_uint32 * n)()
    rows = (ctypes.c_void_p * n)(*[ctypes.addressof(slots)] * n)
    bounds = (ctypes.c_int64 * (2 * n))(*[x for c in range(n) for x in (c, c + 1)])
    own = get()
    ftz_up = (own | 0x8000) & ~0x6000  # flush to zero, round to nearest
    try:
        set_(ftz_up | 0x2000)  # and round down: nothing a worker has by default
        threads.run(jit.address("seen"), rows, bounds, n, 3)
        assert set(slots) == {ftz_up | 0x2000}
        assert get() == ftz_up | 0x2000
    finally:
        set_(own)
    threads.run(jit.address("seen"), rows, bounds, n, 3)
    assert set(slots) == {own}  # and then the caller's own again


@linux
def test_a_forked_child_starts_a_pool_of_its_own(monkeypatch):
    monkeypatch.setenv("MYC_NUM_THREADS", "3")
    kernel = compile_kernel(unary_kernel("exp", "float64", 1 << 18))
    v = np.linspace(-1, 1, 1 << 18)
    np.testing.assert_allclose(kernel([v])[0], np.exp(v), rtol=1e-14)
    assert threads.workers_started() >= 2
    pid = os.fork()
    if pid == 0:  # the child: none of the parent's workers
        import signal

        signal.alarm(60)  # a hang ends the child, and fails the test
        ok = threads.workers_started() == 0
        ok = ok and bool(np.allclose(kernel([v])[0], np.exp(v), rtol=1e-14))
        ok = ok and threads.workers_started() >= 1
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


_INTERRUPTED = """
import numpy as np
import myc

def forever(x):
    while np.max(x) > 0.0:
        x = x + 1.0
    return x

def step(x):
    return np.tanh(x) * 2.0

f = myc.jit(forever)
x = np.ones(1 << 18)  # 4 chunks a call of the loop's kernel: the pool runs them
assert "runs natively" in myc.ir(forever, x, stage="kernels")
f(-x)
print("ready", flush=True)
try:
    f(x)
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
from myc.backends.cpu import threads
assert threads.workers_started() >= 1
y = np.linspace(-2, 2, 1 << 18)
for _ in range(3):
    assert np.allclose(myc.jit(step)(y), np.tanh(y) * 2.0, rtol=1e-14)
    assert np.allclose(f(-y - 3.0), -y - 3.0)
print("pool usable", flush=True)
import signal
assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
print("handler kept", flush=True)
"""


@linux
def test_ctrl_c_in_a_loop_of_pooled_kernels_leaves_the_pool_usable(tmp_path, monkeypatch):
    from tests.runtime.test_interrupt import _run_child

    monkeypatch.setenv("MYC_NUM_THREADS", "2")
    out = _run_child(tmp_path, _INTERRUPTED)
    assert "KeyboardInterrupt" in out and "pool usable" in out


def test_native_programs_call_the_pool_not_pthread_create(monkeypatch):
    monkeypatch.setenv("MYC_NUM_THREADS", "2")
    rng = np.random.default_rng(4)
    w1 = rng.standard_normal((96, 128))
    w2 = rng.standard_normal((128, 32))
    x = rng.standard_normal((3000, 96))
    _same(myc.jit(_mlp_step)(w1, w2, x), _mlp_step(w1, w2, x))
    text = _native_of(_mlp_step, w1, w2, x).llvm_ir
    assert "pthread_create" not in text
    assert text.count(f'call i32 @"{threads.BEGIN_SYMBOL}"') >= 3  # 2 GEMMs, 1 kernel


_AHEAD = """
import os, sys
import numpy as np
import myc
from myc.backends.cpu import threads

x = np.linspace(-1.0, 1.0, 1 << 18)


def expo(v):
    return np.exp(v)


if sys.argv[1] == "first-call":  # a function's first compile starts the build
    assert not threads._AHEAD and not threads._POOL
    got = myc.jit(lambda v: np.sum(np.tanh(v)))(x)
    assert np.isclose(got, np.sum(np.tanh(x)), rtol=1e-12)
    assert [t.name for t in threads._AHEAD] == ["myc-pool-build"] and threads._POOL
elif sys.argv[1] == "fork":  # a fork while it builds waits for it: the child is usable
    threads.build_ahead()
    pid = os.fork()
    if pid == 0:
        import signal
        signal.alarm(60)
        ok = threads.workers_started() == 0
        ok = ok and bool(np.allclose(myc.jit(expo)(x), np.exp(x), rtol=1e-14))
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
elif sys.argv[1] == "failed":  # a failed build ahead: the first use builds it again
    real, calls = threads._pool_module, []
    def once(*a):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("no pool this time")
        return real(*a)
    threads._pool_module = once
    threads.build_ahead()
    threads._AHEAD[0].join()
    assert not threads._POOL
    assert np.allclose(myc.jit(expo)(x), np.exp(x), rtol=1e-14)
    assert len(calls) == 2 and threads._POOL
print("ok")
"""


@linux
@pytest.mark.parametrize("case", ["first-call", "fork", "failed"])
def test_the_pool_is_built_ahead_on_a_background_thread(case, tmp_path):
    # built while the first compile's Python stages run (its LLVM work releases the GIL)
    import subprocess

    env = dict(os.environ, MYC_NUM_THREADS="2", MYC_CACHE_DIR=str(tmp_path))
    script = tmp_path / "ahead.py"  # (myc reads a function's source from its file)
    script.write_text(_AHEAD)
    done = subprocess.run([sys.executable, str(script), case], env=env, timeout=120,
                          capture_output=True, text=True,
                          cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
