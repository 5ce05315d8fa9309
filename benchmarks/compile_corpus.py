"""The compile-time corpus: realistic NumPy model code of growing size, written for
``python -m benchmarks.compile_latency --corpus`` (docs/compile-time.md).

Each entry builds ``(myc callable, arguments, jax builder)`` for a number of steps.  The
programs are what a user ports to myc and calls once: recurrent nets unrolled over time,
an LSTM, a mixture model's gradient and Hessian-vector product, a stencil simulation, an
HMM's forward recursion, a Gaussian-process data fit, an RK4 integration, a Taylor series
differentiated twice through a data-dependent ``while``, and long counted loops.  The JAX
builders (``jax.numpy`` versions of the same code, jitted) are used only where JAX is
importable (``benchmarks/compile_corpus_jax.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import myc

BATCH, STATE, INPUT = 60, 40, 10


def _sigmoid(x):
    return 0.5 * (np.tanh(0.5 * x) + 1.0)


# -- recurrent nets --------------------------------------------------------------------

def rnn_loss(w_x, w_h, b, w_out, xs, h0):
    """Tanh RNN over ``xs.shape[0]`` time steps; squared readout of every step's state."""
    h = h0
    loss = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ w_x + h @ w_h + b)
        y = h @ w_out
        loss = loss + np.mean(y * y)
    return loss


def lstm_loss(wi, ui, wf, uf, wo, uo, wc, uc, xs, h0):
    """LSTM over ``xs.shape[0]`` time steps (one weight pair per gate)."""
    h = h0
    c = h0 * 0.0
    loss = 0.0
    for t in range(xs.shape[0]):
        x = xs[t]
        i = _sigmoid(x @ wi + h @ ui)
        f = _sigmoid(x @ wf + h @ uf)
        o = _sigmoid(x @ wo + h @ uo)
        g = np.tanh(x @ wc + h @ uc)
        c = f * c + i * g
        h = o * np.tanh(c)
        loss = loss + np.mean(h * h)
    return loss


def _rnn_args(steps: int, rng) -> tuple:
    return (rng.standard_normal((INPUT, STATE)) * 0.3, rng.standard_normal((STATE, STATE)) * 0.1,
            np.zeros(STATE), rng.standard_normal((STATE, 1)) * 0.3,
            rng.standard_normal((steps, BATCH, INPUT)), np.zeros((BATCH, STATE)))


def _lstm_args(steps: int, rng) -> tuple:
    ws = []
    for _ in range(4):
        ws += [rng.standard_normal((INPUT, STATE)) * 0.3, rng.standard_normal((STATE, STATE)) * 0.1]
    return (*ws, rng.standard_normal((steps, BATCH, INPUT)), np.zeros((BATCH, STATE)))


# -- mixture model ---------------------------------------------------------------------

def gmm_nll(means, log_sigmas, logits, x):
    """Negative log-likelihood of points ``x`` (N, D) under an isotropic Gaussian mixture."""
    n, d = x.shape
    k = means.shape[0]
    diff = x.reshape(n, 1, d) - means.reshape(1, k, d)
    sq = np.sum(diff * diff, axis=2)
    var = np.exp(2.0 * log_sigmas)
    m0 = np.max(logits)
    logw = logits - (m0 + np.log(np.sum(np.exp(logits - m0))))
    comp = logw - 0.5 * sq / var - d * log_sigmas - 0.5 * d * np.log(2.0 * np.pi)
    m = np.max(comp, axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.sum(np.exp(comp - m), axis=1))
    return -np.mean(lse)


def _gmm_args(rng) -> tuple:
    return (rng.standard_normal((10, 2)), np.zeros(10) - 0.5, np.zeros(10),
            rng.standard_normal((500, 2)) * 2.0)


# -- stencil simulation ----------------------------------------------------------------

def fluid_loss(u, v, shift_up, shift_left, steps):
    """A 2-D Burgers-like flow on a periodic grid: diffusion by a five-point Laplacian and
    upwind-free advection; neighbours through constant shift matrices (``shift @ u``)."""
    dt, nu = 0.1, 0.05
    shift_down = shift_up.T
    shift_right = shift_left.T
    for _ in range(steps):
        uy = shift_up @ u
        ud = shift_down @ u
        ux = u @ shift_left
        ur = u @ shift_right
        vy = shift_up @ v
        vd = shift_down @ v
        vx = v @ shift_left
        vr = v @ shift_right
        lap_u = uy + ud + ux + ur - 4.0 * u
        lap_v = vy + vd + vx + vr - 4.0 * v
        u = u + dt * (nu * lap_u - 0.5 * (u * (ur - ux) + v * (ud - uy)))
        v = v + dt * (nu * lap_v - 0.5 * (u * (vr - vx) + v * (vd - vy)))
    return np.sum(u * u + v * v)


def _fluid_args(rng, n: int = 32) -> tuple:
    shift = np.roll(np.eye(n), 1, axis=1)
    return (rng.standard_normal((n, n)) * 0.1, rng.standard_normal((n, n)) * 0.1, shift, shift)


# -- HMM -------------------------------------------------------------------------------

def hmm_loglik(log_a, log_b, log_pi, obs):
    """log p(observations) by the forward recursion in log space; ``obs`` one-hot (T, M)."""
    k = log_a.shape[0]
    alpha = log_pi + log_b @ obs[0]
    for t in range(1, obs.shape[0]):
        v = alpha.reshape(k, 1) + log_a
        m = np.max(v, axis=0)
        alpha = m + np.log(np.sum(np.exp(v - m), axis=0)) + log_b @ obs[t]
    m = np.max(alpha)
    return m + np.log(np.sum(np.exp(alpha - m)))


