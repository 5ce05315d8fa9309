"""A demanding user's probes that the other batteries miss: static ``None``/``str``
arguments and ``is None``, pickling compiled functions, ``myc.aot``'s output path,
NumPy-integer ``argnums``, integer edge values (INT64_MIN // -1, shifts...), empty
arrays through reductions, matmul and gradients, extreme indices, and bad arguments of
every kind -- each on ``cpu`` and ``interp`` (``opencl`` where cheap): NumPy's answer or
a ``MycError``, never a traceback from inside myc, never a wrong value."""

from __future__ import annotations

import copy
import os
import pickle
import warnings

import numpy as np
import pytest

import myc
from myc import MycError, MycShapeError, MycTypeError, MycValueError
from tests.adversarial.common import assert_compiled

BACKENDS = ("cpu", "interp")
IMIN = int(np.iinfo(np.int64).min)


def _jit(fn, b):
    return myc.jit(fn, backend=b)


# -- None and str arguments, `is None` ----------------------------------------------------


def masked_mean(x, mask=None, mode="mean"):
    if mask is not None:
        x = np.where(mask, x, 0.0)
    if mode == "sum":
        return np.sum(x)
    return np.mean(x)


def flag_is(x, flag=True):
    return x * 2.0 if flag is True else x


def arrays_are(x, y):
    return 1.0 if x is y else 2.0


def array_is_none(x):
    return x * 2.0 if x is None else x * 3.0


def loop_with_none(x, m=None):
    s = 0.0
    while s < 10.0:
        s = s + (np.sum(x) if m is None else np.sum(x * m))
    return s


_X4 = np.arange(4.0)
_M4 = np.array([True, False, True, True])


@pytest.mark.parametrize("b", BACKENDS + ("opencl",))
def test_none_and_str_arguments_are_static_values(b):
    """``def f(x, mask=None, mode="mean")`` compiles: None and strings are part of the
    signature by value (JAX's static argnums), and ``is None`` is decided then."""
    pytest.importorskip("pyopencl") if b == "opencl" else None
    j = _jit(masked_mean, b)
    for args, kw in [((_X4,), {}), ((_X4, _M4), {}), ((_X4, _M4, "sum"), {}),
                     ((_X4,), {"mode": "sum"}), ((_X4, None, "mean"), {})]:
        assert np.allclose(j(*args, **kw), masked_mean(*args, **kw), rtol=1e-14)
    assert j.stats().evaluator_calls == 0 or b == "interp"
    for args in [(1.0,), (1.0, False), (1.0, 1), (1.0, True)]:
        assert _jit(flag_is, b)(*args) == flag_is(*args)
    assert np.array_equal(_jit(array_is_none, b)(_X4), array_is_none(_X4))
    lw = _jit(loop_with_none, b)
    assert lw(_X4) == loop_with_none(_X4) and lw(_X4, _X4) == loop_with_none(_X4, _X4)
    assert _jit(lambda v, s: s, b)(1.0, "abc") == "abc"
    assert _jit(lambda v: None, b)(1.0) is None


@pytest.mark.parametrize("b", BACKENDS)
def test_none_and_str_under_the_transforms(b):
    """None and strings have no derivative: their gradient, cotangent and tangent are
    None (JAX's None leaf); a float tangent for a None primal is refused."""
    g = myc.grad(masked_mean, argnums=(0, 1), backend=b)(_X4, None)
    assert np.allclose(g[0], np.full(4, 0.25)) and g[1] is None
    assert myc.grad(masked_mean, argnums=2, backend=b)(_X4, None, "sum") is None
    gm = myc.grad(masked_mean, backend=b)(_X4, _M4, "sum")
    assert np.array_equal(gm, _M4.astype(float))
    _, pullback = myc.vjp(masked_mean, _X4, None, backend=b)
    ct = pullback(1.0)
    assert np.allclose(ct[0], 0.25) and ct[1] is None
    y, t = myc.jvp(masked_mean, (_X4, None), (_X4, None), backend=b)
    assert np.isclose(y, 1.5) and np.isclose(t, 1.5)
    with pytest.raises(MycTypeError, match="static value"):
        myc.jvp(masked_mean, (_X4, None), (_X4, 1.0), backend=b)
    assert np.allclose(myc.grad(loop_with_none, backend=b)(_X4), 2.0)


