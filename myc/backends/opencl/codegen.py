"""Kernel IR to OpenCL C: one program per kernel, one OpenCL kernel per pass.

A fusion group (``myc.lower.kernel.Kernel``) becomes these passes, run in order:

- one per level of row reductions (``RowReduce``): a work-item per row (the domain less
  its last axis) loops over the row and writes the row's value to a temporary buffer,
  which later passes read;
- one per output: a ``Store`` has a work-item per domain point; a ``Reduce`` has a
  work-item per output element looping over the reduced axes (on a CPU along the last
  axis in blocks of ``LANES`` accumulators, which vectorize; on a GPU a work-group of
  ``GROUP`` work-items per element) -- or, when there are few output elements and much
  to reduce, a work-item per (element, slice of the reduced range) writing partials,
  and a second pass combining each element's partials in order (``LaunchPlan.split``).

Every expression is emitted once per pass as straight-line C (``v12 = ...``): the DAG's
sharing is kept.  Bools are ``uchar`` 0/1 in memory and in registers.  The semantics are
the reference's (``Kernel.reference``): NaN-propagating max/min, NumPy's floor division
and modulo, int64 division by zero giving 0, truncating float-to-int casts with NaN and
out-of-range values giving int64's minimum.  Float32 sums accumulate in double where the
device has it.  Everything the generator cannot express raises ``Unsupported`` (the
program then runs that group on the host).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from math import prod

from myc.backends.opencl import mathlib
from myc.lower.kernel import (
    Binary,
    Cast,
    Const,
    Expr,
    Kernel,
    Load,
    RowReduce,
    Select,
    Store,
    Unary,
    c_strides,
    identity,
    kind,
    postorder,
    row_reductions,
)
from myc.prims.scalar import accumulator_dtype

CTYPE = {"float32": "float", "float64": "double", "int64": "long", "bool": "uchar"}
# split a reduction over work-items when it has at most this many outputs and at least
# SPLIT_MIN elements to reduce per output
SPLIT_OUTPUTS = 64
SPLIT_MIN = 1 << 14
SPLIT_PIECES = 256
GROUP = 64  # work-items sharing one reduction result on a GPU (a power of two)
LANES = 8  # accumulators of a CPU work-item reducing along the last axis
ROW_RANGE = 16  # a store pass whose rows are at least this long has a 2-d range
# on a CPU device, a reduction whose operand calls these is computed in two passes: the
# operand elementwise into a temporary (with the kernel's stores: one pass), then the
# reduction of that temporary -- see ``_Gen.materialized``
HEAVY_BINARY = frozenset({"div", "pow", "mod", "floordiv", "arctan2"})
MATERIALIZE_MAX = 1 << 26  # elements: a bigger operand is reduced as it is computed


class Unsupported(Exception):  # noqa: N818 - a control signal
    """Something OpenCL C code is not generated for (the host runs it instead)."""


class NoFloat64(Unsupported):
    """Float64 on a device without ``cl_khr_fp64``: the backend refuses the program
    (``myc.backends.opencl.runtime.check_dtypes``), it does not fall back."""


@dataclass
class Pass:
    """One OpenCL kernel: its name, global size, work-group size (when it relies on one)
    and its buffer arguments in order -- ``("in", i)`` kernel input ``i``, ``("tmp", j)``
    temporary ``j`` (a row reduction's values, a split reduction's partials),
    ``("out", i)`` output ``i``; the last one is what it writes."""

    name: str
    size: int
    args: tuple[tuple[str, int], ...]
    local: int | None = None
    grid: tuple[int, ...] | None = None  # a 2-d range (else ``size`` work-items)

    @property
    def writes(self) -> tuple[str, int]:
        return self.args[-1]


@dataclass
class LaunchPlan:
    source: str
    passes: list[Pass]
    temps: list[tuple[str, int]]  # temporaries: (C type, element count)
    split: dict[int, int] = field(default_factory=dict)  # output -> pieces per element


def generate(kernel: Kernel, fp64: bool = True, group: bool = True,
             cpu: bool = True) -> LaunchPlan:
    """The passes of ``kernel``.  ``group``: the device runs work-groups of ``GROUP``;
    ``cpu``: the device is a CPU (PoCL), whose compiler vectorizes a loop within a
    work-item better than work-items sharing a result through local memory."""
    return _Gen(kernel, fp64, group, cpu).plan()


def literal(value, dtype: str) -> str:
    if not isinstance(value, (bool, int, float)):
        raise Unsupported("a size-dependent constant")
    if dtype == "bool":
        return "(uchar)1" if value else "(uchar)0"
    if dtype == "int64":
        v = int(value)
        if v == -(1 << 63):
            return "(-9223372036854775807L - 1L)"
        return f"{v}L"
    v = float(value)
    ty = CTYPE[dtype]
    if math.isnan(v):
        return f"(({ty})NAN)"
    if math.isinf(v):
        return f"(({ty})INFINITY)" if v > 0 else f"(-({ty})INFINITY)"
    return f"(({ty}){v.hex()})" if dtype == "float64" else f"{v.hex()}f"


_PRELUDE = """
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#define LMIN (-9223372036854775807L - 1L)
inline long myc_imod(long x, long y) {
    if (y == 0 || y == -1) return 0;
    long r = x % y;
    return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}
