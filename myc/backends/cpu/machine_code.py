"""The machine-code cache of native host programs: a module's LLVM IR in, its loaded
machine code out -- from this process's memory, else the disk cache, else LLVM.

The JIT's native generator (``loopgen``) emits a module per host program and asks here
for its code; kernels have their own cache (``runtime``).  One concern per module: the
generator neither hashes, stores nor decides how hard LLVM works on what it emits.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from myc.backends.cpu.emit import loop_work
from myc.backends.cpu.jit import JitModule
from myc.support.lru import LRU

# A native module of more instructions than this is compiled light (O1, no vectorizers,
# code generation at O0: ``JitModule``).  Such a module is a long straight-line program's
# glue -- pointers stored into argument arrays, calls of kernels and GEMMs -- which runs
# once per call and takes microseconds however it is compiled, while O3 and its
# instruction selection and register allocation are superlinear in a function's size:
# an RK4 gradient over 30 steps (18,000 instructions) took 2.6 s of CPU at O3, 0.6 s
# light.  Smaller modules (loops whose scalar code runs per iteration) keep O3.
LIGHT_ABOVE = 2000


# A native program that runs once per call (no loop of its own, no calls of typed
# functions) is compiled light too when its steps are big -- on average at least
# LIGHT_STEP_ELEMENTS elements read and written per step, so that the host code between
# them is noise beside their own work -- and its element loops (fills, gathers, copies, the
# pool's claim loops) make at most LIGHT_WORK iterations per run in all
# (``emit.loop_work``).  O3 spent 170 ms on the W4 MLP step's program (80 ms light),
# for code that runs for microseconds of a 20 ms call; an HMM's program over 8 states,
# whose steps take nanoseconds, ran its steady call at 0.22 ms light against 0.11 ms.
LIGHT_WORK = 1 << 15
LIGHT_STEP_ELEMENTS = 1 << 14


def instruction_count(module: ir.Module) -> int:
    """The module's instruction count, as generated."""
    return sum(len(blk.instructions) for f in module.functions for blk in f.blocks)


def compiled_light(module: ir.Module, runs_once: bool, elements_per_step: float = 0.0
                   ) -> bool:
    """Is ``module`` compiled light (``LIGHT_ABOVE``; ``LIGHT_STEP_ELEMENTS`` and
    ``LIGHT_WORK`` for a program that runs once)?"""
    if instruction_count(module) > LIGHT_ABOVE:
        return True
    if not runs_once or elements_per_step < LIGHT_STEP_ELEMENTS:
        return False
    works = [loop_work(f) for f in module.functions if f.blocks]
    return all(w is not None for w in works) and sum(works) <= LIGHT_WORK


def load_or_compile(text: str | Callable[[], str], light: bool = False, bare: bool = False,
                    fixed: str | None = None) -> JitModule:
    """The loop's machine code: from the disk cache when this IR was compiled before
    (``light``, ``bare``: how hard LLVM works, ``JitModule``).  ``fixed``: the module is
    the same for every process of this myc on this host (the disk cache's version
    stamps myc's source), so that name keys it and ``text`` -- then a function making
    it -- is only called when it must be compiled."""
    import hashlib

    from myc.backends.cpu.jit import host
    from myc.support import diskcache

    how = f"light={light}" + (" bare" if bare else "")
    if fixed is None:
        assert isinstance(text, str)
        key_text = text
    else:
        key_text = f"fixed module {fixed}"
    key = hashlib.sha256("\n".join(["loop1", *host(), how, key_text]).encode()).hexdigest()
    code = CODE.get(key)
    if code is None:
        code = diskcache.load("loop", key)
    if isinstance(code, bytes):
        try:
            jit = JitModule(object_code=code)
            CODE[key] = code
            return jit
        except Exception:  # noqa: BLE001 - a damaged entry: compile again
            pass
    jit = JitModule(text if isinstance(text, str) else text(), light=light, bare=bare)
    CODE[key] = jit.object_code
    diskcache.store("loop", key, jit.object_code)
    return jit


# machine code of the loops compiled in this process, by IR: a fresh wrapper of a
# function compiled before (the cache off, or a new ``myc.jit`` each call) loads it
# instead of running LLVM's optimizer again, which costs about 60 KB of memory that
# LLVM never gives back (llvmlite 0.50, per default O3 pipeline built and run)
CODE = LRU(maxbytes=64 * 2**20)