def _hmm_args(steps: int, rng, k: int = 8, m: int = 5) -> tuple:
    obs = np.eye(m)[rng.integers(0, m, steps)]
    return (rng.standard_normal((k, k)) * 0.1 - 2.0, rng.standard_normal((k, m)) * 0.1 - 1.6,
            np.zeros(k) - np.log(k), obs)


# -- Gaussian process ------------------------------------------------------------------

def gp_fit(log_scale, log_noise, x, y, eye):
    """A GP's data-fit term ``y^T K^-1 y`` with K = RBF + noise, by 20 conjugate-gradient
    steps (myc has no linear-algebra solvers yet, so the log-determinant is left out)."""
    d = x.reshape(-1, 1) - x.reshape(1, -1)
    kmat = np.exp(-0.5 * d * d / np.exp(2.0 * log_scale)) + np.exp(log_noise) * eye
    a = y * 0.0
    r = y
    p = r
    rr = np.sum(r * r)
    for _ in range(20):
        kp = kmat @ p
        alpha = rr / np.sum(p * kp)
        a = a + alpha * p
        r = r - alpha * kp
        rr_new = np.sum(r * r)
        p = r + (rr_new / rr) * p
        rr = rr_new
    return 0.5 * np.sum(y * a)


def _gp_args(rng, n: int = 20) -> tuple:
    x = np.linspace(-2.0, 2.0, n)
    return (0.0, -2.0, x, np.sin(2.0 * x) + 0.1 * rng.standard_normal(n), np.eye(n))


# -- ODE -------------------------------------------------------------------------------

def rk4_loss(w, y0, steps):
    """A neural ODE dy/dt = tanh(y W) integrated by classical RK4 over ``steps`` steps."""
    h = 1.0 / steps
    y = y0
    for _ in range(steps):
        k1 = np.tanh(y @ w)
        k2 = np.tanh((y + 0.5 * h * k1) @ w)
        k3 = np.tanh((y + 0.5 * h * k2) @ w)
        k4 = np.tanh((y + h * k3) @ w)
        y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return np.sum(y * y)


# -- control flow ----------------------------------------------------------------------

def taylor_sine(x):
    """sin(x) by its Taylor series, summed until the terms are small (a data-dependent
    ``while``)."""
    ans = x
    term = x
    i = 0
    while np.abs(term) > 1e-6:
        term = -term * x * x / ((2 * i + 3) * (2 * i + 2))
        ans = ans + term
        i += 1
    return ans


def decay_100k(x):
    for _ in range(100000):
        x = x * 0.999 + 0.001
    return x


def count_1m(x):
    i = 0
    n = 1000000
    while i < n:
        x = x * 0.999999 + 1e-6
        i += 1
    return x


# -- the corpus ------------------------------------------------------------------------

@dataclass
class Entry:
    name: str
    program: str  # the program family (one line of the plot)
    steps: int | None
    build: Callable[[], tuple[Callable, tuple]]  # myc callable, its arguments


def _grad_all(fn: Callable, nargs: int) -> Callable:
    return myc.grad(fn, argnums=tuple(range(nargs)))


def _entries() -> list[Entry]:
    rng = lambda: np.random.default_rng(0)  # noqa: E731
    out: list[Entry] = []
    for t in (10, 30, 100):
        out.append(Entry(f"rnn{t}", "RNN grad", t,
                         lambda t=t: (_grad_all(rnn_loss, 4), _rnn_args(t, rng()))))
    for t in (10, 30):
        out.append(Entry(f"lstm{t}", "LSTM grad", t,
                         lambda t=t: (_grad_all(lstm_loss, 8), _lstm_args(t, rng()))))
    out.append(Entry("gmm", "mixture grad", None,
                     lambda: (_grad_all(gmm_nll, 3), _gmm_args(rng()))))

    def hvp():
        args = _gmm_args(rng())
        tangents = (*(np.ones_like(a) for a in args[:3]), np.zeros_like(args[3]))
        g = _grad_all(gmm_nll, 3)
        return (lambda *a: myc.jvp(g, a, tangents)), args
    out.append(Entry("gmm-hvp", "mixture HVP", None, hvp))
    for s in (3, 10):
        out.append(Entry(f"fluid{s}", "fluid grad", s, lambda s=s: (
            myc.grad(fluid_loss, argnums=(0, 1)), (*_fluid_args(rng()), s))))
    for t in (10, 30):
        out.append(Entry(f"hmm{t}", "HMM grad", t,
                         lambda t=t: (_grad_all(hmm_loglik, 3), _hmm_args(t, rng()))))
    out.append(Entry("gp", "GP grad", None, lambda: (_grad_all(gp_fit, 2), _gp_args(rng()))))
    for s in (10, 30):
        out.append(Entry(f"rk4-{s}", "RK4 grad", s, lambda s=s: (
            myc.grad(rk4_loss), (rng().standard_normal((STATE, STATE)) * 0.1,
                                 rng().standard_normal((BATCH, STATE)), s))))
    out.append(Entry("taylor-d2", "Taylor d2", None,
                     lambda: (myc.grad(myc.grad(taylor_sine)), (0.7,))))
    out.append(Entry("loop100k", "100k-step loop", 100000,
                     lambda: (myc.jit(decay_100k), (np.ones(1000),))))
    out.append(Entry("count1m", "while i < n", 1000000,
                     lambda: (myc.jit(count_1m), (np.ones(1000),))))
    return out


ENTRIES = {e.name: e for e in _entries()}
