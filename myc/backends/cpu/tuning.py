"""Vector width chosen by measurement on each CPU, not by the widest feature flag.

On a CPU with AVX-512 LLVM can compile kernels three ways: AVX2 (``256``), AVX-512
instructions at the vector width LLVM's tuning for the CPU prefers (``native``: 256 bits on
Intel's server parts, which then use AVX-512's masks, 32 registers and ``vscalef`` on
``ymm`` registers), or AVX-512 on 512-bit ``zmm`` vectors (``512``: the CPU's tuning
overridden with ``-prefer-256-bit``).  None is always fastest: on a 2-core Intel Xeon
the W6 Horner forward pass ran in 11.3 ms compiled for the host against 6.5 ms compiled
for AVX2 (512-bit instructions lower the core's clock on many Intel parts, and our math
library's selects and gathers do not all gain from the width), while on an Emerald
Rapids Xeon the AVX-512 instructions at 256 bits beat AVX2 (W7f 4.35 against 5.76 ms).
So on an AVX-512 host, myc times one probe kernel (a polynomial chain, an ``exp`` and a
reduction: the shape of W1/W6/W7's loops) compiled each way and keeps a wider choice only
if it is measurably faster than the narrower one.  The choice is stored in the disk
cache, keyed by the CPU's name and features, so it is measured once per machine, and it
is part of every kernel's and program's cache key (through
:func:`myc.backends.cpu.jit.host`, which returns the feature string it selects).

``MYC_VECTOR_WIDTH=256``, ``native`` or ``512`` forces a choice (``auto``, the default,
measures).  CPUs without AVX-512 are unaffected: their widest vectors are AVX2's 256 bits.
"""

from __future__ import annotations

import ctypes
import os
import time
from collections.abc import Callable

import numpy as np

WIDTHS = ("auto", "256", "native", "512")
NO_AVX512 = "-avx512f"  # LLVM drops every feature that implies AVX-512F with it
ZMM = "-prefer-256-bit"  # LLVM's Intel tuning prefers 256-bit vectors; this undoes it
MARGIN = 0.9  # a wider choice must take under 90% of the narrower one's time
TUNING_KEY = "v2"  # v1 stored "512" for what is now "native"


def setting() -> str:
    from myc.errors import MycValueError

    value = os.environ.get("MYC_VECTOR_WIDTH", "").strip().lower() or "auto"
    if value not in WIDTHS:
        raise MycValueError(f"MYC_VECTOR_WIDTH={value!r}: expected one of {', '.join(WIDTHS)}")
    return value


def has_avx512(features: str) -> bool:
    """Whether ``features`` enables AVX-512F: the last mention wins, as in LLVM, so a
    string :func:`narrowed` to AVX2 says no."""
    state = False
    for f in features.split(","):
        if f in ("+avx512f", "-avx512f"):
            state = f[0] == "+"
    return state


def narrowed(features: str) -> str:
    """``features`` with AVX-512 turned off (AVX2 code)."""
    return features + "," + NO_AVX512


def widened(features: str) -> str:
    """``features`` with 512-bit vectors preferred (``zmm`` code)."""
    return features + "," + ZMM


def features_for(width: str, features: str) -> str:
    """The feature string of one of the choices ``256``, ``native``, ``512``."""
    return {"256": narrowed, "native": lambda f: f, "512": widened}[width](features)


def choose(cpu: str, features: str,
           measure: Callable[[str, str], float] | None = None) -> str:
    """The feature string kernels are compiled with on this CPU."""
    if not has_avx512(features):
        return features
    want = setting()
    if want != "auto":
        return features_for(want, features)
    from myc.support import diskcache

    key = f"{TUNING_KEY}|{cpu}|{features}"
    cached = diskcache.load("tuning", key)
    if cached in ("256", "native", "512"):
        return features_for(cached, features)
    measure = measure or probe_time
    best, best_s = "256", float("inf")
    try:
        for width in ("256", "native", "512"):  # narrowest first: wider must earn its place
            t = min(measure(cpu, features_for(width, features)) for _ in range(3))
            if t < MARGIN * best_s:
                best, best_s = width, t
    except Exception:  # noqa: BLE001 - a failed probe must not stop compilation
        return features
    diskcache.store("tuning", key, best)
    return features_for(best, features)


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
