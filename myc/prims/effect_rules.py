"""Derivative rules of ``after`` (``myc/prims/effects.py``): the value passes through,
the token carries nothing.  Draws and prints are not differentiable (their results are
constants to AD)."""

# ruff: noqa: ARG001
from __future__ import annotations

from myc.prims import ZERO

__all__ = ["bprop_after", "jvp_after"]


def bprop_after(token, value, out, dout):
    return (ZERO, dout)


def jvp_after(token, value, ttoken, tvalue, out):
    return tvalue
