"""The backends, each declared once: what a backend provides, in one place.

A backend is a :class:`myc.lower.target.Target` (what lowering and the host program ask:
its kernel compiler, where its arrays live, its fusion policy, its native host code)
plus what the runtime and ``myc.ir`` ask here (whether it specializes, its cache tag,
how a call passes arguments, its kernels' target code).  Nothing outside this module
compares backend names: the stages ask the backend object.  ``docs/architecture.md``
lists what a new backend fills in.  Backend modules are imported when first used, so
a missing optional dependency (CuPy, PyOpenCL) costs nothing until that backend runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from myc.lower.target import Target, names, register, target


class Backend(Target):
    """A registered backend; the defaults are the CPU-hosted behaviour."""

    # specialized per signature and lowered to a host program (else: the evaluator)
    specializes: bool = True
    # disk-cache keys of its programs carry this (programs differ per backend)
    cache_tag: str = ""
    # programs found on disk by the function's source key, before parsing
    source_keyed: bool = False
    # ``myc.ir(stage="kernels")`` lowers for this backend itself (else for the CPU)
    lowers_for_ir: bool = False
    # repeat calls with host arrays may skip the full dispatch (``runtime.fastcall``):
    # only where ``call`` is the plain one below
    host_fast_calls: bool = False
    # the language ``render`` writes kernels in (``myc.ir(stage="target")``), if any
    target_language: str | None = None
    # how a line comment starts in that language (kernels are separated by one)
    comment: str = "//"

    def prepare(self) -> None:
        """Called as a function's first compile starts: one-time work of the backend's
        that may run in the background meanwhile (the CPU's thread pool)."""

    def trace_args(self, args: list[Any]) -> list[Any]:
        """The arguments a signature is traced on (host copies of device arrays)."""
        return args

    def evaluator_args(self, args: tuple) -> tuple:
        """The arguments of a call that the reference evaluator runs (host arrays)."""
        return args

    def call(self, run: Callable[..., Any], names: list[str], bound: list[Any],
             check_args: Callable[..., Any], own_outputs: Callable[[Any], Any]) -> Any:
        """``run`` on a call's bound arguments, checked; its results the caller's own."""
        return own_outputs(run(*check_args(names, tuple(bound))))

    def render(self, kernel: Any) -> str | None:
        """A kernel in this backend's target language (``myc.ir(stage="target")``), or
        None when it has no text form."""
        return None


class Interp(Backend):
    """The reference evaluator: runs the graph itself, nothing compiled."""

    name = "interp"
    specializes = False
    cache_tag = "|interp"


class Cpu(Backend):
    """LLVM: vectorized, multi-threaded kernels; host programs and loops native."""

    name = "cpu"
    host_fast_calls = True
    kernel_every_op = False
    native_host = True
    gemm_accumulate = True
    source_keyed = True

    def kernel_compiler(self) -> Callable[[Any], Any]:
        from myc.backends.cpu.runtime import compile_kernel

        return compile_kernel

    def prepare(self) -> None:
        try:
            from myc.backends.cpu.threads import build_ahead
        except ImportError:  # pragma: no cover - the kernel backend is optional
            return
        build_ahead()

    def native_kinds(self) -> frozenset[str]:
        try:
            from myc.backends.cpu.loopgen import NATIVE_KINDS
        except ImportError:  # pragma: no cover - the kernel backend is optional
            return frozenset()
        return NATIVE_KINDS

    def native_loop(self, body: Any, nstate: int, tape: tuple[int, ...] | None, plan: Any,
                    build: bool = True) -> Any:
        try:
            from myc.backends.cpu.loopgen import native_loop
        except ImportError:  # pragma: no cover - the kernel backend is optional
            return None
        return native_loop(body, nstate, tape, plan, build)

    target_language = "LLVM IR"
    comment = ";"

    def render(self, kernel: Any) -> str:
        from myc.backends.cpu.runtime import llvm_ir

        return llvm_ir(kernel)

    def from_signal(self, exc: BaseException) -> bool:
        try:
            from myc.backends.cpu.interrupt import took
        except ImportError:  # pragma: no cover - the kernel backend is optional
            return False
        return took(exc)


class DeviceResident(Backend):
    """A backend whose arrays stay on its device between steps: the value hooks of
    ``Target`` delegate to its host module's :class:`myc.backends.device_host.DeviceHost`
    (``HOST``), which writes them once for every device."""

    device_resident = True
    merge_taped_reruns = True
    # the module of its host glue: ``HOST`` (a ``DeviceHost``), ``stack_on_device``,
    # ``device_scalar``, ``adapt``, ``device_call``
    host_module = ""

    _host_mod: Any = None

    def _host(self) -> Any:
        mod = self._host_mod  # (imported on first use: the optional dependency's cost)
        if mod is None:
            import importlib

            mod = self._host_mod = importlib.import_module(self.host_module)
        return mod

    def owns(self, value: Any) -> bool:
        return self._host().HOST.on_device(value)

    def any_on_device(self, values: list[Any]) -> bool:
        return self._host().HOST.any_on_device(values)

    def to_device(self, values: list[Any]) -> list[Any]:
        return self._host().HOST.to_device_values(values)

    def body_results(self, values: list[Any]) -> list[Any]:
        return self._host().HOST.body_results(values)

    def results(self, values: list[Any], prog: Any, device_in: bool) -> list[Any]:
        return self._host().HOST.results(values, prog.outputs, prog.specs,
                                         len(prog.guards), device_in)

    def scalar(self, value: Any, abstract: Any) -> Any:
        return self._host().device_scalar(value, abstract)

    def stack(self, column: list[Any], dtype: Any) -> Any:
        return self._host().stack_on_device(column, dtype)

    def trace_args(self, args: list[Any]) -> list[Any]:
        return self._host().HOST.to_host_values(args)

    def evaluator_args(self, args: tuple) -> tuple:
        return self._host().HOST.evaluator_args(args)


class OpenCL(DeviceResident):
    """OpenCL C kernels (any OpenCL device; PoCL on a CPU); arrays stay on the device
    between steps, GEMM and the other array steps run there too.  The host glue is
    ``myc.backends.opencl.host``: ``pyopencl.array.Array`` in, ``pyopencl.array.Array``
    out; NumPy in, NumPy out with one copy each way."""

    name = "opencl"
    cache_tag = "|opencl"
    target_language = "OpenCL C"
    lowers_for_ir = True
    host_module = "myc.backends.opencl.host"

    def kernel_compiler(self) -> Callable[[Any], Any]:
        from myc.backends.opencl.runtime import compile_kernel

        return compile_kernel

    def render(self, kernel: Any) -> str:
        from myc.backends.opencl.codegen import generate

        return generate(kernel).source

    def adapt(self, steps: list[Any], outputs: list[tuple[bool, Any]],
              specs: list[Any] | None = None) -> list[tuple[bool, Any]]:
        from myc.backends.opencl.host import adapt

        return adapt(steps, outputs, specs)

    def finish(self, unit: Any, vals: tuple) -> list[Any]:
        from myc.backends.opencl.host import run_kernel

        return run_kernel(unit, vals)

    def call(self, run: Callable[..., Any], names: list[str], bound: list[Any],
             check_args: Callable[..., Any], own_outputs: Callable[[Any], Any]) -> Any:
        from myc.backends.opencl.host import device_call  # OpenCL arrays in and out

        return device_call(run, names, bound, check_args, own_outputs)


class Cuda(DeviceResident):
    """PTX kernels through CuPy; arrays stay on the GPU between steps.  The host glue
    (``myc.backends.gpu.host``) is shared with ``rocm``: it runs on the GPU backend in
    use (``use``), set by each lowering and each call."""

    name = "cuda"
    cache_tag = "|cuda"
    target_language = "PTX"
    host_module = "myc.backends.gpu.host"

    def _runtime(self) -> Any:
        import importlib

        from myc.backends.gpu.host import use

        use(self.name)  # (a process uses one CuPy build: CUDA's or ROCm's)
        return importlib.import_module(f"myc.backends.{self.name}.runtime")

    def kernel_compiler(self) -> Callable[[Any], Any]:
        return self._runtime().compile_kernel

    def check_available(self) -> None:
        self._runtime().device()

    def render(self, kernel: Any) -> str:
        from myc.backends.cuda.runtime import kernel_ptx

        return kernel_ptx(kernel)[0]

    def any_on_device(self, values: list[Any]) -> bool:
        from myc.backends.gpu.host import use

        use(self.name)  # (a program from the disk cache was not lowered here)
        return super().any_on_device(values)

    def adapt(self, steps: list[Any], outputs: list[tuple[bool, Any]],
              specs: list[Any] | None = None) -> list[tuple[bool, Any]]:
        from myc.backends.gpu.host import adapt, device_constants

        adapt(steps)
        return device_constants(outputs)

    def finish(self, unit: Any, vals: tuple) -> list[Any]:
        from myc.backends.gpu.host import finish_on_device
        from myc.lower.post import finish_outputs

        outs = unit.compiled(list(vals))  # (constants: uploaded once, on first use)
        return finish_outputs(unit, outs, finish_on_device)

    def step_call(self, step: Any) -> tuple[Callable[..., Any], bool]:
        from myc.backends.gpu.host import step_call

        return step_call(step)

    def call(self, run: Callable[..., Any], names: list[str], bound: list[Any],
             check_args: Callable[..., Any], own_outputs: Callable[[Any], Any]) -> Any:
        from myc.backends.gpu.host import device_call  # CUDA arrays in, CuPy arrays out

        return device_call(run, names, bound, check_args, own_outputs, self.name)


class Rocm(Cuda):
    """AMDGPU code objects (LLVM's AMDGPU target, linked by LLD) through CuPy's ROCm
    build; the same host glue as ``cuda``.  Untested on AMD hardware."""

    name = "rocm"
    cache_tag = "|rocm"
    target_language = "AMDGCN assembly"
    comment = ";"

    def render(self, kernel: Any) -> str:
        from myc.backends.rocm.runtime import kernel_asm

        return kernel_asm(kernel)


for _b in (Interp(), Cpu(), OpenCL(), Cuda(), Rocm()):
    register(_b)


def backend(name: str) -> Backend:
    """The backend called ``name``; an unknown name is a ``MycValueError`` listing the
    registered ones."""
    b = target(name)
    assert isinstance(b, Backend)
    return b


__all__ = ["Backend", "DeviceResident", "backend", "names"]
