"""The vectorized transcendentals: accuracy in ulps against higher precision (float64
NumPy for float32, x87 long double NumPy for float64) over wide ranges, and NumPy's
answers on special values (NaN, +-inf, +-0, subnormals, overflow, underflow).

sin, cos and tan are measured up to the largest finite value, with the arguments
closest to a multiple of pi/2 (where argument reduction loses the most bits) added:
glibc's sin/cos/tan and sinl/cosl/tanl reduce huge arguments exactly (Payne-Hanek), so
float64 and long double NumPy are right references there too (long double agrees with
mpmath to 2^-63 relative on the float64 hard cases below).  Kernels run trig by
Cody-Waite first and rerun a chunk with a huge argument with the full reduction (see
codegen.py): the sweeps go through that rerun, and the tests at the end check the fast
pass's flag, that ordinary elements do not change, and that reductions are not counted
twice.

Run with ``-s`` to see the max ulp error per function (also in mathlib.ACCURACY)."""

from __future__ import annotations

import ctypes
import itertools
import math
import re
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest

import myc
from myc.backends.cpu import compile_kernel, jit
from myc.backends.cpu.codegen import codegen, entry_name
from myc.backends.cpu.mathlib import _PI, ACCURACY, TRIG_LIMIT, _two_over_pi
from myc.lower.kernel import Binary, Buffer, Kernel, Load, Reduce, Store, Unary
from tests.cpu.helpers import binary_kernel, unary_kernel


@pytest.fixture(autouse=True)
def ieee_subnormals(monkeypatch):
    """These tests check NumPy's answers for subnormal arguments and results, which are
    IEEE gradual underflow: kernels compiled with MYC_SUBNORMALS=keep (the default flushes
    them to zero; tests/cpu/test_subnormals.py)."""
    monkeypatch.setenv("MYC_SUBNORMALS", "keep")

N = 1 << 16
LONG_DOUBLE_OK = np.finfo(np.longdouble).nmant >= 63


def loguniform(rng, lo_exp, hi_exp, n, signed=True):
    v = 10.0 ** rng.uniform(lo_exp, hi_exp, n)
    return v * rng.choice([-1.0, 1.0], n) if signed else v


def samples(fn: str, dt: str, rng) -> list[np.ndarray]:
    """Arguments per function: uniform over the interesting range, log-uniform over
    magnitudes, and the edges (overflow, underflow, subnormals)."""
    f32 = dt == "float32"
    tiny = -44 if f32 else -322
    u = rng.uniform
    if fn == "exp":
        lo, hi = (-104, 89) if f32 else (-746, 710)
        return [u(lo, hi, N), loguniform(rng, tiny, 0, N), u(hi - 1.5, hi, N), u(lo, lo + 2, N)]
    if fn == "expm1":
        return [u(-20 if f32 else -40, 89 if f32 else 710, N), loguniform(rng, tiny, 0.5, N)]
    if fn == "log":
        big = 38.5 if f32 else 308.2
        return [loguniform(rng, tiny, big, N, False), u(0.5, 2, N),
                np.exp2(u(-150 if f32 else -1075, -126 if f32 else -1022, N))]
    if fn == "log1p":
        return [u(-1, 10, N), loguniform(rng, tiny, 0, N), loguniform(rng, 0, 30, N, False)]
    if fn == "tanh":
        return [u(-10, 10, N), loguniform(rng, tiny, 1.5, N)]
    if fn == "sigmoid":
        return [u(-110, 90, N) if f32 else u(-750, 750, N), loguniform(rng, tiny, 1.5, N)]
    if fn in ("sin", "cos", "tan"):
        top = 127.999 if f32 else 1023.999  # log2 of (nearly) the largest finite value
        huge = np.exp2(u(20, top, N)) * rng.choice([-1.0, 1.0], N)
        return [u(-1e4, 1e4, N), loguniform(rng, tiny, 9, N), u(-4, 4, N), huge,
                trig_hard_cases(dt)]
    if fn == "arctan":
        return [u(-3, 3, N), loguniform(rng, tiny, 30, N)]
    raise AssertionError(fn)


# float32 arguments closest to a multiple of pi/2 (|x 2/pi - k| ~ 2^-29.9 .. 2^-27.7),
# from an exhaustive search over all float32 of magnitude 2^-27 and up
F32_HARD = [0x6F79BE45, 0x50A3E87F, 0x6FF9BE45, 0x5123E87F, 0x437CE5F1, 0x7079BE45,
            0x6A1976F1, 0x53B146A6, 0x65898498]


