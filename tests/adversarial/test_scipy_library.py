"""SciPy functions recognized by name: ``scipy.special`` (``logsumexp``, ``expit``,
``logit``, ``xlogy``, ``xlog1py``, ``softmax``, ``log_softmax``, ``log_expit``), the
``scipy.stats`` densities (``norm``, ``expon``, ``uniform``, ``bernoulli``, ``t``,
``gamma``, ``beta``, ``poisson``, ``multivariate_normal``) and ``scipy.linalg``
(``solve_triangular``, ``cho_factor``, ``cho_solve``), each a library function
written in the subset (``myc/frontend/scipy_library.py``).

Each program is written as SciPy code and runs under CPython (with SciPy) and on every
backend (``check_calls``: values, dtypes, shapes and Python types agree); derivatives are
checked by ``tests/gradcheck.py`` (reverse mode against central differences, forward mode,
and the identity between them).  The functions built on ``scipy.special.erf``/``gammaln``
or ``np.linalg.cholesky``/``solve`` are skipped, saying so, where myc lacks that
primitive.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("scipy")

import scipy.linalg  # noqa: E402
import scipy.special  # noqa: E402
import scipy.stats as st  # noqa: E402
from scipy.special import (  # noqa: E402
    expit,
    log_expit,
    log_softmax,
    logit,
    logsumexp,
    softmax,
    xlog1py,
    xlogy,
)
from scipy.stats import norm  # noqa: E402

import myc  # noqa: E402
from myc.errors import MycError  # noqa: E402
from tests.adversarial.test_numpy_subset import check_calls  # noqa: E402
from tests.backends import BACKENDS  # noqa: E402
from tests.gradcheck import check_grads  # noqa: E402

R = np.random.default_rng(5)
V4 = R.standard_normal(4)
M23 = R.standard_normal((2, 3))
A234 = R.standard_normal((2, 3, 4))
P4 = np.array([0.1, 0.35, 0.6, 0.9])
POS4 = np.array([0.3, 1.2, 2.5, 4.0])
M33 = R.standard_normal((3, 3))
SPD33 = M33 @ M33.T + 3.0 * np.eye(3)


# ---------------------------------------------------------------- what myc has


def _uses_erf(x):
    return scipy.special.erf(x)


def _uses_gammaln(x):
    return scipy.special.gammaln(x)


def _uses_linalg(m):
    return np.linalg.solve(np.linalg.cholesky(m), m)


@functools.cache
def _has(probe) -> bool:
    try:
        myc.jit(probe, backend="interp")(np.eye(2) + 1.0)
    except MycError:
        return False
    return True


_NEEDS = {
    "erf": (_uses_erf, "myc has no scipy.special.erf primitive yet"),
    "gammaln": (_uses_gammaln, "myc has no scipy.special.gammaln primitive yet"),
    "linalg": (_uses_linalg, "myc has no np.linalg.cholesky/solve yet"),
}


def _require(*needs: str) -> None:
    for n in needs:
        probe, why = _NEEDS[n]
        if not _has(probe):
            pytest.skip(why)


# ---------------------------------------------------------------- programs


def p_lse(a):
    return logsumexp(a)


def p_lse_axis(a):
    return logsumexp(a, axis=1), logsumexp(a, axis=0, keepdims=True), scipy.special.logsumexp(
        a, axis=-1)


def p_lse_b(a, b):
    return logsumexp(a, axis=-1, b=b)


def p_lse_sign(a, b):
    return logsumexp(a, b=b, return_sign=True)


def p_expit(x):
    return expit(x), scipy.special.expit(2.0 * x), log_expit(x)


def p_logit(p):
    return logit(p)


def p_xlogy(x, y):
    return xlogy(x, y), xlog1py(x, y)


def p_softmax(x):
    return softmax(x), softmax(x, axis=1), log_softmax(x, axis=0), log_softmax(x)


def p_norm(x):
    return st.norm.logpdf(x), norm.pdf(x, 1.0, 2.0), norm.logpdf(x, loc=0.5, scale=0.3)


def p_norm_params(x, loc, scale):
    return norm.logpdf(x, loc, scale)


def p_norm_cdf(x):
    return norm.cdf(x), norm.logcdf(x, 0.2, 1.5), norm.sf(x), st.norm.logsf(x)


def p_expon(x):
    return (st.expon.logpdf(x), st.expon.pdf(x, scale=2.0), st.expon.cdf(x),
            st.expon.logcdf(x, 0.1))


def p_uniform(x):
    return st.uniform.logpdf(x), st.uniform.pdf(x, -1.0, 3.0), st.uniform.cdf(x, -0.5, 2.0)


def p_bernoulli(k, p):
    return st.bernoulli.logpmf(k, p), st.bernoulli.pmf(k, p)


def p_bernoulli_p(p):
    return st.bernoulli.logpmf(np.array([0, 1, 1, 0]), p)


def p_t(x, df):
    return st.t.logpdf(x, df), st.t.pdf(x, df, 0.5, 2.0)


def p_gamma(x, a):
    return st.gamma.logpdf(x, a), st.gamma.pdf(x, a, scale=2.0)


def p_beta(x, a, b):
    return st.beta.logpdf(x, a, b)


def p_poisson(k, mu):
    return st.poisson.logpmf(k, mu), st.poisson.pmf(k, mu)


def p_mvn(x, mean, cov):
    return st.multivariate_normal.logpdf(x, mean, cov)


def p_mvn_sym(x, mean, c):
    # a covariance is symmetric: the gradient is taken along symmetric perturbations
    # (the symmetric convention of autograd and JAX; SciPy reads one triangle)
    return st.multivariate_normal.logpdf(x, mean, (c + c.T) / 2)


def p_cho_sym(c, b):
    return p_cho((c + c.T) / 2, b)


def p_solve_triangular(a, b):
    return (scipy.linalg.solve_triangular(a, b, lower=True),
            scipy.linalg.solve_triangular(a, b, trans="T", unit_diagonal=True))


def p_cho(s, b):
    c = scipy.linalg.cho_factor(s)
    return scipy.linalg.cho_solve(c, b), scipy.linalg.cho_solve(scipy.linalg.cho_factor(
        s, lower=True), b)


def p_logistic_regression(w, x, y):
    # the shape of a typical use: a log-likelihood by expit, a normalizer by logsumexp
    z = x @ w
    ll = np.sum(xlogy(y, expit(z)) + xlog1py(1.0 - y, -expit(z)))
    return ll - logsumexp(z) + np.sum(norm.logpdf(w, 0.0, 2.0))


# ---------------------------------------------------------------- forward

SPECIALS = np.array([0.0, np.inf, -np.inf, np.nan, 800.0, -800.0, 3.0])
ZEROS_AT = np.array([0.0, 0.0, 1.5, 2.0])
FORWARD = [
    (p_lse, [(V4,), (M23,), (A234.astype(np.float32),), (np.array([-np.inf, -np.inf]),),
             (np.array([np.inf, 1.0]),), (np.array([1000.0, 1000.0]),), (2.5,)], ()),
    (p_lse_axis, [(M23,), (A234,)], ()),
    (p_lse_b, [(M23, np.array([1.0, 0.5, 2.0])), (V4, POS4)], ()),
    (p_lse_sign, [(V4, np.array([1.0, -2.0, 0.5, 1.0])), (M23, -np.ones(3))], ()),
    (p_expit, [(V4,), (SPECIALS,), (M23.astype(np.float32),), (0.5,), (np.arange(3),)], ()),
    (p_logit, [(P4,), (np.array([0.0, 1.0, 2.0, -1.0]),), (0.25,)], ()),
    (p_xlogy, [(ZEROS_AT, np.array([0.0, 2.0, 0.5, 3.0])), (V4, POS4), (0.0, 0.0),
               (np.zeros(5), np.array([np.nan, 1.0, -2.0, np.inf, -1.0]))], ()),
    (p_softmax, [(M23,), (np.array([[1000.0, 0.0], [-np.inf, 1.0]]),)], ()),
    (p_norm, [(V4,), (M23.astype(np.float32),), (0.5,), (SPECIALS,), (np.arange(3),)], ()),
    (p_norm_params, [(V4, 0.3, POS4), (M23, V4[:3], -1.0), (V4, 0.0, 0.0)], ()),
    (p_norm_cdf, [(np.array([-40.0, -10.0, -3.5, -3.0, -1.0, 0.0, 0.5, 3.0, 3.5, 9.0]),),
                  (M23,), (0.5,)], ("erf",)),
    (p_expon, [(POS4,), (np.array([-1.0, 0.0, 0.05, 2.0]),), (M23,)], ()),
    (p_uniform, [(np.array([-2.0, -0.5, 0.0, 0.5, 1.0, 1.5, 3.0]),), (M23,)], ()),
    (p_bernoulli, [(np.array([0, 1, 1, 0]), P4), (np.array([0.0, 1.0, 2.0, -1.0]), P4),
                   (1, 0.3), (np.array([0, 1]), np.array([1.5, -0.5]))], ()),
    (p_t, [(V4, 3.0), (M23, POS4[:3]), (0.5, 1.0)], ("gammaln",)),
    (p_gamma, [(POS4, 2.5), (np.array([-1.0, 0.0, 1.0, 2.0]), 1.0), (POS4, POS4)],
     ("gammaln",)),
    (p_beta, [(P4, 2.0, 3.0), (np.array([-0.5, 0.0, 0.5, 1.0, 1.5]), 1.0, 1.0),
              (P4, POS4, 0.5)], ("gammaln",)),
    (p_poisson, [(np.array([0, 1, 3, 7]), 2.5), (np.array([0.0, 1.5, -1.0, 4.0]), 1.0)],
     ("gammaln",)),
    (p_mvn, [(M23, V4[:3], np.eye(3) * 2 + 0.5), (V4[:3], np.zeros(3), np.eye(3)),
             (A234[0].T.copy(), V4[:3], np.eye(3) + 0.2)], ("linalg",)),
    (p_solve_triangular, [(M33 + 3.0 * np.eye(3), M23.T.copy()), (M33 + 3.0 * np.eye(3), V4[:3])],
     ("linalg",)),
    (p_cho, [(SPD33, M23.T.copy()), (SPD33, V4[:3])], ("linalg",)),
    (p_logistic_regression, [(V4[:3], M23, np.array([0.0, 1.0]))], ()),
]


@pytest.mark.parametrize("fn,argsets,needs", FORWARD, ids=[f.__name__ for f, _, _ in FORWARD])
def test_forward(fn, argsets, needs):
    _require(*needs)
    check_calls(fn, argsets)


# ---------------------------------------------------------------- derivatives

GRADS = [
    (p_lse, (M23,), ()),
    (p_lse_axis, (A234,), ()),
    (p_lse_b, (M23, np.array([1.0, 0.5, 2.0])), ()),
    (p_expit, (np.array([-30.0, -1.0, 0.0, 0.7, 25.0]),), ()),
    (p_logit, (P4,), ()),
    (p_xlogy, (V4, POS4), ()),
    (p_xlogy, (ZEROS_AT, POS4), ()),  # x == 0: the derivative in x is log(y)
    (p_softmax, (M23,), ()),
    (p_norm, (V4,), ()),
    (p_norm_params, (V4, 0.3, POS4), ()),
    (p_norm_cdf, (np.array([-12.0, -3.5, -1.0, 0.4, 2.0, 3.5, 7.0]),), ("erf",)),
    (p_expon, (POS4,), ()),
    (p_uniform, (np.array([0.2, 0.5, 0.7]),), ()),
    (p_bernoulli_p, (P4,), ()),
    (p_t, (V4, 3.0), ("gammaln",)),
    (p_gamma, (POS4, 2.5), ("gammaln",)),
    (p_beta, (P4, 2.0, 3.0), ("gammaln",)),
    (p_mvn_sym, (M23, V4[:3], np.eye(3) * 2 + 0.5), ("linalg",)),
    (p_solve_triangular, (M33 + 3.0 * np.eye(3), M23.T.copy()), ("linalg",)),
    (p_cho_sym, (SPD33, M23.T.copy()), ("linalg",)),
    (p_logistic_regression, (V4[:3], M23, np.array([0.0, 1.0])), ()),
]


@pytest.mark.parametrize("fn,args,needs", GRADS, ids=[f.__name__ for f, _, _ in GRADS])
def test_grads(fn, args, needs):
    """Reverse and forward mode (both free: compositions of primitives) against central
    differences, and against each other."""
    _require(*needs)
    check_grads(fn, args)


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_derivatives_on_every_backend(backend):
    x = M23.astype(np.float32)
    want = myc.grad(myc.jit(p_logistic_regression_f, backend="interp"))(M23)
    got = myc.grad(myc.jit(p_logistic_regression_f, backend=backend))(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=1e-5)


def p_logistic_regression_f(x):
    return (np.sum(logsumexp(x, axis=0)) + np.sum(expit(x)) + np.sum(log_softmax(x, axis=1))
            + np.sum(xlogy(x * x, 1.5 + x)))


def test_second_order():
    check_grads(p_lse, (M23,), order=2)
    check_grads(p_expit, (V4,), order=2)


def test_tails_of_the_normal_cdf_without_erf_underflow():
    """``norm.logcdf``/``logsf`` far in the tails by the continued fraction (SciPy's
    ``log_ndtr`` gives the reference); the formulas are checked as plain Python, so this
    runs whether or not myc has ``erf`` yet."""
    from myc.frontend import scipy_library as L

    z = np.array([-60.0, -38.0, -20.0, -8.0, -3.01, -2.5, 0.0, 2.5, 3.01, 8.0, 20.0])
    np.testing.assert_allclose(L.norm_logcdf(z), norm.logcdf(z), rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(L.norm_cdf(z), norm.cdf(z), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(L.norm_logsf(z), norm.logsf(z), rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("fn,args", [
    (p_t, (V4, 3.0)), (p_t, (M23, POS4[:3])),
    (p_gamma, (np.array([-1.0, 0.0, 1.0, 2.0]), 1.0)), (p_gamma, (POS4, POS4)),
    (p_beta, (np.array([-0.5, 0.0, 0.5, 1.0, 1.5]), 1.0, 1.0)), (p_beta, (P4, POS4, 0.5)),
    (p_poisson, (np.array([0.0, 1.5, -1.0, 4.0]), 1.0)),
    (p_mvn, (M23, V4[:3], np.eye(3) * 2 + 0.5)), (p_mvn, (V4[:3], None, np.eye(3) + 0.2)),
    (p_norm_cdf, (np.array([-40.0, -3.5, -3.0, 0.5, 3.0, 3.5, 9.0]),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_library_formulas_as_plain_python(fn, args):
    """The library functions myc cannot compile until it has ``erf``/``gammaln``/
    ``linalg`` primitives, run by CPython itself (the source is plain NumPy/SciPy code)
    against SciPy's own functions: the formulas hold whatever myc has."""
    from myc.frontend import libraries
    from myc.frontend import scipy_library as L

    def ours(*a):
        # the same program with each SciPy call replaced by its library function
        def call(obj, *b, **k):
            return libraries.library_function(obj)(*b, **k)
        sub = {"p_t": lambda x, df: (call(st.t.logpdf, x, df), call(st.t.pdf, x, df, 0.5, 2.0)),
               "p_gamma": lambda x, a: (call(st.gamma.logpdf, x, a),
                                        call(st.gamma.pdf, x, a, scale=2.0)),
               "p_beta": lambda x, a, b: call(st.beta.logpdf, x, a, b),
               "p_poisson": lambda k, mu: (call(st.poisson.logpmf, k, mu),
                                           call(st.poisson.pmf, k, mu)),
               "p_mvn": lambda x, m, c: call(st.multivariate_normal.logpdf, x, m, c),
               "p_solve_triangular": lambda a, b: (
                   call(scipy.linalg.solve_triangular, a, b, lower=True),
                   call(scipy.linalg.solve_triangular, a, b, trans="T", unit_diagonal=True)),
               "p_cho": lambda s, b: (
                   call(scipy.linalg.cho_solve, call(scipy.linalg.cho_factor, s), b),
                   call(scipy.linalg.cho_solve, call(scipy.linalg.cho_factor, s, lower=True),
                        b)),
               "p_norm_cdf": lambda x: (L.norm_cdf(x), L.norm_logcdf(x, 0.2, 1.5),
                                        L.norm_sf(x), L.norm_logsf(x))}
        return sub[fn.__name__](*a)

    with np.errstate(all="ignore"):
        want, got = fn(*args), ours(*args)
    for w, g in zip(want if isinstance(want, tuple) else (want,),
                    got if isinstance(got, tuple) else (got,), strict=True):
        assert type(g) is type(w) and np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-300)


