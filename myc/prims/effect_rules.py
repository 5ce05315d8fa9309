"""Derivative rules of ``after`` (``myc/prims/effects.py``): the value passes through,
the token carries nothing.  Draws and prints are not differentiable (their results are
constants to AD)."""

# ruff: noqa: ARG001
from __future__ import annotations

from myc.prims.namespace import P
from myc.prims.registry import forward_rule, reverse_rule
from myc.prims.values import ZERO

__all__ = ["bprop_after", "jvp_after"]


@reverse_rule(P.after)
def bprop_after(token, value, out, dout):
    return (ZERO, dout)


@forward_rule(P.after, structural=True)
def jvp_after(token, value, ttoken, tvalue, out):
    return tvalue
