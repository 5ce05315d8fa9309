"""``scipy.integrate.odeint`` written in the myc subset: an adaptive Dormand-Prince 5(4)
integrator.

SciPy's ``odeint`` calls LSODA (Fortran); myc cannot compile that, and a program that
differentiates through ``odeint`` (a neural ODE, a fitted dynamical system) needs the
integration as operations myc sees.  This function takes SciPy's arguments and meaning
-- ``func(y, t, *args)``, the solution at each time of ``t`` (``t[0]`` the initial
time), ``rtol``/``atol`` defaulting to SciPy's 1.49012e-8 -- and integrates with the
explicit Runge-Kutta pair of Dormand and Prince (``solve_ivp``'s ``RK45``): error
control in the RMS norm of ``err / (atol + rtol * max(|y|, |y_new|))``, steps grown or
shrunk by ``0.9 * err ** -1/5`` within [0.2, 10], each output time reached exactly.

The stepping loop is a data-dependent ``while`` (its trip count depends on the error
estimates), which myc compiles into one native loop and differentiates in both modes by
its tape (docs/loops.md): the gradient is that of the Runge-Kutta map on the mesh of
steps the error control chose (its choices carry no derivative), which converges to the
exact sensitivity as the tolerances tighten.  Values agree with SciPy's LSODA to about
the tolerances asked for (both are accurate to them, by different methods); see
docs/scipy.md.
"""

# ruff: noqa: ARG001, N803, PLR0913 - SciPy's names and signature
import numpy as np

from myc.prims import P

# Dormand-Prince 5(4) tableau (the 5th-order weights are the last row: FSAL)
_C = (0.0, 0.2, 0.3, 0.8, 8.0 / 9.0, 1.0)
_A = ((),
      (0.2,),
      (3.0 / 40.0, 9.0 / 40.0),
      (44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0),
      (19372.0 / 6561.0, -25360.0 / 2187.0, 64448.0 / 6561.0, -212.0 / 729.0),
      (9017.0 / 3168.0, -355.0 / 33.0, 46732.0 / 5247.0, 49.0 / 176.0, -5103.0 / 18656.0))
_B = (35.0 / 384.0, 0.0, 500.0 / 1113.0, 125.0 / 192.0, -2187.0 / 6784.0, 11.0 / 84.0)
# the 5th-order solution minus the embedded 4th-order one, per stage (7 stages)
_E = (71.0 / 57600.0, 0.0, -71.0 / 16695.0, 71.0 / 1920.0, -17253.0 / 339200.0,
      22.0 / 525.0, -1.0 / 40.0)
_MAX_STEPS = 100000  # per output interval: a solution that blows up ends, with nan


def _call(func, y, t, args, tfirst):
    """``func(y, t, *args)`` (``func(t, y, *args)`` with ``tfirst``)."""
    a, b = (t, y) if tfirst else (y, t)
    n = len(args)
    if n == 0:
        return func(a, b)
    if n == 1:
        return func(a, b, args[0])
    if n == 2:
        return func(a, b, args[0], args[1])
    if n == 3:
        return func(a, b, args[0], args[1], args[2])
    if n == 4:
        return func(a, b, args[0], args[1], args[2], args[3])
    return func(a, b, args[0], args[1], args[2], args[3], args[4])


def _rhs(func, y, t, args, tfirst, shape):
    # (1.0 * : an int result computes in floats, as LSODA's does)
    return np.reshape(1.0 * _call(func, np.reshape(y, shape), t, args, tfirst), (-1,))


def _scaled_rms(v, scale):
    """The RMS norm, at least 1e-10: never the square root of zero, whose infinite
    derivative would turn the zero cotangent of a step not taken into nan."""
    return np.sqrt(np.maximum(np.mean((v / scale) ** 2), 1e-20))


def _frozen(x):
    """``x`` (a positive step or step factor) to 2**-50 absolute precision, with derivative
    zero (``floor``'s): the step sizes the error control picks are a mesh, and the
    gradient is that of the Runge-Kutta map on that mesh -- the forward sensitivity
    equations integrated by the same method -- not of the controller's choices."""
    return np.floor(x * 1125899906842624.0) / 1125899906842624.0


