"""Random, well-typed programs in the myc subset of Python, for property tests.

``program()`` is a Hypothesis strategy producing a :class:`Program`: the source text of a
module that defines ``def f(a, b, x):`` (``a``, ``b`` Python floats, ``x`` a NumPy array
of a small fixed shape).  The body mixes arithmetic, NumPy elementwise functions,
reductions, ``if``/``elif``/``else``, conditional expressions, ``for`` and ``while``
loops with ``break``/``continue`` (over ``range``, tuples and arrays), nested
``def``/``lambda`` closures (with full bodies, defaults, keyword calls, recursion),
functions passed as values, tuple packing and unpacking, augmented assignment, early
``return``, indexing (integer, slice, integer-array), ``reshape``/``.T``, ``@``, array
constructors and ``astype``.

Invariants the generator keeps, so that plain CPython runs every program without error
and with finite results:

* Every name is assigned before it is read on every path: all scalar, array, loop and
  counter variables are assigned at the top of the function (``f`` or a nested ``def``)
  they belong to.  Nested functions only read the enclosing variables (their own locals
  have fresh names) and are called right after
  they are defined, so Python's late binding and an early-binding compiler agree (myc
  rejects a closure whose captured variable is reassigned before it is called).
* Every variable holds a value of one kind for the whole function (scalar float, or an
  array of the input's shape) whose magnitude is at most ``B``.  Expressions carry a
  bound on their magnitude; an assignment whose bound exceeds ``B`` is squashed with
  ``tanh``/``clip``/a constant scale.  Division is only by ``1.0 + y*y`` or 2, ``log`` only of
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
from dataclasses import dataclass, field
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


@dataclass
class Frame:
    """The function whose body is being generated: its assignable names and return kinds."""

    svars: list  # scalar variables (names)
    avars: list  # array variables (names)
    ret: tuple  # kinds returned
    loop_vars: list = field(default_factory=list)  # to pre-declare as ints
    float_vars: list = field(default_factory=list)  # to pre-declare as floats

    def decls(self, pad):
        return [f"{pad}{n} = 0" for n in self.loop_vars] + [
            f"{pad}{n} = 0.0" for n in self.float_vars
        ]


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
        self.fr = None  # the Frame being generated

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
        if self.coin(1, 6):
            return self.array_constant()
        return self.pick(scope.arrays)

    def array_constant(self):
        shp = ", ".join(map(str, self.shape))
        options = ["ones", "zeros"]
        if not self.f32:
            options += ["full", "arange", "linspace", "literal"]
        what = self.pick(options)
        if what in ("ones", "zeros"):
            return E(f"np.{what}_like(x)", 1.0)
        if what == "full":
            t = self.pick(LITERALS)
            return E(f"np.full(x.shape, {t})", _lit_bound(t))
        if what == "arange":
            return E(f"(np.arange({self.n}).reshape({shp}) * 0.5)", 0.5 * (self.n - 1))
        if what == "linspace":
            return E(f"np.linspace(-1.0, 1.0, {self.n}).reshape({shp})", 1.0)
        vals = [self.pick(LITERALS).strip("()") for _ in range(self.n)]
        if len(self.shape) == 1:
            text = "[" + ", ".join(vals) + "]"
        else:
            rows = [vals[r * self.shape[1] : (r + 1) * self.shape[1]] for r in range(self.shape[0])]
            text = "[" + ", ".join("[" + ", ".join(r) + "]" for r in rows) + "]"
        return E(f"np.array({text})", B)

    def expr(self, kind, scope, depth):
        if depth <= 0 or self.i(0, 3) == 0:
            return self.leaf(kind, scope)
        d = depth - 1
        if kind == "s":
            ops = ["bin", "bin", "div", "neg", "sq", "abs", "math", "minmax", "ifexp"]
            if not self.f32:
                ops += ["bin", "npu", "exp", "sqrt", "log", "reduce", "reduce", "clip"]
                if len(self.shape) == 1:
                    ops += ["dot"]
        else:
            ops = ["bin", "bin", "bin", "div", "neg", "sq", "npu", "abs", "exp", "sqrt", "log"]
            ops += ["minmax", "clip", "ifexp", "where", "where", "keepdims", "gather", "reshape"]
            ops += ["mask"]
            if len(self.shape) == 2:
                ops += ["matmul"]
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
        if k2 == "s" and self.coin(1, 6):  # an int operand (the other one is a float)
            e2 = E(self.pick(["2", "3"]), 3.0)
        op = self.pick(["+", "-", "*"])
        bound = e1.bound * e2.bound if op == "*" else e1.bound + e2.bound
        return E(f"({e1.text} {op} {e2.text})", bound)

    def _e_div(self, kind, scope, d):
        num = self.expr(kind, scope, d)
        den = self.expr("s" if kind == "s" else self.pick(["s", "a"]), scope, d)
        if self.coin(1, 5):
            return E(f"({num.text} / 2)", num.bound / 2)
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
        text = e.text
        if self.coin(1, 3):  # reduce a non-empty slice
            if len(self.shape) == 1:
                text += self.pick(["[1:]", "[:-1]", "[::2]", "[1:3]", "[-2:]"])
            else:
                text += self.pick(["[:, 1:]", "[1:, :2]", "[0]", "[:, ::2]", "[-1, :]"])
        if self.coin():
            return E(f"np.{fn}({text})", bound)
        return E(f"{text}.{fn}()", bound)

    def _e_dot(self, kind, scope, d):  # 1-D only
        e1, e2 = self.expr("a", scope, d), self.expr("a", scope, d)
        bound = self.n * e1.bound * e2.bound
        if self.coin():
            return E(f"({e1.text} @ {e2.text})", bound)
        return E(f"np.dot({e1.text}, {e2.text})", bound)

    def _e_matmul(self, kind, scope, d):  # 2-D only: (m, n) @ (n, m) @ (m, n)
        e1, e2, e3 = (self.expr("a", scope, d) for _ in range(3))
        m, n = self.shape
        bound = n * e1.bound * e2.bound * m * e3.bound
        if self.coin():
            return E(f"(({e1.text} @ {e2.text}.T) @ {e3.text})", bound)
        return E(f"np.matmul(np.dot({e1.text}, np.transpose({e2.text})), {e3.text})", bound)

    def _e_gather(self, kind, scope, d):
        e = self.expr("a", scope, d)
        n0 = self.shape[0]
        idx = ", ".join(str(self.i(-n0, n0 - 1)) for _ in range(n0))
        return E(f"{e.text}[np.array([{idx}])]", e.bound)

    def _e_reshape(self, kind, scope, d):
        e = self.expr("a", scope, d)
        forms = {
            (4,): ["{}.reshape(2, 2).T.reshape(4)", "np.reshape({}, (2, 2)).T.reshape(-1)"],
            (3,): ["{}.reshape(3, 1).T.reshape(3)", "{}.reshape(1, 3)[0]"],
            (2, 3): ["{}.reshape(3, 2).T", "{}.T.reshape(2, 3)", "np.transpose({}.reshape(3, 2))"],
        }[self.shape]
        # reshape and .T make views: the result is fresh only if e is
        return E(self.pick(forms).format(e.text), e.bound, e.fresh)

    def _e_mask(self, kind, scope, d):
        c = self.array_cond(scope, min(d, 1))
        return E(f"({c}).astype(np.{'float32' if self.f32 else 'float64'})", 1.0)

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
        vals = [self.value(k, scope) for k in self.fr.ret]
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
        kinds += ["rec"]
        if depth > 0:
            kinds += ["if", "if", "for", "for", "while", "tfor"]
            if len(self.shape) == 1 and not self.f32:
                kinds += ["afor"]
        if in_loop:
            kinds += ["jump", "jump"]
        what = self.pick(kinds)
        return getattr(self, "_s_" + what)(scope, depth, in_loop, pad)

    def target(self, kind):
        return self.pick(self.fr.svars if kind == "s" else self.fr.avars)

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
            pool = self.fr.svars if kind == "s" else self.fr.avars
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
            pool = self.fr.svars if k1 == "s" else self.fr.avars
            if len(pool) >= 2:
                t1, t2 = self.draw(st.permutations(pool))[:2]
                return t1, t2
        return self.target(k1), self.target(k2)

    @staticmethod
    def with_leaf(scope, kind, e):
        return scope.extend(**{"scalars" if kind == "s" else "arrays": [e]})

    def params(self, scope, pk):
        """Parameter list of a new function: ``t`` of kind pk and maybe ``k=<literal>``."""
        tn = self.fresh("t")
        inner = self.with_leaf(scope, pk, E(tn, B, False))
        if self.coin(2, 3):
            return [tn], None, inner
        kn = self.fresh("k")
        inner = inner.extend(scalars=[E(kn, B, False)])
        return [tn, f"{kn}={self.pick(LITERALS)}"], kn, inner

    def _s_def(self, scope, depth, in_loop, pad):
        g = self.fresh("g")
        pk, rk = self.pick(["s", "a"]), self.pick(["s", "a"])
        params, kn, inner = self.params(scope, pk)
        lines = [f"{pad}def {g}({', '.join(params)}):"]
        if depth > 0 and self.coin():  # a full body: locals, branches, loops, closures
            fr = Frame(
                svars=[self.fresh("u") for _ in range(self.i(1, 2))],
                avars=[self.fresh("u") for _ in range(self.i(1, 2))],
                ret=(rk,),
            )
            inits, inner = self.init_vars(fr, inner, pad + "    ")
            outer, self.fr = self.fr, fr
            try:
                body = self.block(inner, depth - 1, False, pad + "    ")
                ret = f"{pad}    return {self.ret_value(inner)}"
            finally:
                self.fr = outer
            lines += inits + fr.decls(pad + "    ") + body + [ret]
            return lines + self.calls(g, kn, pk, rk, scope, pad)
        for _ in range(self.i(0, 2)):
            uk = self.pick(["s", "a"])
            u = self.fresh("u")
            lines.append(f"{pad}    {u} = {self.value(uk, inner)}")
            inner = inner.extend(**{"scalars" if uk == "s" else "arrays": [E(u, B, False)]})
        if self.coin(1, 3):
            lines.append(f"{pad}    if {self.cond(inner, 1)}:")
            lines.append(f"{pad}        return {self.value(rk, inner)}")
        lines.append(f"{pad}    return {self.value(rk, inner)}")
        return lines + self.calls(g, kn, pk, rk, scope, pad)

    def _s_lambda(self, scope, depth, in_loop, pad):
        h = self.fresh("h")
        pk, rk = self.pick(["s", "a"]), self.pick(["s", "a"])
        params, kn, inner = self.params(scope, pk)
        lines = [f"{pad}{h} = lambda {', '.join(params)}: {self.value(rk, inner)}"]
        return lines + self.calls(h, kn, pk, rk, scope, pad)

    def invoke(self, g, kn, arg):
        """Text of a call of ``g`` on ``arg``, passing its defaulted ``kn`` or not."""
        if kn is None or self.coin():
            return f"{g}({arg})"
        lit = self.pick(LITERALS)
        return f"{g}({arg}, {lit})" if self.coin() else f"{g}({arg}, {kn}={lit})"

    def calls(self, g, kn, pk, rk, scope, pad):
        """Call the just-defined ``g`` (param kind pk, result kind rk, |result| <= B, fresh)."""
        t = self.target(rk)
        how = self.pick(["one", "two", "twice", "nest"] if pk == rk else ["one", "two"])
        if how == "one":
            call = E(self.invoke(g, kn, self.value(pk, scope)), B)
        elif how == "two":
            op = self.pick(["+", "-", "*"])
            bound = B * B if op == "*" else 2 * B
            c1 = self.invoke(g, kn, self.value(pk, scope))
            c2 = self.invoke(g, kn, self.value(pk, scope))
            call = E(f"({c1} {op} {c2})", bound)
        elif how == "twice":
            call = E(f"apply_twice({g}, {self.value(pk, scope)})", B)
        else:
            call = E(self.invoke(g, kn, self.invoke(g, kn, self.value(pk, scope))), B)
        return [f"{pad}{t} = {self.fit(call, rk)}"]

    def _s_rec(self, scope, depth, in_loop, pad):
        """A recursive local function with a depth counter."""
        g, tn, nn = self.fresh("g"), self.fresh("t"), self.fresh("n")
        pk = self.pick(["s", "a"])
        inner = self.with_leaf(scope, pk, E(tn, B, False)).extend(scalars=[E(f"float({nn})", 3.0)])
        stop = f"{nn} <= 0"
        if self.coin(1, 3):
            stop = f"{stop} or ({self.cond(inner, 1)})"
        lines = [
            f"{pad}def {g}({tn}, {nn}):",
            f"{pad}    if {stop}:",
            f"{pad}        return {tn}",
            f"{pad}    return {g}({self.value(pk, inner)}, {nn} - 1)",
        ]
        # the result is the (fresh) argument or a fresh value made in the body
        call = E(f"{g}({self.value(pk, scope)}, {self.i(0, 3)})", B)
        return lines + [f"{pad}{self.target(pk)} = {self.fit(call, pk)}"]

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
        self.fr.loop_vars.append(i)
        k = self.i(1, 4)
        rng = self.pick([f"range({k})", f"range(1, {k + 1})", f"range({k}, 0, -1)", "len"])
        leaves = []
        if rng == "len":  # index arrays with the loop variable
            k = self.shape[0]
            rng = self.pick(["range(len(x))", f"range({k})"])
            for _ in range(self.i(1, 2)):
                arr = self.pick(scope.arrays).text
                if len(self.shape) == 1:
                    leaves.append(E(f"{arr}[{i}]", B))
                else:
                    leaves.append(E(f"{arr}[{i}, {self.i(-3, 2)}]", B))
            if self.f32:
                leaves = []
        leaves += [E(f"float({i})", float(k)), E(f"({i} * 0.5)", k * 0.5)]
        inner = scope.extend(scalars=leaves)
        return [f"{pad}for {i} in {rng}:"] + self.block(inner, depth - 1, True, pad + "    ")

    def _s_while(self, scope, depth, in_loop, pad):
        c = self.fresh("c")
        self.fr.loop_vars.append(c)
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
        self.fr.float_vars.append(r)
        items = [self.value("s", scope, self.i(0, 2)) for _ in range(self.i(1, 3))]
        inner = scope.extend(scalars=[E(r, B, False)])
        head = f"{pad}for {r} in ({', '.join(items)},):"
        return [head] + self.block(inner, depth - 1, True, pad + "    ")

    def _s_afor(self, scope, depth, in_loop, pad):
        r = self.fresh("r")
        self.fr.float_vars.append(r)
        seq = self.pick(["x", self.value("a", scope, self.i(1, 2))])
        inner = scope.extend(scalars=[E(r, B, False)])
        return [f"{pad}for {r} in {seq}:"] + self.block(inner, depth - 1, True, pad + "    ")

    # -- the whole function -------------------------------------------------------------

    def function(self):
        fr = Frame(
            svars=[f"s{j}" for j in range(self.i(2, 4))],
            avars=[f"v{j}" for j in range(self.i(1, 3))],
            ret=self.ret,
        )
        scope = Scope([E("a", B, False), E("b", B, False)], [E("x", B, False)])
        lines, scope = self.init_vars(fr, scope, "    ")
        self.fr = fr
        body = self.block(scope, self.i(1, 3), False, "    ", lo=2, hi=5)
        ret = [f"    return {self.ret_value(scope)}"]
        return "def f(a, b, x):\n" + "\n".join(lines + fr.decls("    ") + body + ret) + "\n"

    def init_vars(self, fr, scope, pad):
        """Assignments giving every variable of ``fr`` a value; the scope that reads them."""
        lines = []
        for s in fr.svars:
            lines.append(f"{pad}{s} = {self.value('s', scope, self.i(0, 2))}")
            scope = scope.extend(scalars=[E(s, B, False)])
        for v in fr.avars:
            lines.append(f"{pad}{v} = {self.value('a', scope, self.i(1, 2))}")
            scope = scope.extend(arrays=[E(v, B, False)])
        return lines, scope


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
