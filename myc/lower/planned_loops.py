"""Data-dependent control flow in a planned host program: the typed program's ``loop``,
``loop_out``, ``select``, ``tape_get`` and ``assert_defined`` nodes as steps of
``myc.lower.hostplan``.

Specialization (``myc/infer/control.py``) turns a ``while`` whose condition depends on
data into one ``loop`` node whose body is a typed graph, and an ``if`` on data into
``select`` nodes; a gradient through such a loop (``myc/infer/adjoint.py``) is a taped
rerun of the loop plus a backward loop reading the tape with ``tape_get``.  This module
lowers those nodes for :class:`myc.lower.planned.PlannedLowering` (a loop body is
lowered like the program itself: fused kernels, GEMM, copies).  What a plan without
Python cannot hold -- calls of typed recursive functions (``invoke``), operations
guarded on a branch's path (they can raise in Python) -- is refused with a
:class:`MycError` naming it and its line.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from myc.errors import MycError
from myc.ir.manager import Manager
from myc.ir.nodes import Apply, Constant
from myc.lower.hostplan import Alias, Check, LoopOp, Select, Tape, TapeGet, Value
from myc.lower.program import prim_of_name
from myc.prims import P


def _line(n) -> str:
    loc = getattr(n, "loc", None)
    return f" at line {loc.line}" if loc is not None and getattr(loc, "line", None) else ""


def refusal(n, fname: str, who: str, when: str) -> str:
    """The message refusing ``n`` (an ``invoke`` or ``guarded`` node) in ``fname``
    (``who`` and ``when``: the policy's words, ``myc.lower.planned.Policy``)."""
    p = prim_of_name(n)
    if p == "invoke":
        what = (f"a call of the recursive function {n.inputs[1].value.graph.name}"
                " whose depth depends on the data (a typed function, 'invoke')")
        why = "recursion is not compiled into libraries yet"
    else:
        inner = getattr(getattr(n.inputs[2], "value", None), "name", "an operation")
        what = (f"'{inner}' on one side of a data-dependent branch, where Python can "
                "raise (guarded: an index or a Python division computed from data)")
        why = "a library cannot raise Python's error there"
    return f"{who}: {fname}: {what}{_line(n)} is not supported {when}: {why}"


def _state_value(low, p):
    a = p.abstract
    if not hasattr(a, "shape") or getattr(a, "dtype", None) is None:
        low.reject(p, f"a loop-carried value of type {a}")
    dt = str(np.dtype(a.dtype))
    if dt not in low.policy.dtypes:
        low.reject(p, f"a loop-carried value of type {a}")
    return Value(dt, tuple(a.shape), f"state{p.id}")


def _as(low, v, like, n):
    """``v`` with ``like``'s dtype and shape: a constant is converted (Python's ``True``
    or ``0.0`` where the typed program says ``float32[8]``); anything else must match."""
    if v.dtype == like.dtype and tuple(v.shape) == tuple(like.shape):
        return v
    if v.const is not None and v.const.dtype != object:
        arr = np.broadcast_to(np.asarray(v.const).astype(like.dtype), like.shape)
        if not all(isinstance(d, int) for d in like.shape):
            if arr.ndim == 0 or (arr == arr.flat[0]).all():
                low.reject(n, "a constant array of a dynamic size in a loop's state")
        return Value(like.dtype, tuple(like.shape), "const", const=np.ascontiguousarray(arr))
    low.reject(n, f"{v.describe()} where {like.describe()} is expected")
    return v


SAFE_DIVISIONS = ("truediv", "floordiv", "mod")


def unguard_safe(g) -> None:
    """Rewrite ``g``'s guarded divisions by a nonzero constant (``t = t / 2.0`` on a
    Python float in a loop or branch) as the plain division: it cannot raise, so
    running it off its path is harmless (the ``select`` after it discards the value)."""
    for n in Manager(g).owned.get(g, []):
        if not (isinstance(n, Apply) and isinstance(n.inputs[0], Constant)
                and n.inputs[0].value is P.guarded and len(n.inputs) == 6):
            continue
        prim, divisor = n.inputs[2].value, n.inputs[5]
        if getattr(prim, "name", "") not in SAFE_DIVISIONS or not isinstance(divisor, Constant):
            continue
        d = divisor.value
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, float, np.number)) \
                or d == 0 or d != d:
            continue
        n.inputs = [Constant(prim, n.inputs[0].loc), n.inputs[4], divisor]