def data_is_true(x):
    return 1.0 if (x > 0) is True else 2.0


def test_is_with_anything_but_none_true_false_is_refused_at_the_line():
    """``x is y`` between arrays (identity, which values do not have) is refused; ``is
    True`` on a comparison of data is refused where it compiles (its Python type, bool
    or np.bool_, decides the answer and is not kept)."""
    for b in BACKENDS:
        with pytest.raises(MycTypeError, match="None, True or False") as info:
            _jit(arrays_are, b)(_X4, _X4)
        assert info.value.loc is not None and "x is y" in info.value.loc.source_line
    with pytest.raises(MycTypeError, match="computed from data") as info:
        _jit(data_is_true, "cpu")(1.0)
    assert "is True" in info.value.loc.source_line
    assert _jit(data_is_true, "interp")(1.0) == data_is_true(1.0)  # CPython's answer


# -- pickling and copying compiled functions ------------------------------------------------


def lossf(x):
    return np.sum(np.sin(x) * x)


@myc.jit
def decorated(x):
    return x * 2.0


@pytest.mark.parametrize("b", BACKENDS)
def test_compiled_functions_pickle_and_copy(b):
    """``multiprocessing`` and ``copy.deepcopy`` need a jitted function (and a grad) to
    pickle: it travels as its function and backend and compiles again."""
    x = np.linspace(0.1, 1.0, 3)
    j = _jit(lossf, b)
    j(x)  # compiled state (locks, runners) must not stop the pickle
    for clone in (pickle.loads(pickle.dumps(j)), copy.deepcopy(j), copy.copy(j)):
        assert clone.backend == b and clone(x) == lossf(x)
    want = np.cos(x) * x + np.sin(x)
    for t in (myc.grad(lossf, backend=b), myc.grad(j), myc.grad(lossf, np.int64(0), b)):
        assert np.allclose(pickle.loads(pickle.dumps(t))(x), want, rtol=1e-12)
    v, (g,) = pickle.loads(pickle.dumps(myc.value_and_grad(lossf, (0,), b)))(x)
    assert np.isclose(v, lossf(x)) and np.allclose(g, want, rtol=1e-12)
    assert pickle.loads(pickle.dumps(decorated)) is decorated  # by reference
    assert pickle.loads(pickle.dumps(decorated))(1.5) == 3.0


# -- argnums ------------------------------------------------------------------------------


def two(x, y):
    return np.sum(x * y)


@pytest.mark.parametrize("b", BACKENDS)
def test_argnums_numpy_integers_and_refusals(b):
    x, y = np.ones(2), np.arange(2.0)
    assert np.array_equal(myc.grad(two, argnums=np.int64(1), backend=b)(x, y), x)
    got = myc.grad(two, argnums=(np.int32(1), 0), backend=b)(x, y)
    assert isinstance(got, tuple) and np.array_equal(got[0], x) and np.array_equal(got[1], y)
    for bad in (np.bool_(True), True, 2, -3, (), 1.0, "0", None):
        with pytest.raises(MycTypeError):
            myc.grad(two, argnums=bad, backend=b)(x, y)


# -- myc.aot's output path -------------------------------------------------------------------


def aot_fn(x, y):
    return np.sum(np.tanh(x @ y))


def test_aot_refuses_an_output_it_cannot_write_up_front(tmp_path):
    sig = "f32[4,3], f32[3,2]"
    with pytest.raises(MycError, match="does not exist"):
        myc.aot(aot_fn, sig, str(tmp_path / "missing" / "lib.so"))
    with pytest.raises(MycError, match="is a directory"):
        myc.aot(aot_fn, sig, str(tmp_path))
    (tmp_path / "lib2.h").mkdir()
    with pytest.raises(MycError, match="is a directory"):
        myc.aot(aot_fn, sig, str(tmp_path / "lib2.so"))
    assert not (tmp_path / "lib2.so").exists()
    if os.geteuid() != 0:  # (root writes anywhere)
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        with pytest.raises(MycError, match="not writable"):
            myc.aot(aot_fn, sig, str(ro / "lib.so"))