def closest_to_multiple_of_pio2(e: int, bits: int) -> int:
    """The integer ``M < 2^bits`` (``>= 2^(bits-1)``) that brings ``M 2^e 2/pi`` closest
    to an integer, from the continued fraction of ``frac(2^e 2/pi)``: the hardest
    argument of that binade for argument reduction."""
    nb = 1400
    den = 1 << (nb - e)
    num = _two_over_pi(nb) % den
    best, (q0, q1) = 1, (0, 1)
    while num:
        t = den // num
        den, num = num, den - t * num
        q0, q1 = q1, t * q1 + q0
        if q1 >= 1 << bits:
            break
        best = q1
    m = best * ((1 << bits) // best)
    return m - best if m >= 1 << bits else m


def trig_hard_cases(dt: str) -> np.ndarray:
    """Both signs of: the float32 worst cases; per binade from 2^-2 to the largest,
    the argument closest to a multiple of pi/2 (float64: Kahan and McDonald's
    6381956970095103 2^797 = 5.319372648326541e255, |x 2/pi - k| = 2^-61.5, is one);
    powers of two and their neighbours; the Cody-Waite/Payne-Hanek switch; 1e38 and
    1e300; the largest finite value."""
    f32 = dt == "float32"
    bits, top = (24, 127) if f32 else (53, 1023)
    v = [float(closest_to_multiple_of_pio2(e - bits + 1, bits)) * 2.0 ** (e - bits + 1)
         for e in range(-2, top + 1)]
    p2 = [2.0**e for e in range(-2, top + 1)]
    v += p2 + list(np.nextafter(np.array(p2, dt), np.inf)) + \
        list(np.nextafter(np.array(p2, dt), 0))
    t = np.array(TRIG_LIMIT, dt)
    v += [t, np.nextafter(t, 0), np.nextafter(t, np.inf), float(np.finfo(dt).max)]
    if f32:
        v += list(np.array(F32_HARD, np.uint32).view(np.float32)) + [1e38, 3e38]
    else:
        v += [6381956970095103 * 2.0**797, 1e300, 1e22, 1e200]
    a = np.array(v, dt)
    return np.concatenate([a, -a])


def ulp_error(got: np.ndarray, exact: np.ndarray, dt: str) -> np.ndarray:
    """|got - exact| in units of the last place (of ``dt``) at ``exact``."""
    with np.errstate(all="ignore"):
        rounded = exact.astype(dt)
        sp = np.maximum(np.spacing(np.abs(rounded)), np.finfo(dt).smallest_subnormal)
        err = np.abs(got.astype(exact.dtype) - exact) / sp.astype(exact.dtype)
    same = (got == rounded) | (np.isnan(got) & np.isnan(rounded))
    err = np.where(same, 0, err)
    return np.where(np.isnan(got) != np.isnan(rounded), np.inf, err).astype(np.float64)


def exact_of(fn: str, *args: np.ndarray) -> np.ndarray:
    hp = np.float64 if args[0].dtype == np.float32 else np.longdouble
    a = [x.astype(hp) for x in args]
    with np.errstate(all="ignore"):
        if fn == "sigmoid":
            e = np.exp(-np.abs(a[0]))
            return np.where(a[0] >= 0, 1 / (1 + e), e / (1 + e))
        return getattr(np, {"pow": "power"}.get(fn, fn))(*a)


def report(fn, dt, err, where):
    i = int(np.argmax(err))
    print(f"\n{fn:8s} {dt}: max {err[i]:.2f} ulp (bound {ACCURACY[dt][fn]}) at {where[i]}")
    return err[i]


def skip_f64(dt):
    if dt == "float64" and not LONG_DOUBLE_OK:
        pytest.skip("no 80-bit long double to measure float64 against")


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("fn", ["exp", "expm1", "log", "log1p", "tanh", "sigmoid", "sin",
                                "cos", "tan", "arctan"])
def test_unary_accuracy_in_ulps(fn, dt):
    skip_f64(dt)
    rng = np.random.default_rng(sum(map(ord, fn + dt)))
    x = np.concatenate(samples(fn, dt, rng)).astype(dt)
    got = compile_kernel(unary_kernel(fn, dt, len(x)))([x])[0]
    err = ulp_error(got, exact_of(fn, x), dt)
    assert report(fn, dt, err, x) <= ACCURACY[dt][fn]


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_pow_accuracy_in_ulps(dt):
    skip_f64(dt)
    rng = np.random.default_rng(7)
    f32 = dt == "float32"
    # bases over many magnitudes, exponents scaled so that |y log2 x| reaches the
    # overflow/underflow range (the hard case for pow), integers for negative bases
    x1 = np.exp2(rng.uniform(-60, 60, N))
    y1 = rng.uniform(-1, 1, N) * (130 if f32 else 1070) / np.abs(np.log2(x1)).clip(1e-3)
    x2, y2 = rng.uniform(0, 3, N), rng.uniform(-40, 40, N)
    x3 = 1 + rng.uniform(-1e-3, 1e-3, N)
    y3 = rng.uniform(-1, 1, N) * (1e5 if f32 else 7e5)
    x4, y4 = -np.exp2(rng.uniform(-8, 8, N)), np.round(rng.uniform(-20, 20, N))
    x = np.concatenate([x1, x2, x3, x4]).astype(dt)
    y = np.concatenate([y1, y2, y3, y4]).astype(dt)
    got = compile_kernel(binary_kernel("pow", dt, len(x)))([x, y])[0]
    err = ulp_error(got, exact_of("pow", x, y), dt)
    assert report("pow", dt, err, list(zip(x, y))) <= ACCURACY[dt]["pow"]


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_arctan2_accuracy_in_ulps(dt):
    skip_f64(dt)
    rng = np.random.default_rng(8)
    y = loguniform(rng, -20, 20, 4 * N).astype(dt)
    x = loguniform(rng, -20, 20, 4 * N).astype(dt)
    got = compile_kernel(binary_kernel("arctan2", dt, len(x)))([y, x])[0]
    err = ulp_error(got, exact_of("arctan2", y, x), dt)
    assert report("arctan2", dt, err, list(zip(y, x))) <= ACCURACY[dt]["arctan2"]


def exp_family_f32_grid(fn: str) -> np.ndarray:
    """Dense float32 arguments for the exp family: every 2^11-th bit pattern (both
    signs, every binade: subnormals, +-0, +-inf and NaNs with payloads included), and
    the 512 floats around each place the code changes course -- the clamps (exp's
    -104/89, expm1's -20, tanh's 10 on ``2|x|``: 20), where ``k`` steps (odd multiples
    of ln2/2, for tanh of half of them), and tanh's and expm1's tiny-argument ends."""
    from myc.backends.cpu.mathlib import P32

    grid = np.arange(0, 1 << 32, 1 << 11, dtype=np.uint64).astype(np.uint32).view(np.float32)
    scale = 0.5 if fn == "tanh" else 1.0
    edges = [P32.exp_lo, P32.exp_hi, P32.expm1_lo, P32.tanh_hi, 2.0**-12, 2.0**-25,
             2.0**-126, math.log(np.finfo(np.float32).max), -87.33654]
    edges += [scale * (j + 0.5) * math.log(2) for j in range(-150, 130)]
    # the worst arguments of exhaustive runs over all floats (and sigmoid's old worst)
    edges += [0.0077671754, 1.9542445, 4.1572938, 59.275005, 17.001972]
    near = np.arange(-256, 256)
    around = [np.nextafter(np.float32(abs(v)), np.float32(np.inf)).view(np.int32) + near
              for v in edges]
    ab = np.concatenate(around).clip(0, 0x7F7FFFFF).astype(np.uint32).view(np.float32)
    return np.concatenate([grid, ab, -ab])


@pytest.mark.parametrize("fn", ["exp", "expm1", "tanh", "sigmoid"])
def test_exp_family_dense_float32(fn):
    """The exp family over a dense float32 grid and around every edge of its code
    (:func:`exp_family_f32_grid`): within :data:`ACCURACY` everywhere, NaN for NaN, the
    right infinities and signed zeros.  (An exhaustive run over all 2^32 floats, not a
    test -- minutes: tanh 2.42 ulp at 0.0077671754, the ``em / (em + 2)`` rounding.)"""
    x = exp_family_f32_grid(fn)
    with np.errstate(invalid="ignore"):  # signaling NaNs widened to float64
        got = compile_kernel(unary_kernel(fn, "float32", len(x)))([x])[0]
        want = exact_of(fn, x)
    err = ulp_error(got, want, "float32")
    assert report(fn, "float32", err, x) <= ACCURACY["float32"][fn]
    with np.errstate(over="ignore"):
        rounded = want.astype(np.float32)
    zero = rounded == 0  # and zeros of the right sign
    assert np.array_equal(np.signbit(got[zero]), np.signbit(rounded[zero]))


@pytest.mark.parametrize("fn", ["exp", "expm1", "tanh", "sigmoid"])
def test_exp_family_flushes_only_subnormal_results(fn, monkeypatch):
    """Under the default policy (``MYC_SUBNORMALS=flush``) the same grid gives the same
    answers, except that a result below 2^-126 may be 0 (of the right sign)."""
    monkeypatch.delenv("MYC_SUBNORMALS")
    x = exp_family_f32_grid(fn)
    with np.errstate(invalid="ignore"):  # signaling NaNs widened to float64
        got = compile_kernel(unary_kernel(fn, "float32", len(x)))([x])[0]
        want = exact_of(fn, x)
    tiny = np.abs(want) < np.finfo(np.float32).tiny
    flushed = tiny & (got == 0) & (np.signbit(got) == np.signbit(want))
    err = ulp_error(got, want, "float32")
    assert report(fn, "float32", err[~flushed], x[~flushed]) <= ACCURACY["float32"][fn]


def specials(dt: str) -> np.ndarray:
    f = np.finfo(dt)
    f32 = dt == "float32"
    v = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, f.tiny, -f.tiny,
         f.smallest_subnormal, -f.smallest_subnormal, f.max, -f.max, 0.5, -0.5, 2.0, -2.0,
         3.0, -3.0, 0.1, 1e-30, 1e30, 10.0, 20.0, 100.0, -100.0, 1e-8, -1e-8]
    # exp overflow and underflow edges, tanh saturation, log1p near -1
    v += [88.72283, 88.7229, -87.33, -103.97, -104.5] if f32 else \
         [709.78, 709.79, -708.4, -745.13, -745.14, 1e300, -1e300]
    v += [9.0, -9.5, 19.1, -0.99999, -1.0 + 1e-7]
    return np.array(v, dt)