inline long myc_idiv(long x, long y) {
    if (y == 0) return 0;
    if (y == -1) return (long)(0UL - (ulong)x);
    long q = x / y;
    return ((x % y != 0) && ((x < 0) != (y < 0))) ? q - 1 : q;
}
inline long myc_ipow(long x, long y) {
    if (y < 0) return x == 1 ? 1 : (x == -1 ? ((y & 1) ? -1 : 1) : 0);
    ulong r = 1, b = (ulong)x;
    while (y) { if (y & 1) r *= b; b *= b; y >>= 1; }
    return (long)r;
}
"""

_FLOAT_HELPERS = """
inline T myc_fmod_T(T a, T b) {
    T m = fmod(a, b);
    if (b == (T)0) return m;
    if (m != (T)0) { if ((b < (T)0) != (m < (T)0)) m += b; }
    else m = copysign((T)0, b);
    return m;
}
inline T myc_fdiv_T(T a, T b) {
    if (b == (T)0) return a / b;
    T m = fmod(a, b);
    T d = (a - m) / b;
    if (m != (T)0 && ((b < (T)0) != (m < (T)0))) d -= (T)1;
    T f;
    if (d != (T)0) { f = floor(d); if (d - f > (T)0.5) f += (T)1; }
    else f = copysign((T)0, a / b);
    return f;
}
inline long myc_tolong_T(T x) {
    return (x != x || x >= (T)9223372036854775807.0 || x < -(T)9223372036854775808.0)
        ? LMIN : (long)x;
}
inline T myc_digamma_T(T x) {
    if (isnan(x)) return x;
    if (x == (T)0) return -(T)1 / x;
    if (x < (T)0 && x == floor(x)) return (T)NAN;
    T acc = (T)0;
    T a = fabs(x);
    if (x < (T)0) acc = (T)1 / a - (T)3.14159265358979323846 / tanpi(x);
    while (a < (T)10) { acc -= (T)1 / a; a += (T)1; }
    T z = (T)1 / (a * a);
    T s = z * ((T)(1.0 / 12) - z * ((T)(1.0 / 120) - z * ((T)(1.0 / 252) - z * ((T)(1.0 / 240)
        - z * ((T)(1.0 / 132) - z * ((T)(691.0 / 32760) - z * ((T)(1.0 / 12)
        - z * (T)(3617.0 / 8160))))))));
    return acc + (log(a) - (T)0.5 / a - s);
}
inline T myc_trigamma_T(T x) {
    if (isnan(x)) return x;
    if (x <= (T)0 && x == floor(x)) return (T)1 / (T)0;
    T a = fabs(x);
    T acc = (T)0;
    while (a < (T)10) { acc += (T)1 / (a * a); a += (T)1; }
    T u = (T)1 / a;
    T t = u * u;
    T r = acc + u + (T)0.5 * t + u * t * ((T)(1.0 / 6) - t * ((T)(1.0 / 30) - t * ((T)(1.0 / 42)
        - t * ((T)(1.0 / 30) - t * ((T)(5.0 / 66) - t * ((T)(691.0 / 2730) - t * ((T)(7.0 / 6)
        - t * (T)(3617.0 / 510))))))));
    if (x >= (T)0) return r;
    T s = sinpi(x);
    return (T)9.86960440108935861883 / (s * s) - r + (T)1 / (x * x);
}
"""

# op -> the OpenCL C function rendering it (``{s}``: the dtype's helper suffix);
# arithmetic ops are rendered inline by ``_Gen.unary`` / ``_Gen.binary``.  myc's own
# functions (``mathlib``: exp, log, tanh...) vectorize where PoCL's builtins are a scalar
# call per element
C_MATH = {
    "sin": "sin", "cos": "cos", "tan": "tan", "arctan": "atan", "sqrt": "sqrt",
    "erf": "erf", "gammaln": "lgamma",
    "digamma": "myc_digamma_{s}", "trigamma": "myc_trigamma_{s}",
    **{op: f"myc_{op}_{{s}}" for op in mathlib.FUNCTIONS},
}
INLINE_OPS = frozenset({
    "neg", "square", "abs", "sign", "floor", "ceil", "not", "add", "sub", "mul", "div",
    "maximum", "minimum", "pow", "arctan2", "mod", "floordiv", "and", "or", "eq", "ne",
    "lt", "le", "gt", "ge"})


def rendered_ops() -> frozenset[str]:
    """The kernel-IR scalar ops this backend renders."""
    return INLINE_OPS | frozenset(C_MATH)


def prelude(fp64: bool) -> str:
    text = _PRELUDE + _FLOAT_HELPERS.replace("_T(", "_f(").replace("T", "float")
    if fp64:
        text += _FLOAT_HELPERS.replace("_T(", "_d(").replace("T", "double")
    return text + mathlib.source(fp64)


class _Gen:
    def __init__(self, kernel: Kernel, fp64: bool, group: bool = True, cpu: bool = True):
        self.k = kernel
        self.fp64 = fp64
        self.group = group
        self.cpu = cpu
        self.nd = len(kernel.shape)
        self.rowvar: dict[RowReduce, int] = {}  # row reduction -> its temporary
        self.flat: str | None = None  # the pass's flat domain index, where it has one
        self.bodies: list[str] = []

    # -- expressions --------------------------------------------------------------------
    def emit(self, roots: list[Expr], idx: list[str], row: str, lines: list[str],
             names: dict[Expr, str]) -> None:
        """Lines computing ``roots`` at domain point ``idx`` (C expressions per axis);
        ``row``: the flat row index (for row temporaries).  ``names`` gets each node's
        variable; nodes already named are reused."""
        # a row reduction is read from its temporary: its operand is not computed here
        for node in postorder(roots, done=list(names), opaque=RowReduce):
            v = f"v{len(names)}"
            names[node] = v
            lines.append(f"    {CTYPE[node.dtype]} {v} = {self.expr(node, names, idx, row)};")

    def expr(self, node: Expr, names: dict, idx: list[str], row: str) -> str:
        if isinstance(node, Const):
            return literal(node.value, node.dtype)
        if isinstance(node, Load):
            buf = self.k.inputs[node.buffer]
            nb = len(buf.shape)
            if self.flat is not None and self.k.load_axes(node) == tuple(
                    range(self.nd - nb, self.nd)) and buf.shape == self.k.shape[self.nd - nb:]:
                # the buffer is a trailing block of the domain: no index arithmetic
                n = prod(buf.shape)
                return f"in{node.buffer}[{self.flat if nb == self.nd else f'{self.flat} % {n}L'}]"
            strides = c_strides(buf.shape)
            terms = [f"({idx[a]}) * {s}L" for a, size, s in
                     zip(self.k.load_axes(node), buf.shape, strides, strict=True) if size != 1]
            return f"in{node.buffer}[{' + '.join(terms) or '0'}]"
        if isinstance(node, RowReduce):
            return f"row{self.rowvar[node]}[{row}]"
        if isinstance(node, Cast):
            return self.cast(names[node.x], node.x.dtype, node.dtype)
        if isinstance(node, Select):
            c, x, y = (names[c] for c in node.children())
            return f"({c} ? {x} : {y})"
        if isinstance(node, Unary):
            return self.unary(node.op, names[node.x], node.dtype)
        assert isinstance(node, Binary), node
        return self.binary(node.op, names[node.x], names[node.y], node.x.dtype)

    def suffix(self, dtype: str) -> str:
        if dtype == "float64" and not self.fp64:
            raise NoFloat64("float64 on a device without cl_khr_fp64")
        return "d" if dtype == "float64" else "f"

    def cast(self, x: str, src: str, dst: str) -> str:
        if src == dst:
            return x
        if dst == "bool":
            return f"(uchar)({x} != 0)"
        if dst == "int64" and kind(src) == "f":
            return f"myc_tolong_{self.suffix(src)}({x})"
        if dst in ("float32", "float64"):
            self.suffix(dst)
        return f"({CTYPE[dst]})({x})"

    def unary(self, op: str, x: str, dt: str) -> str:
        k = kind(dt)
        ty = CTYPE[dt]
        if op == "neg":
            return f"(-{x})" if k == "f" else f"(long)(0UL - (ulong){x})"
        if op == "square":
            return f"({x} * {x})" if k == "f" else f"(long)((ulong){x} * (ulong){x})"
        if op == "abs":
            return f"myc_fabs_{self.suffix(dt)}({x})" if k == "f" else \
                f"({x} < 0 ? (long)(0UL - (ulong){x}) : {x})"
        if op == "sign":
            return f"({x} > ({ty})0 ? ({ty})1 : ({x} < ({ty})0 ? ({ty})-1 : {x}))"
        if op in ("floor", "ceil") and k == "i":
            return x
        if op == "not":
            return f"(uchar)(!{x})"
        if op in ("floor", "ceil"):
            return f"{op}({x})"
        if op not in C_MATH:
            raise Unsupported(f"unary {op}")
        return f"{C_MATH[op].format(s=self.suffix(dt))}({x})"

    def binary(self, op: str, x: str, y: str, dt: str) -> str:
        k = kind(dt)
        ty = CTYPE[dt]
        if k == "f":
            self.suffix(dt)
        if op in ("add", "mul") and k == "b":
            return f"(uchar)({x} {'|' if op == 'add' else '&'} {y})"
        if op in ("add", "sub", "mul") and k == "i":  # wrapping, as NumPy's int64
            sym = {"add": "+", "sub": "-", "mul": "*"}[op]
            return f"(long)((ulong){x} {sym} (ulong){y})"
        sym = {"add": "+", "sub": "-", "mul": "*", "div": "/", "eq": "==", "ne": "!=",
               "lt": "<", "le": "<=", "gt": ">", "ge": ">="}.get(op)
        if sym is not None:
            e = f"({x} {sym} {y})"
            return f"(uchar){e}" if op in ("eq", "ne", "lt", "le", "gt", "ge") else e
        if op in ("maximum", "minimum"):
            cmp = ">=" if op == "maximum" else "<="
            if k == "f":
                return f"({x} != {x} ? {x} : ({y} != {y} ? {y} : ({x} {cmp} {y} ? {x} : {y})))"
            return f"({x} {cmp} {y} ? {x} : {y})"
        if op in ("and", "or"):
            sym = "&" if op == "and" else "|"
            return f"({ty})({x} {sym} {y})"
        if op == "pow":
            return f"myc_ipow({x}, {y})" if k == "i" else f"pow({x}, {y})"
        if op == "arctan2":
            return f"atan2({x}, {y})"
        if op == "mod":
            return f"myc_imod({x}, {y})" if k == "i" else \
                f"myc_fmod_{self.suffix(dt)}({x}, {y})"
        if op == "floordiv":
            return f"myc_idiv({x}, {y})" if k == "i" else \
                f"myc_fdiv_{self.suffix(dt)}({x}, {y})"
        raise Unsupported(f"binary {op}")

    # -- reductions ---------------------------------------------------------------------
    def acc_type(self, op: str, dt: str) -> str:
        acc = accumulator_dtype(op, dt)  # float32 sums in double, where the device has it
        return CTYPE[acc if acc != "float64" or self.fp64 else dt]

    def combine(self, op: str, acc: str, v: str, dt: str) -> str:
        if op == "sum":
            if dt == "bool":
                raise Unsupported("a sum of bools")
            if dt == "int64":
                return f"{acc} = (long)((ulong){acc} + (ulong){v});"
            return f"{acc} += {v};"
        if dt == "bool":
            return f"{acc} = (uchar)({acc} {'|' if op == 'max' else '&'} {v});"
        cmp = ">" if op == "max" else "<"
        if kind(dt) == "f":
            return f"if ({v} {cmp} {acc} || {v} != {v}) {acc} = {acc} != {acc} ? {acc} : {v};"
        return f"if ({v} {cmp} {acc}) {acc} = {v};"

    # -- passes -------------------------------------------------------------------------
    def params(self, out: str) -> str:
        ins = [f"__global const {CTYPE[b.dtype]} *restrict in{i}"
               for i, b in enumerate(self.k.inputs)]
        rows = [f"__global const {CTYPE[r.dtype]} *restrict row{j}"
                for r, j in self.rowvar.items()]
        return ", ".join([*ins, *rows, out])

    def index_of(self, flat: str, dims: list[int], axes: list[int], idx: list[str],
                 lines: list[str], tag: str) -> None:
        """Unflatten ``flat`` over ``dims`` (C order) into ``idx[axes[i]]``."""
        if prod(dims) == 0:  # nothing runs there: no division by a zero stride
            for a in axes:
                idx[a] = "0"
            return
        rest = flat
        for a, s in zip(axes, c_strides(tuple(dims)), strict=True):
            lines.append(f"    long {tag}{a} = ({rest}) / {s}L;")
            rest = f"({rest}) % {s}L" if s != 1 else rest
            idx[a] = f"{tag}{a}"
            if s == 1:
                break
        for a in axes:
            if idx[a] == "":
                idx[a] = "0"

    def plan(self) -> LaunchPlan:
        k, nd = self.k, self.nd
        shape = list(k.shape)
        passes: list[Pass] = []
        temps: list[tuple[str, int]] = []
        nrows = prod(shape[:-1]) if nd else 1
        ins = tuple(("in", i) for i in range(len(k.inputs)))
        for level in row_reductions([o.expr for o in k.outputs]):
            for r in level:  # one pass per row reduction of the level
                j = len(temps)
                temps.append((CTYPE[r.dtype], nrows))
                name = f"rowpass{j}"
                args = ins + tuple(("tmp", t) for t in range(j)) + (("tmp", j),)
                passes.append(self.reduction(name, r.op, r.x, [nd - 1], 1, args))
                self.rowvar[r] = j
        rows = ins + tuple(("tmp", t) for t in range(len(temps)))
        split: dict[int, int] = {}
        outputs = sorted(k.outputs, key=lambda o: o.out_index)
        mat = self.materialized(outputs)
        if mat:  # (a CPU) the stores and the materialized operands: one pass
            writes: list[tuple[str, int]] = []
            for out in outputs:
                if isinstance(out, Store):
                    writes.append(("out", out.out_index))
                elif out.out_index in mat:
                    mat[out.out_index] = len(temps)
                    writes.append(("tmp", len(temps)))
                    temps.append((CTYPE[out.expr.dtype], prod(shape)))
            passes.append(self.elementwise(outputs, mat, rows, writes))
        for out in outputs:
            i = out.out_index
            dt = out.expr.dtype
            name = f"out{i}"
            if isinstance(out, Store) and mat:
                continue
            if isinstance(out, Store):
                idx, lines, rowflat, grid = self.point_index(shape)
                names: dict[Expr, str] = {}
                self.flat = "g"
                self.emit([out.expr], idx, rowflat, lines, names)
                self.flat = None
                lines.append(f"    dst[g] = {names[out.expr]};")
                passes.append(Pass(name, prod(shape), rows + (("out", i),), grid=grid))
                self.bodies.append(self.kernel_text(
                    name, f"__global {CTYPE[dt]} *restrict dst", lines))
                continue
            n_out = prod(shape[a] for a in range(nd) if a not in out.axes)
            n_red = prod(shape[a] for a in out.axes)
            if n_out <= SPLIT_OUTPUTS and n_red >= SPLIT_MIN:
                # partials over work-items, then a pass combining each element's
                # partials in order (on the device: nothing is read back to finish)
                pieces = split[i] = min(SPLIT_PIECES, n_red // 1024)
                t = len(temps)
                temps.append((self.acc_type(out.op, dt), n_out * pieces))
                src = rows if i not in mat else (("tmp", mat[i]),)
                passes.append(self.reduction(name, out.op, out.expr, list(out.axes),
                                             pieces, src + (("tmp", t),), mat.get(i)))
                passes.append(self.finish(f"fin{i}", out.op, dt, n_out, pieces,
                                          (("tmp", t), ("out", i))))
                continue
            src = rows if i not in mat else (("tmp", mat[i]),)
            passes.append(self.reduction(name, out.op, out.expr, list(out.axes), 1,
                                         src + (("out", i),), mat.get(i)))
        source = prelude(self.fp64) + "\n".join(self.bodies)
        return LaunchPlan(source, passes, temps, split)

    def materialized(self, outputs: list) -> dict[int, int]:
        """The reductions (output index -> -1, their temporary's index once made) whose
        operand a CPU device computes elementwise first.  PoCL vectorizes a pass without
        a loop across its work-items, but a reduction's loop only as far as its
        compiler's SLP pass packs the ``LANES`` accumulators' copies of the operand --
        little when the operand calls a math function: W2's ``sum(gelu(x) *
        sigmoid(x) + x*x)`` took 33 ms of CPU time reduced as computed, 10 + 2 ms
        computed into a temporary (alongside its gradient's store, sharing the work)
        and reduced from there; W1's forward alone (a split reduction, no store), 35
        ms as computed, 11.5 + 2.5 ms through a temporary.  A reduction that is not
        split qualifies only when it shares a math call with a store: alone, the
        temporary's traffic costs more than it saves (W7's row sums of ``exp``: 4.7 ms
        reduced as computed, 7.2 + 2.3 ms through one)."""
        if not self.cpu or prod(self.k.shape) > MATERIALIZE_MAX:
            return {}
        stored = set(postorder([o.expr for o in outputs if isinstance(o, Store)],
                               opaque=RowReduce))
        shape = self.k.shape
        mat: dict[int, int] = {}
        for out in outputs:
            if isinstance(out, Store):
                continue
            n_red = prod(shape[a] for a in out.axes)
            split = prod(shape) // max(n_red, 1) <= SPLIT_OUTPUTS and n_red >= SPLIT_MIN
            for node in postorder([out.expr], opaque=RowReduce):
                if (split or node in stored) and (
                        isinstance(node, Unary) and node.op in C_MATH or
                        isinstance(node, Binary) and node.op in HEAVY_BINARY):
                    mat[out.out_index] = -1
                    break
        return mat

    def point_index(self, shape: list[int]
                    ) -> tuple[list[str], list[str], str, tuple[int, int] | None]:
        """A pass over every point of ``shape``: each axis's index expression, the
        lines computing them, the row's flat index, and the range (``None``: 1-d).
        Rows of at least ``ROW_RANGE`` get a 2-d range, columns first: the work-items a
        CPU compiler turns into vector lanes share their row, so a value broadcast along
        the row (a row's max, a bias) is one load, not a gather."""
        nd = len(shape)
        idx = [""] * nd
        if nd >= 2 and shape[-1] >= ROW_RANGE:
            lines = ["    long g0 = get_global_id(0), g1 = get_global_id(1);",
                     f"    long g = g1 * {shape[-1]}L + g0;"]
            self.index_of("g1", shape[:-1], list(range(nd - 1)), idx, lines, "i")
            idx[nd - 1] = "g0"
            return idx, lines, "g1", (shape[-1], prod(shape[:-1]))
        lines = ["    long g = get_global_id(0);"]
        self.index_of("g", shape, list(range(nd)), idx, lines, "i")
        return idx, lines, (f"(g / {shape[-1]}L)" if nd >= 2 else "0"), None

    def elementwise(self, outputs: list, mat: dict[int, int],
                    rows: tuple[tuple[str, int], ...],
                    writes: list[tuple[str, int]]) -> Pass:
        """One pass computing every store and every materialized reduction operand at
        each domain point, each shared subexpression once."""
        shape = list(self.k.shape)
        idx, lines, rowflat, grid = self.point_index(shape)
        names: dict[Expr, str] = {}
        self.flat = "g"
        roots = [o.expr for o in outputs if isinstance(o, Store) or o.out_index in mat]
        self.emit(roots, idx, rowflat, lines, names)
        self.flat = None
        dsts = []
        for j, root in enumerate(roots):
            lines.append(f"    dst{j}[g] = {names[root]};")
            dsts.append(f"__global {CTYPE[root.dtype]} *restrict dst{j}")
        name = "elementwise"
        self.bodies.append(self.kernel_text(name, ", ".join(dsts), lines))
        return Pass(name, prod(shape), rows + tuple(writes), grid=grid)

    def finish(self, name: str, op: str, dt: str, n_out: int, pieces: int,
               args: tuple[tuple[str, int], ...]) -> Pass:
        """Each element's ``pieces`` partials combined, in order."""
        at = self.acc_type(op, dt)
        lines = ["    long g = get_global_id(0);",
                 f"    {at} acc = part[g * {pieces}L];",
                 f"    for (long p = 1; p < {pieces}L; p++) {{",
                 f"        {at} v = part[g * {pieces}L + p];",
                 "        " + self.combine(op, "acc", "v", dt),
                 "    }",
                 f"    dst[g] = ({CTYPE[dt]})acc;"]
        self.bodies.append(f"__kernel void {name}(__global const {at} *restrict part, "
                           f"__global {CTYPE[dt]} *restrict dst) {{\n"
                           + "\n".join(lines) + "\n}\n")
        return Pass(name, n_out, args)

    def reduction(self, name: str, op: str, expr: Expr, red: list[int], pieces: int,
                  args: tuple[tuple[str, int], ...], src: int | None = None) -> Pass:
        """A pass reducing ``expr`` over domain axes ``red``: one result per kept index
        (times ``pieces`` partials, each over a slice of the reduced range).

        On a CPU a work-item loops over its range alone; when the range runs along the
        domain's last axis (contiguous), in blocks of ``LANES`` consecutive elements
        with one accumulator each, which the device compiler turns into vector loads
        and vector arithmetic.  On a GPU, with a long enough range, a work-group of
        ``GROUP`` work-items shares one result: they read consecutive elements
        (coalesced) and combine their accumulators through local memory.  ``src``:
        ``expr`` was computed into that temporary (:meth:`materialized`): the pass
        reads it there, its only input."""
        shape, nd = list(self.k.shape), self.nd
        dt = expr.dtype
        kept = [a for a in range(nd) if a not in red]
        n_out = prod(shape[a] for a in kept)
        n_red = prod(shape[a] for a in red)
        group = GROUP if not self.cpu and self.group and n_red >= GROUP and pieces == 1 \
            else 1
        lanes = self.cpu and nd - 1 in red and n_red >= 2 * LANES
        at = self.acc_type(op, dt)
        dst_t = CTYPE[dt] if pieces == 1 else at
        ident = literal(identity(op, dt), dt)
        idx = [""] * nd
        if group > 1:
            lines = ["    long o = get_group_id(0), l = get_local_id(0);",
                     f"    long lo = l, hi = {n_red}L, step = {group}L;"]
        elif self.cpu:  # contiguous slices: a work-item's reads are consecutive
            chunk = -(-n_red // pieces)
            chunk = -(-chunk // LANES) * LANES
            lines = ["    long g = get_global_id(0);",
                     f"    long o = g / {pieces}L, lo = (g % {pieces}L) * {chunk}L;",
                     f"    long hi = lo + {chunk}L < {n_red}L ? lo + {chunk}L : {n_red}L, "
                     "step = 1L;"]
        else:  # interleaved slices: neighbouring work-items read neighbouring elements
            lines = ["    long g = get_global_id(0);",
                     f"    long o = g / {pieces}L, lo = g % {pieces}L, hi = {n_red}L, "
                     f"step = {pieces}L;"]
        self.index_of("o", [shape[a] for a in kept], kept, idx, lines, "i")
        lines.append(f"    {at} acc = {ident};")

        def body(acc: str, indent: str) -> list[str]:
            out: list[str] = []
            ridx = list(idx)
            self.index_of("t", [shape[a] for a in red], red, ridx, out, "r")
            rowflat = "0"
            if nd >= 2:
                terms = [f"({ridx[a]}) * {s}L" for a, s in
                         zip(range(nd - 1), c_strides(tuple(shape[:-1])), strict=True)]
                rowflat = "(" + " + ".join(terms) + ")"
            if src is not None:  # the operand's value where the elementwise pass put it
                flat = " + ".join(f"({ridx[a]}) * {s}L" for a, s in
                                  zip(range(nd), c_strides(tuple(shape)), strict=True))
                out.append(f"    {CTYPE[dt]} v = opd[{flat or '0'}];")
                out.append("    " + self.combine(op, acc, "v", dt))
                return [indent + b for b in out]
            names: dict[Expr, str] = {}
            self.emit([expr], ridx, rowflat, out, names)
            out.append("    " + self.combine(op, acc, names[expr], dt))
            return [indent + b for b in out]

        if lanes:  # named accumulators, the body written out per lane: PoCL keeps a
            # private array (``lane[8]``) in memory, which cost 2x here
            lines += [f"    {at} lane{j} = {ident};" for j in range(LANES)]
            lines += ["    long t0 = lo;",
                      f"    for (; t0 + {LANES} <= hi; t0 += {LANES}) {{"]
            for j in range(LANES):
                lines += ["        {", f"            long t = t0 + {j};",
                          *body(f"lane{j}", "        "), "        }"]
            lines.append("    }")
            lines += ["    " + self.combine(op, "acc", f"lane{j}", dt) for j in range(LANES)]
            lines += ["    for (long t = t0; t < hi; t++) {",
                      *body("acc", "    "),
                      "    }"]
        else:
            lines += ["    for (long t = lo; t < hi; t += step) {",
                      *body("acc", "    "),
                      "    }"]
        if group > 1:
            lines += [f"    __local {at} part[{group}];",
                      "    part[l] = acc;",
                      "    barrier(CLK_LOCAL_MEM_FENCE);",
                      f"    for (long s = {group // 2}L; s > 0; s >>= 1) {{",
                      "        if (l < s) {",
                      f"            {at} a = part[l], b = part[l + s];",
                      "            " + self.combine(op, "a", "b", dt),
                      "            part[l] = a;",
                      "        }",
                      "        barrier(CLK_LOCAL_MEM_FENCE);",
                      "    }",
                      f"    if (l == 0) dst[o] = ({dst_t})part[0];"]
        else:
            lines.append(f"    dst[g] = ({dst_t})acc;")
        if src is None:
            self.bodies.append(self.kernel_text(name, f"__global {dst_t} *restrict dst",
                                                lines))
        else:
            self.bodies.append(f"__kernel void {name}(__global const {CTYPE[dt]} *restrict "
                               f"opd, __global {dst_t} *restrict dst) {{\n"
                               + "\n".join(lines) + "\n}\n")
        return Pass(name, n_out * pieces * group, args, group if group > 1 else None)

    def kernel_text(self, name: str, out: str, lines: list[str]) -> str:
        return (f"__kernel void {name}({self.params(out)}) {{\n" + "\n".join(lines)
                + "\n}\n")
