"""Vector width chosen by measurement on each CPU, not by the widest feature flag.

On a CPU with AVX-512 LLVM vectorizes kernels 512 bits wide.  That is not always faster:
on a 2-core Intel Xeon the W6 Horner forward pass ran in 11.3 ms compiled for the host
against 6.5 ms compiled for AVX2 on the same machine (512-bit instructions lower the
core's clock on many Intel parts, and our math library's selects and gathers do not all
gain from the width).  So on an AVX-512 host, myc times one probe kernel (a polynomial
chain, an ``exp`` and a reduction: the shape of W1/W6/W7's loops) compiled both ways and
keeps AVX-512 only if it is measurably faster.  The choice is stored in the disk cache,
keyed by the CPU's name and features, so it is measured once per machine, and it is part
of every kernel's and program's cache key (through :func:`myc.backends.cpu.jit.host`).

``MYC_VECTOR_WIDTH=256`` or ``512`` forces a width (``auto``, the default, measures).
CPUs without AVX-512 are unaffected: their widest vectors are AVX2's 256 bits.
"""

from __future__ import annotations

import ctypes
import os
import time
from collections.abc import Callable

import numpy as np

WIDTHS = ("auto", "256", "512")
NO_AVX512 = "-avx512f"  # LLVM drops every feature that implies AVX-512F with it
MARGIN = 0.9  # AVX-512 must take under 90% of the AVX2 time to be chosen


def setting() -> str:
    from myc.errors import MycValueError

    value = os.environ.get("MYC_VECTOR_WIDTH", "").strip().lower() or "auto"
    if value not in WIDTHS:
        raise MycValueError(f"MYC_VECTOR_WIDTH={value!r}: expected one of {', '.join(WIDTHS)}")
    return value


def has_avx512(features: str) -> bool:
    return "+avx512f" in features.split(",")


def narrowed(features: str) -> str:
    """``features`` with AVX-512 turned off (AVX2 code)."""
    return features + "," + NO_AVX512


def choose(cpu: str, features: str,
           measure: Callable[[str, str], float] | None = None) -> str:
    """The feature string kernels are compiled with on this CPU."""
    if not has_avx512(features):
        return features
    want = setting()
    if want == "512":
        return features
    if want == "256":
        return narrowed(features)
    from myc.support import diskcache

    key = f"{cpu}|{features}"
    cached = diskcache.load("tuning", key)
    if cached in ("256", "512"):
        return features if cached == "512" else narrowed(features)
    measure = measure or probe_time
    try:
        wide = min(measure(cpu, features) for _ in range(3))
        narrow = min(measure(cpu, narrowed(features)) for _ in range(3))
    except Exception:  # noqa: BLE001 - a failed probe must not stop compilation
        return features
    width = "512" if wide < MARGIN * narrow else "256"
    diskcache.store("tuning", key, width)
    return features if width == "512" else narrowed(features)


def _probe_kernel():
    from myc.lower.kernel import Binary, Buffer, Const, Kernel, Load, Reduce, Store, Unary

    n = 1 << 16
    x = Load(0, "float32")
    acc = Const(0.5, "float32")
    for c in np.linspace(0.1, 0.9, 24):
        acc = Binary("add", Binary("mul", acc, x), Const(float(c), "float32"))
    y = Unary("exp", Binary("mul", acc, Const(-0.25, "float32")))
    return Kernel("tune_probe", (n,), (Buffer("x", "float32", (n,)),),
                  (Store(0, y), Reduce(1, "sum", y, (0,))))


def probe_time(cpu: str, features: str) -> float:
    """Seconds per call of the probe kernel compiled for ``features`` (best of 20)."""
    import llvmlite.binding as llvm

    from myc.backends.cpu import llvm_module
    from myc.backends.cpu.codegen import codegen, entry_name

    kernel = _probe_kernel()
    module, plan = codegen(kernel)
    llvm_module._init()
    tm = llvm.Target.from_default_triple().create_target_machine(
        cpu=cpu, features=features, opt=3, codemodel="jitdefault")
    mod = llvm_module.optimize(llvm_module.parse(module, tm), tm)
    with llvm_module._lock:
        engine = llvm.create_mcjit_compiler(mod, tm)
        engine.finalize_object()
        addr = engine.get_function_address(entry_name(kernel))
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)(addr)
    n = kernel.shape[0]
    x = np.linspace(0.0, 1.0, n, dtype=np.float32)
    out = np.empty(n, np.float32)
    total = np.zeros((), np.float32)
    ptrs = (ctypes.c_void_p * 3)(x.ctypes.data, out.ctypes.data, total.ctypes.data)
    best = float("inf")
    for _ in range(20):
        total[...] = 0
        t0 = time.perf_counter()
        fn(ptrs, 0, plan.extent)
        best = min(best, time.perf_counter() - t0)
    del engine
    return best