def same_as_numpy(got, want, dt, tol):
    """Same NaN-ness, same infinities and zeros (with their signs), else within tol ulp."""
    if np.isnan(want) or np.isnan(got):
        return bool(np.isnan(want) and np.isnan(got))
    if np.isinf(want) or want == 0 or np.isinf(got) or got == 0:
        return bool(got == want and np.signbit(got) == np.signbit(want))
    with np.errstate(over="ignore"):
        ulp = float(np.spacing(np.abs(want), dtype=dt))
    return bool(abs(float(got) - float(want)) <= tol * ulp)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_special_values_match_numpy(dt):
    x = specials(dt)
    bad = []
    for fn in ["exp", "expm1", "log", "log1p", "tanh", "sigmoid", "sin", "cos", "tan",
               "arctan", "sqrt", "abs", "sign", "floor", "ceil", "neg", "square"]:
        k: Kernel = unary_kernel(fn, dt, len(x))
        got, want = compile_kernel(k)([x])[0], k.reference([x])[0]
        for xi, g, w in zip(x, got, want):
            if not same_as_numpy(g, w, dt, 4):
                bad.append((fn, xi, g, w))
    xs, ys = (np.array(v, dt) for v in zip(*itertools.product(x, x)))
    for fn in ["pow", "arctan2", "mod", "floordiv", "maximum", "minimum", "div"]:
        k = binary_kernel(fn, dt, len(xs))
        got, want = compile_kernel(k)([xs, ys])[0], k.reference([xs, ys])[0]
        for xi, yi, g, w in zip(xs, ys, got, want):
            if fn in ("maximum", "minimum") and g == w == 0:
                continue  # NumPy's choice between -0 and +0 is unspecified
            if not same_as_numpy(g, w, dt, 4):
                bad.append((fn, xi, yi, g, w))
    assert not bad, bad[:20]


