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
