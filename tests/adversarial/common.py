"""Helpers the adversarial batteries share: copying arguments (nested tuples of arrays)
and central finite differences of a scalar function."""

from __future__ import annotations

import numpy as np


def copy_args(v):
    """``v`` with every array copied (nested tuples kept), so a call cannot touch it."""
    if isinstance(v, tuple):
        return tuple(copy_args(a) for a in v)
    if isinstance(v, np.ndarray):
        return np.array(v, copy=True)
    return v


def fd(fn, args, i, idx, eps=1e-6):
    """Central difference of ``fn`` along element ``idx`` of argument ``i``."""
    plus, minus = list(copy_args(args)), list(copy_args(args))
    if isinstance(args[i], np.ndarray):
        plus[i][idx] += eps
        minus[i][idx] -= eps
    else:
        plus[i] += eps
        minus[i] -= eps
    return (float(fn(*plus)) - float(fn(*minus))) / (2 * eps)


def fd_grad(fn, args, i):
    """The finite-difference gradient of ``fn`` with respect to argument ``i``."""
    a = args[i]
    if isinstance(a, np.ndarray):
        return np.array([fd(fn, args, i, idx) for idx in np.ndindex(a.shape)]).reshape(
            a.shape)
    return fd(fn, args, i, None)


# Programs whose compiled calls are known to be served by the reference evaluator (a
# fallback myc reports with a MycFallbackWarning), each with the reason.  A battery that
# compares the compiled side with the evaluator must know it compared compiled code: a
# program not listed here must have no evaluator call, one listed must still have some
# (when it compiles after all, take it off the list).
EVALUATOR: dict[str, str] = {
    "e_np_power_py_scalars": "no shape rule for np_first (np.power of two Python scalars)",
    "t_aug_f32_by_f64": "no shape rule for aug_assign (a float32 array updated in place "
                        "by a float64 one)",
    "p_shadow_builtin": "max/min of operands of different types as a value",
    "x_max_as_value": "max/min of operands of different types as a value",
    "x_min_passed": "max/min of operands of different types as a value",
    "x_aug_fancy_copy": "x[mask] with a mask computed from data: a data-dependent shape "
                        "(it was typed as if the mask were all False)",
}


def assert_compiled(jitted, name: str | None = None) -> None:
    """``jitted`` (a myc.jit/grad/value_and_grad object on cpu or opencl) served every
    call with compiled code -- or, for a program in ``EVALUATOR``, with the evaluator."""
    if getattr(jitted, "backend", "cpu") == "interp":
        return
    s = jitted.stats()
    name = name or s.function
    reason = next((r for k, r in EVALUATOR.items()
                   if k in (name, s.function) or s.function.endswith(f"({k})")), None)
    if reason is None:
        assert s.evaluator_calls == 0, (
            f"{name}: {s.evaluator_calls} compiled-side call(s) were served by the "
            f"reference evaluator:\n{s!r}")
    else:
        assert s.evaluator_calls > 0, (
            f"{name} is listed as served by the evaluator ({reason}) but ran compiled: "
            f"take it off EVALUATOR in tests/adversarial/common.py\n{s!r}")