def test_results_stay_float32_and_vectorize_all_lanes_alike():
    """Lanes of one vector must not influence each other: a special value next to
    ordinary ones gives the same answers as alone."""
    x = np.array([1.0, np.nan, 2.0, -np.inf, 3.0, 0.0, 100.0, -0.0] * 5, np.float32)
    k = unary_kernel("tanh", "float32", len(x))
    got = compile_kernel(k)([x])[0]
    assert got.dtype == np.float32
    for i, xi in enumerate(x):
        alone = compile_kernel(unary_kernel("tanh", "float32", 1))([x[i:i + 1]])[0][0]
        assert (np.isnan(alone) and np.isnan(got[i])) or alone == got[i], (xi, alone, got[i])


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("fn", ["sin", "cos", "tan"])
def test_trig_hard_cases_in_ulps(fn, dt):
    """The arguments closest to multiples of pi/2, alone: a reduction that drops bits
    gets these wrong first (the huge sweep in test_unary_accuracy_in_ulps rarely
    comes near them)."""
    skip_f64(dt)
    x = trig_hard_cases(dt)
    got = compile_kernel(unary_kernel(fn, dt, len(x)))([x])[0]
    err = ulp_error(got, exact_of(fn, x), dt)
    assert report(fn, dt, err, x) <= ACCURACY[dt][fn]


