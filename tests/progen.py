"""Random, well-typed programs in the myc subset of Python, for property tests.

``program()`` is a Hypothesis strategy producing a :class:`Program`: the source text of a
module that defines ``def f(a, b, x):`` (``a``, ``b`` Python floats, ``x`` a NumPy array
of a small fixed shape).  The body mixes arithmetic, NumPy elementwise functions,
reductions, ``if``/``elif``/``else``, conditional expressions, ``for`` and ``while``
loops with ``break``/``continue``, nested ``def``/``lambda`` closures, functions passed
as values, tuple packing and unpacking, augmented assignment and early ``return``.

Invariants the generator keeps, so that plain CPython runs every program without error
and with finite results:

* Every name is assigned before it is read on every path: all scalar, array, loop and
  counter variables are assigned at the top of ``f``.  Nested functions only read the
  enclosing variables (their own locals have fresh names) and are called right after
  they are defined, so Python's late binding and an early-binding compiler agree.
* Every variable holds a value of one kind for the whole function (scalar float, or an
  array of the input's shape) whose magnitude is at most ``B``.  Expressions carry a
  bound on their magnitude; an assignment whose bound exceeds ``B`` is squashed with
  ``tanh``/``clip``/a constant scale.  Division is only by ``1.0 + y*y``, ``log`` only of
  ``1.0 + y*y`` or ``1 + |y|``, ``exp`` only of bounded arguments, ``sqrt`` only of
  ``1.0 + y*y`` or ``|y|``.
* No two names share one array object (every array assignment stores a fresh array),
  so in-place augmented assignment in CPython means the same as ``v = v + e``.
* Loops run a small constant number of times; ``while`` loops carry a counter that is
  incremented first thing in the body, before any ``continue``.

With ``f32=True`` the program is meant for a float32 ``x``: scalars stay Python floats
(only Python arithmetic, builtins and ``math`` on scalars, no reductions, no NumPy
scalars), so by NumPy's promotion rules every array stays float32.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

B = 3.0  # bound on the magnitude of every variable, and of the inputs
SHAPES = ((4,), (3,), (2, 3))
LITERALS = ("0.5", "1.5", "2.0", "0.25", "(-0.75)", "3.0", "(-1.0)", "0.1", "1.0", "(-2.5)")

PRELUDE = """\
import math

import numpy as np


def apply_twice(fn, z):
    return fn(fn(z))