def lower_loop(low, n) -> None:
    """``loop(body, enabled, *init, *invariants)`` as a :class:`LoopOp`."""
    body = n.inputs[1].value
    g, ns = body.graph, body.nstate
    en_node = n.inputs[2]
    if isinstance(en_node, Constant) and en_node.value is True:
        enabled = None
    else:
        enabled = low.value(en_node)
    init_nodes, inv_nodes = n.inputs[3:3 + ns], n.inputs[3 + ns:]
    state = []
    for p in g.parameters[:ns]:
        v = low.val[p.id] = _state_value(low, p)
        state.append(v)
    init = [_as(low, low.value(x), s, n) for x, s in zip(init_nodes, state, strict=True)]
    for p, x in zip(g.parameters[ns:], inv_nodes, strict=True):
        low.val[p.id] = low.value(x)  # invariants: the outer values themselves
    outer, low.ops = low.ops, []
    try:
        leaves = low.lower_graph(g)
        body_ops = low.ops
    finally:
        low.ops = outer
    outs = [low.value(x) for x in leaves]
    if len(outs) < 1 + ns:
        low.reject(n, "a loop body without its condition and state")
    go_on = outs[0]
    if go_on.shape != ():
        low.reject(n, f"a loop condition of shape {go_on.shape}")
    next_state = [_as(low, v, s, n) for v, s in zip(outs[1:1 + ns], state, strict=True)]
    exits = outs[1 + ns:]
    positions = {id(s): j for j, s in enumerate(state)}
    staged: list[Any] = []
    for j, v in enumerate(next_state):
        other = positions.get(id(v))
        staged.append(None if other is None or other == j else
                      type(v)(v.dtype, v.shape, f"staged{j}"))
    loc = getattr(n, "loc", None)
    op = LoopOp(enabled, init, state, body_ops, go_on, next_state, exits,
                [None] * len(exits), staged, line=getattr(loc, "line", 0) or 0)
    if body.tape:  # the states its adjoint reads (``LoopBody.taped_states``)
        op.tape = Tape(state, list(body.taped_states()))
    low.loops[n.id] = op
    low.ops.append(op)


def lower_loop_out(low, n) -> None:
    """``loop_out(loop, k)``: an exit value (``k >= 1 + nstate``), or a taped loop's
    tape and iteration count (after the exits)."""
    src, k = n.inputs[1], n.inputs[2].value
    op = low.loops.get(src.id)
    if op is None:
        low.reject(n, "a result of a call of a typed function")
    e = k - 1 - len(op.state)
    if 0 <= e < len(op.exits):
        if op.results[e] is None:
            x = op.exits[e]
            op.results[e] = Value(x.dtype, x.shape, f"v{n.id}")
        low.val[n.id] = op.results[e]
        a = n.abstract
        if hasattr(a, "dtype") and str(np.dtype(a.dtype)) != op.results[e].dtype:
            low.reject(n, f"an exit value of type {a} computed as {op.results[e].dtype}")
    elif op.tape is not None and e == len(op.exits):
        low.val[n.id] = op.tape
    elif op.tape is not None and e == len(op.exits) + 1:
        if op.count is None:
            op.count = Value("int64", (), f"count{n.id}")
        low.val[n.id] = op.count
    else:
        low.reject(n, f"result {k} of a loop with {len(op.state)} carried values")


def lower_select(low, n) -> None:
    """``select(cond, a, b)`` -- an if-converted branch -- as a :class:`Select`."""
    c, a, b = (low.value(x) for x in n.inputs[1:4])
    out = low.new(n)
    if c.shape != ():
        low.reject(n, f"an elementwise select on a condition of shape {c.shape}")
    low.ops.append(Select(c, _as(low, a, out, n), _as(low, b, out, n), out))


def lower_tape_get(low, n) -> None:
    """``tape_get(tape, j, k)``: state ``j`` at the start of iteration ``k``."""
    tape = low.value(n.inputs[1])
    if not isinstance(tape, Tape):
        low.reject(n, "a tape that is not a taped loop's")
    j = n.inputs[2].value
    step = low.value(n.inputs[3])
    out = low.new(n)
    want = tape.states[j]
    if out.dtype != want.dtype or tuple(out.shape) != tuple(want.shape):
        low.reject(n, f"a tape row {want.describe()} read as {out.describe()}")
    if j not in tape.read:
        low.reject(n, "a tape row its loop does not store")
    low.ops.append(TapeGet(tape, j, step, out))


def lower_assert_defined(low, n) -> None:
    """``assert_defined(flag, value, name)``: a variable first set inside a loop, read
    after it -- the call fails with ``MYC_ERR_RAISE`` where Python raises
    ``UnboundLocalError`` (the loop never ran), else the value itself."""
    flag, value = low.value(n.inputs[1]), low.value(n.inputs[2])
    name = n.inputs[3].value
    if flag.shape != ():
        low.reject(n, f"a definedness flag of shape {flag.shape}")
    line = _line(n).replace(" at ", "")
    low.ops.append(Check(flag, f"{line}: local variable '{name}' is referenced before "
                         "assignment (UnboundLocalError in Python)"))
    out = low.new(n)
    if out.dtype != value.dtype or tuple(out.shape) != tuple(value.shape):
        low.reject(n, f"{value.describe()} read as {out.describe()}")
    low.ops.append(Alias(value, out))


def _refuse(low, n) -> None:
    raise MycError(refusal(n, low.typed.name, low.policy.who, low.policy.when))


CONTROL = {"loop": lower_loop, "loop_out": lower_loop_out, "select": lower_select,
           "tape_get": lower_tape_get, "assert_defined": lower_assert_defined,
           "invoke": _refuse, "guarded": _refuse}
