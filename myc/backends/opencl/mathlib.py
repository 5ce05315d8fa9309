"""myc's own exp/expm1/log/log1p/tanh/sigmoid as OpenCL C, so that kernels vectorize.

An OpenCL implementation on a CPU (PoCL) vectorizes a kernel across work-items, but a
call of its ``exp`` or ``tanh`` is a scalar library call per element: a kernel of
``tanh`` ran at 27 ns an element here, ``x * x`` at 0.7 ns.  These bodies are the CPU
backend's math library (``myc.backends.cpu.mathlib``: the same reductions, the same
polynomial coefficients, the same special-case selects) written as straight-line C --
arithmetic, bit casts and ternaries, not even a call of ``fabs``, ``rint``, ``fma`` or
``isnan`` (each is a scalar library call in PoCL: a kernel of ``fabs`` ran 10x slower than
one of ``x * x``) -- which the device compiler inlines and vectorizes like the rest of
the kernel.  Their accuracy is that library's
(``mathlib.ACCURACY``: at most 2.5 ulp for these); ``tests/opencl`` checks them
against NumPy.
"""

from __future__ import annotations

import math

from myc.backends.cpu.mathlib import LOG2E, P32, P64, Prec

# the functions given here (the others are the OpenCL library's)
FUNCTIONS = ("exp", "expm1", "log", "log1p", "tanh", "sigmoid")


def _lit(v: float, s: str) -> str:
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    return f"{v.hex()}f" if s == "f" else f"(double){v.hex()}"


def _poly(var: str, coeffs: tuple[float, ...], s: str) -> str:
    acc = _lit(coeffs[0], s)
    for c in coeffs[1:]:
        acc = f"({acc} * {var} + {_lit(c, s)})"
    return acc


