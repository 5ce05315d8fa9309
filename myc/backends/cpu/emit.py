"""A thin layer over llvmlite's IRBuilder so scalar math reads like math.

``V`` wraps one SSA value; its operators emit instructions (float or integer flavour
from the type), Python numbers become constants of the other operand's type.  Nothing
here adds fast-math flags: IEEE semantics are kept except where a caller asks.
"""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Iterator

from llvmlite import ir

F32 = ir.FloatType()
F64 = ir.DoubleType()
I1 = ir.IntType(1)
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
PTR = ir.PointerType()
# a size, count or stride the shared host emitters take: an int when static (the JIT's
# programs; an AOT library's static sizes), an i64 ``ir.Value`` computed at run time
# (an AOT library's dynamic sizes)
Count = int | ir.Value


def i64(x: Count) -> ir.Value:
    """``x`` as an i64 value: a constant when static."""
    return ir.Constant(I64, x) if isinstance(x, int) else x


def is_float(ty: ir.Type) -> bool:
    return isinstance(ty, ir.FloatType | ir.DoubleType)


def suffix(ty: ir.Type) -> str:
    """The overload suffix of an intrinsic name (``llvm.fabs.f32``)."""
    if isinstance(ty, ir.FloatType):
        return "f32"
    if isinstance(ty, ir.DoubleType):
        return "f64"
    return f"i{ty.width}"


def const(ty: ir.Type, value) -> ir.Constant:
    if is_float(ty):
        return ir.Constant(ty, float(value))
    return ir.Constant(ty, int(value))


class Emitter:
    """An IRBuilder plus the module, for declaring intrinsics."""

    def __init__(self, builder: ir.IRBuilder):
        self.b = builder
        self.module: ir.Module = builder.module

    # -- values
    def v(self, value: ir.Value) -> V:
        return V(self, value)

    def c(self, ty: ir.Type, value) -> V:
        return V(self, const(ty, value))

    # -- intrinsics
    def intrinsic(self, name: str, ret: ir.Type, *args: V | ir.Value) -> V:
        vals = [a.v if isinstance(a, V) else a for a in args]
        fn = declare(self.module, f"{name}.{suffix(vals[0].type)}", ret, [v.type for v in vals])
        return V(self, self.b.call(fn, vals))

    def call(self, fn: ir.Function, *args: V) -> V:
        return V(self, self.b.call(fn, [a.v for a in args]))

    def select(self, cond: V, x: V | float, y: V | float, ty: ir.Type | None = None) -> V:
        """``x if cond else y``; give ``ty`` when neither is a ``V``."""
        if ty is None:
            ty = x.ty if isinstance(x, V) else y.ty  # type: ignore[union-attr]
        xv = x.v if isinstance(x, V) else const(ty, x)
        yv = y.v if isinstance(y, V) else const(ty, y)
        return V(self, self.b.select(cond.v, xv, yv))

    def fma(self, x: V, y: V, z: V | float) -> V:
        """Fused multiply-add, one rounding (``two_prod`` and friends rely on it)."""
        return self.intrinsic("llvm.fma", x.ty, x, y, x._c(z))

    def muladd(self, x: V, y: V | float, z: V | float) -> V:
        """``x*y + z``, fused where the target has FMA (polynomials)."""
        return self.intrinsic("llvm.fmuladd", x.ty, x, x._c(y), x._c(z))

    def poly(self, x: V, coeffs) -> V:
        """Horner's rule, coefficients highest degree first."""
        acc = self.c(x.ty, coeffs[0])
        for c in coeffs[1:]:
            acc = self.muladd(acc, x, c)
        return acc

    def bitcast(self, x: V, ty: ir.Type) -> V:
        return V(self, self.b.bitcast(x.v, ty))

    def sitofp(self, x: V, ty: ir.Type) -> V:
        return V(self, self.b.sitofp(x.v, ty))

    def fptosi(self, x: V, ty: ir.Type) -> V:
        return V(self, self.b.fptosi(x.v, ty))

    def fpext(self, x: V, ty: ir.Type) -> V:
        return x if x.ty == ty else V(self, self.b.fpext(x.v, ty))

    def fptrunc(self, x: V, ty: ir.Type) -> V:
        return x if x.ty == ty else V(self, self.b.fptrunc(x.v, ty))