"""


@dataclass(frozen=True)
class Program:
    source: str  # the whole module text
    shape: tuple[int, ...]  # shape of x
    dtype: str  # dtype of x: "float64" or "float32"
    ret: tuple[str, ...]  # kinds returned: ("s",), ("a",) or a pair; a pair is returned as a tuple

    def __repr__(self):  # the source itself is shown by the tests with note()
        lines = self.source.count("\n")
        return f"Program(<{lines} lines>, shape={self.shape}, dtype={self.dtype}, ret={self.ret})"

    def _repr_pretty_(self, p, cycle):  # what Hypothesis prints for a falsifying example
        p.text(repr(self))


@dataclass(frozen=True)
class E:
    text: str
    bound: float
    fresh: bool = True  # evaluates to a new object (not a bare name)


@dataclass
class Scope:
    scalars: list  # of E, readable scalar leaves
    arrays: list  # of E, readable array leaves

    def extend(self, scalars=(), arrays=()):
        return Scope(self.scalars + list(scalars), self.arrays + list(arrays))


def _lit_bound(text):
    return abs(float(text.strip("()")))


class _Gen:
    def __init__(self, draw, *, shape, f32, ret):
        self.draw = draw
        self.shape = shape
        self.f32 = f32
        self.ret = ret
        self.n = int(np.prod(shape))
        self.names = itertools.count()
        self.loop_vars = []  # names to pre-declare as ints
        self.float_vars = []  # names to pre-declare as floats (tuple/array iteration)

    # -- draws --------------------------------------------------------------------------

    def i(self, lo, hi):
        return self.draw(st.integers(lo, hi))

    def pick(self, options):
        return self.draw(st.sampled_from(options))

    def coin(self, p_num=1, p_den=2):
        return self.i(1, p_den) <= p_num

    def fresh(self, prefix):
        return f"{prefix}{next(self.names)}"

    # -- expressions --------------------------------------------------------------------

    def leaf(self, kind, scope):
        if kind == "s":
            options = ["var", "var", "var", "lit", "lit"]
            if not self.f32:
                options += ["elem"]
            what = self.pick(options)
            if what == "lit" and self.coin(1, 8):
                what = "len"
            if what == "var" and scope.scalars:
                return self.pick(scope.scalars)
            if what == "elem":
                name = self.pick([e.text for e in scope.arrays])
                idx = ", ".join(str(self.i(-d, d - 1)) for d in self.shape)
                return E(f"{name}[{idx}]", B)
            if what == "len":
                return E("float(len(x))", float(self.shape[0]))
            t = self.pick(LITERALS)
            return E(t, _lit_bound(t))
        return self.pick(scope.arrays)

    def expr(self, kind, scope, depth):
        if depth <= 0 or self.i(0, 3) == 0:
            return self.leaf(kind, scope)
        d = depth - 1
        if kind == "s":
            ops = ["bin", "bin", "div", "neg", "sq", "abs", "math", "minmax", "ifexp"]
            if not self.f32:
                ops += ["bin", "npu", "exp", "sqrt", "log", "reduce", "reduce", "clip"]
        else:
            ops = ["bin", "bin", "bin", "div", "neg", "sq", "npu", "abs", "exp", "sqrt", "log"]
            ops += ["minmax", "clip", "ifexp", "where", "where", "keepdims"]
        op = self.pick(ops)
        return getattr(self, "_e_" + op)(kind, scope, d)

    def sub(self, scope, d, kind=None, want_array=False):
        """A subexpression; kind None = either (array if ``want_array``)."""
        if kind is None:
            kind = "a" if want_array else self.pick(["s", "a"])
        return self.expr(kind, scope, d)

    def operand_kinds(self, kind):
        if kind == "s":
            return "s", "s"
        return self.pick([("a", "a"), ("a", "s"), ("s", "a")])

    def _e_bin(self, kind, scope, d):
        k1, k2 = self.operand_kinds(kind)
        e1, e2 = self.expr(k1, scope, d), self.expr(k2, scope, d)
        op = self.pick(["+", "-", "*"])
        bound = e1.bound * e2.bound if op == "*" else e1.bound + e2.bound
        return E(f"({e1.text} {op} {e2.text})", bound)

    def _e_div(self, kind, scope, d):
        num = self.expr(kind, scope, d)
        den = self.expr("s" if kind == "s" else self.pick(["s", "a"]), scope, d)
        if self.coin():
            return E(f"({num.text} / (1.0 + {den.text} * {den.text}))", num.bound)
        return E(f"({num.text} / (1.0 + {den.text} ** 2))", num.bound)

    def _e_neg(self, kind, scope, d):
        e = self.expr(kind, scope, d)
        return E(f"(-{e.text})", e.bound)

    def _e_sq(self, kind, scope, d):
        e = self.expr(kind, scope, d)
        if self.f32 or kind == "a" or self.coin():
            return E(f"({e.text} ** 2)", e.bound**2)
        return E(f"np.square({e.text})", e.bound**2)

    def _e_npu(self, kind, scope, d):
        e = self.expr(kind, scope, d)
        fn, bound = self.pick([("sin", 1.0), ("cos", 1.0), ("tanh", 1.0), ("arctan", 1.6)])
        return E(f"np.{fn}({e.text})", bound)

    def _e_abs(self, kind, scope, d):
        e = self.expr(kind, scope, d)
        if kind == "s" and (self.f32 or self.coin()):
            return E(f"abs({e.text})", e.bound)
        return E(f"np.abs({e.text})", e.bound)

    def _e_exp(self, kind, scope, d):
        e = self.expr(kind, scope, d)
        if e.bound <= B:
            return E(f"np.exp({e.text})", math.exp(e.bound))
        if self.coin():
            return E(f"np.exp(np.tanh({e.text}))", math.e)
        return E(f"np.expm1(np.tanh({e.text}))", math.e)

    def _e_sqrt(self, kind, scope, d):
        e = self.expr(kind, scope, d)
        if self.coin():
            return E(f"np.sqrt(1.0 + {e.text} * {e.text})", math.sqrt(1.0 + e.bound**2))
        return E(f"np.sqrt(np.abs({e.text}))", math.sqrt(e.bound))

    def _e_log(self, kind, scope, d):
        e = self.expr(kind, scope, d)
        if self.coin():
            return E(f"np.log(1.0 + {e.text} * {e.text})", math.log1p(e.bound**2))
        return E(f"np.log1p(np.abs({e.text}))", math.log1p(e.bound))

    def _e_math(self, kind, scope, d):
        e = self.expr("s", scope, d)
        fn = self.pick(["sin", "cos", "tanh", "exp", "sqrt", "log", "atan"])
        if fn in ("sin", "cos", "tanh"):
            return E(f"math.{fn}({e.text})", 1.0)
        if fn == "atan":
            return E(f"math.atan({e.text})", 1.6)
        if fn == "exp":
            if e.bound <= B:
                return E(f"math.exp({e.text})", math.exp(e.bound))
            return E(f"math.exp(math.tanh({e.text}))", math.e)
        if fn == "sqrt":
            return E(f"math.sqrt(1.0 + {e.text} * {e.text})", math.sqrt(1.0 + e.bound**2))
        return E(f"math.log(1.0 + {e.text} * {e.text})", math.log1p(e.bound**2))

    def _e_minmax(self, kind, scope, d):
        k1, k2 = self.operand_kinds(kind)
        e1, e2 = self.expr(k1, scope, d), self.expr(k2, scope, d)
        bound = max(e1.bound, e2.bound)
        if kind == "s" and (self.f32 or self.coin()):
            fn = self.pick(["min", "max"])
            return E(f"{fn}({e1.text}, {e2.text})", bound)
        fn = self.pick(["minimum", "maximum"])
        return E(f"np.{fn}({e1.text}, {e2.text})", bound)

    def _e_clip(self, kind, scope, d):
        e = self.expr(kind, scope, d)
        lo, hi = self.pick([("-1.0", "1.0"), ("-0.5", "2.0"), ("0.0", "1.5"), ("-3.0", "3.0")])
        return E(f"np.clip({e.text}, {lo}, {hi})", 3.0)

    def _e_ifexp(self, kind, scope, d):
        c = self.cond(scope, min(d, 1))
        e1, e2 = self.expr(kind, scope, d), self.expr(kind, scope, d)
        return E(
            f"({e1.text} if {c} else {e2.text})", max(e1.bound, e2.bound), e1.fresh and e2.fresh
        )

    def _e_where(self, kind, scope, d):
        c = self.array_cond(scope, min(d, 1))
        e1, e2 = self.sub(scope, d), self.sub(scope, d, want_array=self.f32)
        return E(f"np.where({c}, {e1.text}, {e2.text})", max(e1.bound, e2.bound))

    def _e_reduce(self, kind, scope, d):
        e = self.expr("a", scope, d)
        fn = self.pick(["sum", "mean", "max", "min"])
        bound = e.bound * self.n if fn == "sum" else e.bound
        if self.coin():
            return E(f"np.{fn}({e.text})", bound)
        return E(f"{e.text}.{fn}()", bound)

    def _e_keepdims(self, kind, scope, d):
        e1, e2 = self.expr("a", scope, d), self.expr("a", scope, d)
        axis = self.i(-1, len(self.shape) - 1)
        fn = self.pick(["sum", "mean", "max", "min"])
        rb = e2.bound * self.shape[axis] if fn == "sum" else e2.bound
        if self.coin():
            red = f"np.{fn}({e2.text}, axis={axis}, keepdims=True)"
        else:
            red = f"{e2.text}.{fn}(axis={axis}, keepdims=True)"
        op = self.pick(["+", "-", "*"])
        bound = e1.bound * rb if op == "*" else e1.bound + rb
        return E(f"({e1.text} {op} {red})", bound)

    # -- conditions ---------------------------------------------------------------------

    CMPS = ("<", "<=", ">", ">=")

    def cond(self, scope, depth):
        what = self.pick(["cmp", "cmp", "chain", "and", "or", "not"] if depth > 0 else ["cmp"])
        if what == "cmp":
            e1, e2 = self.expr("s", scope, 1), self.expr("s", scope, 1)
            return f"{e1.text} {self.pick(self.CMPS)} {e2.text}"
        if what == "chain":
            es = [self.expr("s", scope, 1).text for _ in range(3)]
            return f"{es[0]} {self.pick(self.CMPS)} {es[1]} {self.pick(self.CMPS)} {es[2]}"
        if what == "not":
            return f"not ({self.cond(scope, depth - 1)})"
        return f"({self.cond(scope, depth - 1)}) {what} ({self.cond(scope, depth - 1)})"

    def array_cond(self, scope, depth):
        e1, e2 = self.expr("a", scope, depth), self.sub(scope, depth)
        return f"{e1.text} {self.pick(self.CMPS)} {e2.text}"

    # -- fitting a value into a variable ------------------------------------------------

    def fit(self, e, kind):
        """Text of ``e`` squashed to magnitude <= B, and a fresh object if an array."""
        if e.bound <= B and (kind == "s" or e.fresh):
            return e.text
        if e.bound <= B:  # a bare array name or alias: copy it
            return self.pick([f"({e.text} * 1.0)", f"({e.text} + 0.0)", f"np.tanh({e.text})"])
        how = self.pick(["tanh", "clip", "scale", "sin"])
        if how == "scale":
            c = math.floor(B / e.bound * 1000) / 1000
            if c >= 0.001:
                return f"({e.text} * {c!r})"
            how = "tanh"
        if kind == "s" and self.f32:
            return {
                "tanh": f"math.tanh({e.text})",
                "sin": f"math.sin({e.text})",
                "clip": f"max(-3.0, min(3.0, {e.text}))",
            }[how]
        return {
            "tanh": f"np.tanh({e.text})",
            "sin": f"np.sin({e.text})",
            "clip": f"np.clip({e.text}, -3.0, 3.0)",
        }[how]

    def value(self, kind, scope, depth=None):
        if depth is None:
            depth = self.i(1, 3)
        return self.fit(self.expr(kind, scope, depth), kind)

    def ret_value(self, scope):
        vals = [self.value(k, scope) for k in self.ret]
        if len(vals) == 1:
            return vals[0]
        return ", ".join(vals) if self.coin() else "(" + ", ".join(vals) + ")"

    # -- statements ---------------------------------------------------------------------

    def block(self, scope, depth, in_loop, pad, lo=1, hi=3):
        out = []
        if len(pad) > 8:  # keep deeply nested blocks short
            hi = min(hi, 2)
        for _ in range(self.i(lo, hi)):
            out += self.stmt(scope, depth, in_loop, pad)
        return out

    def stmt(self, scope, depth, in_loop, pad):
        kinds = ["assign", "assign", "assign", "aug", "aug", "tuple", "def", "lambda", "ret"]
        if depth > 0:
            kinds += ["if", "if", "for", "for", "while", "tfor"]
            if len(self.shape) == 1 and not self.f32:
                kinds += ["afor"]
        if in_loop:
            kinds += ["jump", "jump"]
        what = self.pick(kinds)
        return getattr(self, "_s_" + what)(scope, depth, in_loop, pad)

    def target(self, kind):
        return self.pick(self.svars if kind == "s" else self.avars)

    def _s_assign(self, scope, depth, in_loop, pad):
        kind = self.pick(["s", "a"])
        return [f"{pad}{self.target(kind)} = {self.value(kind, scope)}"]

    def _s_aug(self, scope, depth, in_loop, pad):
        kind = self.pick(["s", "a"])
        t = self.target(kind)
        ek = "s" if kind == "s" else self.pick(["s", "a"])
        op = self.pick(["+=", "-=", "*=", "/="])
        e = self.expr(ek, scope, self.i(0, 2))
        if op == "*=":
            if e.bound > 1.0:
                e = E(
                    self.pick([f"np.tanh({e.text})", f"np.cos({e.text})"])
                    if not (self.f32 and ek == "s")
                    else f"math.cos({e.text})",
                    1.0,
                )
            return [f"{pad}{t} *= {e.text}"]
        if op == "/=":
            return [f"{pad}{t} /= 1.0 + {e.text} * {e.text}"]
        lines = [f"{pad}{t} {op} {e.text}"]
        if e.bound > 0:
            lines.append(f"{pad}{t} = {self.fit(E(t, B + e.bound), kind)}")
        return lines

    def _s_tuple(self, scope, depth, in_loop, pad):
        what = self.pick(["pair", "swap", "pack", "call"])
        if what == "swap":
            kind = self.pick(["s", "a"])
            pool = self.svars if kind == "s" else self.avars
            if len(pool) >= 2:
                t1, t2 = self.draw(st.permutations(pool))[:2]
                return [f"{pad}{t1}, {t2} = {t2}, {t1}"]
        k1, k2 = self.pick(["s", "a"]), self.pick(["s", "a"])
        t1, t2 = self.two_targets(k1, k2)
        v1, v2 = self.value(k1, scope), self.value(k2, scope)
        if what == "pack":
            p = self.fresh("p")
            return [f"{pad}{p} = ({v1}, {v2})", f"{pad}{t1}, {t2} = {p}"]
        if what == "call":  # a local function returning a tuple
            g, tn = self.fresh("g"), self.fresh("t")
            pk = self.pick(["s", "a"])
            inner = scope.extend(**{"scalars" if pk == "s" else "arrays": [E(tn, B, False)]})
            r1, r2 = self.value(k1, inner), self.value(k2, inner)
            return [
                f"{pad}def {g}({tn}):",
                f"{pad}    return {r1}, {r2}",
                f"{pad}{t1}, {t2} = {g}({self.value(pk, scope)})",
            ]
        return [f"{pad}{t1}, {t2} = {v1}, {v2}"]

    def two_targets(self, k1, k2):
        if k1 == k2:
            pool = self.svars if k1 == "s" else self.avars
            if len(pool) >= 2:
                t1, t2 = self.draw(st.permutations(pool))[:2]
                return t1, t2
        return self.target(k1), self.target(k2)

    def _s_def(self, scope, depth, in_loop, pad):
        g, tn = self.fresh("g"), self.fresh("t")
        pk, rk = self.pick(["s", "a"]), self.pick(["s", "a"])
        inner = scope.extend(**{"scalars" if pk == "s" else "arrays": [E(tn, B, False)]})
        lines = [f"{pad}def {g}({tn}):"]
        for _ in range(self.i(0, 2)):
            uk = self.pick(["s", "a"])
            u = self.fresh("u")
            lines.append(f"{pad}    {u} = {self.value(uk, inner)}")
            inner = inner.extend(**{"scalars" if uk == "s" else "arrays": [E(u, B, False)]})
        if self.coin(1, 3):
            lines.append(f"{pad}    if {self.cond(inner, 1)}:")
            lines.append(f"{pad}        return {self.value(rk, inner)}")
        lines.append(f"{pad}    return {self.value(rk, inner)}")
        return lines + self.calls(g, pk, rk, scope, pad)

    def _s_lambda(self, scope, depth, in_loop, pad):
        h, tn = self.fresh("h"), self.fresh("t")
        pk, rk = self.pick(["s", "a"]), self.pick(["s", "a"])
        inner = scope.extend(**{"scalars" if pk == "s" else "arrays": [E(tn, B, False)]})
        lines = [f"{pad}{h} = lambda {tn}: {self.value(rk, inner)}"]
        return lines + self.calls(h, pk, rk, scope, pad)

    def calls(self, g, pk, rk, scope, pad):
        """Call the just-defined function ``g`` (param kind pk, result kind rk, |result| <= B)."""
        t = self.target(rk)
        how = self.pick(["one", "two", "twice", "nest"] if pk == rk else ["one", "two"])
        if how == "one":
            call = E(f"{g}({self.value(pk, scope)})", B)
        elif how == "two":
            op = self.pick(["+", "-", "*"])
            bound = B * B if op == "*" else 2 * B
            call = E(f"({g}({self.value(pk, scope)}) {op} {g}({self.value(pk, scope)}))", bound)
        elif how == "twice":
            call = E(f"apply_twice({g}, {self.value(pk, scope)})", B)
        else:
            call = E(f"{g}({g}({self.value(pk, scope)}))", B)
        return [f"{pad}{t} = {self.fit(call, rk)}"]

    def _s_ret(self, scope, depth, in_loop, pad):
        return [f"{pad}if {self.cond(scope, 1)}:", f"{pad}    return {self.ret_value(scope)}"]

    def _s_jump(self, scope, depth, in_loop, pad):
        return [f"{pad}if {self.cond(scope, 1)}:", f"{pad}    {self.pick(['break', 'continue'])}"]

    def _s_if(self, scope, depth, in_loop, pad):
        lines = [f"{pad}if {self.cond(scope, 2)}:"]
        lines += self.block(scope, depth - 1, in_loop, pad + "    ")
        for _ in range(self.i(0, 2)):
            lines.append(f"{pad}elif {self.cond(scope, 2)}:")
            lines += self.block(scope, depth - 1, in_loop, pad + "    ")
        if self.coin():
            lines.append(f"{pad}else:")
            lines += self.block(scope, depth - 1, in_loop, pad + "    ")
        return lines

    def _s_for(self, scope, depth, in_loop, pad):
        i = self.fresh("i")
        self.loop_vars.append(i)
        k = self.i(1, 4)
        rng = self.pick([f"range({k})", f"range(1, {k + 1})", f"range({k}, 0, -1)"])
        inner = scope.extend(scalars=[E(f"float({i})", float(k)), E(f"({i} * 0.5)", k * 0.5)])
        return [f"{pad}for {i} in {rng}:"] + self.block(inner, depth - 1, True, pad + "    ")

    def _s_while(self, scope, depth, in_loop, pad):
        c = self.fresh("c")
        self.loop_vars.append(c)
        k = self.i(1, 4)
        inner = scope.extend(scalars=[E(f"float({c})", float(k))])
        if self.coin():
            head = f"while {c} < {k}:"
            if self.coin():
                head = f"while {c} < {k} and ({self.cond(scope, 1)}):"
            lines = [f"{pad}{c} = 0", f"{pad}{head}", f"{pad}    {c} += 1"]
        else:
            lines = [
                f"{pad}{c} = 0",
                f"{pad}while True:",
                f"{pad}    {c} += 1",
                f"{pad}    if {c} > {k}:",
                f"{pad}        break",
            ]
        return lines + self.block(inner, depth - 1, True, pad + "    ")

    def _s_tfor(self, scope, depth, in_loop, pad):
        r = self.fresh("r")
        self.float_vars.append(r)
        items = [self.value("s", scope, self.i(0, 2)) for _ in range(self.i(1, 3))]
        inner = scope.extend(scalars=[E(r, B, False)])
        head = f"{pad}for {r} in ({', '.join(items)},):"
        return [head] + self.block(inner, depth - 1, True, pad + "    ")

    def _s_afor(self, scope, depth, in_loop, pad):
        r = self.fresh("r")
        self.float_vars.append(r)
        seq = self.pick(["x", self.value("a", scope, self.i(1, 2))])
        inner = scope.extend(scalars=[E(r, B, False)])
        return [f"{pad}for {r} in {seq}:"] + self.block(inner, depth - 1, True, pad + "    ")

    # -- the whole function -------------------------------------------------------------

    def function(self):
        self.svars = [f"s{j}" for j in range(self.i(2, 4))]
        self.avars = [f"v{j}" for j in range(self.i(1, 3))]
        scope = Scope([E("a", B, False), E("b", B, False)], [E("x", B, False)])
        lines = []
        for s in self.svars:
            lines.append(f"    {s} = {self.value('s', scope, self.i(0, 2))}")
            scope = scope.extend(scalars=[E(s, B, False)])
        for v in self.avars:
            lines.append(f"    {v} = {self.value('a', scope, self.i(1, 2))}")
            scope = scope.extend(arrays=[E(v, B, False)])
        body = self.block(scope, self.i(1, 3), False, "    ", lo=2, hi=5)
        decls = [f"    {n} = 0" for n in self.loop_vars]
        decls += [f"    {n} = 0.0" for n in self.float_vars]
        ret = [f"    return {self.ret_value(scope)}"]
        return "def f(a, b, x):\n" + "\n".join(lines + decls + body + ret) + "\n"


@st.composite
def program(draw, *, shape=None, ret=None, f32=False):
    """Strategy for a :class:`Program` (see the module docstring)."""
    if shape is None:
        shape = draw(st.sampled_from(SHAPES))
    if ret is None:
        ret = draw(st.sampled_from([("s",), ("a",)] if not f32 else [("a",)]))
    gen = _Gen(draw, shape=shape, f32=f32, ret=ret)
    source = PRELUDE + "\n" + gen.function()
    return Program(source, tuple(shape), "float32" if f32 else "float64", tuple(ret))


def tuple_program(**kw):
    """Programs returning a pair ``(s, t)``."""
    return st.sampled_from([("s", "a"), ("a", "s"), ("s", "s")]).flatmap(
        lambda r: program(ret=r, **kw)
    )


def f32_program(**kw):
    """Programs for a float32 ``x`` returning a float32 array."""
    return program(f32=True, ret=("a",), **kw)


def arguments(prog):
    """Strategy for ``(a, b, x)`` matching ``prog``."""
    elems = st.floats(
        -B, B, allow_nan=False, allow_subnormal=False, width=32 if prog.dtype == "float32" else 64
    )
    scal = st.floats(-B, B, allow_nan=False, allow_subnormal=False)
    return st.tuples(scal, scal, hnp.arrays(np.dtype(prog.dtype), prog.shape, elements=elems))


_counter = itertools.count()


def load(prog, directory):
    """Write ``prog`` to a new file in ``directory``, import it, return ``(f, module_name)``.

    The caller should ``sys.modules.pop(module_name, None)`` when done.
    """
    name = f"_myc_progen_{next(_counter)}_{id(prog):x}"
    path = Path(directory) / f"{name}.py"
    path.write_text(prog.source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module.f, name
