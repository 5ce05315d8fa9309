"""The LLVM IR of each kernel-IR scalar operation (``myc.prims.scalar``): one place.

A fused kernel (``codegen.KernelGen``) and a step on numbers of a native host program
(``loopgen``'s ``_emit_number``) compute a primitive's scalar semantics with the same
code: :class:`ScalarLLVM`, over an :class:`~myc.backends.cpu.emit.Emitter` and myc's
math library.  Operations are named as the scalar-op table names them (``div``,
``floordiv``, ``and``...) and typed by the dtype of their operands (``"float64"``,
``"int64"``, ``"bool"``); the semantics are NumPy's in that dtype, as the table's
references say.  What Python's scalars do differently (an int that overflows 64 bits, a
division by zero that raises) is the host-step emitter's to check around these.
"""

from __future__ import annotations

from llvmlite import ir

from myc.backends.cpu import specfun as _specfun  # noqa: F401  (erf, gammaln, ...: joins the library)
from myc.backends.cpu.emit import F32, F64, I1, I64, Emitter, V, is_float
from myc.backends.cpu.mathlib import MathLib
from myc.lower.kernel import kind
from myc.prims.scalar import math_ops

LLTYPE = {"float32": F32, "float64": F64, "int64": I64, "bool": I1}
# the transcendental one-operand ops (myc.prims.scalar): calls of mathlib's functions
MATH_OPS = math_ops(1)


_DTYPE = {str(t): d for d, t in LLTYPE.items()}


def dtype_of(ty: ir.Type) -> str:
    """The dtype name of an LLVM scalar type (the inverse of :data:`LLTYPE`)."""
    return _DTYPE[str(ty)]


class ScalarLLVM:
    """Scalar operations emitted through ``self.e`` (an ``Emitter``), transcendentals
    through ``self.math`` (a ``MathLib`` of ``self.module``).  The kernel generator is
    one (it sets those attributes itself); :meth:`over` makes one for a builder."""

    e: Emitter
    math: MathLib
    module: ir.Module

    @classmethod
    def over(cls, b: ir.IRBuilder, math: MathLib | None = None) -> ScalarLLVM:
        """Scalar operations emitted by builder ``b``."""
        s = cls.__new__(cls)
        s.e = Emitter(b)
        s.module = b.module
        s.math = math if math is not None else MathLib(b.module)
        return s

    def combine(self, op: str, acc: ir.Value, v: ir.Value, reassoc: bool) -> ir.Value:
        """One step of reduction ``op`` (``sum``, ``max``, ``min``): NumPy's, a NaN
        wins a max/min; ``reassoc`` lets LLVM reorder a float sum."""
        b = self.e.b
        ty = acc.type
        if op == "sum":
            if is_float(ty):
                return b.fadd(acc, v, flags=("reassoc",) if reassoc else ())
            return b.add(acc, v)
        if ty == I1:
            return b.or_(acc, v) if op == "max" else b.and_(acc, v)
        name = {("max", True): "llvm.maximum", ("min", True): "llvm.minimum",
                ("max", False): "llvm.smax", ("min", False): "llvm.smin"}[op, is_float(ty)]
        return self.e.intrinsic(name, ty, acc, v).v

    def unary(self, op: str, x: V, dtype: str) -> V:
        """One-operand op ``op`` of ``x`` (of ``dtype``)."""
        e = self.e
        k = kind(dtype)
        if op in MATH_OPS:
            return self.math.call(e, op, x)
        if op == "neg":
            return -x
        if op == "square":
            return x * x
        if op == "sqrt":
            return e.intrinsic("llvm.sqrt", x.ty, x)
        if op == "abs":
            return x.abs() if k == "f" else e.select(x.lt(0), -x, x)
        if op == "sign":
            if k == "f":
                s = e.select(x.gt(0.0), 1.0, e.select(x.lt(0.0), -1.0, 0.0, x.ty))
                return e.select(x.isnan(), x, s)
            return e.v(e.b.zext(x.gt(0).v, I64)) - e.v(e.b.zext(x.lt(0).v, I64))
        if op in ("floor", "ceil"):
            return e.intrinsic(f"llvm.{op}", x.ty, x) if k == "f" else x
        assert op == "not", op
        return x ^ 1

    def binary(self, op: str, x: V, y: V, dtype: str) -> V:
        """Two-operand op ``op`` of ``x`` and ``y`` (both of ``dtype``)."""
        e = self.e
        b = e.b
        k = kind(dtype)
        if op in ("add", "mul") and k == "b":
            return x | y if op == "add" else x & y
        if op == "add":
            return x + y
        if op == "sub":
            return x - y
        if op == "mul":
            return x * y
        if op == "div":
            return x / y
        if op in ("maximum", "minimum"):
            if k == "b":
                return x | y if op == "maximum" else x & y
            return e.v(self.combine("max" if op == "maximum" else "min", x.v, y.v, False))
        if op == "pow":
            return self.math.call(e, "pow", x, y) if k == "f" else self.ipow(x, y)
        if op == "arctan2":
            return self.math.call(e, "arctan2", x, y)
        if op in ("mod", "floordiv"):
            return (self.fdivmod if k == "f" else self.idivmod)(x, y, op)
        if op in ("and", "or"):
            return x & y if op == "and" else x | y
        sym = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[op]
        if k == "b":
            return e.v(b.icmp_unsigned(sym, x.v, y.v))
        return x._cmp(sym, y)

    def fdivmod(self, a: V, b_: V, op: str) -> V:
        """NumPy's ``npy_divmod`` (Python's floor semantics) on floats."""
        e = self.e
        mod = self.frem(a, b_)
        div = (a - mod) / b_
        adjust = mod.ne(0.0) & e.v(e.b.xor(b_.lt(0.0).v, mod.lt(0.0).v))
        if op == "mod":
            m = e.select(adjust, mod + b_, mod)
            m = e.select(mod.eq(0.0), e.c(mod.ty, 0.0).copysign(b_), m)
            return e.select(b_.eq(0.0), mod, m)
        div = e.select(adjust, div - 1.0, div)
        fl = div.floor()
        fl = e.select((div - fl).gt(0.5), fl + 1.0, fl)
        q = a / b_
        fl = e.select(div.eq(0.0), e.c(div.ty, 0.0).copysign(q), fl)
        return e.select(b_.eq(0.0), q, fl)

    def frem(self, a: V, b_: V) -> V:
        """C's ``fmod`` (exact): LLVM's ``frem``, which the host lowers to libm's fmod
        (a GPU target overrides this: NVPTX lowers ``frem`` inexactly)."""
        return self.e.v(self.e.b.frem(a.v, b_.v))

    def idivmod(self, x: V, y: V, op: str) -> V:
        """Floor division/modulo on int64; by 0 gives 0 and by -1 wraps, as NumPy."""
        e = self.e
        zero, m1 = y.eq(0), y.eq(-1)
        ys = e.select(zero | m1, 1, y)
        q = e.v(e.b.sdiv(x.v, ys.v))
        r = e.v(e.b.srem(x.v, ys.v))
        adj = r.ne(0) & (r ^ ys).lt(0)
        if op == "mod":
            return e.select(zero | m1, 0, e.select(adj, r + ys, r))
        q = e.select(adj, q - 1, q)
        return e.select(zero, 0, e.select(m1, -x, q))

    def ipow(self, x: V, y: V) -> V:
        fn = self.module.globals.get("myc.ipow.i64")
        if fn is None:
            fn = build_ipow(self.module)
        return self.e.call(fn, x, y)

    def cast(self, x: V, src: str, dst: str) -> V:
        """``x`` of dtype ``src`` as ``dst``, as NumPy's ``astype`` converts."""
        e = self.e
        ks, kd = kind(src), kind(dst)
        ty = LLTYPE[dst]
        if src == dst:
            return x
        if kd == "b":
            return x.ne(0.0) if ks == "f" else x.ne(0)
        if ks == "f":
            if kd == "f":
                return e.fpext(x, ty) if ty == F64 else e.fptrunc(x, ty)
            # out of range and NaN give INT64_MIN, as x86 (and so NumPy there) does
            ok = x.abs().lt(2.0**63)
            return e.select(ok, e.fptosi(x, I64), -(2**63))
        if ks == "i":
            return e.sitofp(x, ty)
        return e.v(e.b.uitofp(x.v, ty) if kd == "f" else e.b.zext(x.v, I64))