def test_scipy_functions_as_transform_arguments():
    """myc.grad/jvp take the SciPy function itself, as they take np.sin."""
    assert myc.grad(norm.logpdf)(0.3) == pytest.approx(-0.3, rel=1e-15)
    _, t = myc.jvp(expit, (V4,), (np.ones(4),))
    np.testing.assert_allclose(t, expit(V4) * (1 - expit(V4)), rtol=1e-14)

    def through_a_name(x):
        lp = st.norm.logpdf  # a bound method as a value
        return np.sum(lp(x, 1.0))

    np.testing.assert_allclose(myc.jit(through_a_name)(V4), through_a_name(V4), rtol=1e-14)


# ---------------------------------------------------------------- errors


def e_frozen(x):
    return st.norm(0.0, 1.0).logpdf(x)


def e_ppf(x):
    return norm.ppf(x)


def e_axis(x):
    return logsumexp(x, axis=3)


def e_numpy_source(x):  # NumPy's own function on data (on static values it runs)
    return np.sum(x[np.unravel_index(np.argmax(x), x.shape)])


def e_mvn_cov(x):
    return st.multivariate_normal.logpdf(x, np.zeros(3), 2.0)


def e_nosuch(x):
    return norm.nosuch(x)


def _at_call(exc: MycError) -> None:
    """The error is located at the user's line that called the library function."""
    assert exc.loc is not None and exc.loc.filename == __file__, exc
    assert "return" in exc.loc.source_line, exc