# -- integer edge values -------------------------------------------------------------------


def floordiv(a, b):
    return a // b


def mod(a, b):
    return a % b


def power(a, b):
    return a ** b


def negate(a):
    return -a


def absolute(a):
    return np.abs(a)


_INT_CASES = [
    (np.array([IMIN, 5]), np.array([-1, -1])),     # INT64_MIN // -1: x86's idiv traps
    (np.array([IMIN] * 40), np.array([-1] * 40)),   # (the vectorized kernel)
    (np.array([7] * 40), np.zeros(40, np.int64)),   # // 0: NumPy's 0, no trap
    (np.int64(IMIN), np.int64(-1)),
    (np.array(IMIN), np.array(-1)),
    (np.int64(7), np.int64(0)),
    (IMIN, -1),                                     # Python ints: 2**63
]


@pytest.mark.parametrize("b", BACKENDS + ("opencl",))
@pytest.mark.parametrize("fn", [floordiv, mod])
def test_integer_division_edges_match_numpy(b, fn):
    pytest.importorskip("pyopencl") if b == "opencl" else None
    for a, c in _INT_CASES:
        with np.errstate(all="ignore"):
            want = fn(a, c)
        got = _jit(fn, b)(a, c)
        assert type(got) is type(want) and np.array_equal(got, want), (a, c, got, want)


@pytest.mark.parametrize("b", BACKENDS)
def test_int_overflow_edges_match_python_and_numpy(b):
    with np.errstate(all="ignore"):
        for a, c in [(np.array([2, 3]), np.array([63, 64])), (2, 64), (-2, 63),
                     (np.int64(2), np.int64(64)), (2, -1)]:
            want, got = power(a, c), _jit(power, b)(a, c)
            assert type(got) is type(want) and np.array_equal(got, want)
        assert _jit(negate, b)(IMIN) == -IMIN  # a Python int grows
        assert np.array_equal(_jit(absolute, b)(np.array([IMIN])), np.abs(np.array([IMIN])))
        assert _jit(lambda v: v * v * v, b)(2 ** 40) == 2 ** 120
        x = np.array([np.nan, np.inf, -np.inf, 1e30, 2.7])
        assert np.array_equal(_jit(lambda v: v.astype(np.int64), b)(x), x.astype(np.int64))
    with pytest.raises(MycError):
        _jit(power, b)(0, -1)  # ZeroDivisionError in Python
    with pytest.raises(MycValueError):
        _jit(lambda v: int(v), b)(float("nan"))
    with pytest.raises(MycError):
        _jit(lambda v: int(v), b)(float("inf"))


# -- extreme indices -----------------------------------------------------------------------


def index(x, i):
    return x[i]


def slice_from(x, i):
    return x[i:]


def step(x, i):
    return x[::i]


@pytest.mark.parametrize("b", BACKENDS)
def test_extreme_indices(b):
    x = np.arange(5.0)
    for i in (IMIN, 2 ** 63 - 1, -6, 5, np.int64(IMIN), np.array([IMIN, 0])):
        with pytest.raises(myc.MycIndexError):
            _jit(index, b)(x, i)
    for i in (-5, True, np.bool_(False), np.array([], dtype=np.int64)):
        assert np.array_equal(_jit(index, b)(x, i), x[i])
    for i in (IMIN, 2 ** 63 - 1):
        assert np.array_equal(_jit(slice_from, b)(x, i), x[i:])
        assert np.array_equal(_jit(step, b)(x, i), x[::i])
    with pytest.raises(MycValueError, match="step cannot be zero"):
        _jit(step, b)(x, 0)
    for bad in (1.0, np.array([1.0]), np.array([True, False])):
        with pytest.raises(myc.MycIndexError):
            _jit(index, b)(x, bad)
    with pytest.raises(myc.MycIndexError):
        myc.grad(index, backend=b)(x, 9)


# -- empty arrays --------------------------------------------------------------------------


def r_sum(x):
    return np.sum(x)


def r_mean(x):
    return np.mean(x)


def r_max(x):
    return np.max(x)


def r_argmax(x):
    return np.argmax(x)


def r_max0(x):
    return np.max(x, axis=0)


def r_sum1(x):
    return np.sum(x, axis=1)