def _first_step(func, y, t0, f0, args, tfirst, shape, rtol, atol, span, d):
    """Hairer, Norsett and Wanner's initial step (as ``solve_ivp`` chooses it), its
    length; ``d`` the direction of time (1.0 or -1.0)."""
    scale = atol + np.abs(y) * rtol
    d0 = _scaled_rms(y, scale)
    d1 = _scaled_rms(f0, scale)
    h0 = np.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / np.maximum(d1, 1e-300))[()]
    h0 = np.minimum(h0, span)
    f1 = _rhs(func, y + (d * h0) * f0, t0 + d * h0, args, tfirst, shape)
    d2 = _scaled_rms(f1 - f0, scale) / h0
    top = np.maximum(d1, d2)
    h1 = np.where(top <= 1e-15, np.maximum(1e-6, h0 * 1e-3),
                  (0.01 / np.maximum(top, 1e-300)) ** 0.2)[()]
    return np.minimum(100.0 * h0, h1)


def odeint(func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None,
           rtol=None, atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0,
           mxhnil=0, mxordn=12, mxords=5, printmessg=0, tfirst=False):
    if not isinstance(args, tuple):
        args = (args,)
    rtol = 1.49012e-8 if P.is_none(rtol) else rtol
    atol = 1.49012e-8 if P.is_none(atol) else atol
    shape = np.shape(y0)
    y = np.reshape(np.asarray(y0, dtype=np.float64), (-1,))
    t = np.asarray(t, dtype=np.float64)
    n_out = np.shape(t)[0]
    f = _rhs(func, y, t[0], args, tfirst, shape)
    # the direction of time: SciPy integrates backwards when ``t`` decreases
    d = np.where(t[n_out - 1] < t[0], -1.0, 1.0)[()]
    h = _first_step(func, y, t[0], f, args, tfirst, shape, rtol, atol,
                    np.abs(t[n_out - 1] - t[0]), d)
    if h0 > 0:
        h = h0 + 0.0 * h
    h = _frozen(h)
    # ONE loop over the steps of every output interval (not a loop per interval): the
    # program, its compile time and its gradient's tape loop stay the same size whatever
    # the number of output times.  ``i`` is the interval being integrated; a step that
    # reaches its end writes the solution into row ``i + 1`` and moves on to the next.
    out = np.zeros((n_out, np.shape(y)[0]))
    out[0] = y
    i = 0
    tc = t[0]
    steps = 0
    while (i < n_out - 1) & (steps < _MAX_STEPS):
        t_end = t[i + 1]
        gap = d * (t_end - tc)  # what is left of the interval
        last = h >= gap
        hh = np.where(last, gap, h)[()]  # the step's length
        sh = d * hh  # the step
        k1 = f
        k2 = _rhs(func, y + sh * (_A[1][0] * k1), tc + _C[1] * sh, args, tfirst, shape)
        k3 = _rhs(func, y + sh * (_A[2][0] * k1 + _A[2][1] * k2), tc + _C[2] * sh,
                  args, tfirst, shape)
        k4 = _rhs(func, y + sh * (_A[3][0] * k1 + _A[3][1] * k2 + _A[3][2] * k3),
                  tc + _C[3] * sh, args, tfirst, shape)
        k5 = _rhs(func, y + sh * (_A[4][0] * k1 + _A[4][1] * k2 + _A[4][2] * k3 +
                                  _A[4][3] * k4), tc + _C[4] * sh, args, tfirst, shape)
        k6 = _rhs(func, y + sh * (_A[5][0] * k1 + _A[5][1] * k2 + _A[5][2] * k3 +
                                  _A[5][3] * k4 + _A[5][4] * k5), tc + sh, args,
                  tfirst, shape)
        y_new = y + sh * (_B[0] * k1 + _B[2] * k3 + _B[3] * k4 + _B[4] * k5 +
                          _B[5] * k6)
        f_new = _rhs(func, y_new, tc + sh, args, tfirst, shape)
        err = sh * (_E[0] * k1 + _E[2] * k3 + _E[3] * k4 + _E[4] * k5 + _E[5] * k6 +
                    _E[6] * f_new)
        scale = atol + rtol * np.maximum(np.abs(y), np.abs(y_new))
        err_norm = _scaled_rms(err, scale)
        accept = err_norm <= 1.0
        factor = _frozen(np.clip(0.9 * err_norm ** -0.2, 0.2, 10.0))
        y = np.where(accept, y_new, y)
        f = np.where(accept, f_new, f)
        tc = np.where(accept, np.where(last, t_end, tc + sh), tc)[()]
        # after an accepted last step keep the step the controller chose, not the
        # shortened one
        h = np.where(accept & last, np.maximum(h, hh * factor), hh * factor)[()]
        steps += 1
        if accept & last:  # the interval is done: its end's row, then the next interval
            out[i + 1] = y
            i += 1
            steps = 0
    # an interval that took _MAX_STEPS steps (a solution that blew up) ends the loop: the
    # rows not reached are nan
    out = np.where(np.arange(n_out)[:, None] <= i, out, np.nan)
    return np.reshape(out, (n_out,) + shape)
