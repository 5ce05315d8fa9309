"""NumPy and SciPy functions myc does not implement, run by NumPy at compile time.

A call whose arguments are all static (ints, shapes, tuples, strings, dtypes, constant
arrays) is evaluated once per specialization and its result embedded as a constant
(``myc/prims/static_calls.py``); one with an argument computed from data keeps a clear
error at the user's line saying the function is supported only with static arguments.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import myc
from myc.prims import P
from myc.prims.static_calls import StaticCall
from tests.backends import BACKENDS
from tests.gradcheck import check_grads


def nbody_energy(pos, mass):
    n = pos.shape[0]
    diff = pos[:, None, :] - pos[None, :, :]
    dist = np.sqrt(np.sum(diff ** 2, axis=-1) + np.eye(n))
    i, j = np.triu_indices(n, k=1)
    return -np.sum(mass[i] * mass[j] / dist[i, j])


def _bodies(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 3)), rng.uniform(1.0, 2.0, n)


def _fd_grad(f, x, *rest, eps=1e-6):
    g = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = eps
        g[k] = (f(x + e, *rest) - f(x - e, *rest)) / (2 * eps)
    return g


@pytest.mark.parametrize("backend", BACKENDS)
def test_nbody_energy_value_and_gradient(backend):
    pos, mass = _bodies(5)
    got = myc.jit(nbody_energy, backend=backend)(pos, mass)
    np.testing.assert_allclose(got, nbody_energy(pos, mass), rtol=1e-12)
    g_pos, g_mass = myc.grad(nbody_energy, argnums=(0, 1), backend=backend)(pos, mass)
    np.testing.assert_allclose(g_pos, _fd_grad(nbody_energy, pos, mass), rtol=1e-6,
                               atol=1e-8)
    np.testing.assert_allclose(
        g_mass, _fd_grad(lambda m, p: nbody_energy(p, m), mass, pos), rtol=1e-6, atol=1e-8)


def test_nbody_energy_vjp_and_jvp():
    check_grads(nbody_energy, _bodies(4, seed=1), order=2)


def _tri(x, k):
    return x[np.triu_indices(x.shape[0], k=k, m=x.shape[1])] + \
        2.0 * np.sum(x[np.tril_indices(x.shape[0], k, x.shape[1])])


def _diag(x):
    return x[np.diag_indices(x.shape[0])] + np.sum(x[np.diag_indices(2, ndim=2)])


def _indices(x):
    return np.indices((2, 3)) * x[0, 0] + x[:2, :3]


def _unravel(x):
    r, c = np.unravel_index(7, x.shape)
    flat = np.ravel_multi_index((2, 1), x.shape)
    return x[r, c] + x.ravel()[flat] + r


def _ndindex(x):
    s = 0.0
    for i, j in np.ndindex(2, 3):
        s = s + x[i, j] * (i + 2 * j + 1)
    return s


def _legendre(x):  # Gauss-Legendre quadrature of x[0, 0] * t ** 2 on [-1, 1]
    t, w = np.polynomial.legendre.leggauss(4)
    return np.sum(w * x[0, 0] * t ** 2)


@pytest.mark.parametrize("fn,args", [
    (_tri, (0,)), (_tri, (1,)), (_tri, (-1,)), (_diag, ()), (_indices, ()),
    (_unravel, ()), (_ndindex, ()), (_legendre, ()),
], ids=lambda v: getattr(v, "__name__", repr(v)))
@pytest.mark.parametrize("backend", BACKENDS)
def test_index_helpers_against_numpy(fn, args, backend):
    x = np.arange(12.0).reshape(3, 4) * 0.5 + 1.0
    got = myc.jit(fn, backend=backend)(x, *args)
    np.testing.assert_allclose(got, fn(x, *args), rtol=1e-14)
    assert np.shape(got) == np.shape(fn(x, *args))


def test_scipy_roots_legendre_and_constants():
    special = pytest.importorskip("scipy.special")
    stats = pytest.importorskip("scipy.stats")

    def quad(x):
        t, w = special.roots_legendre(6)
        return np.sum(w * np.exp(x * t)) + stats.norm.ppf(0.975) * x

    for x in (0.5, 1.5):
        np.testing.assert_allclose(myc.jit(quad)(x), quad(x), rtol=1e-14)
    np.testing.assert_allclose(myc.grad(quad)(0.5), _fd_grad(
        lambda v: quad(float(v)), np.array(0.5)), rtol=1e-7)


def _eps(x):
    return x + np.finfo(x.dtype).eps * np.iinfo(np.int32).bits + np.finfo(np.float32).tiny \
        + np.sum(np.indices((2,), dtype=int)) * np.finfo(float).eps


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_machine_limits_are_namedtuples_of_their_numbers(dtype):
    x = np.ones(3, dtype)
    got = myc.jit(_eps)(x)
    assert got.dtype == _eps(x).dtype
    np.testing.assert_array_equal(got, _eps(x))
    np.testing.assert_array_equal(myc.grad(lambda v: np.sum(_eps(v)))(x), np.ones(3, dtype))


def test_another_static_size_gives_its_own_constant():
    def pairs(x, n):
        i, j = np.triu_indices(n, k=1)
        return np.sum(x[i] * x[j])

    f = myc.jit(pairs)
    x = np.arange(1.0, 7.0)
    for n in (3, 5, 3, 6):
        assert f(x, n) == pairs(x, n)
    pos4, mass4 = _bodies(4)
    pos6, mass6 = _bodies(6)
    e = myc.jit(nbody_energy)
    np.testing.assert_allclose(e(pos4, mass4), nbody_energy(pos4, mass4), rtol=1e-12)
    np.testing.assert_allclose(e(pos6, mass6), nbody_energy(pos6, mass6), rtol=1e-12)


def test_the_disk_cache_keeps_each_sizes_constant(tmp_path):
    """Two processes sharing a disk cache: the second reads each size's program back and
    every result is still NumPy's for that size (no stale constant)."""
    script = tmp_path / "pairs.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import myc

        def pairs(x, n):
            i, j = np.triu_indices(n, k=1)
            return np.sum(x[i] * x[j]) + np.sum(np.indices((n, 2))[0])

        f = myc.jit(pairs)
        x = np.arange(1.0, 8.0)
        for n in (3, 6, 4):
            print(n, repr(float(f(x, n))), repr(float(pairs(x, n))))
    """))
    root = str(Path(myc.__file__).resolve().parent.parent)
    env = dict(os.environ, MYC_CACHE_DIR=str(tmp_path / "c"), PYTHONPATH=root)
    outs = [subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                           text=True, timeout=300) for _ in range(2)]
    assert all(o.returncode == 0 for o in outs), outs[-1].stderr
    assert list((tmp_path / "c").rglob("*.pkl")), "nothing was written to the disk cache"
    for out in outs:
        lines = out.stdout.split("\n")[:3]
        assert len({ln.split()[1] for ln in lines}) == 3
        for ln in lines:
            _, got, want = ln.split()
            assert got == want, out.stdout


def e_traced(x):
    return np.sum(x[np.triu_indices(int(np.argmax(x)) + 1)])


def e_traced_kw(x):
    return np.unravel_index(3, shape=(np.argmax(x) + 2, 2))


def test_an_argument_computed_from_data_is_refused_at_the_users_line():
    for fn, which in ((e_traced, "argument 1"), (e_traced_kw, "argument 'shape'")):
        with pytest.raises(myc.MycError) as info:
            myc.jit(fn)(np.arange(4.0))
        exc = info.value
        assert exc.loc is not None and exc.loc.filename == __file__, exc
        assert "return" in exc.loc.source_line
        msg = str(exc)
        assert "np.triu_indices" in msg or "np.unravel_index" in msg, msg
        assert "supported only with static arguments" in msg and which in msg, msg


def test_scipy_function_on_data_keeps_its_hint():
    pytest.importorskip("scipy.special")
    from scipy.special import roots_legendre

    def bad(x):
        return roots_legendre(x)

    with pytest.raises(myc.MycError, match="scipy.special.roots_legendre is not supported"
                       ) as info:
        myc.jit(bad)(3.0)
    assert "supported only with static arguments" in str(info.value)


def _poly(x):
    return np.poly1d([1.0, 2.0])(x)


def _complex(x):
    return x * np.roots([1.0, 0.0, 1.0])


def _matrix(x):
    return x * np.asmatrix(np.eye(2))


def _random(x):
    return x * np.random.gamma(2.0)


def _mutates(x):
    a = np.zeros((2, 2))
    np.put(a, [0, 3], 1.0)  # (np.fill_diagonal is supported: a rebinding)
    return x * a


@pytest.mark.parametrize("fn,words", [
    (_poly, "numpy.poly1d object, which myc cannot represent"),
    (_complex, "dtype complex128"),
    (_matrix, "numpy.matrix object"),
    (_random, "np.random.gamma"),
    (_mutates, "np.put"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_what_cannot_run_at_compile_time_is_refused_clearly(fn, words):
    with pytest.raises(myc.MycError) as info:
        myc.jit(fn)(np.ones(2))
    assert words in str(info.value), info.value
    assert info.value.loc is not None and info.value.loc.filename == __file__


def test_the_constant_is_a_read_only_copy():
    """A library function returning an array it keeps (a cache, say): the program's
    constant is a copy, read-only, unchanged when that array is later mutated; an array
    argument is copied too, so a function writing into it cannot touch the program's."""
    kept = np.arange(4.0)

    def keeps(a):
        a[0] = -1.0  # writes into its argument
        return kept

    given = np.ones(3)
    given.flags.writeable = False
    call = StaticCall(keeps, "np.keeps", "NumPy", (), myc.MycNameError, "refused", None)
    out = P.numpy_static.impl(call, (given,), ())
    assert out is not kept and not out.flags.writeable
    kept[:] = 7.0
    np.testing.assert_array_equal(out, np.arange(4.0))
    np.testing.assert_array_equal(given, np.ones(3))