def _functions(p: Prec, s: str) -> str:
    t = "float" if s == "f" else "double"
    it = "int" if s == "f" else "long"
    one = "1.0f" if s == "f" else "1.0"
    L = lambda v: _lit(v, s)  # noqa: E731
    sqrt_half = float.fromhex(math.sqrt(0.5).hex())
    import struct

    if s == "f":
        one_bits = struct.unpack("<i", struct.pack("<f", 1.0))[0]
        sh_bits = struct.unpack("<i", struct.pack("<f", sqrt_half))[0]
        as_t, as_i, suf = "as_float", "as_int", ""
    else:
        one_bits = struct.unpack("<q", struct.pack("<d", 1.0))[0]
        sh_bits = struct.unpack("<q", struct.pack("<d", sqrt_half))[0]
        as_t, as_i, suf = "as_double", "as_long", "L"
    mask = (1 << p.mbits) - 1
    sign = "0x80000000" if s == "f" else "0x8000000000000000L"
    magic = L(1.5 * 2.0 ** p.mbits)  # adding and subtracting it rounds to an integer
    return f"""
inline {t} myc_fabs_{s}({t} x) {{ return {as_t}({as_i}(x) & ~{sign}); }}
inline {t} myc_copysign_{s}({t} a, {t} x) {{
    return {as_t}(({as_i}(a) & ~{sign}) | ({as_i}(x) & {sign}));
}}
inline {t} myc_rint_{s}({t} x) {{ return (x + {magic}) - {magic}; }}
inline {t} myc_ldexp_{s}({t} p, {it} k) {{
    {it} k1 = k >> 1, k2 = k - k1;
    return p * {as_t}((k1 + {p.bias}{suf}) << {p.mbits})
             * {as_t}((k2 + {p.bias}{suf}) << {p.mbits});
}}
inline {t} myc_expcore_{s}({t} x) {{
    x = x > {L(p.exp_lo)} ? x : {L(p.exp_lo)};
    x = x < {L(p.exp_hi)} ? x : {L(p.exp_hi)};
    {t} k = myc_rint_{s}(x * {L(LOG2E)});
    {t} r = (x - k * {L(p.ln2[0])}) - k * {L(p.ln2[1])};
    {t} q = r * r * ({_poly("r", p.exp_poly, s)}) + r + {one};
    return myc_ldexp_{s}(q, ({it})k);
}}
inline {t} myc_exp_{s}({t} x) {{
    {t} y = myc_expcore_{s}(x);
    return x != x ? x : y;
}}
inline {t} myc_expm1core_{s}({t} x) {{
    {t} k = myc_rint_{s}(x * {L(LOG2E)});
    {t} r = (x - k * {L(p.ln2[0])}) - k * {L(p.ln2[1])};
    {t} er = r * r * ({_poly("r", p.exp_poly, s)}) + r;
    {t} h = {as_t}((({it})k - 1 + {p.bias}{suf}) << {p.mbits});
    return (h * er + (h - {L(0.5)})) * {L(2.0)};
}}
inline {t} myc_expm1_{s}({t} x) {{
    {t} c = x > {L(p.expm1_lo)} ? x : {L(p.expm1_lo)};
    c = c < {L(p.exp_hi)} ? c : {L(p.exp_hi)};
    {t} y = myc_expm1core_{s}(c);
    y = myc_fabs_{s}(x) < {L(2.0 ** -(p.mbits + 2))} ? x : y;
    return x != x ? x : y;
}}
inline {t} myc_tanh_{s}({t} x) {{
    {t} a = myc_fabs_{s}(x);
    a = a < {L(p.tanh_hi)} ? a : {L(p.tanh_hi)};
    {t} em = myc_expm1core_{s}(a * {L(2.0)});
    {t} y = myc_copysign_{s}(em / (em + {L(2.0)}), x);
    return x != x ? x : y;
}}
inline {t} myc_sigmoid_{s}({t} x) {{
    {t} en = myc_expcore_{s}(-myc_fabs_{s}(x));
    {t} y = (x >= {L(0.0)} ? {one} : en) / (en + {one});
    return x != x ? x : y;
}}
inline {t} myc_logcore_{s}({t} x) {{
    int small = x < {L(p.min_normal)};
    x = small ? x * {L(2.0 ** (p.mbits + 2))} : x;
    {it} ix = {as_i}(x) + ({one_bits}{suf} - {sh_bits}{suf});
    {it} k = (ix >> {p.mbits}) - {p.bias} - (small ? {p.mbits + 2} : 0);
    ix = (ix & {mask}{suf}) + {sh_bits}{suf};
    {t} f = {as_t}(ix) - {one};
    {t} kf = ({t})k;
    {t} s = f / (f + {L(2.0)});
    {t} z = s * s;
    {t} R = z * {_poly("z", p.log_poly, s)};
    {t} hfsq = f * f * {L(0.5)};
    return kf * {L(p.ln2[0])} - ((hfsq - (s * (hfsq + R) + kf * {L(p.ln2[1])})) - f);
}}
inline {t} myc_log_{s}({t} x) {{
    {t} y = myc_logcore_{s}(x);
    y = x == INFINITY ? x : y;
    y = x == {L(0.0)} ? -INFINITY : y;
    y = x < {L(0.0)} ? ({t})NAN : y;
    return x != x ? x : y;
}}
inline {t} myc_log1p_{s}({t} x) {{
    {t} u = x + {one};
    {t} c = (x - (u - {one})) / u;
    {t} y = myc_logcore_{s}(u) + c;
    y = x == INFINITY ? x : y;
    y = u == {L(0.0)} ? -INFINITY : y;
    y = u < {L(0.0)} ? ({t})NAN : y;
    y = x == {L(0.0)} ? x : y;
    return x != x ? x : y;
}}
"""


def source(fp64: bool) -> str:
    """The functions for float32 (``myc_exp_f`` ...) and, with ``fp64``, float64."""
    text = _functions(P32, "f")
    if fp64:
        text += _functions(P64, "d")
    return text