class V:
    """One SSA value with arithmetic operators."""

    __slots__ = ("e", "v")

    def __init__(self, e: Emitter, v: ir.Value):
        self.e = e
        self.v = v

    @property
    def ty(self) -> ir.Type:
        return self.v.type

    @property
    def b(self) -> ir.IRBuilder:
        return self.e.b

    def _c(self, o) -> ir.Value:
        return o.v if isinstance(o, V) else const(self.ty, o)

    def _bin(self, fop: str, iop: str, o, swap: bool = False) -> V:
        a, c = self.v, self._c(o)
        if swap:
            a, c = c, a
        return V(self.e, getattr(self.b, fop if is_float(self.ty) else iop)(a, c))

    def __add__(self, o):
        return self._bin("fadd", "add", o)

    def __radd__(self, o):
        return self._bin("fadd", "add", o, True)

    def __sub__(self, o):
        return self._bin("fsub", "sub", o)

    def __rsub__(self, o):
        return self._bin("fsub", "sub", o, True)

    def __mul__(self, o):
        return self._bin("fmul", "mul", o)

    def __rmul__(self, o):
        return self._bin("fmul", "mul", o, True)

    def __truediv__(self, o):
        return self._bin("fdiv", "sdiv", o)

    def __rtruediv__(self, o):
        return self._bin("fdiv", "sdiv", o, True)

    def __neg__(self):
        if is_float(self.ty):
            return V(self.e, self.b.fneg(self.v))
        return V(self.e, self.b.neg(self.v))

    # integer bit operations
    def __and__(self, o):
        return V(self.e, self.b.and_(self.v, self._c(o)))

    def __or__(self, o):
        return V(self.e, self.b.or_(self.v, self._c(o)))

    def __xor__(self, o):
        return V(self.e, self.b.xor(self.v, self._c(o)))

    def __invert__(self):
        return V(self.e, self.b.not_(self.v))

    def __lshift__(self, o):
        return V(self.e, self.b.shl(self.v, self._c(o)))

    def __rshift__(self, o):  # arithmetic
        return V(self.e, self.b.ashr(self.v, self._c(o)))

    def lshr(self, o) -> V:
        return V(self.e, self.b.lshr(self.v, self._c(o)))

    # comparisons: ordered for floats (false on NaN) except ne, which is unordered
    def _cmp(self, op: str, o) -> V:
        if is_float(self.ty):
            if op == "!=":
                return V(self.e, self.b.fcmp_unordered(op, self.v, self._c(o)))
            return V(self.e, self.b.fcmp_ordered(op, self.v, self._c(o)))
        return V(self.e, self.b.icmp_signed(op, self.v, self._c(o)))

    def lt(self, o):
        return self._cmp("<", o)

    def le(self, o):
        return self._cmp("<=", o)

    def gt(self, o):
        return self._cmp(">", o)

    def ge(self, o):
        return self._cmp(">=", o)

    def eq(self, o):
        return self._cmp("==", o)

    def ne(self, o):
        return self._cmp("!=", o)

    def isnan(self) -> V:
        return V(self.e, self.b.fcmp_unordered("uno", self.v, self.v))

    # float helpers
    def abs(self) -> V:
        return self.e.intrinsic("llvm.fabs", self.ty, self)

    def rint(self) -> V:
        return self.e.intrinsic("llvm.rint", self.ty, self)

    def floor(self) -> V:
        return self.e.intrinsic("llvm.floor", self.ty, self)

    def copysign(self, sign: V) -> V:
        return self.e.intrinsic("llvm.copysign", self.ty, self, sign)

    def signbit(self) -> V:
        """True for negative numbers, -0 and NaNs with the sign bit set."""
        width = 32 if isinstance(self.ty, ir.FloatType) else 64
        return self.e.bitcast(self, ir.IntType(width)).lt(0)


def float_bits(value: float, ty: ir.Type) -> int:
    """The IEEE bit pattern of ``value`` rounded to ``ty``."""
    if isinstance(ty, ir.FloatType):
        return struct.unpack("<I", struct.pack("<f", value))[0]
    return struct.unpack("<Q", struct.pack("<d", value))[0]


