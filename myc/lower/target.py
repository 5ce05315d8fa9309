"""What lowering and the host program ask of a backend.

The lowering (``myc.lower.program``) is written against :class:`Target` and imports no
backend: each backend subclasses it in ``myc/backends/registry.py`` and registers itself
here by name, so a host program -- which keeps its backend's name, to be picklable for
the disk cache -- finds its backend again with :func:`target`.  The defaults describe a
backend whose arrays live in host memory and whose only native code is its kernels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from myc.errors import MycValueError


class Bailout(Exception):  # noqa: N818 - a control signal
    """A native program met what only Python semantics decide (an int overflowing 64 bits,
    a Python division by zero, an index out of range): run the steps instead."""


class Target:
    """A backend as lowering sees it: how a kernel compiles and where values live."""

    name: str = ""
    # on a device every array op the kernel IR expresses is a kernel (it runs there);
    # on the CPU a lone elementwise op stays a NumPy step, as fast
    kernel_every_op: bool = True
    # arrays live on the device between steps (the value hooks below move them)
    device_resident: bool = False
    # a loop whose taped rerun (for its adjoint) repeats it runs once, as the rerun
    merge_taped_reruns: bool = False

    def kernel_compiler(self) -> Callable[[Any], Any]:
        """The backend's ``compile_kernel``: a kernel in, a callable on arrays out, or
        None where its generator does not cover that kernel (the program then runs its
        steps on NumPy, reported).  Raises ImportError when the backend is not installed."""
        raise NotImplementedError

    def check_available(self) -> None:
        """Raise a ``MycError`` naming what to install when this backend cannot run."""

    # -- native host programs: the whole program, or a loop, as one native function ------
    native_host: bool = False
    # host code has GEMM with ``beta``: sums of matrix products accumulate in one buffer
    # (``myc.opt.products``)
    gemm_accumulate: bool = False

    def native_kinds(self) -> frozenset[str]:
        """The op-step kinds (``myc.lower.step_ops.OP_KINDS``) a native host program
        covers (none: no native host code); the primitives they are follow from each
        primitive's declared ``step_kind``."""
        return frozenset()

    def native_loop(self, body: Any, nstate: int, tape: tuple[int, ...] | None, plan: Any,
                    build: bool = True) -> Any:
        """``body`` (a host program, or a straight-line program run once) as a native
        function, or None; with ``build`` False only checked, its code made by the
        result's ``built()`` (None if making it fails after all)."""
        return None

    def from_signal(self, exc: BaseException) -> bool:
        """Was ``exc`` raised by the user's signal handler as native code stopped?"""
        return False

    # -- values: identities where arrays live in host memory -----------------------------
    def owns(self, value: Any) -> bool:
        """Is ``value`` one of this backend's device arrays?"""
        return False

    def any_on_device(self, values: list[Any]) -> bool:
        return False

    def to_device(self, values: list[Any]) -> list[Any]:
        """A program's arguments where its kernels read them."""
        return values

    def body_results(self, values: list[Any]) -> list[Any]:
        """A loop or call body's results, as the runner that called it takes them."""
        return values

    def results(self, values: list[Any], prog: Any, device_in: bool) -> list[Any]:
        """A program's results as the caller gets them (``device_in``: an argument was a
        device array)."""
        return values

    def scalar(self, value: Any, abstract: Any) -> Any:
        """A device value whose type is the scalar ``abstract``."""
        return value

    def stack(self, column: list[Any], dtype: Any) -> Any:
        """A loop tape's column of device values as one array."""
        raise NotImplementedError

    def adapt(self, steps: list[Any], outputs: list[tuple[bool, Any]],
              specs: list[Any] | None = None) -> list[tuple[bool, Any]]:
        """Fit a lowered program's steps to this backend (in place); its outputs.
        ``specs``: the abstract value of every slot (what a step's operands are)."""
        return outputs

    def step_call(self, step: Any) -> tuple[Callable[..., Any], bool]:
        """How a host program's ``step`` is called: ``(fn, packed)``, ``fn(operands)``
        when ``packed`` (one tuple), else ``fn(*operands)``."""
        return step.fn, False

    def finish(self, unit: Any, vals: tuple) -> list[Any]:
        """Run a kernel step whose arguments are device values."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<backend {self.name}>"


_TARGETS: dict[str, Target] = {}


def register(t: Target) -> Target:
    _TARGETS[t.name] = t
    return t


def target(name: str) -> Target:
    """The registered backend called ``name``."""
    t = _TARGETS.get(name)
    if t is None:
        raise MycValueError(f"unknown backend '{name}'; available: {', '.join(names())}")
    return t


def names() -> tuple[str, ...]:
    return tuple(_TARGETS)


def owner(value: Any) -> Target | None:
    """The backend whose device array ``value`` is, if any."""
    for t in _TARGETS.values():
        if t.device_resident and t.owns(value):
            return t
    return None
