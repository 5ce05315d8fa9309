"""Thread settings (equal for every framework) and the environment record of a run.

:func:`apply_threads` must run before NumPy, PyTorch, JAX or myc are imported where
possible: OpenBLAS and XLA read their thread counts once, at load.  It pins the process to
``threads`` cores when fewer than all are asked for, so that frameworks which size their
pools from the machine (XLA) cannot use more.  What was actually in force is read back and
recorded by :func:`thread_settings`.  XLA has no thread-count flag it documents, so JAX
is held to ``threads`` by that affinity alone (with all cores, every framework uses all).
"""

from __future__ import annotations

import datetime
import importlib.metadata
import os
import platform
import subprocess
import sys
from pathlib import Path

THREAD_ENV = (
    "MYC_NUM_THREADS",
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMBA_NUM_THREADS",
)
VERSIONED = (
    "numpy",
    "llvmlite",
    "torch",
    "myc",
    "scipy",
    "jax",
    "jaxlib",
    "numba",
    "cupy",
    "pyopencl",
    "matplotlib",
    "rich",
)


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def apply_threads(threads: int) -> dict:
    """Set every framework's thread count to ``threads``; returns what was done."""
    done: dict = {"requested": threads, "numpy_loaded_before": "numpy" in sys.modules}
    for var in THREAD_ENV:
        os.environ[var] = str(threads)
    # OpenBLAS workers (NumPy's, and SciPy's that myc's GEMM calls) spin for ~2^28 cycles
    # after each call before sleeping; on a small machine a spinning worker takes the core
    # the next framework's thread needs (a 64x32 torch.logsumexp went from 0.01 ms to 8 ms
    # after one NumPy GEMM).  Make them sleep at once; the user's own setting wins.
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    if threads < available_cores() and hasattr(os, "sched_setaffinity"):
        cores = sorted(os.sched_getaffinity(0))[:threads]
        os.sched_setaffinity(0, cores)
        done["affinity"] = cores
    try:  # NumPy's BLAS was loaded already (e.g. under `myc bench`): set it at run time
        import threadpoolctl

        threadpoolctl.threadpool_limits(threads)
        done["threadpoolctl"] = True
    except ImportError:
        done["threadpoolctl"] = False
    return done


def thread_settings(requested: int, applied: dict) -> dict:
    """What each framework runs with, read back where the framework can tell."""
    out = dict(applied)
    out["env"] = {
        var: os.environ.get(var)
        for var in (*THREAD_ENV, "OPENBLAS_THREAD_TIMEOUT", "OMP_WAIT_POLICY")
    }
    out["affinity_cores"] = available_cores()
    torch = sys.modules.get("torch")
    if torch is not None:
        out["torch_num_threads"] = torch.get_num_threads()
        out["torch_num_interop_threads"] = torch.get_num_interop_threads()
    numba = sys.modules.get("numba")
    if numba is not None:
        try:
            out["numba_num_threads"] = numba.get_num_threads()
        except Exception:  # numba's threading layer may fail to load
            pass
    try:
        import threadpoolctl

        out["blas"] = [
            {k: info.get(k) for k in ("internal_api", "num_threads", "version")}
            for info in threadpoolctl.threadpool_info()
        ]
    except ImportError:
        pass
    out["equal"] = all(
        v == requested for k, v in out.items() if k in ("torch_num_threads", "numba_num_threads")
    )
    return out


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def busy_warning(load: list[float] | None, threads: int) -> str | None:
    """A warning when other processes already keep cores busy: timings will suffer, and
    spinning thread pools (OpenMP, OpenBLAS) suffer far more than the rest."""
    if load is None or load[0] < 0.5:
        return None
    return (
        f"the machine is busy (load average {load[0]:.2f} over the last minute, "
        f"{available_cores()} cores, {threads} threads asked for): timings will be noisy "
        "and unfair to frameworks whose threads spin-wait"
    )


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpu_flags() -> list[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                flags = line.split(":", 1)[1].split()
                return [f for f in flags if f.startswith(("avx", "fma", "sse4", "amx"))]
    except OSError:
        pass
    return []


def versions() -> dict:
    out = {"python": platform.python_version()}
    for dist in VERSIONED:
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


def git_state(root: Path | None = None) -> dict:
    root = root or Path(__file__).resolve().parent.parent

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()

    try:
        return {
            "commit": git("rev-parse", "HEAD"),
            "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
        }
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def vector_isa() -> str:
    """The widest x86 vector ISA this CPU has (what LLVM's host target may use)."""
    flags = set(cpu_flags())
    for isa, flag in (("AVX-512", "avx512f"), ("AVX2", "avx2"), ("AVX", "avx")):
        if flag in flags:
            return isa
    return "SSE" if flags else "unknown"


def subnormals() -> str:
    """myc's subnormal policy for this run (``MYC_SUBNORMALS``; see docs/benchmarks.md)."""
    return os.environ.get("MYC_SUBNORMALS", "").strip().lower() or "flush"


def environment(threads: dict) -> dict:
    mem_gib = None
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        mem_gib = round(pages / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        pass
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu_model": cpu_model(),
        "cpu_flags": cpu_flags(),
        "vector_isa": vector_isa(),
        "myc_subnormals": subnormals(),
        "logical_cores": os.cpu_count(),
        "available_cores": available_cores(),
        "memory_gib": mem_gib,
        "os": platform.platform(),
        "python_implementation": platform.python_implementation(),
        "versions": versions(),
        "git": git_state(),
        "threads": threads,
    }
