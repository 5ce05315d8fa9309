"""C's ``fmod`` as LLVM IR with no libm call, exact like every libm's.

NVPTX lowers LLVM's ``frem`` to ``x - trunc(x / y) * y``, which is wrong once the
quotient is large (NumPy's ``mod`` and ``floor_divide`` are built on an exact fmod), and
GPU kernels cannot call libm.  This is musl's integer algorithm: align the operands'
mantissas, then one shift-and-subtract step per bit of exponent difference (a loop of
at most 277 iterations for float32, 2097 for float64; the common small quotients take
a few), with ``ctlz`` normalizing subnormals instead of loops.
"""

from __future__ import annotations

from llvmlite import ir

from myc.backends.cpu.emit import F32, I32, I64, Emitter, V, suffix


def fmod_function(module: ir.Module, ty: ir.Type) -> ir.Function:
    """``@myc.fmod.<f32|f64>`` in ``module`` (defined on first use)."""
    name = f"myc.fmod.{suffix(ty)}"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    fn = ir.Function(module, ir.FunctionType(ty, [ty, ty]), name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    _build(fn, ty)
    return fn


def _build(fn: ir.Function, ty: ir.Type) -> None:
    w, mbits, emask = (32, 23, 0xFF) if ty == F32 else (64, 52, 0x7FF)
    ity = I32 if ty == F32 else I64
    top = w - mbits  # sign + exponent bits
    entry = fn.append_basic_block("entry")
    special = fn.append_basic_block("special")
    small = fn.append_basic_block("small")
    main = fn.append_basic_block("main")
    loop = fn.append_basic_block("loop")
    done = fn.append_basic_block("done")
    e = Emitter(ir.IRBuilder(entry))
    b = e.b
    x, y = (e.v(a) for a in fn.args)
    ux, uy = e.bitcast(x, ity), e.bitcast(y, ity)
    ex = (ux.lshr(mbits)) & emask
    ey = (uy.lshr(mbits)) & emask
    sx = ux.lshr(w - 1)
    ux2, uy2 = ux << 1, uy << 1
    bad = uy2.eq(0) | y.isnan() | ex.eq(emask)
    b.cbranch(bad.v, special, small)

    b.position_at_end(special)  # y == 0, y NaN, x inf or NaN
    xy = x * y
    b.ret((xy / xy).v)

    b.position_at_end(small)  # |x| <= |y|: x itself, or a zero of x's sign
    le = e.v(b.icmp_unsigned("<=", ux2.v, uy2.v))
    zero_x = e.v(b.fmul(x.v, ir.Constant(ty, 0.0)))
    same = e.select(e.v(b.icmp_unsigned("==", ux2.v, uy2.v)), zero_x, x)
    b.cbranch(le.v, done, main)

    b.position_at_end(main)
    e1 = e.c(ity, 1)
    implicit = e1 << mbits
    low = e.c(ity, (1 << mbits) - 1)

    def normalize(u: V, ex_: V) -> tuple[V, V]:
        # subnormal: shift the mantissa up to the implicit bit's place, exponent below 1
        lz = e.intrinsic("llvm.ctlz", ity, u << top, ir.Constant(ir.IntType(1), 0))
        sub_m = u << (lz + 1)
        sub_e = -lz
        norm_m = (u & low) | implicit
        is_sub = ex_.eq(0)
        return e.select(is_sub, sub_m, norm_m), e.select(is_sub, sub_e, ex_)

    mx, ex_n = normalize(ux, ex)
    my, ey_n = normalize(uy, ey)
    pre = b.block
    b.branch(loop)
    b.position_at_end(loop)  # for (; ex > ey; ex--) { i = mx - my; if (i >= 0) mx = i; mx <<= 1 }
    m_phi = b.phi(ity)
    e_phi = b.phi(ity)
    m_phi.add_incoming(mx.v, pre)
    e_phi.add_incoming(ex_n.v, pre)
    m, ee = e.v(m_phi), e.v(e_phi)
    more = ee.gt(ey_n)
    i = m - my
    stepped = e.select(i.ge(0), i, m) << 1
    m_next = e.select(more, stepped, m)
    e_next = e.select(more, ee - 1, ee)
    m_phi.add_incoming(m_next.v, loop)
    e_phi.add_incoming(e_next.v, loop)
    b.cbranch(more.v, loop, done_main := fn.append_basic_block("finish"))
    b.position_at_end(done_main)
    i = m - my
    m = e.select(i.ge(0), i, m)
    # normalize the remainder (nonzero) so the implicit bit is back in place
    lz = e.intrinsic("llvm.ctlz", ity, e.select(m.eq(0), e1, m),
                     ir.Constant(ir.IntType(1), 0))
    shift = lz - (top - 1)
    m = m << shift
    ee = ee - shift
    normal = ((m - implicit) | (ee << mbits))
    subnormal = m.lshr(e.c(ity, 1) - ee)
    bits = e.select(ee.gt(0), normal, subnormal) | (sx << (w - 1))
    res = e.select(m.eq(0), zero_x, e.bitcast(bits, ty))
    fin = b.block
    b.branch(done)

    b.position_at_end(done)
    out = b.phi(ty)
    out.add_incoming(same.v, small)
    out.add_incoming(res.v, fin)
    b.ret(out)