def declare(module: ir.Module, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
    """The function ``name`` of ``module``, declared on first use: a C library function,
    an LLVM intrinsic or a symbol bound when the module loads -- one helper for every
    generator of the CPU backend (the JIT's host programs, AOT libraries, kernels)."""
    fn = module.globals.get(name)
    return fn if fn is not None else ir.Function(module, ir.FunctionType(ret, args), name)


def overloaded(module: ir.Module, name: str, ty: ir.Type, arity: int = 1) -> ir.Function:
    """The intrinsic ``name`` over ``ty`` (``llvm.fabs.f64``): ``arity`` operands and its
    result of that type."""
    return declare(module, f"{name}.{suffix(ty)}", ty, [ty] * arity)


def checked(b: ir.IRBuilder, op: str, x: ir.Value, y: ir.Value) -> tuple[ir.Value, ir.Value]:
    """``x op y`` (``op``: ``sadd``, ``ssub``, ``smul``) in 64 bits, and whether it
    overflowed."""
    pair = b.call(with_overflow(b.module, op), [x, y])
    return b.extract_value(pair, 0), b.extract_value(pair, 1)


def with_overflow(module: ir.Module, op: str) -> ir.Function:
    """``llvm.{op}.with.overflow.i64``: the 64-bit result and an overflow bit."""
    return declare(module, f"llvm.{op}.with.overflow.i64", ir.LiteralStructType([I64, I1]),
                   [I64, I64])


def field_ptr(b: ir.IRBuilder, struct: ir.Value, ty: ir.Type, k: int) -> ir.Value:
    """A pointer to field ``k`` of the ``ty`` struct at ``struct``."""
    f = b.gep(struct, [ir.Constant(I64, 0), ir.Constant(I32, k)], source_etype=ty)
    f.type = PTR  # opaque, like every pointer here
    return f


@contextlib.contextmanager
def at_entry(b: ir.IRBuilder, entry: ir.Block) -> Iterator[None]:
    """Emit at the start of ``entry`` (allocas), then go back to the end of the current
    block: ``goto_block(entry)`` would look the entry's terminator up in its instruction
    list, which grows with the program -- quadratic over a long straight-line program."""
    old = b.block
    b.position_at_start(entry)
    try:
        yield
    finally:
        b.position_at_end(old)


def note_trips(fn: ir.Function, trips: int | None) -> None:
    """Count ``trips`` iterations of a loop emitted into ``fn`` (None: not known when
    compiling), times the trips of the loops around it: ``loop_work(fn)`` is how many
    loop iterations one run of ``fn`` makes, which decides how hard LLVM works on a
    native program (``machine_code``)."""
    outer = 1
    for t in getattr(fn, "myc_trips", ()):
        outer *= t
    work = getattr(fn, "myc_work", 0)
    fn.myc_work = None if work is None or trips is None else work + outer * trips


def loop_work(fn: ir.Function) -> int | None:
    """Iterations ``fn``'s element loops make per run (``note_trips``); None: unknown."""
    return getattr(fn, "myc_work", 0)


def _no_unroll(module: ir.Module) -> ir.MDValue:
    """Loop metadata that keeps LLVM from unrolling a glue loop of a constant trip count
    (a copy, fill or gather of a small array: fully unrolled, dozens of them multiplied a
    native program's code by 5 and its O3 compile time by 15; they stay vectorizable)."""
    md = getattr(module, "myc_no_unroll", None)
    if md is None:
        md = module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.disable")])
        md = module.add_metadata([md, md])
        md.operands = (md, md.operands[1])  # a loop ID refers to itself
        module.myc_no_unroll = md
    return md


def counted(b: ir.IRBuilder, n: int | ir.Value, body, name: str = "l", start: int = 0) -> None:
    """``for i in range(start, n): body(i)`` (nothing when ``n <= start``)."""
    fn = b.function
    trips = max(n - start, 0) if isinstance(n, int) else None
    note_trips(fn, trips)
    stack = fn.__dict__.setdefault("myc_trips", [])
    stack.append(trips if trips is not None else 1)
    n = ir.Constant(I64, n) if isinstance(n, int) else n
    pre = b.block
    head = fn.append_basic_block(name)
    after = fn.append_basic_block(f"{name}.done")
    b.cbranch(b.icmp_signed(">", n, ir.Constant(I64, start)), head, after)
    b.position_at_end(head)
    i = b.phi(I64)
    i.add_incoming(ir.Constant(I64, start), pre)
    body(i)
    nxt = b.add(i, ir.Constant(I64, 1))
    i.add_incoming(nxt, b.block)
    br = b.cbranch(b.icmp_signed("<", nxt, n), head, after)
    if trips is not None:
        br.set_metadata("llvm.loop", _no_unroll(fn.module))
    b.position_at_end(after)
    stack.pop()