def test_two_over_pi_bits():
    """mathlib's 2/pi bits (Machin's formula in integers) against pi from elsewhere:
    mathlib's 54-digit pi, and mpmath to all 1216 bits where it is installed."""
    got = _two_over_pi(1216)
    assert abs(Fraction(got, 1 << 1216) - 2 / _PI) < Fraction(1, 1 << 170)
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workprec(1300):
        assert got == int(mpmath.floor(2 / mpmath.pi * mpmath.mpf(2) ** 1216))


def test_long_double_reference_on_hard_cases():
    """The float64 reference (long double NumPy) is good to far below an ulp on the
    float64 hard cases, checked against mpmath where it is installed."""
    mpmath = pytest.importorskip("mpmath")
    skip_f64("float64")
    x = trig_hard_cases("float64")[::7]
    with mpmath.workprec(300):
        for fn in ("sin", "cos", "tan"):
            ref = getattr(np, fn)(x.astype(np.longdouble))
            for xi, r in zip(x, ref):
                want = getattr(mpmath, fn)(mpmath.mpf(float(xi)))
                assert abs(mpmath.mpf(str(r)) - want) <= abs(want) * 2.0**-60, (fn, xi)


def fast_pass(kernel: Kernel) -> tuple[str, Callable[..., int]]:
    """The kernel's fast pass alone (``@<entry>.fast``, made external and not inlined):
    its optimized IR, and ``run(*arrays) -> flag`` over the whole range, the arrays
    being the kernel's inputs then outputs."""
    module, plan = codegen(kernel)
    name = f"{entry_name(kernel)}.fast"
    fn = module.get_global(name)
    fn.linkage = ""
    fn.attributes.discard("alwaysinline")
    fn.attributes.add("noinline")
    text = jit.optimized_ir(module)
    start = re.search(rf'define [^@]*@"?{re.escape(name)}"?\(', text).start()
    text = text[start:text.index("\n}\n", start)]
    jm = jit.JitModule(module)
    nbuf = len(kernel.inputs) + len(kernel.output_buffers())
    proto = ctypes.CFUNCTYPE(ctypes.c_uint8, *[ctypes.c_void_p] * nbuf, ctypes.c_int64,
                             ctypes.c_int64)
    f = proto(jm.address(name))

    def run(*arrays):
        assert jm is not None  # keeps the machine code alive
        return f(*[a.ctypes.data for a in arrays], 0, plan.extent) & 1

    return text, run


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_trig_vectorizes_without_calls_or_table_loads(dt):
    """sin/cos/tan with the Payne-Hanek path are still straight-line code: the loop
    vectorizes, nothing is called (but the kernel's own full pass, kept out of line and
    compiled for size: it runs only for huge arguments), and the 2/pi window comes from
    selects on constants (no gathers).  The fast pass alone vectorizes too, its rerun flag an OR of i1
    vectors."""
    n = 4096
    x = Load(0, dt)
    val = Binary("add", Binary("add", Unary("sin", x), Unary("cos", x)), Unary("tan", x))
    k = Kernel("k", (n,), (Buffer("x", dt, (n,)), Buffer("y", dt, (n,))), (Store(0, val),))
    elt = "float" if dt == "float32" else "double"
    for text in (jit.optimized_ir(codegen(k)[0]), fast_pass(k)[0]):
        widths = {int(w) for w in re.findall(rf"<(\d+) x {elt}>", text)}
        assert widths and max(widths) >= 4, widths
        called = {f for f in re.findall(r"call [^@]*@([\w.\"]+)", text)
                  if not f.startswith("llvm.") and not f.strip('"').endswith(".body")}
        assert not called, called
        assert "gather" not in text
    assert re.search(r"= or <\d+ x i1>", text), "the rerun flag is not a vector OR"


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_fast_pass_flags_just_the_arguments_it_cannot_reduce(dt):
    """The fast pass asks for the rerun exactly when some argument is finite and
    ``|x| >= TRIG_LIMIT``, wherever it sits (vector body or remainder); NaN and +-inf
    (NaN either way) do not."""
    n = 1003
    x = Load(0, dt)
    k = Kernel("k", (n,), (Buffer("x", dt, (n,)),),
               (Store(0, Binary("mul", Unary("sin", x), Unary("cos", x))),))
    _, run = fast_pass(k)
    x = np.random.default_rng(3).uniform(-1e4, 1e4, n).astype(dt)
    y = np.empty(n, dt)
    t = np.array(TRIG_LIMIT, dt)
    big = np.finfo(dt).max
    assert run(x, y) == 0
    for v, want in [(np.nextafter(t, 0), 0), (np.nan, 0), (np.inf, 0), (0.0, 0),
                    (t, 1), (1e30, 1), (big, 1)]:
        for pos in (0, n // 2, n - 1):
            for sign in (1, -1):
                xv = x.copy()
                xv[pos] = sign * v
                assert run(xv, y) == want, (v, pos, sign)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("fn", ["sin", "cos", "tan"])
def test_huge_arguments_among_ordinary_ones(fn, dt):
    """An array with a few huge arguments runs again with the full reduction: the
    huge ones come out right, the others bit for bit as in an array without them."""
    skip_f64(dt)
    n = 3001
    x = np.random.default_rng(4).uniform(-1e4, 1e4, n).astype(dt)
    k = unary_kernel(fn, dt, n)
    plain = compile_kernel(k)([x])[0]
    pos = [0, 1234, n - 1]
    xh = x.copy()
    xh[pos] = [1e30, -np.finfo(dt).max, trig_hard_cases(dt)[0]]
    got = compile_kernel(k)([xh])[0]
    rest = np.ones(n, bool)
    rest[pos] = False
    np.testing.assert_array_equal(got[rest].view(f"u{got.itemsize}"),
                                  plain[rest].view(f"u{got.itemsize}"))
    err = ulp_error(got[pos], exact_of(fn, xh[pos]), dt)
    assert err.max() <= ACCURACY[dt][fn], (xh[pos], got[pos])


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_rerun_does_not_count_reductions_twice(dt, threads, monkeypatch):
    """Fused reductions with one huge argument among many: the chunk that holds it runs
    again from the identity -- a 1-axis sum (written once per chunk), a sum over an
    outer axis (accumulated in memory row by row) and over the inner and an outer axis
    (read and updated per row), on one thread and split over two (partials).  sin is
    positive on the ordinary arguments, so a count twice would show."""
    monkeypatch.setenv("MYC_NUM_THREADS", threads)
    rng = np.random.default_rng(5)
    tol = dict(rtol=1e-4 if dt == "float32" else 1e-10)

    def check(f, x, want_of):
        got = f(x)
        want = want_of(x.astype(np.float64))
        np.testing.assert_allclose(got, want, **tol)

    x = rng.uniform(0.1, 3.0, 1 << 17).astype(dt)
    x[12345] = 1e30
    check(myc.jit(lambda x: np.sum(np.sin(x) * 2)), x, lambda x: np.sum(np.sin(x) * 2))
    x = rng.uniform(0.1, 3.0, (300, 501)).astype(dt)
    x[0, 7] = x[299, 500] = -1e30
    check(myc.jit(lambda x: np.sum(np.sin(x), axis=0)), x,
          lambda x: np.sum(np.sin(x), axis=0))
    check(myc.jit(lambda x: np.max(np.cos(x), axis=0)), x,
          lambda x: np.max(np.cos(x), axis=0))
    x = rng.uniform(0.1, 3.0, (4, 5, 6001)).astype(dt)
    x[1, 2, 3] = 1e30
    check(myc.jit(lambda x: np.sum(np.sin(x), axis=(0, 2))), x,
          lambda x: np.sum(np.sin(x), axis=(0, 2)))


def test_reset_restores_outputs_read_before_written():
    """The kernel IR level of the above: an outer-axis sum and an inner+outer sum in
    one kernel with a store, through the runtime, the huge argument in the last row."""
    dt = "float64"
    shape = (6, 7, 300)
    x = np.random.default_rng(6).uniform(0.1, 3.0, shape)
    x[5, 6, 299] = 1e30
    s = Unary("sin", Load(0, dt))
    k = Kernel("r", shape, (Buffer("x", dt, shape),),
               (Reduce(0, "sum", s, (0,)), Reduce(1, "sum", s, (0, 2)), Store(2, s)))
    got = compile_kernel(k)([x])
    want = k.reference([x])
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12)