def r_max1(x):
    return np.max(x, axis=1)


def matmul(a, b):
    return a @ b


_EMPTIES = [np.zeros(0), np.zeros((3, 0)), np.zeros((0, 3)), np.zeros(0, np.float32),
            np.zeros(0, np.int64)]


def _numpy_or_error(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            return fn(*args), None
        except ValueError as exc:
            return None, exc


@pytest.mark.parametrize("b", BACKENDS + ("opencl",))
def test_empty_arrays_through_reductions_and_matmul(b):
    """NumPy's answer (0, nan, an empty array) or, where NumPy raises (max of nothing), a
    MycError at the line -- never a crash or a made-up value."""
    pytest.importorskip("pyopencl") if b == "opencl" else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for x in _EMPTIES:
            for fn in (r_sum, r_mean, r_max, r_argmax) + ((r_max0, r_sum1, r_max1)
                                                          if x.ndim == 2 else ()):
                want, err = _numpy_or_error(fn, x)
                if err is not None:
                    with pytest.raises(MycError) as info:
                        _jit(fn, b)(x)
                    assert info.value.loc is not None
                    continue
                got = _jit(fn, b)(x)
                assert np.shape(got) == np.shape(want)
                assert np.result_type(got) == np.result_type(want)
                assert np.array_equal(got, want, equal_nan=True)
            if x.dtype.kind == "f":
                g = myc.grad(r_mean, backend=b)(x)
                assert g.shape == x.shape and g.dtype == x.dtype
        for a, c in [(np.zeros((3, 0)), np.zeros((0, 4))), (np.zeros((0, 3)), np.zeros((3, 4))),
                     (np.zeros(0), np.zeros(0))]:
            got = _jit(matmul, b)(a, c)
            assert np.shape(got) == np.shape(a @ c) and np.array_equal(got, a @ c)


# -- unusual argument types -------------------------------------------------------------------


def add1(x):
    return x + 1


@pytest.mark.parametrize("b", BACKENDS)
def test_unsupported_dtypes_and_scalars_are_refused_by_name(b):
    bad = [np.ones(3, np.float16), np.ones(3, np.uint8), np.ones(3, np.int32),
           np.ones(3, np.complex128), np.array([1.0, 2.0], dtype=object),
           np.zeros(2, dtype=[("a", "f8")]), np.zeros(2, dtype="M8[s]"), np.int32(3),
           np.float16(1.5), np.uint8(3), np.longdouble(1.5), 2 ** 63, -2 ** 63 - 1, 1j,
           b"x", np.ones(2).view(np.recarray), np.matrix(np.eye(2)), {object(): 1.0}]
    for v in bad:
        with pytest.raises(MycTypeError, match="argument 1"):
            _jit(add1, b)(v)
    for v in (2 ** 63 - 1, -2 ** 63):  # the int64 range's ends: Python's int arithmetic
        assert _jit(add1, b)(v) == v + 1


@pytest.mark.parametrize("b", BACKENDS)
def test_numpy_scalars_and_0d_arrays_keep_their_dtype(b):
    sq = _jit(lambda v: v * v, b)
    for v in (np.float32(1.5), np.float64(1.5), np.int64(3), np.bool_(True), True,
              np.array(2.0, np.float32), np.array(3), np.array(True)):
        want, got = v * v, sq(v)
        assert type(got) is type(want) or (np.ndim(got) == 0 and
                                           np.result_type(got) == np.result_type(want))
        assert np.result_type(got) == np.result_type(want) and got == want
    g = myc.grad(lambda v: v * v, backend=b)
    assert type(g(np.float32(1.5))) is np.float32
    assert np.result_type(g(np.array(1.5, np.float32))) == np.float32


# -- functions that are not plain Python functions -------------------------------------------


class Scaler:
    def __init__(self):
        self.k = 2.0

    def method(self, x):
        return x * self.k

    @staticmethod
    def static(x):
        return x * 5.0


def test_what_cannot_be_compiled_is_named():
    """Builtins, ufuncs and exec'd functions have no source myc reads: a
    MycTypeError/MycSyntaxError naming what it got, never an internal traceback; an
    unbound method and a staticmethod compile, and so do bound methods and partials
    (as in JAX: myc/runtime/bound.py)."""
    import functools
    import math

    ns: dict = {}
    exec("def f(x):\n    return x * 2\n", {}, ns)  # noqa: S102 - the probe
    for fn, what in [(abs, "builtin"), (np.sin, "ufunc"), (math.sin, "builtin"),
                     (np.sum, "Dispatcher")]:
        for b in BACKENDS:
            with pytest.raises(MycTypeError, match=what):
                _jit(fn, b)(1.0)
    for b in BACKENDS:
        assert _jit(Scaler().method, b)(1.0) == Scaler().method(1.0)
        p = functools.partial(two, np.ones(2))
        assert _jit(p, b)(np.arange(2.0)) == p(np.arange(2.0))
    with pytest.raises(myc.MycSyntaxError, match="cannot read the source"):
        myc.jit(ns["f"])(1.0)
    for b in BACKENDS:
        assert _jit(Scaler.method, b)(Scaler(), 1.0) == 2.0
        assert _jit(Scaler.static, b)(1.0) == 5.0
        assert np.isclose(myc.grad(np.sin, backend=b)(1.0), math.cos(1.0))


def test_partial_of_a_jitted_function_and_methods_in_classes():
    j = myc.jit(two)
    import functools

    assert functools.partial(j, np.ones(2))(np.arange(2.0)) == 1.0

    class Model:
        w = 3.0

        @myc.jit
        def apply(self, x):
            return x * 2.0

    assert Model().apply(2.0) == 4.0


# -- pullbacks and tangents ------------------------------------------------------------------


def square(x):
    return x * x


@pytest.mark.parametrize("b", BACKENDS)
def test_pullback_reused_and_misused(b):
    x = np.arange(3.0)
    _, pb = myc.vjp(square, x, backend=b)
    assert np.array_equal(pb(np.ones(3))[0], 2 * x)
    assert np.array_equal(pb(np.full(3, 2.0))[0], 4 * x)  # called twice: fresh answers
    assert np.array_equal(pb(np.ones(3))[0], 2 * x)
    for bad, cls in [((np.ones(3),), MycTypeError), (np.ones(3, np.int64), MycTypeError),
                     (np.ones(3, bool), MycTypeError), (1.0, MycShapeError),
                     (np.ones((1, 3)), MycShapeError), (None, MycTypeError)]:
        with pytest.raises(cls):
            pb(bad)
    with pytest.raises(MycTypeError):
        pb()
    with pytest.raises(MycTypeError):
        pb(np.ones(3), np.ones(3))


# -- shapes and dtypes that change between calls ---------------------------------------------


@pytest.mark.parametrize("b", BACKENDS)
def test_second_call_with_a_mismatched_shape(b):
    j = _jit(matmul, b)
    assert np.array_equal(j(np.ones((2, 3)), np.ones((3, 2))), np.full((2, 2), 3.0))
    with pytest.raises(MycShapeError) as info:
        j(np.ones((2, 3)), np.ones((4, 2)))
    assert "a @ b" in info.value.loc.source_line
    assert j(np.ones((2, 3), np.float32), np.ones((3, 2))).dtype == np.float64
    got = j(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32))
    assert got.dtype == np.float32  # float32 in, float32 out
    assert np.array_equal(j(np.ones(3), np.ones((3, 2))), np.full(2, 3.0))
    assert_compiled(j)


# -- forked processes and threads ------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_compiled_functions_work_after_fork():
    """A child forked after compiling (myc's worker pool and LLVM state copied in one
    thread) computes right, big kernels included, and exits normally."""
    j = myc.jit(lossf)
    g = myc.grad(lossf)
    j(np.ones(4))
    g(np.ones(4))
    big = np.linspace(0, 1, 2_000_000)
    pid = os.fork()
    if pid == 0:  # the child: no pytest, report by exit status
        code = 3
        try:
            ok = (np.isclose(j(np.ones(4)), lossf(np.ones(4)))
                  and np.allclose(g(np.ones(4)), np.cos(1.0) + np.sin(1.0))
                  and np.isclose(j(big), lossf(big), rtol=1e-10)
                  and np.isclose(myc.jit(r_sum)(big), big.sum()))
            code = 0 if ok else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