def build_ipow(module: ir.Module) -> ir.Function:
    """``x ** y`` on int64 by squaring; ``y < 0`` gives ``1/x**-y`` truncated (0 unless
    ``|x| == 1``)."""
    fn = ir.Function(module, ir.FunctionType(I64, [I64, I64]), "myc.ipow.i64")
    fn.linkage = "internal"
    e = Emitter(ir.IRBuilder(fn.append_basic_block("entry")))
    b = e.b
    x, y = (e.v(a) for a in fn.args)
    one = ir.Constant(I64, 1)
    pre = b.block
    loop = b.append_basic_block("loop")
    done = b.append_basic_block("done")
    b.cbranch(y.gt(0).v, loop, done)
    b.position_at_end(loop)
    res = b.phi(I64)
    base = b.phi(I64)
    ex = b.phi(I64)
    res.add_incoming(one, pre)
    base.add_incoming(x.v, pre)
    ex.add_incoming(y.v, pre)
    r, bb, xx = e.v(res), e.v(base), e.v(ex)
    r2 = e.select((xx & 1).ne(0), r * bb, r)
    b2 = bb * bb
    x2 = xx >> 1
    res.add_incoming(r2.v, loop)
    base.add_incoming(b2.v, loop)
    ex.add_incoming(x2.v, loop)
    b.cbranch(x2.gt(0).v, loop, done)
    b.position_at_end(done)
    out = b.phi(I64)
    out.add_incoming(one, pre)
    out.add_incoming(r2.v, loop)
    o = e.v(out)
    neg = e.select(x.eq(1), 1, e.select(x.eq(-1), e.select((y & 1).ne(0), -1, 1, I64), 0))
    b.ret(e.select(y.lt(0), neg, o).v)
    return fn
