"""The subnormal policy of compiled kernels: flush to zero unless ``MYC_SUBNORMALS=keep``.

A float32 value below 2^-126 (or float64 below 2^-1022) is *subnormal*.  Intel cores
handle every arithmetic operation that takes or makes one with a microcode assist costing
around a hundred cycles: the adjoint of a 64-term Horner chain, ``x**(63-k)``, underflows
into that range for ``x < 0.25`` and made a gradient 9x slower than XLA's on an AVX-512
Xeon.  XLA runs its CPU code with flush-to-zero (FTZ: subnormal results become 0) and
denormals-are-zero (DAZ: subnormal inputs read as 0); NumPy and PyTorch eager keep IEEE
gradual underflow and pay for it.  myc sets FTZ by default: each kernel entry sets it in
the MXCSR of the thread running it (the caller's thread and every worker) and restores
the caller's MXCSR before returning, so the user's own NumPy code is unaffected.  It does
*not* set DAZ: the assists come from subnormal results (the Horner adjoint's powers), and
once those are flushed nothing downstream sees a subnormal; reading the user's data
exactly keeps ``np.log(1e-310)`` at NumPy's -713.8 rather than DAZ's ``-inf``.
``MYC_SUBNORMALS=keep`` compiles kernels that leave the MXCSR alone (IEEE results,
bit-compatible with NumPy in that range).  Only x86-64 has an MXCSR; other hosts keep
subnormals.

What changes for results: a result whose magnitude is below the smallest normal number
becomes a signed zero -- an absolute difference below 1.2e-38 (float32) or 2.3e-308
(float64) from NumPy's answer, which tolerances of the form ``rtol*|ref| + atol`` with any
positive ``atol`` absorb.  A later quotient or logarithm of such a result differs by more
(``log(x * 1e-30)`` for ``x = 1e-10`` in float32 is ``-inf``), which is why the opt-out
exists.
"""

from __future__ import annotations

import os

from llvmlite import ir

from myc.backends.cpu.emit import declare
from myc.errors import MycValueError

FTZ = 0x8000  # MXCSR bit 15: flush to zero (bit 6, DAZ, is left as the caller had it)
_I32 = ir.IntType(32)
_PTR = ir.PointerType()
MODES = ("flush", "keep")


def mode() -> str:
    """The policy in force: ``MYC_SUBNORMALS`` (``flush``, the default, or ``keep``)."""
    value = os.environ.get("MYC_SUBNORMALS", "").strip().lower() or "flush"
    if value not in MODES:
        raise MycValueError(f"MYC_SUBNORMALS={value!r}: expected one of {', '.join(MODES)}")
    return value


def flushes() -> bool:
    """Whether kernels compiled now set FTZ (the policy is ``flush`` on an x86-64 host)."""
    import llvmlite.binding as llvm

    return mode() == "flush" and llvm.get_default_triple().startswith(("x86_64", "amd64"))


def _intrinsic(module: ir.Module, name: str) -> ir.Function:
    return declare(module, name, ir.VoidType(), [_PTR])


def enter(b: ir.IRBuilder) -> ir.Value:
    """Save the thread's MXCSR and set FTZ; returns the slot ``leave`` restores from."""
    module = b.module
    saved = b.alloca(_I32, name="mxcsr.saved")
    b.call(_intrinsic(module, "llvm.x86.sse.stmxcsr"), [saved])
    flushed = b.alloca(_I32, name="mxcsr.flush")
    b.store(b.or_(b.load(saved), ir.Constant(_I32, FTZ)), flushed)
    b.call(_intrinsic(module, "llvm.x86.sse.ldmxcsr"), [flushed])
    return saved


def leave(b: ir.IRBuilder, saved: ir.Value) -> None:
    """Put back the MXCSR ``enter`` saved (the caller's rounding and exception masks too)."""
    b.call(_intrinsic(b.module, "llvm.x86.sse.ldmxcsr"), [saved])