@pytest.mark.parametrize("fn,args,words", [
    (e_frozen, (V4,), "frozen"),
    (e_ppf, (P4,), "scipy.stats.norm.ppf"),
    (e_axis, (V4,), "axis 3"),
    (e_numpy_source, (np.ones(3),), "np.unravel_index"),
    (e_nosuch, (V4,), "'scipy.stats.norm' has no attribute 'nosuch'"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_errors_at_the_users_call(fn, args, words):
    # a function myc does not implement, on data, is refused where the program is
    # specialized; the reference evaluator (interp) runs it on the values it is given
    static_only = fn in (e_ppf, e_numpy_source)
    for backend in ("cpu",) if static_only else ("cpu", "interp"):
        with pytest.raises(MycError) as info:
            myc.jit(fn, backend=backend)(*args)
        _at_call(info.value)
        assert words in str(info.value), info.value
        if static_only:
            assert "supported only with static arguments" in str(info.value), info.value


def test_unsupported_form_names_the_function():
    """A form myc does not support inside a library function (a scalar covariance) is
    reported at the user's call, naming the function and the form."""
    _require("linalg")
    with pytest.raises(MycError) as info:
        myc.jit(e_mvn_cov)(V4[:3])
    _at_call(info.value)
    assert "multivariate_normal" in str(info.value) and "covariance" in str(info.value)


def e_missing_primitive(x):
    return st.gamma.logpdf(x, 2.0)


def test_missing_primitive_inside_a_library_function():
    """Without a primitive the library source needs, the error is at the user's line and
    names both the SciPy function called and what is missing."""
    if _has(_uses_gammaln):
        pytest.skip("myc has scipy.special.gammaln")
    with pytest.raises(MycError) as info:
        myc.jit(e_missing_primitive)(POS4)
    _at_call(info.value)
    assert "st.gamma.logpdf" in str(info.value) and "gammaln" in str(info.value)


def test_import_myc_does_not_import_scipy(tmp_path):
    """SciPy stays optional: myc imports and compiles NumPy code without loading it."""
    probe = tmp_path / "probe.py"
    probe.write_text("import sys\nimport numpy as np\nimport myc\n\n"
                     "def f(x):\n    return np.sum(np.exp(x))\n\n"
                     "myc.jit(f)(np.ones(3))\n"
                     "assert 'scipy' not in sys.modules, 'scipy was imported'\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(myc.__file__)),
               MYC_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, str(probe)], capture_output=True, text=True,
                         timeout=300, env=env)
    assert out.returncode == 0, out.stderr
