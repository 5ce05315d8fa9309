"""Calling compiled kernels: argument checks, odd inputs, outputs, the cache, threads."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from myc.backends.cpu import compile_kernel, num_threads
from myc.backends.cpu.runtime import chunks
from myc.errors import MycShapeError, MycTypeError
from myc.lower.kernel import Binary, Buffer, Const, Kernel, Load, Reduce, Store, Unary
from tests.cpu.helpers import assert_same

F32 = "float32"


def axpy(shape=(3, 4), a_shape=()):
    """``a*x + y`` with ``a`` a runtime scalar (a 0-d buffer), plus its row sums."""
    a, x, y = Load(0, F32), Load(1, F32), Load(2, F32)
    v = Binary("add", Binary("mul", a, x), y)
    return Kernel("axpy", shape, (Buffer("a", F32, a_shape), Buffer("x", F32, shape),
                                  Buffer("y", F32, shape)),
                  (Store(0, v), Reduce(1, "sum", v, (len(shape) - 1,))))


def test_bad_arguments_raise_myc_errors():
    ck = compile_kernel(axpy())
    x = np.ones((3, 4), np.float32)
    a = np.float32(2)
    with pytest.raises(MycTypeError, match="expected float32"):
        ck([a, x.astype(np.float64), x])
    with pytest.raises(MycShapeError, match=r"expected \(3, 4\)"):
        ck([a, x, np.ones((4, 3), np.float32)])
    with pytest.raises(MycTypeError, match="2 inputs given, 3 expected"):
        ck([a, x])


def test_odd_inputs_are_handled_and_never_mutated():
    k = axpy((5, 6))
    rng = np.random.default_rng(0)
    base = rng.standard_normal((6, 5)).astype(np.float32)
    x_t = base.T  # Fortran order
    wide = rng.standard_normal((5, 12)).astype(np.float32)
    y_strided = wide[:, ::2]  # non-contiguous
    raw = np.zeros(5 * 6 * 4 + 1, np.uint8)
    y_unaligned = np.frombuffer(raw.data, np.float32, 30, offset=1).reshape(5, 6)
    y_unaligned.setflags(write=True)
    y_unaligned[...] = 1.5
    a = np.array(0.5, np.float32)
    for y in (y_strided, y_unaligned):
        before = (x_t.copy(), y.copy())
        got = compile_kernel(k)([a, x_t, y])
        want = k.reference([a, np.ascontiguousarray(x_t), np.ascontiguousarray(y)])
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-6)
            assert g.flags.c_contiguous and g.flags.owndata
        assert_same(x_t, before[0])
        assert_same(y, before[1])


def test_compile_cache_is_structural():
    k1, k2 = axpy(), axpy()
    assert k1 is not k2
    assert compile_kernel(k1) is compile_kernel(k2)
    assert compile_kernel(axpy((3, 5))) is not compile_kernel(k1)
    renamed = Kernel("other_name", k1.shape, k1.inputs, k1.outputs)
    assert compile_kernel(renamed) is compile_kernel(k1)  # names do not matter


def test_empty_and_zero_dim_domains():
    k = axpy((0, 4))
    out, sums = compile_kernel(k)([np.float32(1), np.zeros((0, 4), np.float32),
                                   np.zeros((0, 4), np.float32)])
    assert out.shape == (0, 4) and sums.shape == (0,)
    k = Kernel("m", (0, 3), (Buffer("x", F32, (0, 3)),),
               (Reduce(0, "max", Load(0, F32), (0,)), Reduce(1, "sum", Load(0, F32), (0,))))
    m, s = compile_kernel(k)([np.zeros((0, 3), np.float32)])
    assert_same(m, np.full(3, -np.inf, np.float32))
    assert_same(s, np.zeros(3, np.float32))
    # a 0-d domain: scalars in, scalars out
    k = Kernel("s", (), (Buffer("x", "float64", ()),),
               (Store(0, Unary("exp", Load(0, "float64"))),
                Reduce(1, "sum", Load(0, "float64"), ())))
    e, s = compile_kernel(k)([np.array(1.0)])
    assert e.shape == () and abs(e - np.exp(1.0)) <= np.spacing(np.e) and s == 1.0


def test_bool_buffers_in_and_out():
    b = Load(0, "bool")
    k = Kernel("b", (4, 2), (Buffer("b", "bool", (4, 1)), Buffer("x", "int64", (2,))),
               (Store(0, Binary("and", b, Binary("gt", Load(1, "int64"), Const(0, "int64")))),
                Reduce(1, "max", b, (0, 1)), Reduce(2, "min", b, (0,), True)))
    bs = np.array([[True], [False], [True], [True]])
    xs = np.array([3, -1])
    for g, w in zip(compile_kernel(k)([bs, xs]), k.reference([bs, xs])):
        assert_same(g, w)


def test_thread_count_and_chunking(monkeypatch):
    monkeypatch.setenv("MYC_NUM_THREADS", "3")
    assert num_threads() == 3
    monkeypatch.setenv("MYC_NUM_THREADS", "zero")
    assert num_threads() >= 1
    plan = compile_kernel(axpy((1000, 300))).plan
    pieces = chunks(plan, 4)
    assert len(pieces) == 4 and pieces[0][0] == 0 and pieces[-1][1] == plan.extent
    assert all(b == a for (_, a), (b, _) in zip(pieces, pieces[1:]))
    assert chunks(compile_kernel(axpy((10, 30))).plan, 4) == [(0, 10)]  # small: one chunk
    one_axis = compile_kernel(Kernel("flat", (1 << 20,), (Buffer("x", F32, (1 << 20,)),),
                                     (Store(0, Load(0, F32)),))).plan
    assert all(b % 64 == 0 for b, _ in chunks(one_axis, 3))  # cache-line aligned


def test_concurrent_calls_from_python_threads(monkeypatch):
    monkeypatch.setenv("MYC_NUM_THREADS", "2")
    k = axpy((256, 512))
    ck = compile_kernel(k)
    rng = np.random.default_rng(1)
    args = [[np.float32(i), rng.standard_normal((256, 512)).astype(np.float32),
             rng.standard_normal((256, 512)).astype(np.float32)] for i in range(4)]
    results = [None] * 4

    def work(i):
        for _ in range(5):
            results[i] = ck(args[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(4):
        want = k.reference(args[i])
        np.testing.assert_allclose(results[i][0], want[0], rtol=1e-6)
        np.testing.assert_allclose(results[i][1], want[1], rtol=1e-4, atol=1e-4)


def test_kernel_names_do_not_shadow_the_c_library():
    """Float mod lowers to LLVM's frem, a call to fmod: a kernel called fmod must not
    become the fmod it calls."""
    x = Load(0, "float64")
    k = Kernel("fmod", (5,), (Buffer("x", "float64", (5,)),),
               (Store(0, Binary("mod", x, Const(1.5, "float64"))),))
    xs = np.array([-3.0, -1.0, 0.0, 2.0, 7.25])
    assert_same(compile_kernel(k)([xs])[0], np.mod(xs, 1.5))


def test_kernels_with_the_same_code_compile_once(monkeypatch):
    """An elementwise kernel's machine code does not depend on its shape (its range is an
    argument): two kernels that differ only there run LLVM once (an LSTM gradient's
    weight-gradient sums over (40, 40) and (10, 40) weights), and both compute right."""
    from myc.backends.cpu import runtime

    monkeypatch.setenv("MYC_CACHE_DIR", "off")
    runtime.clear_cache()
    compiled = []
    original = runtime._compile_object
    monkeypatch.setattr(runtime, "_compile_object",
                        lambda module, light=False: compiled.append(light) or
                        original(module, light))

    def kernel(shape):
        x = Load(0, "float64")
        return Kernel(f"t{shape[0]}", shape, (Buffer(f"x{shape[0]}", "float64", shape),),
                      (Store(0, Binary("mul", Unary("tanh", x), x)),))

    a, b = compile_kernel(kernel((40, 40))), compile_kernel(kernel((10, 40)))
    assert a.key != b.key
    assert compiled == [False]
    for ck, shape in ((a, (40, 40)), (b, (10, 40))):
        x = np.linspace(-3, 3, shape[0] * shape[1]).reshape(shape)
        np.testing.assert_allclose(ck([x])[0], np.tanh(x) * x, rtol=1e-14)
    runtime.clear_cache()
