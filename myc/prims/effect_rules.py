"""Derivative rules of ``after`` and ``checked`` (``myc/prims/effects.py``): the value
passes through, the token (the checks) carries nothing.  Draws and prints are not
differentiable (their results are constants to AD)."""

# ruff: noqa: ARG001
from __future__ import annotations

from myc.prims.namespace import P
from myc.prims.registry import forward_rule, reverse_rule
from myc.prims.values import ZERO

__all__ = ["bprop_after", "bprop_checked", "jvp_after", "jvp_checked"]


@reverse_rule(P.after)
def bprop_after(token, value, out, dout):
    return (ZERO, dout)


@forward_rule(P.after, structural=True)
def jvp_after(token, value, ttoken, tvalue, out):
    return tvalue


@reverse_rule(P.checked)
def bprop_checked(checks, value, out, dout):
    return (ZERO, dout)


@forward_rule(P.checked, structural=True)
def jvp_checked(checks, value, tchecks, tvalue, out):
    return tvalue
